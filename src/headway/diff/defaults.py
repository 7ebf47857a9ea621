"""Defaults the API server fills in, added to live objects that lack them.

Only the live side is defaulted: a field the desired manifest omits is never compared
(apply would leave it alone), but a field the manifest spells out must compare equal to a
live object read from a store that does not default (Headway's local backend) or from an
older server. Replica counts are never defaulted (an autoscaler owns them).
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any, TypeGuard

from headway.model.obj import Obj

# A part of an object that the defaulting fills in place.
Fields = MutableMapping[str, Any]

__all__ = ["image_pull_policy", "with_defaults"]

_WORKLOADS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Rollout"})


def image_pull_policy(image: str) -> str:
    """`Always` for `:latest` or no tag, `IfNotPresent` for any other tag or a digest."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "Always"
    return "Always" if last.rsplit(":", 1)[1] == "latest" else "IfNotPresent"


def with_defaults(obj: Obj) -> Obj:
    """A copy of a live object with Kubernetes' defaults filled where fields are missing.

    Only the maps and lists on the way to a filled field are copied; every other value is
    shared with `obj` (a deep copy of each live object was a large part of a fleet refresh),
    so callers must treat the result as read-only.
    """
    out = dict(obj)
    kind = out.get("kind")
    spec = _own(out, "spec")
    if not _is_map(spec):
        return out
    for fill in _BY_KIND.get(str(kind), ()):
        fill(spec)
    if kind == "Pod":
        _pod_spec(spec, restart_default="Always")
    elif kind in _WORKLOADS:
        template = _template(spec)
        if template is not None:
            _pod_spec(template, restart_default=None if kind == "Job" else "Always")
    return out


def _is_map(value: Any) -> TypeGuard[Fields]:
    """`isinstance(value, MutableMapping)`, answered by `type` first for a plain dict (an ABC
    check per field was a visible part of a fleet refresh)."""
    return type(value) is dict or isinstance(value, MutableMapping)


def _template(spec: Fields) -> Fields | None:
    template = _own(spec, "template")
    if _is_map(template):
        pod_spec = _own(template, "spec")
        if _is_map(pod_spec):
            return pod_spec
    return None


def _own(parent: Fields, key: str) -> Any:
    """`parent[key]`, replaced first by a shallow copy of itself when it is a map or a list,
    so that filling it leaves the object it came from alone."""
    value = parent.get(key)
    if _is_map(value):
        value = parent[key] = dict(value)
    elif isinstance(value, list):
        value = parent[key] = list(value)
    return value


def _own_or_default(parent: Fields, key: str, default: dict[str, Any]) -> Any:
    """As `parent.setdefault(key, default)`, with an existing value owned (see `_own`)."""
    if key not in parent:
        parent[key] = default
        return default
    return _own(parent, key)


def _own_items(parent: Fields, key: str) -> list[Fields]:
    """The maps in the list `parent[key]`, each owned (see `_own`), ready to be filled."""
    items = _own(parent, key)
    if not isinstance(items, list):
        return []
    for index, item in enumerate(items):
        if _is_map(item):
            items[index] = dict(item)
    return [item for item in items if isinstance(item, dict)]


def _pod_spec(spec: Fields, *, restart_default: str | None) -> None:
    if restart_default is not None:
        spec.setdefault("restartPolicy", restart_default)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    for key in ("containers", "initContainers"):
        for container in _own_items(spec, key):
            _container(container)


def _container(container: Fields) -> None:
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})
    if isinstance(container.get("image"), str):
        container.setdefault("imagePullPolicy", image_pull_policy(container["image"]))
    for port in _own_items(container, "ports"):
        port.setdefault("protocol", "TCP")


def _deployment(spec: Fields) -> None:
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = _own_or_default(spec, "strategy", {"type": "RollingUpdate"})
    if isinstance(strategy, MutableMapping) and strategy.get("type") == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {"maxUnavailable": "25%", "maxSurge": "25%"})


def _statefulset(spec: Fields) -> None:
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = _own_or_default(spec, "updateStrategy", {"type": "RollingUpdate"})
    if isinstance(strategy, MutableMapping) and strategy.get("type") == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {"partition": 0})


def _daemonset(spec: Fields) -> None:
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = _own_or_default(spec, "updateStrategy", {"type": "RollingUpdate"})
    if isinstance(strategy, MutableMapping) and strategy.get("type") == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {"maxUnavailable": 1, "maxSurge": 0})


def _job(spec: Fields) -> None:
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completions", 1)
    spec.setdefault("parallelism", 1)


def _service(spec: Fields) -> None:
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    for port in _own_items(spec, "ports"):
        port.setdefault("protocol", "TCP")
        if "port" in port:
            port.setdefault("targetPort", port["port"])


_BY_KIND: dict[str, tuple[Callable[[Fields], None], ...]] = {
    "Deployment": (_deployment,),
    "StatefulSet": (_statefulset,),
    "DaemonSet": (_daemonset,),
    "Job": (_job,),
    "Service": (_service,),
}
