"""`headway cluster list|add|rm`: the destination clusters Argo CD cluster Secrets register,
in the cluster Headway runs against (the local runtime's store by default, or
`--kubeconfig`/`--context`). See docs/kubernetes.md, multi-cluster."""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from headway.cli.help_paragraphs import one_line_paragraphs
from headway.cli.targets import Context, InCluster, Kubeconfig, Target, open_target
from headway.cluster.cluster_secrets import (
    IN_CLUSTER_NAME,
    IN_CLUSTER_SERVER,
    SECRET_TYPE_LABEL,
    ClusterCredentials,
    ClusterSecret,
    ClusterSecretError,
    ExecProvider,
    TLSClientConfig,
    cluster_secret_manifest,
    normalize_server,
    parse_cluster_secret,
)
from headway.cluster.errors import ClusterError
from headway.cluster.protocol import Cluster

CONTROL_NAMESPACE = "argocd"
FIELD_MANAGER = "headway-cli"
StateDir = Annotated[
    Path, typer.Option("--state-dir", file_okay=False, help="Runtime state directory.")
]
cluster_app = typer.Typer(no_args_is_help=True, help=(
    "Destination clusters, registered as Argo CD cluster Secrets in namespace argocd of the "
    "cluster Headway runs against (the local runtime, or --kubeconfig/--context)."))


class KubeconfigError(ValueError):
    """A kubeconfig context that cannot be turned into a cluster Secret."""


def _secrets(cluster: Cluster) -> list[dict[str, Any]]:
    return cluster.list("v1", "Secret", namespace=CONTROL_NAMESPACE,
                        label_selector={SECRET_TYPE_LABEL: "cluster"})


def _auth(secret: ClusterSecret) -> str:
    creds = secret.credentials
    kinds = [label for label, present in (
        ("token", creds.bearer_token), ("basic", creds.password),
        ("client-cert", creds.tls.cert_data), ("exec", creds.exec_provider)) if present]
    return ",".join(kinds) or "none"


@cluster_app.command("list")
def list_clusters(
    state_dir: StateDir = Path(".headway"),
    kubeconfig: Kubeconfig = None, context: Context = None, in_cluster: InCluster = False,
) -> None:
    """The destinations: in-cluster, then every cluster Secret (credentials never shown)."""
    rows = [("NAME", "SERVER", "NAMESPACES", "AUTH", "SECRET")]
    with open_target(Target(state_dir, kubeconfig, context, in_cluster)) as cluster:
        found, problems = [], []
        for raw in _secrets(cluster):
            try:
                found.append(parse_cluster_secret(raw))
            except ClusterSecretError as err:
                problems.append(str(err))
    if not any(s.server == IN_CLUSTER_SERVER for s in found):
        rows.append((IN_CLUSTER_NAME, IN_CLUSTER_SERVER, "(all)", "(serve's own)", "-"))
    for secret in sorted(found, key=lambda s: (s.server != IN_CLUSTER_SERVER, s.name)):
        rows.append((secret.name, secret.server, ",".join(secret.namespaces) or "(all)",
                     _auth(secret), secret.secret_name))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        typer.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    for problem in problems:
        typer.echo(f"warning: {problem} (not a usable destination)", err=True)


@cluster_app.command("add")
@one_line_paragraphs
def add_cluster(
    kube_context: Annotated[str, typer.Argument(
        metavar="CONTEXT", help="The context of --from-kubeconfig whose cluster to register.")],
    *,
    from_kubeconfig: Annotated[Path | None, typer.Option(
        "--from-kubeconfig", exists=True, dir_okay=False,
        help="The kubeconfig holding CONTEXT (default: $KUBECONFIG or ~/.kube/config).")] = None,
    name: Annotated[str | None, typer.Option(
        "--name", help="The destination name Applications use (default: CONTEXT).")] = None,
    namespaces: Annotated[list[str] | None, typer.Option(
        "--namespace", help="Limit the destination to this namespace (repeat for more).")] = None,
    cluster_resources: Annotated[bool, typer.Option(
        "--cluster-resources", help="With --namespace: cluster-scoped kinds are allowed too.")]
    = False,
    upsert: Annotated[bool, typer.Option(
        "--upsert", help="Replace a registered cluster of the same name.")] = False,
    state_dir: StateDir = Path(".headway"),
    kubeconfig: Kubeconfig = None, context: Context = None, in_cluster: InCluster = False,
) -> None:
    """Register CONTEXT's cluster, with CONTEXT's own credentials, as a cluster Secret.

    Unlike `argocd cluster add`, nothing is installed in the target cluster (no
    ServiceAccount, no ClusterRole): the Secret holds the context's token, client
    certificate or exec plugin as they are, so Headway acts there as that user.
    """
    source = from_kubeconfig or Path(os.environ.get("KUBECONFIG") or "~/.kube/config")
    try:
        secret = secret_from_kubeconfig(source.expanduser(), kube_context, name=name,
                                        namespaces=tuple(namespaces or ()),
                                        cluster_resources=cluster_resources)
    except KubeconfigError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    with open_target(Target(state_dir, kubeconfig, context, in_cluster),
                     need_store=False) as cluster:
        _refuse_clash(cluster, secret, upsert=upsert)
        try:
            _ensure_namespace(cluster)
            cluster.apply(cluster_secret_manifest(secret, namespace=CONTROL_NAMESPACE),
                          field_manager=FIELD_MANAGER, force=True)
        except ClusterError as err:
            typer.echo(f"error: cannot write Secret {secret.secret_name}: {err}", err=True)
            raise typer.Exit(1) from None
    typer.echo(f"cluster {secret.name} ({secret.server}) added: Secret "
               f"{CONTROL_NAMESPACE}/{secret.secret_name}")


@cluster_app.command("rm")
@one_line_paragraphs
def remove_cluster(
    cluster_ref: Annotated[str, typer.Argument(
        metavar="NAME_OR_SERVER", help="The destination's name or server URL.")],
    state_dir: StateDir = Path(".headway"),
    kubeconfig: Kubeconfig = None, context: Context = None, in_cluster: InCluster = False,
) -> None:
    """Remove a registered cluster (deletes its Secret).

    Applications targeting it stop syncing with an InvalidSpecError; nothing is deleted in
    the cluster itself.
    """
    with open_target(Target(state_dir, kubeconfig, context, in_cluster)) as cluster:
        matches = [s for s in _parsed(cluster) if cluster_ref in (s.name, s.server)
                   or normalize_server(cluster_ref) == s.server]
        if not matches:
            known = "in-cluster is Headway's own cluster and has no Secret" if cluster_ref in (
                IN_CLUSTER_NAME, IN_CLUSTER_SERVER) else "no cluster Secret has that name or server"
            typer.echo(f"error: {cluster_ref}: {known} (see `headway cluster list`)", err=True)
            raise typer.Exit(1)
        for secret in matches:
            cluster.delete("v1", "Secret", secret.secret_name, CONTROL_NAMESPACE)
            typer.echo(f"cluster {secret.name} ({secret.server}) removed: Secret "
                       f"{CONTROL_NAMESPACE}/{secret.secret_name} deleted")


def _parsed(cluster: Cluster) -> list[ClusterSecret]:
    out = []
    for raw in _secrets(cluster):
        try:
            out.append(parse_cluster_secret(raw))
        except ClusterSecretError:
            continue
    return out


def _refuse_clash(cluster: Cluster, secret: ClusterSecret, *, upsert: bool) -> None:
    for other in _parsed(cluster):
        same_secret = other.secret_name == secret.secret_name
        clash = other.name == secret.name or other.server == secret.server
        if clash and not (upsert and same_secret):
            typer.echo(
                f"error: cluster {other.name} ({other.server}) is registered already "
                f"(Secret {other.secret_name}); --upsert replaces it, or choose --name",
                err=True,
            )
            raise typer.Exit(1)


def _ensure_namespace(cluster: Cluster) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": CONTROL_NAMESPACE}}
    try:
        cluster.get("v1", "Namespace", CONTROL_NAMESPACE)
    except ClusterError:
        cluster.apply(namespace, field_manager=FIELD_MANAGER)


def secret_name_for(name: str) -> str:
    """`cluster-<name>`, lower-cased to a valid object name."""
    slug = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:50] or "unnamed"
    return f"cluster-{slug}"


def secret_from_kubeconfig(path: Path, context: str, *, name: str | None = None,
                           namespaces: tuple[str, ...] = (),
                           cluster_resources: bool = False) -> ClusterSecret:
    """The cluster Secret for a kubeconfig context, its credentials as they are written
    there (files read and inlined)."""
    import yaml

    from headway.model.yamlload import load_one

    try:
        config = load_one(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as err:
        raise KubeconfigError(f"cannot read kubeconfig {path}: {err}") from None
    entry = _named(config, "contexts", context, path).get("context") or {}
    server = _named(config, "clusters", str(entry.get("cluster")), path).get("cluster") or {}
    user: dict[str, Any] = {}
    if entry.get("user"):
        user = _named(config, "users", str(entry["user"]), path).get("user") or {}
    if not server.get("server"):
        raise KubeconfigError(f"kubeconfig {path}: context {context}'s cluster has no server")
    base = path.parent
    tls = TLSClientConfig(
        insecure=bool(server.get("insecure-skip-tls-verify")),
        server_name=str(server.get("tls-server-name") or ""),
        ca_data=_data(server, "certificate-authority", base),
        cert_data=_data(user, "client-certificate", base),
        key_data=_data(user, "client-key", base),
    )
    creds = ClusterCredentials(
        bearer_token=_token(user, base), username=str(user.get("username") or ""),
        password=str(user.get("password") or ""), tls=tls, exec_provider=_exec(user),
    )
    destination = name or context
    return ClusterSecret(
        secret_name=secret_name_for(destination), name=destination,
        server=normalize_server(str(server["server"])), namespaces=namespaces,
        cluster_resources=cluster_resources, credentials=creds,
    )


def _named(config: Mapping[str, Any], section: str, name: str, path: Path) -> dict[str, Any]:
    for item in config.get(section) or []:
        if isinstance(item, Mapping) and item.get("name") == name:
            return dict(item)
    kind = section.removesuffix("s")
    raise KubeconfigError(f"kubeconfig {path} has no {kind} {name!r}")


def _data(values: Mapping[str, Any], key: str, base: Path) -> str:
    """`key-data` as written (base64), or the file `key` names read and encoded."""
    if values.get(f"{key}-data"):
        return str(values[f"{key}-data"])
    if not values.get(key):
        return ""
    file = (base / str(values[key])).expanduser()
    try:
        return base64.b64encode(file.read_bytes()).decode()
    except OSError as err:
        raise KubeconfigError(f"cannot read {key} {file}: {err.strerror or err}") from None


def _token(user: Mapping[str, Any], base: Path) -> str:
    if user.get("token"):
        return str(user["token"])
    if not user.get("tokenFile"):
        return ""
    try:
        return (base / str(user["tokenFile"])).read_text(encoding="utf-8").strip()
    except OSError as err:
        raise KubeconfigError(f"cannot read tokenFile: {err.strerror or err}") from None


def _exec(user: Mapping[str, Any]) -> ExecProvider | None:
    plugin = user.get("exec")
    if not isinstance(plugin, Mapping) or not plugin.get("command"):
        return None
    env = tuple((str(e.get("name")), str(e.get("value"))) for e in plugin.get("env") or []
                if isinstance(e, Mapping))
    return ExecProvider(
        command=str(plugin["command"]), args=tuple(str(a) for a in plugin.get("args") or []),
        env=env, api_version=str(plugin.get("apiVersion") or ExecProvider.api_version),
        install_hint=str(plugin.get("installHint") or ""),
    )


def register(app: typer.Typer) -> None:
    app.add_typer(cluster_app, name="cluster")
