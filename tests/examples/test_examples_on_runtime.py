"""A representative subset of the upstream-example fixtures run on the local runtime: the
argocd-example-apps fixtures `sync-waves` (hooks and waves, directory source),
`pre-post-sync` (Kustomize with a sibling base, PreSync/PostSync hooks) and the two Jsonnet
guestbooks (directory sources evaluated as Jsonnet), committed unchanged to a real Git remote
and synced by the Application controller, with an image map as the only addition (every
`example/*` image runs a process that stays up)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from e2e_sync.e2e_helpers import API, Remote, default_project
from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.engine import Engine, EngineSettings, Loop
from polling import eventually
from source.gitrepos import require_extra

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent / "argocd_example_apps"
EXAMPLES = ("sync-waves", "pre-post-sync")
JSONNET_EXAMPLES = ("jsonnet-guestbook", "jsonnet-guestbook-tla")
SOURCE_SUFFIXES = (".yaml", ".jsonnet", ".libsonnet", ".py")
PLUGINS = Path(__file__).resolve().parent / "argocd_plugins"


def _fixture_files() -> dict[str, str]:
    files = {}
    for path in sorted(FIXTURES.rglob("*")):
        relative = path.relative_to(FIXTURES).as_posix()
        if path.suffix in SOURCE_SUFFIXES and not relative.startswith((".", "apps/")):
            files[relative] = path.read_text()
    return files


def _application(name: str, url: str, **source: Any) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {"repoURL": url, "path": name, "targetRevision": "main", **source},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "default"},
            "syncPolicy": {"automated": {}},
        },
    }


def _fixture_source(name: str) -> dict[str, Any]:
    """The fixture Application's source options (its `directory`, say), without where from."""
    app = yaml.safe_load((FIXTURES / "apps" / f"{name}.yaml").read_text())
    source = dict(app["spec"]["source"])
    return {k: v for k, v in source.items() if k not in ("repoURL", "targetRevision", "path")}


def _status(runtime: Runtime, name: str) -> dict[str, Any]:
    app = runtime.cluster.get(API, "Application", name, "argocd")
    return dict(app.get("status") or {})


def _synced_and_healthy(runtime: Runtime, name: str) -> bool:
    status = _status(runtime, name)
    operation = status.get("operationState") or {}
    health = (status.get("health") or {}).get("status")
    return operation.get("phase") == "Succeeded" and health == "Healthy"


@asynccontextmanager
async def _running(
    tmp_path: Path, apps: list[dict[str, Any]], *, plugins_dir: Path | None = None
) -> AsyncIterator[Runtime]:
    """The local runtime and the Application loop, with `apps` applied; stopped on exit."""
    sleep = shutil.which("sleep")
    assert sleep is not None
    config = tmp_path / "headway-runtime.yaml"
    config.write_text(f'images:\n  "example/*":\n    command: ["{sleep}", "3600"]\n')
    clock = SystemClock()
    runtime = Runtime(
        state_dir=tmp_path / "state", clock=clock, config_path=config, shutdown_grace_seconds=2.0
    )
    settings = EngineSettings(
        state_dir=tmp_path / "state",
        loops=frozenset({Loop.APPLICATIONS}),
        plugins_dir=plugins_dir,
    )
    http = httpx2.AsyncClient()
    engine = Engine(cluster=runtime.cluster, clock=clock, http=http, settings=settings)
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}
    runtime.cluster.apply(namespace, field_manager="test")
    runtime.cluster.apply(default_project(), field_manager="test")
    for app in apps:
        runtime.cluster.apply(app, field_manager="test")
    stop = asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(engine.run(stop))]
    try:
        yield runtime
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
        await http.aclose()


async def _all_synced_and_healthy(runtime: Runtime, names: tuple[str, ...]) -> None:
    for name in names:
        await eventually(
            lambda name=name: _synced_and_healthy(runtime, name),
            timeout=90,
            what=f"{name} synced and Healthy",
        )


async def test_sync_waves_and_hooks_examples_sync_to_healthy(tmp_path: Path) -> None:
    remote = Remote(tmp_path / "remote.git")
    remote.commit(_fixture_files(), "the argocd-example-apps fixtures")
    apps = [_application(name, remote.url) for name in EXAMPLES]
    async with _running(tmp_path, apps) as runtime:
        await _all_synced_and_healthy(runtime, EXAMPLES)
        waves = _status(runtime, "sync-waves")["operationState"]["syncResult"]["resources"]
        hooks = {r["name"]: r.get("hookPhase") for r in waves if r.get("hookType")}
        assert hooks["maintenance-on"] == hooks["maintenance-off"] == "Succeeded"
        frontend = runtime.cluster.get("apps/v1", "ReplicaSet", "frontend", "default")
        assert frontend["status"]["readyReplicas"] == 1
        ui = runtime.cluster.get("apps/v1", "Deployment", "hooks-kust-guestbook-ui", "default")
        assert ui["status"]["readyReplicas"] == 1


async def test_jsonnet_examples_sync_to_healthy(tmp_path: Path) -> None:
    """jsonnet-guestbook (an import beside the file) and jsonnet-guestbook-tla (with the
    fixture Application's top-level arguments), evaluated from the Git remote and synced."""
    require_extra("_gojsonnet", "jsonnet")
    remote = Remote(tmp_path / "remote.git")
    remote.commit(_fixture_files(), "the argocd-example-apps fixtures")
    apps = [_application(n, remote.url, **_fixture_source(n)) for n in JSONNET_EXAMPLES]
    async with _running(tmp_path, apps) as runtime:
        await _all_synced_and_healthy(runtime, JSONNET_EXAMPLES)
        plain = runtime.cluster.get("apps/v1", "Deployment", "jsonnet-guestbook-ui", "default")
        assert plain["status"]["readyReplicas"] == 1
        tla = runtime.cluster.get("apps/v1", "Deployment", "guestbook-tla", "default")
        assert tla["status"]["readyReplicas"] == 2
        service = runtime.cluster.get("v1", "Service", "guestbook-tla", "default")
        assert service["spec"]["type"] == "LoadBalancer"


async def test_plugin_example_syncs_to_healthy(tmp_path: Path) -> None:
    """plugins/python-build (the shape of upstream's plugins/nix): no plugin named, so the
    admin's plugin whose discover rule matches takes the app; init and generate run as local
    processes on the commit; the Application's env and parameter shape what is synced."""
    remote = Remote(tmp_path / "remote.git")
    remote.commit(_fixture_files(), "the argocd-example-apps fixtures")
    app = _application("python-build", remote.url, **_fixture_source("python-build"))
    app["spec"]["source"]["path"] = "plugins/python-build"
    async with _running(tmp_path, [app], plugins_dir=PLUGINS) as runtime:
        await _all_synced_and_healthy(runtime, ("python-build",))
        built = runtime.cluster.get("apps/v1", "Deployment", "built-guestbook", "default")
        assert built["status"]["readyReplicas"] == 2
        assert runtime.cluster.get("v1", "Service", "built-guestbook", "default")
