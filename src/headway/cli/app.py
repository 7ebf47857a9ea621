"""`headway app`: list, get, diff, sync, history, rollback, terminate, confirm-prune (and,
from `app_edit`, create, set, delete, wait, manifests).

Commands that change something write to the Application in the store, as Argo CD's CLI
does: `sync` and `rollback` write an `operation` that the controller (`headway serve`)
executes and records in history; `terminate` marks the running operation Terminating;
`confirm-prune` sets `argocd.argoproj.io/deletion-approved`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from headway import kubetime
from headway.cli import app_view, app_wait
from headway.cluster.errors import NotFound
from headway.controllers.app.names import APP_API_VERSION, DEFAULT_APPS_NAMESPACE
from headway.redaction import redact_url_credentials
from headway.state_dir import RuntimePaths

if TYPE_CHECKING:  # the store, Git and the controllers load only in the commands using them
    from headway.cluster.local.api.store import LocalCluster
    from headway.sync.comparison import Comparison

__all__ = ["compare", "find", "open_store", "read_app", "register"]

StateDir = Annotated[Path, typer.Option("--state-dir", help="Runtime state directory.")]
AppsNamespace = Annotated[
    str, typer.Option("--app-namespace", "-N", help="Namespace of the Application object.")
]
ListNamespace = Annotated[
    str,
    typer.Option(
        "--app-namespace", "-N", help="Only Applications in this namespace (default: every one)."
    ),
]
DEFAULT_STATE = Path(".headway")
WHO = "headway-cli"  # the operations' initiatedBy.username and the field managers' prefix

apps = typer.Typer(
    help="Argo CD Applications: status, diff, operations, and create, set, delete and wait "
    "as `argocd app` does."
)


def open_store(state_dir: Path, *, create: bool = False) -> LocalCluster:
    """The store; without `create`, a missing one is an error pointing at `runtime up`."""
    paths = RuntimePaths(state_dir)
    if create:
        state_dir.mkdir(parents=True, exist_ok=True)
    elif not paths.db.exists():  # said before the store's modules load
        typer.echo(f"error: no store at {paths.db}; run `headway runtime up` first", err=True)
        raise typer.Exit(1)
    from headway.clock import SystemClock
    from headway.cluster.local.api.store import LocalCluster

    return LocalCluster(paths.db, SystemClock())


_open = open_store


def find(store: LocalCluster, name: str, namespace: str) -> dict[str, Any] | None:
    try:
        return store.get(APP_API_VERSION, "Application", name, namespace)
    except NotFound:
        return None


def read_app(store: LocalCluster, name: str, namespace: str) -> dict[str, Any]:
    """The Application, or exit 1 saying it is not found."""
    found = find(store, name, namespace)
    if found is None:
        typer.echo(f"error: application {namespace}/{name} not found", err=True)
        raise typer.Exit(1)
    return found


_get = read_app


def _destination_namespace(state_dir: Path, name: str, namespace: str) -> str:
    """The app's destination namespace: where its objects without one are compared."""
    with _open(state_dir) as store:
        app = _get(store, name, namespace)
    return str(((app.get("spec") or {}).get("destination") or {}).get("namespace") or "")


def compare(state_dir: Path, name: str, namespace: str) -> Comparison:
    """Render the app from Git in this process (fresh caches: a hard refresh by nature) and
    compare it with live; errors that prevent it end the command with exit 2."""
    from headway.clock import SystemClock
    from headway.steering.app_diff import compare as compare_app

    with _open(state_dir) as store:
        _get(store, name, namespace)
        comparison, errors = compare_app(
            store, state_dir=state_dir, clock=SystemClock(), name=name, namespace=namespace
        )
    if comparison is None:
        typer.echo(redact_url_credentials("error: " + "; ".join(errors)), err=True)
        raise typer.Exit(2)
    return comparison


def _steer(request: Callable[[], str]) -> None:
    """Print what `request` did, or exit 1 with the reason it was refused."""
    from headway.steering import apps as steering

    try:
        typer.echo(request())
    except steering.AppCommandError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None


def _wait(store: LocalCluster, app: dict[str, Any], timeout: float) -> None:
    """Follow the operation just requested on `app` (its state before the request) until it
    ends, printing each change of phase or message; real time: another process runs it."""
    name, namespace = app["metadata"]["name"], app["metadata"]["namespace"]
    waited = app_wait.wait(
        lambda: _get(store, name, namespace),
        previous=app_wait.operation_identity(app),
        timeout=timeout,
        monotonic=time.monotonic,
        pause=time.sleep,
        progress=lambda line: typer.echo(line, err=True),
    )
    prefix = "error: " if waited.error else ""
    typer.echo(prefix + waited.message, err=waited.error)
    raise typer.Exit(waited.code)


def _resource_selector(text: str, app: dict[str, Any]) -> dict[str, str]:
    """`KIND/NAME` or `GROUP/KIND/NAME`; the group of KIND/NAME comes from the app's status."""
    parts = text.split("/")
    if len(parts) == 3:
        return {"group": parts[0], "kind": parts[1], "name": parts[2]}
    if len(parts) != 2 or not all(parts):
        typer.echo(f"error: --resource {text!r}: expected KIND/NAME or GROUP/KIND/NAME", err=True)
        raise typer.Exit(2)
    kind, name = parts
    for r in (app.get("status") or {}).get("resources") or []:
        if r.get("kind") == kind and r.get("name") == name:
            return {"group": str(r.get("group") or ""), "kind": kind, "name": name}
    typer.echo(f"error: {kind}/{name} is not a resource of this application", err=True)
    raise typer.Exit(2)


@apps.command("list")
def list_apps(state_dir: StateDir = DEFAULT_STATE, namespace: ListNamespace = "") -> None:
    """Every Application (of one namespace with `-N`) with its sync status, health and last
    operation."""
    with _open(state_dir) as store:
        found = store.list(APP_API_VERSION, "Application", namespace=namespace or None)
    ordered = sorted(found, key=lambda a: (str(a["metadata"]["name"]), _namespace_of(a)))
    typer.echo(app_view.app_table(ordered))


def _namespace_of(app: dict[str, Any]) -> str:
    return str(app["metadata"].get("namespace") or "")


Refresh = Annotated[
    bool, typer.Option("--refresh", help="Ask the controller to read Git now, and wait for it.")
]
HardRefresh = Annotated[
    bool,
    typer.Option(
        "--hard-refresh", help="Like --refresh, and render and compare without any cache."
    ),
]


def _request_refresh(store: LocalCluster, name: str, namespace: str, *, hard: bool) -> None:
    from headway.steering import apps as steering

    steering.request_refresh(store, name, namespace, hard=hard, who=WHO)


def _refreshed(store: LocalCluster, name: str, namespace: str) -> None:
    """Wait for the controller to take the refresh request (it removes the annotation)."""
    taken = app_wait.wait_refreshed(
        lambda: _get(store, name, namespace),
        timeout=REFRESH_WAIT_SECONDS,
        monotonic=time.monotonic,
        pause=time.sleep,
    )
    if not taken:
        typer.echo(
            f"warning: the refresh was not taken within {REFRESH_WAIT_SECONDS:g}s "
            f"({app_wait.NO_CONTROLLER}); showing the last status",
            err=True,
        )


REFRESH_WAIT_SECONDS = 30.0


@apps.command("get")
def get_app(
    name: str,
    *,
    refresh: Refresh = False,
    hard_refresh: HardRefresh = False,
    state_dir: StateDir = DEFAULT_STATE,
    namespace: AppsNamespace = DEFAULT_APPS_NAMESPACE,
) -> None:
    """Status, conditions, the running operation's message and every resource; --refresh /
    --hard-refresh first have the controller compute them again (as argocd app get)."""
    with _open(state_dir) as store:
        _get(store, name, namespace)
        if refresh or hard_refresh:
            _request_refresh(store, name, namespace, hard=hard_refresh)
            _refreshed(store, name, namespace)
        typer.echo(redact_url_credentials(app_view.app_details(_get(store, name, namespace))))


@apps.command("diff")
def diff_app(
    name: str,
    *,
    refresh: Refresh = False,
    hard_refresh: HardRefresh = False,
    state_dir: StateDir = DEFAULT_STATE,
    namespace: AppsNamespace = DEFAULT_APPS_NAMESPACE,
) -> None:
    """A unified diff per resource between live and Git; exit code 1 when they differ. The
    diff is rendered from Git by this command, never from a cached render (chart archives
    come from the shared chart cache, by digest); --refresh / --hard-refresh also ask the
    controller to refresh the app's status."""
    from headway.controllers.app.rollout_owned import owned_field_notes
    from headway.diff import unified_diff

    if refresh or hard_refresh:
        with _open(state_dir) as store:
            _get(store, name, namespace)
            _request_refresh(store, name, namespace, hard=hard_refresh)
    comparison = compare(state_dir, name, namespace)
    sections = [
        unified_diff(f"{key.group}/{key.kind} {key.namespace}/{key.name}", d.diff_lines)
        for key, d in sorted(comparison.diffs.items())
        if d.modified
    ]
    typer.echo(redact_url_credentials("".join(sections)), nl=False)
    for note in owned_field_notes(comparison, _destination_namespace(state_dir, name, namespace)):
        typer.echo(f"note: {note}", err=True)  # on stderr: stdout stays a plain diff
    raise typer.Exit(1 if sections else 0)


@apps.command("sync")
def sync_app(
    name: str,
    *,
    prune: Annotated[bool, typer.Option("--prune", help="Delete what Git no longer has.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Dry-run only.")] = False,
    resource: Annotated[
        list[str] | None, typer.Option("--resource", help="Only KIND/NAME (repeatable).")
    ] = None,
    revision: Annotated[str, typer.Option("--revision", help="Sync to this revision.")] = "",
    retry_limit: Annotated[
        int,
        typer.Option(
            "--retry-limit", min=-1, help="Retry a failed sync this many times (-1: unlimited)."
        ),
    ] = 0,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the operation to end.")] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0, help="Seconds for --wait (0: no limit).")
    ] = 300.0,
    state_dir: StateDir = DEFAULT_STATE,
    namespace: AppsNamespace = DEFAULT_APPS_NAMESPACE,
) -> None:
    """Ask the controller to sync the application (recorded in history)."""
    from headway.steering import apps as steering

    with _open(state_dir) as store:
        app = _get(store, name, namespace)
        selected = [_resource_selector(r, app) for r in resource or []]
        if selected:
            typer.echo("warning: selective sync: hooks do not run", err=True)
        _steer(
            lambda: steering.request_sync(
                store,
                app,
                who=WHO,
                revisions=[revision] if revision else [],
                prune=prune,
                dry_run=dry_run,
                resources=selected,
                retry_limit=retry_limit,
            )
        )
        if wait:
            _wait(store, app, timeout)


@apps.command("history")
def history(
    name: str,
    state_dir: StateDir = DEFAULT_STATE,
    namespace: AppsNamespace = DEFAULT_APPS_NAMESPACE,
) -> None:
    """Every finished operation, oldest first."""
    with _open(state_dir) as store:
        app = _get(store, name, namespace)
    typer.echo(app_view.history_table((app.get("status") or {}).get("history") or []))


@apps.command("rollback")
def rollback(
    name: str,
    revision: Annotated[str, typer.Argument(help="A history ID, or a revision it records.")],
    reason: Annotated[
        str, typer.Option("--reason", help="Why; written into the rollback's Git commit.")
    ] = "",
    state_dir: StateDir = DEFAULT_STATE,
    namespace: AppsNamespace = DEFAULT_APPS_NAMESPACE,
) -> None:
    """Roll back to the revision of a history entry: the files the Application reads are
    committed back as they were then (so automated sync keeps the rollback), and the
    Application syncs that commit. When Git cannot be written, the old commits are synced,
    the app shows DivergedFromGit with automated sync held, and `headway serve` pushes the
    commit once Git is back."""
    from headway.steering import apps as steering

    with _open(state_dir) as store:
        app = _get(store, name, namespace)
        branches = steering.git_branches(store, state_dir / "git-cache-cli")
        _steer(
            lambda: steering.request_rollback(
                store, app, who=WHO, wanted=revision, open_branch=branches, reason=reason
            )
        )


@apps.command("terminate")
def terminate(
    name: str,
    state_dir: StateDir = DEFAULT_STATE,
    namespace: AppsNamespace = DEFAULT_APPS_NAMESPACE,
) -> None:
    """Stop the running operation: running hooks are deleted and it ends Failed. A requested
    operation the controller has not started yet is withdrawn."""
    from headway.steering import apps as steering

    with _open(state_dir) as store:
        app = _get(store, name, namespace)
        _steer(lambda: steering.terminate(store, app, who=WHO))


@apps.command("confirm-prune")
def confirm_prune(
    name: str,
    state_dir: StateDir = DEFAULT_STATE,
    namespace: AppsNamespace = DEFAULT_APPS_NAMESPACE,
) -> None:
    """Approve the prunes a running operation waits for (`Prune=confirm`), or the deletions
    a deleted application waits for (`Delete=confirm`); refused when nothing waits."""
    from headway.controllers.app import operations as ops

    with _open(state_dir) as store:
        waiting = ops.waiting_for_confirmation(_get(store, name, namespace))
        if not waiting:
            typer.echo(f"error: nothing on {name} is waiting for confirmation", err=True)
            raise typer.Exit(1)
        now = datetime.now(UTC)
        store.apply(
            {
                "apiVersion": APP_API_VERSION,
                "kind": "Application",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "annotations": {ops.CONFIRM_PRUNE_ANNOTATION: kubetime.format_time(now)},
                },
            },
            field_manager="headway-cli-confirm-prune",
            force=True,
        )
        typer.echo(f"confirmed for {name}: {waiting}")


def register(app: typer.Typer) -> None:
    from headway.cli import app_edit  # create, set, delete, wait, manifests

    app_edit.add_commands(apps)
    app.add_typer(apps, name="app")
