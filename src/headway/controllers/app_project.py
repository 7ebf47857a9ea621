"""An Application's AppProject, read from the store, and the checks made with it.

When no AppProject named `default` exists, the built-in one applies, as in Argo CD:
every repository, every destination, every kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster
from headway.model.appproject import AppProject, parse_appproject
from headway.model.yamlload import Document
from headway.sync import project as rules
from headway.sync.resources import is_namespaced, key_of

__all__ = ["ProjectGuard", "load_project"]

_BUILTIN_DEFAULT = {
    "apiVersion": "argoproj.io/v1alpha1",
    "kind": "AppProject",
    "metadata": {"name": "default"},
    "spec": {
        "sourceRepos": ["*"],
        "destinations": [{"server": "*", "name": "*", "namespace": "*"}],
        "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
    },
}


def _parse(obj: Mapping[str, Any], where: str) -> AppProject:
    project, diagnostics = parse_appproject(Document(dict(obj), where, 0, 0))
    if project is None:
        raise ValueError("; ".join(str(d) for d in diagnostics))
    return project


def load_project(cluster: Cluster, name: str, namespace: str) -> AppProject:
    """The named AppProject; `ValueError` with the reason when it is missing or invalid."""
    try:
        obj = cluster.get("argoproj.io/v1alpha1", "AppProject", name, namespace)
    except NotFound:
        if name == "default":
            return _parse(_BUILTIN_DEFAULT, "built-in default project")
        raise ValueError(f"application references project {name} which does not exist") from None
    except ClusterError as err:
        raise ValueError(f"cannot read project {name}: {err}") from None
    return _parse(obj, f"AppProject {namespace}/{name}")


@dataclass(frozen=True)
class ProjectGuard:
    """The project's refusals for one app's destination and resources."""

    project: AppProject
    server: str
    cluster_name: str

    def source(self, repo_url: str) -> str | None:
        refusal = rules.source_refusal(self.project.name, self.project.spec, repo_url)
        return None if refusal is None else str(refusal)

    def destination(self, namespace: str) -> str | None:
        refusal = rules.destination_refusal(
            self.project.name,
            self.project.spec,
            server=self.server,
            name=self.cluster_name,
            namespace=namespace,
        )
        return None if refusal is None else str(refusal)

    def resource(self, obj: Mapping[str, Any]) -> str | None:
        """Why the project forbids this object (its kind, or its namespace), if it does."""
        key = key_of(obj)
        namespaced = is_namespaced(key.group, key.kind)
        refusal = rules.resource_refusal(
            self.project.name,
            self.project.spec,
            group=key.group,
            kind=key.kind,
            name=key.name,
            namespaced=namespaced,
        )
        if refusal is not None:
            return str(refusal)
        return self.destination(key.namespace) if namespaced and key.namespace else None
