"""A real local runtime in the test's event loop, and helpers to drive it with deadlines."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2

from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.model.obj import Obj

REPO = Path(__file__).resolve().parents[3]
APP = REPO / "examples" / "app" / "server.py"
STUBBORN = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ignoring SIGTERM', flush=True); time.sleep(120)"
)
TASK = (
    "import os, sys, time; time.sleep(float(os.environ.get('SLEEP', '0'))); "
    "sys.exit(int(os.environ.get('EXIT', '0')))"
)


def write_config(state_dir: Path, *, backoff: float = 0.5) -> Path:
    path = state_dir / "headway-runtime.yaml"
    path.write_text(
        "images:\n"
        "  headway-demo/app:\n"
        f"    command: [{sys.executable!r}, {str(APP)!r}]\n"
        "    versionFromTag: true\n"
        "  headway-demo/crash:\n"
        f"    command: [{sys.executable!r}, '-c', 'import sys; sys.exit(3)']\n"
        "  headway-demo/task:\n"
        f"    command: [{sys.executable!r}, '-c', {TASK!r}]\n"
        "  headway-demo/stubborn:\n"
        f"    command: [{sys.executable!r}, '-c', {STUBBORN!r}]\n"
        "  headway-demo/python:\n"
        f"    command: [{sys.executable!r}]\n"
        f"backoff: {{initialSeconds: {backoff}, maxSeconds: {backoff * 4}}}\n"
    )
    return path


@contextlib.asynccontextmanager
async def running_runtime(state_dir: Path, **options: Any) -> AsyncIterator[Runtime]:
    config = write_config(state_dir, **options)
    runtime = Runtime(
        state_dir=state_dir, clock=SystemClock(), config_path=config, shutdown_grace_seconds=3.0
    )
    stop = asyncio.Event()
    started = asyncio.Event()
    task = asyncio.create_task(runtime.run(stop, ready=started.set))
    try:
        await _until_started(task, started)
        yield runtime
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=20)


async def _until_started(task: asyncio.Task[None], started: asyncio.Event) -> None:
    """Wait until the runtime has claimed its state dir (runtime.json, runtime.pid written);
    a runtime that fails to start raises here instead of leaving the test to time out."""
    ready = asyncio.ensure_future(started.wait())
    done, _ = await asyncio.wait({task, ready}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
    ready.cancel()
    if task in done:
        task.result()
        raise AssertionError("the runtime stopped before it was ready")
    if not done:
        raise AssertionError("the runtime was not ready within 60 s")


def deployment(
    name: str, image: str, *, replicas: int = 2, strategy: Obj | None = None, probe: bool = True
) -> Obj:
    container: Obj = {"name": "app", "image": image, "ports": [{"containerPort": 8080}]}
    if probe:
        container["readinessProbe"] = {
            "httpGet": {"path": "/readyz", "port": 8080},
            "periodSeconds": 1,
            "failureThreshold": 1,
        }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": strategy or {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"terminationGracePeriodSeconds": 5, "containers": [container]},
            },
        },
    }


def service(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}]},
    }


def service_url(runtime: Runtime, name: str) -> str | None:
    svc = runtime.cluster.get("v1", "Service", name, "default")
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    if not ingress:
        return None
    return f"http://127.0.0.1:{ingress[0]['ports'][0]['port']}/"


async def get_text(url: str) -> tuple[int, str]:
    async with httpx2.AsyncClient(timeout=5) as client:
        response = await client.get(url, headers={"Connection": "close"})
        return response.status_code, response.text


def running_image_tags(runtime_id: str) -> list[str]:
    """HEADWAY_IMAGE_TAG of every live process this runtime started, read from /proc."""
    from headway.cluster.local.kubelet.processes import find_marked_processes

    tags = []
    for pid in find_marked_processes(runtime_id):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        tags += [
            e.split(b"=", 1)[1].decode() for e in environ if e.startswith(b"HEADWAY_IMAGE_TAG=")
        ]
    return tags


def headway(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    """Run the `headway` CLI on the state directory `state`, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "headway", *args, "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
