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

__all__ = [
    "AppPage",
    "AppRow",
    "TreeNode",
    "WaveWait",
    "app_page",
    "app_row",
    "app_rows",
    "history_entries",
    "resource_entries",
    "source_url",
]

_ENDED = ("Succeeded", "Failed", "Error")


@dataclass(frozen=True)
class AppRow:
    namespace: str
    name: str
    project: str
    sync: str
    health: str
    operation: str
    revision: str


def _m(value: object) -> Mapping[str, Any]:
    """A field that should be a mapping; anything else (a hand-edited status) reads as empty,
    so a malformed object shows what it can instead of failing the page."""
    return value if isinstance(value, Mapping) else {}


def _l(value: object) -> list[Mapping[str, Any]]:
    """A field that should be a list of mappings; other items are skipped."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _status(app: Mapping[str, Any]) -> Mapping[str, Any]:
    return _m(app.get("status"))


def _source(app: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = _m(app.get("spec"))
    return _m(spec.get("source")) or next(iter(_l(spec.get("sources"))), {})


def source_url(app: Obj) -> str:
    """The (first) source's repoURL as written, credentials included: for Git, never shown."""
    return str(_source(app).get("repoURL") or "")


def resource_entries(app: Obj) -> list[Mapping[str, Any]]:
    return _l(_status(app).get("resources"))


def history_entries(app: Obj) -> list[Mapping[str, Any]]:
    return _l(_status(app).get("history"))


def _revision(status: Mapping[str, Any]) -> str:
    sync = _m(status.get("sync"))
    return str(sync.get("revision") or ",".join(sync.get("revisions") or []))


def app_row(app: Obj) -> AppRow:
    status, meta = _status(app), app["metadata"]
    return AppRow(
        namespace=str(meta.get("namespace") or ""),
        name=str(meta["name"]),
        project=str(_m(app.get("spec")).get("project") or ""),
        sync=str(_m(status.get("sync")).get("status") or "Unknown"),
        health=str(_m(status.get("health")).get("status") or "Unknown"),
        operation=str(_m(status.get("operationState")).get("phase") or ""),
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
        refs = _l(obj["metadata"].get("ownerReferences"))
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
                health=str(_m(status).get("phase") or ""),
                message=str(_m(status).get("message") or ""),
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
    for r in _l(_status(app).get("resources")):
        key = (str(r.get("kind")), str(r.get("namespace") or ""), str(r.get("name")))
        live = live_by_key.get(key)
        uid = str(live["metadata"].get("uid")) if live else ""
        health = _m(r.get("health"))
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
    state = _m(_status(app).get("operationState"))
    if not state or state.get("phase") in _ENDED:
        return None
    cursor = state.get("wave") if isinstance(state.get("wave"), Mapping) else None
    wave = int(cursor["wave"]) if cursor and isinstance(cursor.get("wave"), int) else None
    waiting = tuple(
        f"{r.get('kind')}/{r.get('name')} is {_m(r.get('health')).get('status')}"
        for r in _l(_status(app).get("resources"))
        if wave is not None
        and r.get("syncWave", 0) == wave
        and _m(r.get("health")).get("status") not in (None, "Healthy")
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
    for entry in reversed(_l(_status(app).get("history"))):
        who = _m(entry.get("initiatedBy"))
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
    state = _m(_status(app).get("operationState"))
    operation = _m(state.get("operation")) or _m(app.get("operation"))
    limit = _m(operation.get("retry")).get("limit")
    if not isinstance(limit, int):
        return ""
    made = state.get("retryCount") if isinstance(state.get("retryCount"), int) else 0
    return f"{made} of {'unlimited' if int(limit) < 0 else limit} retries used"


def _ignored(app: Obj) -> tuple[str, ...]:
    out = []
    for rule in _l(_m(app.get("spec")).get("ignoreDifferences")):
        what = "/".join(str(rule.get(k)) for k in ("group", "kind", "name") if rule.get(k))
        lists = [rule.get(k) for k in ("jsonPointers", "jqPathExpressions")]
        paths = [str(p) for found in lists if isinstance(found, list) for p in found]
        found = rule.get("managedFieldsManagers")
        managers = [f"manager {m}" for m in found] if isinstance(found, list) else []
        out.append(f"{what}: {', '.join([*paths, *managers]) or 'everything'}")
    return tuple(out)


def app_page(
    app: Obj,
    *,
    live_by_key: Mapping[tuple[str, str, str], Obj],
    owned: Sequence[Obj],
    commit_messages: Mapping[str, str],
) -> AppPage:
    status, spec = _status(app), _m(app.get("spec"))
    source = _source(app)
    destination = _m(spec.get("destination"))
    state = _m(status.get("operationState"))
    automated = _m(spec.get("syncPolicy")).get("automated")
    return AppPage(
        row=app_row(app),
        repo=redact_url_credentials(str(source.get("repoURL") or "")),
        path=str(source.get("path") or source.get("chart") or ""),
        target=str(source.get("targetRevision") or "HEAD"),
        destination=f"{destination.get('server') or destination.get('name') or ''} "
        f"ns={destination.get('namespace') or ''}",
        health_message=redact_url_credentials(
            str(_m(status.get("health")).get("message") or "")
        ),
        requested=describe_operation(app["operation"])
        if isinstance(app.get("operation"), Mapping) else "",
        operation=wave_wait(app),
        last_result=describe_state(state) if state.get("phase") in _ENDED else "",
        conditions=tuple(
            (str(c.get("type")), redact_url_credentials(str(c.get("message"))))
            for c in _l(status.get("conditions"))
        ),
        retry=_retry(app),
        tree=resource_tree(app, live_by_key, owned),
        history=history_rows(app, commit_messages),
        ignored=_ignored(app),
        automated=isinstance(automated, Mapping) and automated.get("enabled", True) is not False,
    )
