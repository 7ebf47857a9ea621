"""Which generated Applications the controller may write: project rules and destinations
held for each one before it exists. Pure.

Argo CD validates each generated Application's project and destination and leaves an invalid
one out (ErrorOccurred: ApplicationValidationError) while writing the others. Headway applies
the whole AppProject here — source repositories and destinations, not only that the project
exists — so an ApplicationSet cannot create an Application its project would refuse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from headway.appset.generate import GeneratedApp
from headway.appset.inputs import IN_CLUSTER_NAME, IN_CLUSTER_SERVER, ClusterSecret
from headway.model.appproject import AppProject
from headway.sync import project as rules

__all__ = ["refusals"]


def refusals(
    apps: Sequence[GeneratedApp],
    *,
    projects: Mapping[str, AppProject | None],
    clusters: Sequence[ClusterSecret],
) -> dict[str, str]:
    """{Application name: why it may not be written} for the generated apps refused."""
    out: dict[str, str] = {}
    for app in apps:
        reason = _refusal(app.manifest, projects, clusters)
        if reason:
            out[app.name] = f"application {app.name}: {reason}"
    return out


def _refusal(
    manifest: Mapping[str, Any],
    projects: Mapping[str, AppProject | None],
    clusters: Sequence[ClusterSecret],
) -> str:
    spec = manifest.get("spec") or {}
    name = str(spec.get("project") or "")
    project = projects.get(name)
    if project is None:
        return f"application references project {name or '<empty>'} which does not exist"
    destination = spec.get("destination") or {}
    known = _resolve(destination, clusters)
    if known is None:
        wanted = destination.get("server") or destination.get("name") or "<empty>"
        return f"destination cluster {wanted} is not a known cluster (no cluster Secret names it)"
    sources = spec.get("sources") or ([spec["source"]] if spec.get("source") else [])
    for source in sources:
        refusal = rules.source_refusal(name, project.spec, str(source.get("repoURL") or ""))
        if refusal is not None:
            return str(refusal)
    refusal = rules.destination_refusal(
        name,
        project.spec,
        server=known.server,
        name=known.name,
        namespace=str(destination.get("namespace") or ""),
    )
    return "" if refusal is None else str(refusal)


def _resolve(
    destination: Mapping[str, Any], clusters: Sequence[ClusterSecret]
) -> ClusterSecret | None:
    server = str(destination.get("server") or "").rstrip("/")
    name = str(destination.get("name") or "")
    every = [*clusters]
    if not any(c.server.rstrip("/") == IN_CLUSTER_SERVER for c in clusters):
        every.append(ClusterSecret(IN_CLUSTER_NAME, IN_CLUSTER_SERVER))
    for cluster in every:
        if server and cluster.server.rstrip("/") == server:
            return cluster
        if name and not server and cluster.name == name:
            return cluster
    return None
