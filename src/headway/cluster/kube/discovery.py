"""Which kinds an API server serves, read from its discovery documents.

`kinds_in` is purely computational (one `APIResourceList` -> the kinds it names, with
whether each has the `status` and `scale` subresources). `Discovery` fetches `/api/v1`,
`/apis` and every group-version, and keeps the answer until it is told the served kinds may
have changed: a CustomResourceDefinition written or deleted through this client, or a
request that names a kind the cached answer does not hold (someone else added a CRD).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from headway.cluster import errors
from headway.cluster.kube.transport import Transport
from headway.cluster.protocol import ResourceKind

__all__ = ["Discovery", "ServedKind", "kinds_in"]


@dataclass(frozen=True)
class ServedKind:
    kind: ResourceKind
    has_status: bool
    has_scale: bool
    # Its verbs include `list` and `watch`: what can be kept in view. A review kind is only
    # created; metrics.k8s.io's kinds (metrics-server, the local runtime) are only listed.
    listable: bool = True

    def collection_path(self, namespace: str | None) -> str:
        api_version = self.kind.api_version
        root = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        if self.kind.namespaced and namespace:
            return f"{root}/namespaces/{namespace}/{self.kind.plural}"
        return f"{root}/{self.kind.plural}"

    def object_path(self, name: str, namespace: str | None) -> str:
        return f"{self.collection_path(namespace)}/{name}"


def kinds_in(resource_list: dict[str, Any]) -> list[ServedKind]:
    """The kinds of one group-version's `APIResourceList` (subresources folded in)."""
    api_version = str(resource_list.get("groupVersion", ""))
    resources = [r for r in resource_list.get("resources") or [] if isinstance(r, dict)]
    names = {str(r.get("name", "")) for r in resources}
    served = []
    for resource in resources:
        plural = str(resource.get("name", ""))
        if not plural or "/" in plural:
            continue
        kind = ResourceKind(api_version=api_version, kind=str(resource.get("kind", "")),
                            plural=plural, namespaced=bool(resource.get("namespaced")))
        verbs = resource.get("verbs")
        listable = not isinstance(verbs, list) or {"list", "watch"} <= set(verbs)
        served.append(ServedKind(kind=kind, has_status=f"{plural}/status" in names,
                                 has_scale=f"{plural}/scale" in names, listable=listable))
    return served


class Discovery:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._served: dict[tuple[str, str], ServedKind] | None = None

    def invalidate(self) -> None:
        self._served = None

    def all(self) -> list[ServedKind]:
        if self._served is None:
            self._served = {(s.kind.api_version, s.kind.kind): s for s in self._fetch()}
        return list(self._served.values())

    def find(self, api_version: str, kind: str) -> ServedKind:
        """The served kind, fetching discovery again once when the cached answer lacks it."""
        for attempt in range(2):
            if attempt or self._served is None:
                self.invalidate()
                self.all()
            assert self._served is not None
            found = self._served.get((api_version, kind))
            if found is not None:
                return found
        raise errors.UnknownKind(f"the cluster does not serve {kind} in {api_version}")

    def _fetch(self) -> list[ServedKind]:
        versions = ["v1"]
        groups = self._transport.request("GET", "/apis", what="discovery /apis")
        for group in groups.get("groups") or []:
            versions += [str(v["groupVersion"]) for v in group.get("versions") or []]
        served: list[ServedKind] = []
        for api_version in versions:
            path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            try:
                served += kinds_in(self._transport.request("GET", path, what=f"discovery {path}"))
            except errors.UnknownKind:  # removed between the two reads (a CRD deleted)
                continue
        return served
