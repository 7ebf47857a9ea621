"""What the Applications pages show, from the Application objects the CLI reads
(`headway app list/get/history`). Purely computational: the routes read, this shapes.

Every text that came from a user's manifest or from Git passes through
`redact_url_credentials` (a repoURL with a token in it), as the CLI's output does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.model.obj import Obj
from headway.redaction import redact_url_credentials
from headway.steering.apps import describe_operation, describe_state

__all__ = ["TREE_KINDS", "AppPage", "AppRow", "TreeNode", "WaveWait", "app_page", "app_rows"]

_ENDED = ("Succeeded", "Failed", "Error")
TREE_KINDS = ("ReplicaSet", "Pod", "AnalysisRun", "Job")


@dataclass(frozen=True)
class AppRow:
    namespace: str
    name: str
    project: str
    sync: str
    health: str
    operation: str
    revision: str


def _status(app: Mapping[str, Any]) -> Mapping[str, Any]:
    found = app.get("status")
    return found if isinstance(found, Mapping) else {}


def _revision(status: Mapping[str, Any]) -> str:
    sync = status.get("sync") or {}
    return str(sync.get("revision") or ",".join(sync.get("revisions") or []))


def app_row(app: Obj) -> AppRow:
    status, meta = _status(app), app["metadata"]
    return AppRow(
        namespace=str(meta.get("namespace") or ""),
        name=str(meta["name"]),
        project=str((app.get("spec") or {}).get("project") or ""),
        sync=str((status.get("sync") or {}).get("status") or "Unknown"),
        health=str((status.get("health") or {}).get("status") or "Unknown"),
        operation=str((status.get("operationState") or {}).get("phase") or ""),
        revision=_revision(status)[:12],
    )


def app_rows(apps: Sequence[Obj]) -> list[AppRow]:
    return sorted((app_row(a) for a in apps), key=lambda r: (r.name, r.namespace))


@dataclass(frozen=True)
class TreeNode:
    kind: str
    namespace: str
    name: str
    wave: str  # "" below the app's own resources
    sync: str
    health: str
    message: str
    children: tuple[TreeNode, ...] = ()


@dataclass(frozen=True)
class WaveWait:
    """The running operation: which (phase, wave) it has reached and what it says of it."""

    phase: str
    message: str
    sync_phase: str
    wave: int | None
    waiting_on: tuple[str, ...]  # the wave's resources that are not Healthy yet


@dataclass(frozen=True)
class HistoryRow:
    id: str
    deployed_at: str
    revision: str
    phase: str
    initiated_by: str
    message: str  # the operation's message, or the commit's when it is known


@dataclass(frozen=True)
class AppPage:
    row: AppRow
    repo: str
    path: str
    target: str
    destination: str
    health_message: str
    requested: str
    operation: WaveWait | None
    last_result: str
    conditions: tuple[tuple[str, str], ...]
    retry: str
    tree: tuple[TreeNode, ...]
    history: tuple[HistoryRow, ...]
    ignored: tuple[str, ...]  # ignoreDifferences entries, shown as what the diff leaves out
    automated: bool


def _children(owner_uid: str, live: Sequence[Obj]) -> tuple[TreeNode, ...]:
    nodes = []
    for obj in live:
        refs = obj["metadata"].get("ownerReferences") or []
        if not any(r.get("uid") == owner_uid for r in refs):
            continue
        status = obj.get("status") if isinstance(obj.get("status"), Mapping) else {}
        nodes.append(
            TreeNode(
                kind=str(obj.get("kind")),
                namespace=str(obj["metadata"].get("namespace") or ""),
                name=str(obj["metadata"]["name"]),
                wave="",
                sync="",
                health=str((status or {}).get("phase") or ""),
                message=str((status or {}).get("message") or ""),
                children=_children(str(obj["metadata"].get("uid")), live),
            )
        )
    return tuple(sorted(nodes, key=lambda n: (n.kind, n.name)))


def resource_tree(
    app: Obj, live_by_key: Mapping[tuple[str, str, str], Obj], owned: Sequence[Obj]
) -> tuple[TreeNode, ...]:
    """The app's resources (from its status) with what they own below them (ReplicaSets,
    Pods, AnalysisRuns, Jobs found live by owner reference)."""
    nodes = []
    for r in _status(app).get("resources") or []:
        key = (str(r.get("kind")), str(r.get("namespace") or ""), str(r.get("name")))
        live = live_by_key.get(key)
        uid = str(live["metadata"].get("uid")) if live else ""
        health = r.get("health") or {}
        nodes.append(
            TreeNode(
                kind=key[0],
                namespace=key[1],
                name=key[2],
                wave=str(r.get("syncWave", 0)),
                sync=str(r.get("status") or "")
                + (" (requires pruning)" if r.get("requiresPruning") else ""),
                health=str(health.get("status") or ""),
                message=redact_url_credentials(str(health.get("message") or "")),
                children=_children(uid, owned) if uid else (),
            )
        )
    return tuple(nodes)


def wave_wait(app: Obj) -> WaveWait | None:
    state = _status(app).get("operationState") or {}
    if not state or state.get("phase") in _ENDED:
        return None
    cursor = state.get("wave") if isinstance(state.get("wave"), Mapping) else None
    wave = int(cursor["wave"]) if cursor and isinstance(cursor.get("wave"), int) else None
    waiting = tuple(
        f"{r.get('kind')}/{r.get('name')} is {(r.get('health') or {}).get('status')}"
        for r in _status(app).get("resources") or []
        if wave is not None
        and r.get("syncWave", 0) == wave
        and (r.get("health") or {}).get("status") not in (None, "Healthy")
    )
    return WaveWait(
        phase=str(state.get("phase")),
        message=redact_url_credentials(str(state.get("message") or "")),
        sync_phase=str(cursor.get("phase")) if cursor else "",
        wave=wave,
        waiting_on=waiting,
    )


def history_rows(app: Obj, commit_messages: Mapping[str, str]) -> tuple[HistoryRow, ...]:
    rows = []
    for entry in reversed(_status(app).get("history") or []):
        who = entry.get("initiatedBy") or {}
        revision = str(entry.get("revision") or "")
        rows.append(
            HistoryRow(
                id=str(entry.get("id")),
                deployed_at=str(entry.get("deployedAt") or ""),
                revision=revision[:12],
                phase=str(entry.get("phase") or "Succeeded")
                + (" (dry run)" if entry.get("dryRun") else ""),
                initiated_by="automated" if who.get("automated") else str(who.get("username")),
                message=redact_url_credentials(
                    commit_messages.get(revision) or str(entry.get("message") or "")
                ),
            )
        )
    return tuple(rows)


def _retry(app: Obj) -> str:
    """The sync retry budget: attempts made of the limit, as the operation records them."""
    state = _status(app).get("operationState") or {}
    operation = state.get("operation") or app.get("operation") or {}
    limit = (operation.get("retry") or {}).get("limit")
    if limit is None:
        return ""
    made = int(state.get("retryCount") or 0)
    return f"{made} of {'unlimited' if int(limit) < 0 else limit} retries used"


def _ignored(app: Obj) -> tuple[str, ...]:
    out = []
    for rule in (app.get("spec") or {}).get("ignoreDifferences") or []:
        what = "/".join(str(rule.get(k)) for k in ("group", "kind", "name") if rule.get(k))
        paths = [*(rule.get("jsonPointers") or []), *(rule.get("jqPathExpressions") or [])]
        managers = [f"manager {m}" for m in rule.get("managedFieldsManagers") or []]
        out.append(f"{what}: {', '.join([*paths, *managers]) or 'everything'}")
    return tuple(out)


def app_page(
    app: Obj,
    *,
    live_by_key: Mapping[tuple[str, str, str], Obj],
    owned: Sequence[Obj],
    commit_messages: Mapping[str, str],
) -> AppPage:
    status, spec = _status(app), app.get("spec") or {}
    source = spec.get("source") or (spec.get("sources") or [{}])[0]
    destination = spec.get("destination") or {}
    state = status.get("operationState") or {}
    automated = (spec.get("syncPolicy") or {}).get("automated")
    return AppPage(
        row=app_row(app),
        repo=redact_url_credentials(str(source.get("repoURL") or "")),
        path=str(source.get("path") or source.get("chart") or ""),
        target=str(source.get("targetRevision") or "HEAD"),
        destination=f"{destination.get('server') or destination.get('name') or ''} "
        f"ns={destination.get('namespace') or ''}",
        health_message=redact_url_credentials(
            str((status.get("health") or {}).get("message") or "")
        ),
        requested=describe_operation(app["operation"])
        if isinstance(app.get("operation"), Mapping) else "",
        operation=wave_wait(app),
        last_result=describe_state(state) if state.get("phase") in _ENDED else "",
        conditions=tuple(
            (str(c.get("type")), redact_url_credentials(str(c.get("message"))))
            for c in status.get("conditions") or []
        ),
        retry=_retry(app),
        tree=resource_tree(app, live_by_key, owned),
        history=history_rows(app, commit_messages),
        ignored=_ignored(app),
        automated=isinstance(automated, Mapping) and automated.get("enabled", True) is not False,
    )
