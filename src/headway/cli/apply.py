"""`headway apply -f` and `headway delete` against the local runtime's store, or a
Kubernetes cluster with `--kubeconfig` / `--context`."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from headway.cli.objects import resolve_kind
from headway.cli.targets import Context, Kubeconfig, Target, open_target
from headway.cluster.errors import ClusterError, FieldConflict, Invalid, NotFound
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj

if TYPE_CHECKING:  # the store, the schemas and YAML load when a command runs, not for --help
    from headway.cluster.local.api.schemas import FieldValidation
    from headway.cluster.local.api.store import LocalCluster
    from headway.model.yamlload import Document

StateDir = Annotated[
    Path, typer.Option("--state-dir", file_okay=False, help="Runtime state directory.")
]
DEFAULT_STATE = Path(".headway")
FIELD_MANAGER = "headway-cli"


STDIN = Path("-")
STDIN_LABEL = "<stdin>"


def _read(file: Path) -> str:
    """A file's text, or standard input's for `-` (as `kubectl apply -f -`)."""
    if file == STDIN:
        return sys.stdin.buffer.read().decode("utf-8")
    return file.read_text(encoding="utf-8")


def _documents(path: Path) -> list[Document]:
    from headway.model.schema import describe
    from headway.model.yamlload import load_documents

    files = (
        sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
        if path != STDIN and path.is_dir()
        else [path]
    )
    docs: list[Document] = []
    problems: list[object] = []
    for file in files:
        label = STDIN_LABEL if file == STDIN else str(file)
        try:
            result = load_documents(_read(file), label)
        except OSError as err:
            typer.echo(f"error: {label}: {err.strerror or err}", err=True)
            raise typer.Exit(1) from None
        except UnicodeDecodeError:
            typer.echo(f"error: {label}:1: not UTF-8 text", err=True)
            raise typer.Exit(1) from None
        problems += result.diagnostics
        # A list or a scalar is not an object: say so rather than apply the rest silently.
        problems += [
            f"{d.file}:{d.line}: expected a Kubernetes object (a mapping), got {describe(d.obj)}"
            for d in result.documents
            if not isinstance(d.obj, dict)
        ]
        docs += [d for d in result.documents if isinstance(d.obj, dict)]
    if problems:
        for problem in problems:
            typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(1)
    return docs


def _label(obj: Mapping[str, Any]) -> str:
    """kubectl's `kind.group/name`, with `(no name)` for an object that has none."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    kind = str(obj.get("kind") or "(no kind)").lower()
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return f"{kind}{'.' + group if group else ''}/{name or '(no name)'}"


def apply(
    filename: Annotated[
        list[Path],
        typer.Option(
            "-f",
            "--filename",
            help="A YAML file, a directory, or - for standard input; repeat for more, applied "
            "in order (as kubectl).",
        ),
    ],
    *,
    namespace: Annotated[
        str, typer.Option("-n", "--namespace", help="For objects that do not name one.")
    ] = "default",
    state_dir: StateDir = DEFAULT_STATE,
    force_conflicts: Annotated[
        bool,
        typer.Option(
            "--force-conflicts", help="Take over fields another manager owns (as kubectl does)."
        ),
    ] = False,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    validate: Annotated[
        str,
        typer.Option(
            "--validate",
            help="Unknown fields: strict refuses the object, warn prints them and drops them, "
            "ignore drops them silently. Wrong types are refused whatever this says.",
        ),
    ] = "strict",
) -> None:
    """Server-side apply every object in the file(s) (field manager `headway-cli`)."""
    from headway.cluster.local.api.objects import validate_object

    field_validation = _field_validation(validate)
    # Every file is read before anything is applied: a YAML error in any of them applies
    # nothing, as within one file.
    docs = [doc for path in filename for doc in _documents(path)]
    failed = False
    with open_target(Target(state_dir, kubeconfig, context), need_store=False) as cluster:
        for doc in docs:
            obj = dict(doc.obj)
            try:
                validate_object(obj)  # before reading its metadata: it may not be a mapping
                meta = dict(obj["metadata"])
                if not meta.get("namespace") and _namespaced(cluster, obj):
                    meta["namespace"] = namespace
                obj["metadata"] = meta
                ensure_control_namespace(cluster, meta.get("namespace"))
                before = _existing(cluster, obj)
                after = _apply(cluster, doc, obj, force=force_conflicts,
                               field_validation=field_validation)
            except FieldConflict as err:
                fields = ", ".join(f"{path} (owned by {owner})" for path, owner in err.conflicts)
                typer.echo(
                    f"error: {doc.file}:{doc.line}: {_label(doc.obj)}: conflict on {fields}; "
                    "re-run with --force-conflicts to take these fields over (a controller "
                    "that owns them may set them back)",
                    err=True,
                )
                failed = True
                continue
            except Invalid as err:
                _report_invalid(doc, err)
                failed = True
                continue
            except ClusterError as err:
                typer.echo(f"error: {doc.file}:{doc.line}: {_label(doc.obj)}: {err}", err=True)
                failed = True
                continue
            verb = (
                "created"
                if before is None
                else (
                    "unchanged"
                    if before.get("metadata", {}).get("resourceVersion")
                    == after["metadata"].get("resourceVersion")
                    else "configured"
                )
            )
            typer.echo(f"{_label(doc.obj)} {verb}")
    if failed:
        raise typer.Exit(1)


def _field_validation(flag: str) -> FieldValidation:
    """kubectl's `--validate` value as Kubernetes' `fieldValidation` (`true`/`false` are
    kubectl's older spellings of strict/ignore)."""
    spelled: dict[str, FieldValidation] = {
        "strict": "Strict", "true": "Strict", "warn": "Warn", "ignore": "Ignore", "false": "Ignore",
    }
    chosen = spelled.get(flag.lower())
    if chosen is None:
        typer.echo(f"error: --validate must be strict, warn or ignore, not {flag!r}", err=True)
        raise typer.Exit(1)
    return chosen


def _apply(
    cluster: Cluster, doc: Document, obj: Obj, *, force: bool, field_validation: FieldValidation
) -> Obj:
    """Apply with the field validation asked for; the local store's unknown fields are
    printed here, with their lines, before `Warn` drops them."""
    from headway.cluster.local.api.store import LocalCluster

    if field_validation == "Warn" and isinstance(cluster, LocalCluster):
        _warn_unknown_fields(cluster, doc, obj)
    return cluster.apply(obj, field_manager=FIELD_MANAGER, force=force,
                         field_validation=field_validation)


def _report_invalid(doc: Document, err: Invalid) -> None:
    """One line per field at fault, at that field's line in the file."""
    if not err.causes:
        typer.echo(f"error: {doc.file}:{doc.line}: {_label(doc.obj)}: {err}", err=True)
        return
    from headway.model.yamlload import format_path

    for path, message in sorted(err.causes, key=lambda cause: doc.line_of(cause[0])):
        where = f"{doc.file}:{doc.line_of(path)}"
        typer.echo(f"error: {where}: {_label(doc.obj)}: {format_path(path)}: {message}",
                   err=True)


def _warn_unknown_fields(cluster: LocalCluster, doc: Document, obj: Obj) -> None:
    from headway.model.yamlload import format_path

    for problem in cluster.schema_problems(obj):
        if problem.unknown:
            where = f"{doc.file}:{doc.line_of(problem.path)}"
            typer.echo(
                f"warning: {where}: {_label(doc.obj)}: {format_path(problem.path)}: unknown "
                "field (dropped)",
                err=True,
            )


def ensure_control_namespace(cluster: Cluster, namespace: object) -> None:
    """Create Headway's control namespace (`argocd`, where Applications and AppProjects live)
    the first time something is applied into it, as installing Argo CD would have: applying
    an Application must not depend on `headway serve` having run first."""
    from headway.controllers.app.definitions import DEFAULT_APPS_NAMESPACE

    if namespace != DEFAULT_APPS_NAMESPACE:
        return
    try:
        cluster.get("v1", "Namespace", DEFAULT_APPS_NAMESPACE, None)
    except NotFound:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        cluster.apply(body, field_manager=FIELD_MANAGER)
        typer.echo(f"namespace/{namespace} created (Headway's control namespace)")


def _namespaced(cluster: Cluster, obj: Obj) -> bool:
    kinds = {(k.api_version, k.kind): k.namespaced for k in cluster.discovery()}
    return kinds.get((str(obj.get("apiVersion")), str(obj.get("kind"))), True)


def _existing(cluster: Cluster, obj: Obj) -> Obj | None:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return None
    try:
        return cluster.get(
            str(obj.get("apiVersion")),
            str(obj.get("kind")),
            str(meta.get("name")),
            meta.get("namespace"),
        )
    except ClusterError:
        return None


def delete(
    kind: Annotated[str, typer.Argument(help="Kind, plural or short name.")],
    name: Annotated[str, typer.Argument(help="The object's name.")],
    *,
    namespace: Annotated[
        str, typer.Option("-n", "--namespace", help="The object's namespace.")
    ] = "default",
    state_dir: StateDir = DEFAULT_STATE,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Delete an object; its dependents go too (background propagation)."""
    with open_target(Target(state_dir, kubeconfig, context)) as cluster:
        rk = resolve_kind(cluster, kind)
        try:
            cluster.delete(rk.api_version, rk.kind, name, namespace if rk.namespaced else None)
        except NotFound:
            typer.echo(f'error: {rk.plural} "{name}" not found', err=True)
            raise typer.Exit(1) from None
        typer.echo(f'{rk.kind.lower()} "{name}" deleted')


def register(app: typer.Typer) -> None:
    app.command("apply")(apply)
    app.command("delete")(delete)
