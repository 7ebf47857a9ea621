"""The comparison behind `headway app diff` and the dashboard's diff: the app rendered from
Git by the caller (a cache of its own, never the controller's: a hard refresh by nature) and
compared with live, ignoreDifferences applied."""

from __future__ import annotations

from pathlib import Path

from headway.clock import Clock
from headway.cluster.protocol import Cluster
from headway.controllers.app.controller import ApplicationController
from headway.controllers.app.sources import SourceReader
from headway.controllers.cluster_registry import ClusterRegistry
from headway.engine.destinations import connect_destination
from headway.source.git import GitCache
from headway.source.plugins import PluginConfigError, load_plugins
from headway.sync.comparison import Comparison

__all__ = ["compare"]


def compare(
    cluster: Cluster, *, state_dir: Path, clock: Clock, name: str, namespace: str
) -> tuple[Comparison | None, list[str]]:
    """The comparison, or the errors that prevent it (a missing app raises `NotFound`)."""
    try:  # the plugins serve runs by default; `serve --plugins-dir` elsewhere is not known here
        plugins = load_plugins(state_dir / "plugins")
    except PluginConfigError as err:
        return None, [str(err)]
    reader = SourceReader(git=GitCache(state_dir / "git-cache-cli"), clock=clock, plugins=plugins)
    clusters = ClusterRegistry(cluster, connect=connect_destination, clock=clock)
    controller = ApplicationController(
        store=cluster, clusters=clusters, sources=reader, clock=clock
    )
    try:
        return controller.compare(name, namespace)
    finally:
        clusters.close()
