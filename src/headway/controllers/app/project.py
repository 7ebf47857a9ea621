"""An Application's AppProject, read from the store, and the checks made with it.

AppProjects are read from the control namespace only, whatever namespace the Application
lives in, so a team that can create objects in its own namespace cannot bring its own
project. A missing project is an error, `default` included: Headway never invents a
permissive project (Argo CD's API server creates a `default` that allows everything).
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

__all__ = ["ProjectGuard", "ProjectReader", "load_project"]


def _parse(obj: Mapping[str, Any], where: str) -> AppProject:
    project, diagnostics = parse_appproject(Document(dict(obj), where, 0, 0))
    errors = [d for d in diagnostics if d.severity == "error"]
    if project is None or errors:
        raise ValueError(f"{where} is invalid: " + "; ".join(str(d) for d in errors or diagnostics))
    return project


def load_project(cluster: Cluster, name: str, control_namespace: str) -> AppProject:
    """The named AppProject of the control namespace; `ValueError` with the reason when it
    is missing or invalid."""
    return _parse(_read(cluster, name, control_namespace), f"AppProject {control_namespace}/{name}")


class ProjectReader:
    """`load_project` that parses each version of a project once: every step of every
    Application read and parsed its AppProject again (about a tenth of a step where nothing
    changed). A parse is kept by the object's namespace, name, uid and resourceVersion (the
    store gives every change a new one); an object without both is parsed every time, and an
    invalid one is never kept."""

    def __init__(self, max_entries: int = 256) -> None:
        self._max = max_entries
        self._parsed: dict[tuple[str, str, str, str], AppProject] = {}

    def load(self, cluster: Cluster, name: str, control_namespace: str) -> AppProject:
        obj = _read(cluster, name, control_namespace)
        meta = obj.get("metadata") or {}
        uid, version = meta.get("uid"), meta.get("resourceVersion")
        where = f"AppProject {control_namespace}/{name}"
        if not uid or not version:
            return _parse(obj, where)
        key = (control_namespace, name, str(uid), str(version))
        known = self._parsed.get(key)
        if known is None:
            known = _parse(obj, where)
            if len(self._parsed) >= self._max:
                self._parsed.clear()
            self._parsed[key] = known
        return known


def _read(cluster: Cluster, name: str, control_namespace: str) -> Mapping[str, Any]:
    try:
        obj = cluster.get("argoproj.io/v1alpha1", "AppProject", name, control_namespace)
    except NotFound:
        raise ValueError(
            f"application references project {name} which does not exist "
            f"(AppProjects are read from namespace {control_namespace})"
        ) from None
    except ClusterError as err:
        raise ValueError(f"cannot read project {name}: {err}") from None
    return obj


@dataclass(frozen=True)
class ProjectGuard:
    """The project's refusals for one app's destination and resources."""

    project: AppProject
    server: str
    cluster_name: str
    # Kinds discovery (or a CRD in the app) says are cluster-scoped, beyond the built-in table:
    # a cluster-scoped custom kind must meet clusterResourceWhitelist, not the namespace rules.
    cluster_scoped: frozenset[tuple[str, str]] = frozenset()
    # A namespace-scoped destination (its cluster Secret's `namespaces`): writes go only
    # there, and cluster-scoped kinds only with `clusterResources: "true"`, as in Argo CD.
    cluster_namespaces: tuple[str, ...] = ()
    cluster_resources: bool = False

    def source(self, repo_url: str) -> str | None:
        refusal = rules.source_refusal(self.project.name, self.project.spec, repo_url)
        return None if refusal is None else str(refusal)

    def destination(self, namespace: str) -> str | None:
        if self.cluster_namespaces and namespace not in self.cluster_namespaces:
            return (
                f"cluster {self.cluster_name} ({self.server}) is limited to namespaces "
                f"{', '.join(self.cluster_namespaces)} by its cluster Secret: "
                f"namespace {namespace or '-'} is not one of them"
            )
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
        namespaced = namespaced and (key.group, key.kind) not in self.cluster_scoped
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
        if not namespaced and self.cluster_namespaces and not self.cluster_resources:
            return (
                f"{key.group or 'core'}/{key.kind} {key.name}: cluster {self.cluster_name} is "
                "limited to namespaces by its cluster Secret, which does not set "
                'clusterResources: "true"'
            )
        # A namespaced object written without a namespace lands in `default`.
        return self.destination(key.namespace or "default") if namespaced else None
