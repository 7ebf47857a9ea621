"""Which cluster a command acts on: the local runtime's store (the default), or a
Kubernetes API server from a kubeconfig (`--kubeconfig`, `--context`) or, inside a Pod,
from its service account (`--in-cluster`). See docs/kubernetes.md."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from headway.cluster.errors import ClusterError
from headway.state_dir import RuntimePaths

if TYPE_CHECKING:
    from headway.cluster.protocol import Cluster

__all__ = ["Context", "InCluster", "Kubeconfig", "Target", "open_target"]

Kubeconfig = Annotated[Path | None, typer.Option(
    "--kubeconfig", exists=True, dir_okay=False,
    help="Act on the Kubernetes cluster of this kubeconfig instead of the local runtime.")]
Context = Annotated[str | None, typer.Option(
    "--context", help="The kubeconfig context (default: its current one); without "
    "--kubeconfig, from $KUBECONFIG or ~/.kube/config.")]
InCluster = Annotated[bool, typer.Option(
    "--in-cluster", help="Act on the cluster this runs in, as its Pod's service account.")]


class Target:
    """The flags that pick a cluster, gathered."""

    def __init__(self, state_dir: Path, kubeconfig: Path | None = None,
                 context: str | None = None, in_cluster: bool = False) -> None:
        self.state_dir, self.kubeconfig, self.context = state_dir, kubeconfig, context
        self.in_cluster = in_cluster

    @property
    def is_kubernetes(self) -> bool:
        return self.kubeconfig is not None or self.context is not None or self.in_cluster


@contextmanager
def open_target(target: Target, *, need_store: bool = True) -> Iterator[Cluster]:
    """The cluster the flags name; a one-line error and exit 1 when it cannot be opened.
    `need_store`: the local store must exist already (reads), else it is created."""
    if target.is_kubernetes:
        from headway.cluster.kube import KubeCluster

        try:
            kube = KubeCluster.connect(target.kubeconfig, target.context,
                                       in_cluster=target.in_cluster)
        except ClusterError as err:
            typer.echo(f"error: {err}", err=True)
            raise typer.Exit(1) from None
        with kube:
            yield kube
        return
    paths = RuntimePaths(target.state_dir)
    if need_store and not paths.db.exists():  # said before the store's modules load
        typer.echo(f"error: no store at {paths.db}; run `headway runtime up` first", err=True)
        raise typer.Exit(1)
    from headway.clock import SystemClock
    from headway.cluster.local.api.store import LocalCluster

    target.state_dir.mkdir(parents=True, exist_ok=True)
    with LocalCluster(paths.db, SystemClock()) as local:
        yield local
