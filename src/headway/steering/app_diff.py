"""The comparison behind `headway app diff` and the dashboard's diff: the app rendered from
Git by the caller (a Git cache of its own, never the controller's: a hard refresh by nature)
and compared with live, ignoreDifferences applied.

Sources are fetched as the controller fetches them: with the credentials of the Argo CD
repository Secrets in the store (Git ones for Git; `type: helm` ones, with their TLS and OCI
options and the CAs of `argocd-tls-certs-cm`, for chart repositories and OCI registries),
and charts come from the controller's persistent chart cache (`<state dir>/chart-cache`),
so a chart the controller fetched renders here with its repository down. This process only
adds to that cache; eviction is left to the controller, which knows the bound `serve` was
given."""

from __future__ import annotations

import sys
from pathlib import Path

from headway.clock import Clock
from headway.cluster.protocol import Cluster
from headway.controllers.app.controller import ApplicationController
from headway.controllers.app.sources import SourceReader
from headway.controllers.cluster_registry import ClusterRegistry
from headway.controllers.repo_credentials import RepoCredentialsProvider
from headway.engine.destinations import connect_destination
from headway.source.git import GitCache
from headway.source.helm_repo import HelmCharts
from headway.source.plugins import PluginConfigError, load_plugins
from headway.sync.comparison import Comparison

__all__ = ["compare", "source_reader"]


def _report(line: str) -> None:
    print(line, file=sys.stderr, flush=True)  # stdout carries the diff


def source_reader(
    cluster: Cluster, *, state_dir: Path, clock: Clock
) -> tuple[SourceReader | None, list[str]]:
    """A reader with the store's repository credentials and the shared chart cache, or the
    errors that prevent one (the plugins serve runs by default cannot be read)."""
    try:  # the plugins serve runs by default; `serve --plugins-dir` elsewhere is not known here
        plugins = load_plugins(state_dir / "plugins")
    except PluginConfigError as err:
        return None, [str(err)]
    credentials = RepoCredentialsProvider(cluster, report=_report)
    charts = HelmCharts(
        state_dir / "chart-cache",
        credentials_for=credentials.helm,
        options_for=credentials.helm_options,
        in_use=lambda: None,  # None: evict nothing (the controller keeps the bound)
    )
    git = GitCache(state_dir / "git-cache-cli", credentials_for=credentials)
    return SourceReader(git=git, clock=clock, plugins=plugins, charts=charts), []


def compare(
    cluster: Cluster, *, state_dir: Path, clock: Clock, name: str, namespace: str
) -> tuple[Comparison | None, list[str]]:
    """The comparison, or the errors that prevent it (a missing app raises `NotFound`)."""
    reader, errors = source_reader(cluster, state_dir=state_dir, clock=clock)
    if reader is None:
        return None, errors
    clusters = ClusterRegistry(cluster, connect=connect_destination, clock=clock)
    controller = ApplicationController(
        store=cluster, clusters=clusters, sources=reader, clock=clock
    )
    try:
        return controller.compare(name, namespace)
    finally:
        clusters.close()
