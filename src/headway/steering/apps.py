"""Manual operations on an Argo CD Application, as `argocd app` performs them: the request is
written to the Application and the controller (`headway serve`) carries it out.

* sync / rollback: an `operation` (refused while one is requested or running, as Argo CD
  refuses with "another operation is already in progress"); a rollback first writes the
  restored source to Git (docs/convergence.md), so it is allowed under automated sync,
  which Argo CD refuses; with Git unreachable it syncs the old commits and leaves the commit
  in the outbox (`controllers.convergence.rollback_outbox`);
* terminate: the running operation becomes `Terminating`; a requested one not started yet
  is withdrawn;
* refresh: the `argocd.argoproj.io/refresh` annotation, removed by the controller once done.

`who` names the surface asking (`headway-cli`, `headway-dashboard`): it is the operation's
`initiatedBy.username` and the prefix of the field managers written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from headway.cluster.errors import Conflict
from headway.cluster.protocol import Cluster
from headway.controllers.app import operations as ops
from headway.controllers.app.names import APP_API_VERSION, REFRESH_ANNOTATION
from headway.controllers.convergence.git import open_branch
from headway.controllers.convergence.rollback import (
    OpenBranch,
    RollbackCommits,
    RollbackPlan,
    RollbackRefused,
    write_rollback,
)
from headway.controllers.convergence.rollback_outbox import pending_annotation
from headway.controllers.repo_credentials import RepoCredentialsProvider
from headway.model.obj import Obj
from headway.source.errors import SourceError
from headway.source.git import GitCache
from headway.source.git_commits import BotIdentity
from headway.source.spec import raw_sources

__all__ = [
    "AppCommandError",
    "describe_operation",
    "describe_state",
    "git_branches",
    "history_match",
    "request_refresh",
    "request_rollback",
    "request_sync",
    "rollback_plan",
    "terminate",
    "withdraw_operation",
]


class AppCommandError(Exception):
    """A request that cannot be carried out; the message says why."""


def describe_operation(operation: Mapping[str, Any]) -> str:
    """One line for a requested `operation`: `sync to REV (prune, dry run) of KIND/NAME by WHO`."""
    sync = operation.get("sync") or {}
    text = "sync to " + (str(sync.get("revision") or "")[:12] or "the target revision")
    flags = [f for f, on in (("prune", sync.get("prune")), ("dry run", sync.get("dryRun"))) if on]
    if flags:
        text += f" ({', '.join(flags)})"
    selected = sync.get("resources") or []
    if selected:
        text += " of " + ",".join(f"{r.get('kind')}/{r.get('name')}" for r in selected)
    who = operation.get("initiatedBy") or {}
    return text + " by " + ("automated sync" if who.get("automated") else str(who.get("username")))


def describe_state(state: Mapping[str, Any]) -> str:
    """`PHASE: message` of an operation state (the message only when there is one)."""
    message = state.get("message")
    return f"{state.get('phase')}: {message}" if message else str(state.get("phase"))


def _check_no_operation(app: Obj) -> None:
    name = app["metadata"]["name"]
    state = (app.get("status") or {}).get("operationState")
    if isinstance(app.get("operation"), dict):
        raise AppCommandError(
            f"{name} already has a requested operation the controller has not started:"
            f" {describe_operation(app['operation'])}; wait for it, or withdraw it with"
            f" `headway app terminate {name}`"
        )
    if ops.is_running(state):
        raise AppCommandError(
            f"another operation is already in progress on {name}: {describe_state(state or {})}"
        )


def _write_operation(
    cluster: Cluster,
    app: Obj,
    operation: Obj,
    *,
    who: str,
    annotations: Mapping[str, str] | None = None,
) -> None:
    """Write `operation` (and `annotations` with it) unless one is pending or running; the
    read `resourceVersion` makes the check and the write one step, so two requests racing
    cannot both win."""
    name = app["metadata"]["name"]
    _check_no_operation(app)
    body = {k: v for k, v in app.items() if k != "status"}
    if annotations:
        meta = body["metadata"]
        merged = {**(meta.get("annotations") or {}), **annotations}
        body["metadata"] = {**meta, "annotations": merged}
    try:
        cluster.update({**body, "operation": operation}, field_manager=f"{who}-operation")
    except Conflict:
        raise AppCommandError(
            f"{name} changed while the operation was written; try again"
        ) from None


def request_sync(
    cluster: Cluster,
    app: Obj,
    *,
    who: str,
    revisions: Sequence[str] = (),
    prune: bool = False,
    dry_run: bool = False,
    resources: Sequence[Mapping[str, str]] = (),
    retry_limit: int = 0,
) -> str:
    operation = ops.sync_operation(
        initiated_by=who,
        revisions=list(revisions),
        prune=prune,
        dry_run=dry_run,
        resources=[dict(r) for r in resources],
        retry_limit=retry_limit,
    )
    _write_operation(cluster, app, operation, who=who)
    return f"sync of {app['metadata']['name']} requested"


def history_match(entries: Sequence[Mapping[str, Any]], wanted: str) -> list[Mapping[str, Any]]:
    """Entries with the history ID `wanted`; failing that, whose revision starts with it
    (at least 7 characters, so a short ID is never read as a revision prefix)."""
    by_id = [e for e in entries if str(e.get("id")) == wanted]
    if by_id or len(wanted) < 7:
        return by_id
    return [e for e in entries if str(e.get("revision", "")).startswith(wanted.lower())]


def _synced_revisions(app: Obj, count: int) -> tuple[str, ...]:
    sync = (app.get("status") or {}).get("sync") or {}
    listed = sync.get("revisions") or [sync.get("revision") or ""]
    return tuple(str(r or "") for r in [*listed, *[""] * count][:count])


def git_branches(cluster: Cluster, cache_dir: Path) -> OpenBranch:
    """Branches to write a rollback to, through a Git cache at `cache_dir` (one per process:
    the CLI's is not `headway serve`'s), with the credentials of the repository Secrets."""
    git = GitCache(cache_dir, credentials_for=RepoCredentialsProvider(cluster))
    identity = BotIdentity()
    return lambda url, revision: open_branch(git, url, revision, identity)


def rollback_plan(app: Obj, entry: Mapping[str, Any], *, who: str, reason: str) -> RollbackPlan:
    """What a rollback to history `entry` writes to Git, and who asked why."""
    sources = tuple(raw_sources(app))
    revisions = entry.get("revisions") or [entry.get("revision")]
    if len(revisions) != len(sources):
        raise AppCommandError(
            f"history {entry.get('id')} records {len(revisions)} revisions but the Application"
            f" has {len(sources)} sources now; roll back by editing Git"
        )
    meta = app["metadata"]
    return RollbackPlan(
        app=f"{meta.get('namespace')}/{meta['name']}",
        who=who,
        reason=reason or f"rollback to history {entry.get('id')}",
        history_id=str(entry.get("id")),
        sources=sources,
        from_revisions=_synced_revisions(app, len(sources)),
        to_revisions=tuple(str(r) for r in revisions),
    )


def _automated_prune(app: Obj) -> bool:
    """A rollback prunes what the restored source no longer has exactly when automated sync
    would (`automated.prune`); by hand, pruning stays a separate, explicit sync."""
    automated = ((app.get("spec") or {}).get("syncPolicy") or {}).get("automated")
    return isinstance(automated, dict) and bool(automated.get("prune"))


def request_rollback(
    cluster: Cluster,
    app: Obj,
    *,
    who: str,
    wanted: str,
    open_branch: OpenBranch,
    reason: str = "",
) -> str:
    """Roll back to the revision of history entry `wanted` (an ID, or a revision it records):
    the source is restored in Git as it was then (`write_rollback`), and the Application is
    synced to that commit, so automated sync keeps the rollback instead of undoing it."""
    name = app["metadata"]["name"]
    match = history_match((app.get("status") or {}).get("history") or [], wanted)
    if not match:
        raise AppCommandError(f"no history entry {wanted!r} (see `headway app history`)")
    entry = match[-1]
    plan = rollback_plan(app, entry, who=who, reason=reason)
    _check_no_operation(app)  # before Git is written, so a refusal leaves Git as it was
    pending: dict[str, str] = {}
    try:
        written = write_rollback(plan, open_branch=open_branch)
    except RollbackRefused as err:
        raise AppCommandError(f"rollback of {name} not done: {err}") from None
    except SourceError as err:
        # Git is unreachable: roll the cluster back to the old commits now and leave the
        # commit in the outbox, written with the request so neither exists without the other.
        pending = pending_annotation(plan, error=str(err))
        written = RollbackCommits(
            plan.to_revisions, (), f"Git could not be written ({err}); the commit is pending"
            " and is pushed when Git is back; until then the app is diverged from Git and"
            " automated sync holds"
        )
    operation = ops.sync_operation(
        initiated_by=who, revisions=list(written.revisions), prune=_automated_prune(app)
    )
    _write_operation(cluster, app, operation, who=who, annotations=pending)
    return (
        f"rollback of {name} to {plan.to_revisions[0][:12]} (history {entry.get('id')})"
        f" requested; {written.summary}"
    )


def terminate(cluster: Cluster, app: Obj, *, who: str) -> str:
    """Stop the running operation (it ends Failed), or withdraw a requested one."""
    name, namespace = app["metadata"]["name"], app["metadata"]["namespace"]
    if isinstance(app.get("operation"), dict):
        return withdraw_operation(cluster, app, who=who)
    status = dict(app.get("status") or {})
    state = dict(status.get("operationState") or {})
    if not ops.is_running(state):
        raise AppCommandError(f"no operation is running on {name}")
    status["operationState"] = {**state, "phase": "Terminating"}
    cluster.patch_status(
        APP_API_VERSION,
        "Application",
        name,
        namespace,
        status,
        resource_version=app["metadata"]["resourceVersion"],
    )
    return f"operation on {name} is terminating"


def withdraw_operation(cluster: Cluster, app: Obj, *, who: str) -> str:
    name = app["metadata"]["name"]
    pending = describe_operation(app["operation"])
    body = {k: v for k, v in app.items() if k not in ("status", "operation")}
    try:
        cluster.update(body, field_manager=f"{who}-operation")
    except Conflict:  # the controller took it meanwhile: terminate that instead
        raise AppCommandError(
            f"{name} changed meanwhile (the controller may have started it); run terminate again"
        ) from None
    return f"requested operation on {name} withdrawn: {pending}"


def request_refresh(cluster: Cluster, name: str, namespace: str, *, hard: bool, who: str) -> None:
    """Write `argocd.argoproj.io/refresh` for the controller, which removes it once done."""
    annotations = {REFRESH_ANNOTATION: "hard" if hard else "normal"}
    body = {
        "apiVersion": APP_API_VERSION,
        "kind": "Application",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
    }
    cluster.apply(body, field_manager=f"{who}-refresh", force=True)
