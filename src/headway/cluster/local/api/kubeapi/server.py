"""The HTTP side: a Starlette app routing Kubernetes API requests to the operations, and
`ApiServer`, which serves it with uvicorn on a thread of its own (so neither the runtime's
step loop nor a slow request holds up the other).

Every response body is JSON with `Content-Type: application/json` exactly (clients such as
lightkube parse a `Status` only then); every error is a `Status`.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from headway.clock import Clock
from headway.cluster.errors import ClusterError
from headway.cluster.local.api.kinds import KindTable
from headway.cluster.local.api.kubeapi import (
    bodies,
    discovery,
    eviction,
    operations,
    podlogs,
    resource_metrics,
    reviews,
    scaling,
    tables,
)
from headway.cluster.local.api.kubeapi.catalog import Catalog
from headway.cluster.local.api.kubeapi.operations import Request
from headway.cluster.local.api.kubeapi.paths import ResourcePath, parse_list_query, parse_path
from headway.cluster.local.api.kubeapi.status import ApiError, Target, status_body, status_for
from headway.cluster.local.api.kubeapi.watchstream import WatchSettings, watch_lines
from headway.cluster.local.api.store import LocalCluster
from headway.kubetime import format_time
from headway.model.obj import Obj
from headway.model.selectors import SelectorError

__all__ = ["ApiServer", "ApiServerError", "build_app"]

_log = logging.getLogger("headway.kubeapi")
_CRD_VERSION = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")


@dataclass(frozen=True)
class _Context:
    cluster: LocalCluster
    clock: Clock
    stop: threading.Event
    watch: WatchSettings
    logs_dir: Path | None
    usage: resource_metrics.ContainerUsage | None = None  # None: no metrics.k8s.io

    def catalog(self) -> Catalog:
        crds = self.cluster.list(*_CRD_VERSION)  # read once: the kinds and their details
        return Catalog.build(KindTable.with_crds(crds).all(), crds)


def _json(body: Any, code: int = 200) -> Response:
    return JSONResponse(body, status_code=code, media_type="application/json")


def _error(error: ApiError, target: Target | None = None) -> Response:
    return _json(status_body(error, target), error.code)


def _not_found() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource")


def build_app(cluster: LocalCluster, clock: Clock, *, stop: threading.Event,
              watch: WatchSettings | None = None, logs_dir: Path | None = None,
              usage: resource_metrics.ContainerUsage | None = None) -> Starlette:
    """The app; `logs_dir` (the runtime's container logs) serves `pods/log`, `usage` (the
    runtime's meter) serves `metrics.k8s.io`."""
    ctx = _Context(cluster=cluster, clock=clock, stop=stop, watch=watch or WatchSettings(),
                   logs_dir=logs_dir, usage=usage)

    async def simple(request: HttpRequest) -> Response:
        return await _guarded(request, _discovery, ctx, request.url.path)

    async def resource(request: HttpRequest) -> Response:
        body = await request.body()
        return await _guarded(request, _dispatch, ctx, request, body)

    async def health(_: HttpRequest) -> Response:
        return PlainTextResponse("ok")

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    routes = [
        Route("/healthz", health), Route("/readyz", health), Route("/livez", health),
        Route("/version", simple), Route("/api", simple), Route("/apis", simple),
        Route("/openapi/v3", simple), Route("/openapi/v3/{rest:path}", simple),
        Route("/apis/{group}", simple),
        Route("/api/{rest:path}", resource, methods=methods),
        Route("/apis/{rest:path}", resource, methods=methods),
    ]
    return Starlette(routes=routes, exception_handlers={404: _route_not_found,
                                                        405: _route_not_allowed})


async def _guarded(request: HttpRequest, handler: Callable[..., Response],
                   *args: Any) -> Response:
    """`handler` on a worker thread; a failure no check foresaw is a 500 `Status` (and one
    logged traceback), never a bare text page or a dropped connection."""
    try:
        return await run_in_threadpool(handler, *args)
    except Exception as error:
        _log.exception("kubeapi: %s %s failed", request.method, request.url.path)
        message = f"the local API failed on this request: {type(error).__name__}: {error}"
        return _error(ApiError(500, "InternalError", message))


async def _route_not_found(_: HttpRequest, __: Exception) -> Response:
    return _error(_not_found())


async def _route_not_allowed(request: HttpRequest, __: Exception) -> Response:
    return _error(ApiError(405, "MethodNotAllowed", f"{request.method} is not supported here"))


def _discovery(ctx: _Context, path: str) -> Response:
    path = path.rstrip("/")
    try:
        if path == "/version":
            return _json(discovery.version_info())
        if path == "/api":
            return _json(discovery.api_versions())
        catalog = ctx.catalog()
        if path == "/apis":
            return _json(_with_metrics_group(ctx, discovery.api_group_list(catalog)))
        if path == "/openapi/v3":
            return _json(discovery.openapi_index(catalog))
        if path.startswith("/openapi/v3/"):
            return _openapi(catalog, path.removeprefix("/openapi/v3/"))
        group = path.removeprefix("/apis/")
        for listed in _with_metrics_group(ctx, discovery.api_group_list(catalog))["groups"]:
            if listed["name"] == group:
                return _json(dict(listed, kind="APIGroup", apiVersion="v1"))
        return _error(_not_found())
    except ClusterError as error:
        return _error(ApiError(500, "InternalError", str(error)))


def _with_metrics_group(ctx: _Context, groups: dict[str, Any]) -> dict[str, Any]:
    if ctx.usage is None:
        return groups
    return dict(groups, groups=[*groups["groups"], resource_metrics.group_entry()])


def _metrics(ctx: _Context, path: ResourcePath, http: HttpRequest) -> Response:
    if ctx.usage is None:
        return _error(_not_found())
    if http.method != "GET":
        return _error(ApiError(405, "MethodNotAllowed", "metrics.k8s.io is read-only"))
    if not path.plural:
        if path.version != resource_metrics.VERSION:
            return _error(_not_found())
        return _json(resource_metrics.resource_list())
    try:
        return _json(resource_metrics.answer(ctx.cluster, ctx.usage, path,
                                             dict(http.query_params),
                                             now=format_time(ctx.clock.now())))
    except ApiError as error:
        return _error(error)
    except SelectorError as error:
        return _error(ApiError(400, "BadRequest", f"labelSelector: {error}"))


def _openapi(catalog: Catalog, gv_path: str) -> Response:
    parts = gv_path.split("/")
    if parts[0] == "api" and len(parts) == 2:
        group, version = "", parts[1]
    elif parts[0] == "apis" and len(parts) == 3:
        group, version = parts[1], parts[2]
    else:
        return _error(_not_found())
    if not catalog.in_version(group, version):
        return _error(_not_found())
    return _json(discovery.openapi_document(catalog, group, version))


def _dispatch(ctx: _Context, http: HttpRequest, body: bytes) -> Response:
    path = parse_path(http.url.path)
    if path is None:
        return _error(_not_found())
    if path.group == resource_metrics.GROUP:
        return _metrics(ctx, path, http)
    target: Target | None = None
    try:
        catalog = ctx.catalog()
        if not path.plural:
            found = discovery.resource_list(catalog, path.group, path.version)
            return _json(found) if found and http.method == "GET" else _error(_not_found())
        kind = catalog.find(path.group, path.version, path.plural)
        if kind is None or (path.namespace is not None and not kind.namespaced):
            return _error(_not_found())
        req = Request(kind=kind, path=path, query=dict(http.query_params), body=body,
                      content_type=http.headers.get("content-type", "application/json"),
                      user_agent=http.headers.get("user-agent", ""))
        target = req.target
        return _verb(ctx, req, http.method, http.headers.get("accept", ""))
    except ApiError as error:
        return _error(error, target)
    except SelectorError as error:
        return _error(ApiError(400, "BadRequest", f"labelSelector: {error}"), target)
    except ClusterError as error:
        return _error(status_for(error, target or Target(resource=path.plural,
                                                         group=path.group)), target)


def _verb(ctx: _Context, req: Request, method: str, accept: str) -> Response:
    if req.kind.review:
        if method != "POST" or req.path.name:
            raise ApiError(405, "MethodNotAllowed", f"{req.kind.plural} are only created")
        if "protobuf" in req.content_type:  # kubectl's typed clients: the answer is the
            raw: Any = {"kind": req.kind.kind}  # same for every question, so no need to read it
        else:
            raw = bodies.decode(req.body, req.content_type)
        return _json(reviews.answer(req.kind, raw), 201)
    sub = req.path.subresource
    if not req.path.name:
        return _collection(ctx, req, method, accept)
    if sub == "log" and req.kind.plural == "pods" and req.kind.group == "" and method == "GET":
        return _pod_log(ctx, req)
    if sub == "eviction" and req.kind.plural == "pods" and req.kind.group == "":
        if method != "POST":
            raise ApiError(405, "MethodNotAllowed", "an eviction is only created (POST)")
        return _json(eviction.evict(ctx.cluster, req), 201)
    if sub == "scale":
        handlers: dict[str, Callable[[LocalCluster, Request], Obj]] = {
            "GET": scaling.get_scale, "PUT": scaling.replace_scale,
            "PATCH": scaling.patch_scale}
    elif sub in ("", "status") and (sub == "" or req.kind.has_status):
        handlers = {"GET": operations.get, "PUT": operations.replace,
                    "PATCH": operations.patch}
        if not sub:
            handlers["DELETE"] = operations.delete
    else:
        raise _not_found()
    handler = handlers.get(method)
    if handler is None:
        raise ApiError(405, "MethodNotAllowed", f"{method} is not supported on this resource")
    existed = method != "PATCH" or _exists(ctx.cluster, req)
    result = bodies.tidy(handler(ctx.cluster, req))
    if method == "GET" and tables.wants_table(accept):
        return _json(tables.table(req.kind, [result], now=ctx.clock.now(),
                                  include=req.query.get("includeObject", "Metadata")))
    return _json(result, 200 if existed else 201)


def _pod_log(ctx: _Context, req: Request) -> Response:
    if ctx.logs_dir is None:
        raise _not_found()
    path = podlogs.log_file(ctx.cluster, req, ctx.logs_dir)
    if req.query.get("follow", "").lower() in ("1", "true"):
        chunks = podlogs.follow_log(ctx.cluster, req, path, stop=ctx.stop)
        return StreamingResponse(_paced(chunks, ctx.watch.poll_seconds),
                                 media_type="text/plain")
    return Response(podlogs.read_log(path, req), media_type="text/plain")


def _exists(cluster: LocalCluster, req: Request) -> bool:
    try:
        operations.get(cluster, req)
    except ClusterError:
        return False
    return True


def _collection(ctx: _Context, req: Request, method: str, accept: str) -> Response:
    if method == "POST":
        return _json(operations.create(ctx.cluster, req), 201)
    if method not in ("GET", "DELETE"):
        raise ApiError(405, "MethodNotAllowed", f"{method} is not supported on a collection")
    query = parse_list_query(req.query, req.kind.plural)
    if method == "DELETE":
        return _json(operations.delete_collection(ctx.cluster, req, query))
    as_table = tables.wants_table(accept)
    include = req.query.get("includeObject", "Metadata")

    def render(obj: Obj) -> Obj:
        if not as_table:
            return bodies.tidy(obj)
        return tables.table(req.kind, [bodies.tidy(obj)], now=ctx.clock.now(), include=include)

    if query.watch:
        lines = watch_lines(ctx.cluster, req, query, render=render, stop=ctx.stop,
                            settings=ctx.watch)
        return StreamingResponse(_paced(lines, ctx.watch.poll_seconds),
                                 media_type="application/json")
    listed = operations.list_objects(ctx.cluster, req, query)
    listed["items"] = [bodies.tidy(o) for o in listed["items"]]
    if as_table:
        return _json(tables.table(req.kind, listed["items"], now=ctx.clock.now(),
                                  include=include, list_meta=listed["metadata"]))
    return _json(listed)


_END = object()


async def _paced(lines: Iterator[bytes | None], pause: float) -> AsyncIterator[bytes]:
    """A watch's lines, each step read on a worker thread; an idle step pauses here, on
    the event loop, so an idle watch holds no thread."""
    while True:
        line = await run_in_threadpool(next, lines, _END)
        if line is _END:
            return
        if line is None:
            await asyncio.sleep(pause)
        elif isinstance(line, bytes):
            yield line


class ApiServerError(Exception):
    """The API cannot listen where it was asked to (the port is taken, say)."""


class ApiServer:
    """The API on 127.0.0.1:`port` (0: any free port), on a thread of its own."""

    def __init__(self, *, db_path: Path, clock: Clock, port: int = 0,
                 watch: WatchSettings | None = None, logs_dir: Path | None = None,
                 usage: resource_metrics.ContainerUsage | None = None) -> None:
        self._cluster = LocalCluster(db_path, clock)
        self._stop = threading.Event()
        app = build_app(self._cluster, clock, stop=self._stop, watch=watch, logs_dir=logs_dir,
                        usage=usage)
        config = uvicorn.Config(app, log_level="warning", lifespan="off",
                                timeout_graceful_shutdown=2, access_log=False)
        self._server = uvicorn.Server(config)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit it: without, a response written in two pieces waits
        # for the client's delayed ACK (~40 ms a request, measured in bench/bench_kubeapi.py).
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self._socket.bind(("127.0.0.1", port))
            self._socket.listen(128)
        except OSError as error:
            self._socket.close()
            self._cluster.close()
            raise ApiServerError(
                f"--api-port {port}: cannot serve the Kubernetes API on 127.0.0.1:{port}: "
                f"{error.strerror or error}"
            ) from None
        self.port = int(self._socket.getsockname()[1])
        self._thread = threading.Thread(target=self._serve, name="headway-kubeapi", daemon=True)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _serve(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._socket]))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self._socket.close()
        self._cluster.close()
