"""`headway app create | set | delete | wait | manifests`: the verbs Argo CD users script with.

Added to the `headway app` group by `headway.cli.app.register`. Each writes or reads the
Application in the store, as `argocd app ...` does through the API server; the controller
(`headway serve`) acts on what they write.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Annotated, Any

import typer

from headway.cli import app as app_cli
from headway.cli import app_define as define
from headway.cli import app_view, app_wait
from headway.controllers.app.names import DEFAULT_APPS_NAMESPACE
from headway.redaction import redact_url_credentials

__all__ = ["add_commands"]

Repeated = list[str] | None
APP_KIND = "Application"
CLI_MANAGER = "headway-cli"


# `create` and `set` parameters that are repeated flags, and the AppFlags field of each
_REPEATED = {"sync_option": "sync_options", "values": "values", "helm_set": "helm_sets"}


def _flags(given: Mapping[str, Any]) -> define.AppFlags:
    """The spec flags of `create` and `set`, from the command's parameters (`ctx.params`),
    so the flags both take are turned into an `AppFlags` in one place."""
    fields = {f.name for f in dataclasses.fields(define.AppFlags)}
    scalars = {k: v for k, v in given.items() if k in fields and k not in _REPEATED}
    repeated: dict[str, Any] = {f: tuple(given.get(p) or ()) for p, f in _REPEATED.items()}
    return define.AppFlags(**scalars, **repeated)


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _edited(spec: dict[str, Any], flags: define.AppFlags) -> dict[str, Any]:
    try:
        return define.edit_spec(spec, flags)
    except define.FlagError as err:
        raise _fail(str(err), 2) from None


def _checked(app: dict[str, Any], verb: str) -> dict[str, Any]:
    errors = define.validation_errors(app, f"<app {verb}>")
    if errors:
        for problem in errors:
            typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)
    return app


# Flag declarations shared by create and set, as argocd names them.
Repo = Annotated[str | None, typer.Option("--repo", help="The Git (or Helm) repository URL.")]
SourcePath = Annotated[str | None, typer.Option("--path", help="The path in the repository.")]
Revision = Annotated[
    str | None, typer.Option("--revision", help="Branch, tag or commit to track (targetRevision).")
]
Chart = Annotated[str | None, typer.Option("--helm-chart", help="A Helm chart name (Helm repos).")]
DestServer = Annotated[
    str | None, typer.Option("--dest-server", help="The destination cluster's API URL.")
]
DestName = Annotated[
    str | None, typer.Option("--dest-name", help="The destination cluster's name.")
]
DestNamespace = Annotated[
    str | None, typer.Option("--dest-namespace", help="The namespace to deploy into.")
]
Project = Annotated[str | None, typer.Option("--project", help="The AppProject.")]
SyncPolicy = Annotated[
    str | None,
    typer.Option("--sync-policy", help="none (manual sync) or automated (auto, automatic)."),
]
AutoPrune = Annotated[
    bool | None,
    typer.Option("--auto-prune/--no-auto-prune", help="Automated sync deletes what Git dropped."),
]
SelfHeal = Annotated[
    bool | None,
    typer.Option("--self-heal/--no-self-heal", help="Automated sync reverts live changes."),
]
SyncOption = Annotated[
    Repeated, typer.Option("--sync-option", help="A sync option, e.g. CreateNamespace=true.")
]
Values = Annotated[Repeated, typer.Option("--values", help="A Helm values file (repeatable).")]
HelmSet = Annotated[
    Repeated, typer.Option("--helm-set", help="A Helm parameter NAME=VALUE (repeatable).")
]
Recurse = Annotated[
    bool | None,
    typer.Option("--directory-recurse/--no-directory-recurse", help="Read sub-directories."),
]


def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The Application's name.")],
    *,
    repo: Repo = None,
    path: SourcePath = None,
    revision: Revision = None,
    chart: Chart = None,
    dest_server: DestServer = None,
    dest_name: DestName = None,
    dest_namespace: DestNamespace = None,
    project: Project = None,
    sync_policy: SyncPolicy = None,
    auto_prune: AutoPrune = None,
    self_heal: SelfHeal = None,
    sync_option: SyncOption = None,
    values: Values = None,
    helm_set: HelmSet = None,
    directory_recurse: Recurse = None,
    label: Annotated[Repeated, typer.Option("--label", help="A label KEY=VALUE.")] = None,
    upsert: Annotated[
        bool, typer.Option("--upsert", help="Replace the spec of an existing application.")
    ] = False,
    state_dir: app_cli.StateDir = app_cli.DEFAULT_STATE,
    namespace: app_cli.AppsNamespace = DEFAULT_APPS_NAMESPACE,
) -> None:
    """Create an Application from flags (as `argocd app create`); an existing one with another
    spec is refused unless --upsert."""
    from headway.cli.apply import ensure_control_namespace

    flags = dataclasses.replace(_flags(ctx.params), project=project or "default")
    try:
        labels = define.parse_labels(label or [])
    except define.FlagError as err:
        raise _fail(str(err), 2) from None
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    body = {"apiVersion": "argoproj.io/v1alpha1", "kind": APP_KIND, "metadata": metadata}
    body["spec"] = _edited({}, flags)
    _checked(body, "create")
    with app_cli.open_store(state_dir, create=True) as store:
        existing = app_cli.find(store, name, namespace)
        if existing is not None and existing.get("spec") == body["spec"]:
            typer.echo(f"application '{name}' unchanged")
            return
        if existing is not None and not upsert:
            raise _fail(f"application '{name}' exists with a different spec; use --upsert to "
                        "replace it")
        ensure_control_namespace(store, namespace)
        if existing is None:
            store.apply(body, field_manager=CLI_MANAGER, force=True)
        else:  # --upsert replaces the spec whole, whoever wrote its fields
            _replace_spec(store, existing, body)
    typer.echo(f"application '{name}' {'updated' if existing else 'created'}")


def _replace_spec(store: Any, existing: dict[str, Any], body: dict[str, Any]) -> None:
    from headway.cluster.errors import Conflict

    meta = dict(existing["metadata"])
    meta["labels"] = {**(meta.get("labels") or {}), **(body["metadata"].get("labels") or {})}
    kept = {k: v for k, v in existing.items() if k != "status"}
    try:
        store.update({**kept, "metadata": meta, "spec": body["spec"]}, field_manager=CLI_MANAGER)
    except Conflict:
        name = existing["metadata"]["name"]
        raise _fail(f"{name} changed while it was replaced; try again") from None


def set_app(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The Application's name.")],
    *,
    repo: Repo = None,
    path: SourcePath = None,
    revision: Revision = None,
    chart: Chart = None,
    dest_server: DestServer = None,
    dest_name: DestName = None,
    dest_namespace: DestNamespace = None,
    project: Project = None,
    sync_policy: SyncPolicy = None,
    auto_prune: AutoPrune = None,
    self_heal: SelfHeal = None,
    sync_option: SyncOption = None,
    values: Values = None,
    helm_set: HelmSet = None,
    directory_recurse: Recurse = None,
    state_dir: app_cli.StateDir = app_cli.DEFAULT_STATE,
    namespace: app_cli.AppsNamespace = DEFAULT_APPS_NAMESPACE,
) -> None:
    """Change an Application's spec from flags (as `argocd app set`); other fields stay."""
    from headway.cluster.errors import Conflict

    flags = _flags(ctx.params)
    with app_cli.open_store(state_dir) as store:
        app = app_cli.read_app(store, name, namespace)
        body = {k: v for k, v in app.items() if k != "status"}
        body["spec"] = _edited(dict(app.get("spec") or {}), flags)
        if body["spec"] == app.get("spec"):
            typer.echo(f"application '{name}' unchanged")
            return
        _checked(body, "set")
        try:
            store.update(body, field_manager=CLI_MANAGER)
        except Conflict:
            raise _fail(f"{name} changed while it was edited; try again") from None
    typer.echo(f"application '{name}' updated")


def delete(
    name: Annotated[str, typer.Argument(help="The Application's name.")],
    *,
    cascade: Annotated[
        bool,
        typer.Option("--cascade/--no-cascade", help="Also delete the app's resources."),
    ] = True,
    propagation_policy: Annotated[
        str,
        typer.Option(
            "--propagation-policy", "-p", help="foreground or background (with --cascade)."
        ),
    ] = "foreground",
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    state_dir: app_cli.StateDir = app_cli.DEFAULT_STATE,
    namespace: app_cli.AppsNamespace = DEFAULT_APPS_NAMESPACE,
) -> None:
    """Delete an Application, and with --cascade (the default) every resource it deployed:
    the controller deletes them, then the Application goes (as `argocd app delete`)."""
    from headway.controllers.app import deletion as app_deletion

    finalizers = {
        "foreground": app_deletion.RESOURCES_FINALIZER,
        "background": app_deletion.RESOURCES_FINALIZER_BACKGROUND,
    }
    if propagation_policy not in finalizers:
        raise _fail(f"--propagation-policy {propagation_policy!r}: foreground or background", 2)
    what = f"'{name}' and all its resources" if cascade else f"'{name}' (its resources stay)"
    if not yes and not typer.confirm(f"Are you sure you want to delete {what}?"):
        raise _fail("not deleted")
    with app_cli.open_store(state_dir) as store:
        app = app_cli.read_app(store, name, namespace)
        meta = dict(app["metadata"])
        kept = [f for f in meta.get("finalizers") or [] if f not in finalizers.values()]
        meta["finalizers"] = [*kept, finalizers[propagation_policy]] if cascade else kept
        if meta["finalizers"] != (app["metadata"].get("finalizers") or []):
            store.update({**{k: v for k, v in app.items() if k != "status"}, "metadata": meta},
                         field_manager=CLI_MANAGER)
        store.delete("argoproj.io/v1alpha1", APP_KIND, name, namespace)
    ending = "; the controller deletes its resources first" if cascade else ""
    typer.echo(f"application '{name}' deleted{ending}")


def wait(
    name: Annotated[str, typer.Argument(help="The Application's name.")],
    *,
    sync: Annotated[bool, typer.Option("--sync", help="Wait until Synced.")] = False,
    health: Annotated[bool, typer.Option("--health", help="Wait until Healthy.")] = False,
    operation: Annotated[
        bool, typer.Option("--operation", help="Wait until no operation is pending or running.")
    ] = False,
    suspended: Annotated[
        bool, typer.Option("--suspended", help="Suspended counts as reached (with --health).")
    ] = False,
    degraded: Annotated[
        bool, typer.Option("--degraded", help="Degraded counts as reached (with --health).")
    ] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0, help="Give up after this many seconds (0: never).")
    ] = 0,
    state_dir: app_cli.StateDir = app_cli.DEFAULT_STATE,
    namespace: app_cli.AppsNamespace = DEFAULT_APPS_NAMESPACE,
) -> None:
    """Wait until the Application is Synced, Healthy and has no operation in progress (or
    only what --sync/--health/--operation choose), as `argocd app wait`: exit 0 when it is,
    20 on --timeout or when its health turns Degraded."""
    want = app_wait.WaitFor(sync, health, operation, suspended, degraded).or_default()
    with app_cli.open_store(state_dir) as store:
        app_cli.read_app(store, name, namespace)
        waited = app_wait.wait_for_state(
            lambda: app_cli.read_app(store, name, namespace),
            want=want,
            timeout=timeout,
            monotonic=time.monotonic,
            pause=time.sleep,
            progress=typer.echo,
        )
        details = app_view.app_details(app_cli.read_app(store, name, namespace))
        typer.echo(redact_url_credentials(details))
    typer.echo(("error: " if waited.error else "") + waited.message, err=waited.error)
    raise typer.Exit(waited.code)


def manifests(
    name: Annotated[str, typer.Argument(help="The Application's name.")],
    *,
    source: Annotated[
        str, typer.Option("--source", help="git (rendered from Git) or live (in the cluster).")
    ] = "git",
    state_dir: app_cli.StateDir = app_cli.DEFAULT_STATE,
    namespace: app_cli.AppsNamespace = DEFAULT_APPS_NAMESPACE,
) -> None:
    """Print the app's desired manifests as rendered from Git now (a fresh fetch and render;
    only chart archives come from the shared chart cache, by digest), as they will be
    applied; --source live prints what the cluster holds."""
    import yaml

    if source not in ("git", "live"):
        raise _fail(f"--source {source!r}: git or live", 2)
    comparison = app_cli.compare(state_dir, name, namespace)
    objects = (
        list(comparison.desired)
        if source == "git"
        else [comparison.live[key] for key in sorted(comparison.live)]
    )
    for obj in objects:
        text = yaml.safe_dump(_masked_secret(obj), sort_keys=False)
        typer.echo(redact_url_credentials("---\n" + text), nl=False)


SECRET_MASK = "++++++++"


def _masked_secret(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """A Secret's values masked, as Argo CD's API masks them in manifests it shows."""
    if obj.get("kind") != "Secret" or obj.get("apiVersion") != "v1":
        return obj
    masked = dict(obj)
    for key in ("data", "stringData"):
        if isinstance(obj.get(key), dict):
            masked[key] = dict.fromkeys(obj[key], SECRET_MASK)
    return masked


def add_commands(apps: typer.Typer) -> None:
    """Add the commands to the `headway app` group (once: tests register twice)."""
    if any(c.name == "create" for c in apps.registered_commands):
        return
    apps.command("create")(create)
    apps.command("set")(set_app)
    apps.command("delete")(delete)
    apps.command("wait")(wait)
    apps.command("manifests")(manifests)
