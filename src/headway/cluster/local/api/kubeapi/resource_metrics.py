"""`metrics.k8s.io/v1beta1`, as metrics-server serves it, so `kubectl top pod` works.

PodMetrics carry each running container's usage — CPU in nanocores, memory (resident bytes)
in Ki — measured by the runtime from its processes (`ContainerUsage`, the kubelet's /proc
meter). A Pod whose containers have no CPU rate yet (the first read) is left out, as
metrics-server leaves out a Pod it has scraped once. NodeMetrics: the one node, `localhost`,
with the summed usage of the Pods' containers (the runtime's own share of the machine; the
rest of the machine is not the cluster's). Read-only: list and get.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from headway.cluster.local.api.kubeapi.paths import ResourcePath
from headway.cluster.local.api.kubeapi.status import ApiError
from headway.cluster.local.api.store import LocalCluster
from headway.model.obj import Obj
from headway.model.selectors import parse_selector

__all__ = ["GROUP", "ContainerUsage", "answer", "group_entry", "resource_list"]

GROUP, VERSION = "metrics.k8s.io", "v1beta1"
NODE = "localhost"
ContainerUsage = Callable[[Obj], Mapping[str, tuple[float | None, float | None]]]
"""A Pod -> its running containers' (CPU cores, memory bytes); None while unmeasured."""
_WINDOW = "1s"  # the meter's shortest interval between two reads


def group_entry() -> dict[str, Any]:
    version = {"groupVersion": f"{GROUP}/{VERSION}", "version": VERSION}
    return {"name": GROUP, "versions": [version], "preferredVersion": version}


def resource_list() -> dict[str, Any]:
    def entry(plural: str, kind: str, namespaced: bool) -> dict[str, Any]:
        return {"name": plural, "singularName": "", "namespaced": namespaced, "kind": kind,
                "verbs": ["get", "list"]}
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{GROUP}/{VERSION}",
            "resources": [entry("nodes", "NodeMetrics", False),
                          entry("pods", "PodMetrics", True)]}


def answer(cluster: LocalCluster, usage: ContainerUsage, path: ResourcePath,
           query: Mapping[str, str], *, now: str) -> Obj:
    """The PodMetrics/NodeMetrics (or list) `path` names; 404 for anything else."""
    if path.version != VERSION or path.subresource:
        raise _missing(path)
    if path.plural == "pods":
        items = _pod_metrics(cluster, usage, path, query, now=now)
        return _one_or_list(items, path, "PodMetrics")
    if path.plural == "nodes" and path.namespace is None:
        every = _pod_metrics(cluster, usage, ResourcePath(GROUP, VERSION, "pods"), {}, now=now)
        node = _node_metrics(every, now=now)
        return _one_or_list([node] if path.name in ("", NODE) else [], path, "NodeMetrics")
    raise _missing(path)


def _missing(path: ResourcePath) -> ApiError:
    what = f"{path.plural}.{GROUP} \"{path.name}\"" if path.name else path.plural
    return ApiError(404, "NotFound", f"{what} not found")


def _one_or_list(items: list[Obj], path: ResourcePath, kind: str) -> Obj:
    if path.name:
        if not items:
            raise _missing(path)
        return items[0]
    return {"kind": f"{kind}List", "apiVersion": f"{GROUP}/{VERSION}", "metadata": {},
            "items": items}


def _pod_metrics(cluster: LocalCluster, usage: ContainerUsage, path: ResourcePath,
                 query: Mapping[str, str], *, now: str) -> list[Obj]:
    selector = parse_selector(query.get("labelSelector", ""))
    found: list[Obj] = []
    for pod in cluster.list("v1", "Pod", namespace=path.namespace):
        meta = pod["metadata"]
        if (path.name and meta["name"] != path.name) or not selector.matches(
                meta.get("labels") or {}):
            continue
        containers = usage(pod)
        if not containers or any(cpu is None for cpu, _ in containers.values()):
            continue
        found.append({
            "kind": "PodMetrics", "apiVersion": f"{GROUP}/{VERSION}",
            "metadata": {"name": meta["name"], "namespace": meta.get("namespace"),
                         "labels": meta.get("labels") or {}, "creationTimestamp": now},
            "timestamp": now, "window": _WINDOW,
            "containers": [{"name": name, "usage": _usage(cpu, memory)}
                           for name, (cpu, memory) in containers.items()],
        })
    return found


def _node_metrics(pods: list[Obj], *, now: str) -> Obj:
    cpu = sum(_nanocores(c["usage"]["cpu"]) for p in pods for c in p["containers"])
    memory = sum(_kib(c["usage"]["memory"]) for p in pods for c in p["containers"])
    return {"kind": "NodeMetrics", "apiVersion": f"{GROUP}/{VERSION}",
            "metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE},
                         "creationTimestamp": now},
            "timestamp": now, "window": _WINDOW,
            "usage": {"cpu": f"{cpu}n", "memory": f"{memory}Ki"}}


def _usage(cpu: float | None, memory: float | None) -> dict[str, str]:
    return {"cpu": f"{round((cpu or 0.0) * 1e9)}n", "memory": f"{round((memory or 0.0) / 1024)}Ki"}


def _nanocores(text: str) -> int:
    return int(text.removesuffix("n"))


def _kib(text: str) -> int:
    return int(text.removesuffix("Ki"))
