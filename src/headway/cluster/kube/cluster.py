"""`KubeCluster`: the `Cluster` protocol over a Kubernetes API server.

Objects travel as plain dicts, whatever their kind (lightkube's typed models would drop
every field their schema version does not know on a round trip; the generic form keeps
them). Writes are server-side apply (`application/apply-patch+yaml` with `fieldManager`
and `force`), PUT with the `resourceVersion` precondition, the `status` and `scale`
subresources, and `DeleteOptions` with a propagation policy and preconditions; the server
does garbage collection, asynchronously on a real cluster. Errors are translated from the
answer's `Status` (statuses.py).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from headway.cluster import errors
from headway.cluster.cluster_secrets import ClusterSecret
from headway.cluster.kube import connection, watching
from headway.cluster.kube.discovery import Discovery, ServedKind
from headway.cluster.kube.streams import StreamHub
from headway.cluster.kube.transport import DEFAULT_RETRY, Params, RetryPolicy, Transport
from headway.cluster.protocol import (
    FieldValidation,
    ListPage,
    PropagationPolicy,
    ResourceKind,
    WatchEvent,
)
from headway.model.obj import Obj

__all__ = ["KubeCluster"]

CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
APPLY_PATCH = "application/apply-patch+yaml"  # JSON is YAML: the body is sent as JSON
STATUS_WRITE_ATTEMPTS = 5


def _selector(label_selector: Mapping[str, str] | str | None) -> str | None:
    if label_selector is None or isinstance(label_selector, str):
        return label_selector or None
    return ",".join(f"{k}={v}" for k, v in label_selector.items()) or None


def _dry(dry_run: bool) -> dict[str, str]:
    return {"dryRun": "All"} if dry_run else {}


def _describe(served: ServedKind, path: str) -> str:
    """`Deployment prod/web` (or `Deployment` for a collection) from a request path."""
    parts = path.strip("/").split("/")
    if parts[-1] in ("status", "scale") and len(parts) > 1 and parts[-2] != served.kind.plural:
        parts = parts[:-1]
    if parts[-1] == served.kind.plural:
        return served.kind.kind
    namespace = parts[parts.index("namespaces") + 1] if "namespaces" in parts else ""
    return f"{served.kind.kind} {namespace}/{parts[-1]}" if namespace else \
        f"{served.kind.kind} {parts[-1]}"


class KubeCluster:
    """A client of one API server. `backlog_idle_seconds`: see `watching`; `streams`:
    answer "what happened since" from one long-lived watch per kind (`streams.py`)."""

    def __init__(self, transport: Transport, *, backlog_idle_seconds: float = 0.25,
                 streams: bool = True) -> None:
        self.transport = transport
        self.kinds = Discovery(transport)
        self.backlog_idle_seconds = backlog_idle_seconds
        self.streams = StreamHub(transport) if streams else None

    @classmethod
    def connect(cls, kubeconfig: Path | None = None, context: str | None = None, *,
                in_cluster: bool = False, retry: RetryPolicy = DEFAULT_RETRY) -> KubeCluster:
        """A client from a kubeconfig file and context, or the Pod's service account
        (see `connection.load_config`)."""
        config = connection.load_config(kubeconfig, context, in_cluster=in_cluster)
        return cls(Transport(connection.http_client(config), retry=retry))

    @classmethod
    def for_destination(cls, cluster: ClusterSecret, *,
                        retry: RetryPolicy = DEFAULT_RETRY) -> KubeCluster:
        """A client of a destination registered by an Argo CD cluster Secret."""
        config = connection.destination_config(cluster)
        return cls(Transport(connection.http_client(config), retry=retry))

    def close(self) -> None:
        if self.streams is not None:
            self.streams.close()
        self.transport.close()

    def __enter__(self) -> KubeCluster:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ---- reads -----------------------------------------------------------------------

    def discovery(self) -> list[ResourceKind]:
        """The kinds that can be listed and watched (as Argo CD's cluster cache keeps them):
        a kind served without `watch` (metrics.k8s.io) would break every live-state read."""
        self.kinds.invalidate()
        return [served.kind for served in self.kinds.all() if served.listable]

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj:
        served = self._served(api_version, kind, namespace)
        path = served.object_path(name, self._namespace(served, namespace))
        return self._typed(served, self._call("GET", path, served))

    def list(self, api_version: str, kind: str, *, namespace: str | None = None,
             label_selector: Mapping[str, str] | str | None = None) -> list[Obj]:
        items: list[Obj] = []
        token: str | None = None
        while True:
            page = self.list_page(api_version, kind, namespace=namespace,
                                  label_selector=label_selector, limit=500,
                                  continue_token=token)
            items += page.items
            if not page.continue_token:
                return items
            token = page.continue_token

    def list_page(self, api_version: str, kind: str, *, namespace: str | None = None,
                  label_selector: Mapping[str, str] | str | None = None,
                  limit: int | None = None, continue_token: str | None = None) -> ListPage:
        served = self._served(api_version, kind, namespace)
        params: dict[str, str | int | bool] = {}
        selector = _selector(label_selector)
        if selector:
            params["labelSelector"] = selector
        if limit:
            params["limit"] = limit
        if continue_token:
            params["continue"] = continue_token
        body = self._call("GET", served.collection_path(namespace), served, params=params)
        meta = body.get("metadata") or {}
        remaining = meta.get("remainingItemCount")
        return ListPage(
            items=[self._typed(served, item) for item in body.get("items") or []],
            resource_version=str(meta.get("resourceVersion", "")),
            continue_token=str(meta.get("continue") or ""),
            remaining=int(remaining) if remaining is not None else None,
        )

    def get_scale(self, api_version: str, kind: str, name: str,
                  namespace: str | None = None) -> Obj:
        served = self._scalable(api_version, kind, name, namespace)
        path = served.object_path(name, self._namespace(served, namespace)) + "/scale"
        return dict(self._call("GET", path, served))

    def pod_log(self, name: str, namespace: str, *, container: str | None = None,
                previous: bool = False) -> str:
        """A container's output, as `kubectl logs` reads it (not part of `Cluster`)."""
        served = self._served("v1", "Pod", namespace)
        params: dict[str, str | int | bool] = {"previous": previous}
        if container:
            params["container"] = container
        path = served.object_path(name, namespace) + "/log"
        return self.transport.request_text("GET", path, params=params,
                                           what=f"Pod {namespace}/{name} log")

    def watch(self, api_version: str, kind: str, *, namespace: str | None = None,
              resource_version: str | None = None,
              timeout_seconds: float = 0.0) -> Iterator[WatchEvent]:
        served = self._served(api_version, kind, namespace)
        if self.streams is not None and resource_version is not None and timeout_seconds <= 0:
            streamed = self.streams.events_since(served, namespace, resource_version)
            if streamed is not None:
                return iter(streamed)
        request = watching.WatchRequest(
            served=served, namespace=namespace, resource_version=resource_version,
            timeout_seconds=timeout_seconds, backlog_idle_seconds=self.backlog_idle_seconds)
        return watching.watch_events(self.transport, request)

    def follow_from(self, api_version: str, kind: str, resource_version: str, *,
                    namespace: str | None = None) -> None:
        """The caller holds the kind's state at `resource_version` (it just listed): open
        its watch stream from there now (not part of `Cluster`; see streams.py)."""
        if self.streams is not None:
            served = self._served(api_version, kind, namespace)
            self.streams.follow_from(served, namespace, resource_version)

    # ---- writes ----------------------------------------------------------------------

    def apply(self, obj: Obj, *, field_manager: str, force: bool = False,
              dry_run: bool = False,
              field_validation: FieldValidation | None = None) -> Obj:
        """Server-side apply; `field_validation`, when given, is sent as `fieldValidation`
        (the server's default otherwise)."""
        served, name, namespace = self._target(obj)
        body = {k: v for k, v in obj.items() if k != "status"}  # apply never writes status
        params: dict[str, str | int | bool] = {"fieldManager": field_manager, "force": force,
                                               **_dry(dry_run)}
        if field_validation is not None:
            params["fieldValidation"] = field_validation
        path = served.object_path(name, namespace)
        live = self._call("PATCH", path, served, params=params, body=body,
                          content_type=APPLY_PATCH)
        self._crds_changed(served, dry_run)
        return self._typed(served, live)

    def update(self, obj: Obj, *, field_manager: str, dry_run: bool = False) -> Obj:
        served, name, namespace = self._target(obj)
        path = served.object_path(name, namespace)
        params = {"fieldManager": field_manager, **_dry(dry_run)}
        if served.has_status:  # the server keeps status on a PUT of the object itself
            body = self._call("PUT", path, served, params=params, body=obj)
        else:  # status is part of the object: carry the live one over
            body = self._replace_keeping_status(served, path, obj, params)
        self._crds_changed(served, dry_run)
        return self._typed(served, body)

    def _replace_keeping_status(self, served: ServedKind, path: str, obj: Obj,
                                params: Params) -> Any:
        pinned = bool((obj.get("metadata") or {}).get("resourceVersion"))
        for _ in range(STATUS_WRITE_ATTEMPTS):
            live = self._call("GET", path, served)
            body = copy.deepcopy(obj)
            body.pop("status", None)
            if "status" in live:
                body["status"] = live["status"]
            if not pinned:
                body.setdefault("metadata", {})["resourceVersion"] = live["metadata"][
                    "resourceVersion"]
            try:
                return self._call("PUT", path, served, params=params, body=body)
            except errors.Conflict:
                if pinned:
                    raise
        raise errors.Conflict(f"{served.kind.kind} {path}: changed on every attempt to write")

    def update_scale(self, api_version: str, kind: str, name: str,
                     namespace: str | None = None, *, replicas: int, field_manager: str,
                     resource_version: str | None = None, dry_run: bool = False) -> Obj:
        served = self._scalable(api_version, kind, name, namespace)
        where = self._namespace(served, namespace)
        meta: Obj = {"name": name}
        if where:
            meta["namespace"] = where
        if resource_version:
            meta["resourceVersion"] = resource_version
        scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": meta,
                 "spec": {"replicas": replicas}}
        params = {"fieldManager": field_manager, **_dry(dry_run)}
        path = served.object_path(name, where) + "/scale"
        return dict(self._call("PUT", path, served, params=params, body=scale))

    def patch_status(self, api_version: str, kind: str, name: str, namespace: str | None,
                     status: Obj, *, resource_version: str | None = None) -> Obj:
        """PUT of the status subresource (of the object itself for kinds without one), the
        live object with `status` in place; unpinned, it retries on a concurrent write."""
        served = self._served(api_version, kind, namespace)
        path = served.object_path(name, self._namespace(served, namespace))
        target = path + "/status" if served.has_status else path
        for _ in range(STATUS_WRITE_ATTEMPTS):
            live = self._call("GET", path, served)
            live["status"] = status
            if resource_version:
                live["metadata"]["resourceVersion"] = resource_version
            try:
                return self._typed(served, self._call("PUT", target, served, body=live))
            except errors.Conflict:
                if resource_version:
                    raise
        raise errors.Conflict(f"{kind} {name}: changed on every attempt to write its status")

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None, *,
               propagation_policy: PropagationPolicy = "Background", uid: str | None = None,
               resource_version: str | None = None) -> None:
        served = self._served(api_version, kind, namespace)
        options: Obj = {"apiVersion": "v1", "kind": "DeleteOptions",
                        "propagationPolicy": propagation_policy}
        preconditions = {k: v for k, v in (("uid", uid), ("resourceVersion", resource_version))
                         if v}
        if preconditions:
            options["preconditions"] = preconditions
        path = served.object_path(name, self._namespace(served, namespace))
        self._call("DELETE", path, served, body=options)
        self._crds_changed(served, dry_run=False)

    # ---- helpers ---------------------------------------------------------------------

    def _served(self, api_version: str, kind: str, namespace: str | None) -> ServedKind:
        served = self.kinds.find(api_version, kind)
        if namespace and not served.kind.namespaced:
            raise errors.Invalid(f"{kind} is cluster-scoped; it takes no namespace "
                                 f"({namespace!r})")
        return served

    @staticmethod
    def _namespace(served: ServedKind, namespace: str | None) -> str | None:
        return (namespace or "default") if served.kind.namespaced else None

    def _scalable(self, api_version: str, kind: str, name: str,
                  namespace: str | None) -> ServedKind:
        served = self._served(api_version, kind, namespace)
        if not served.has_scale:
            raise errors.NotFound(f"{kind} {name}: the kind has no scale subresource")
        return served

    def _target(self, obj: Obj) -> tuple[ServedKind, str, str | None]:
        meta = obj.get("metadata")
        if not isinstance(obj.get("apiVersion"), str) or not isinstance(obj.get("kind"), str):
            raise errors.Invalid("an object needs a string apiVersion and kind")
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
            raise errors.Invalid(f"{obj['kind']}: metadata.name must be a string")
        namespace = meta.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise errors.Invalid(f"{obj['kind']} {meta['name']}: a namespace must be a string")
        served = self._served(obj["apiVersion"], obj["kind"], namespace)
        return served, meta["name"], self._namespace(served, namespace)

    def _call(self, method: str, path: str, served: ServedKind, *,
              params: Params | None = None, body: Any = None,
              content_type: str = "application/json") -> Any:
        what = _describe(served, path)
        try:
            answer = self.transport.request(method, path, what=what, params=params, body=body,
                                            content_type=content_type)
            if self.streams is not None and method != "GET" and not (params or {}).get("dryRun"):
                self.streams.wrote(served, method, answer)
            return answer
        except errors.UnknownKind:  # the path is not served (any more): the kind went away
            self.kinds.invalidate()
            self.kinds.find(served.kind.api_version, served.kind.kind)
            raise errors.NotFound(f"{served.kind.kind} at {path} not found") from None

    def _crds_changed(self, served: ServedKind, dry_run: bool) -> None:
        if not dry_run and (served.kind.api_version, served.kind.kind) == CRD:
            self.kinds.invalidate()

    @staticmethod
    def _typed(served: ServedKind, obj: Any) -> Obj:
        """List items come without apiVersion and kind; every object leaves with them."""
        out = dict(obj)
        out.setdefault("apiVersion", served.kind.api_version)
        out.setdefault("kind", served.kind.kind)
        return out
