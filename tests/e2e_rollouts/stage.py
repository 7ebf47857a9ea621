"""The stage the end-to-end rollout tests play on: the local runtime (real processes of
examples/app, the local mesh realizing Istio VirtualServices), the controllers `headway serve`
runs (Rollout, AnalysisRun, optionally all of them), and a bounded loop of real requests.

    async with Stage.open(tmp_path) as stage:
        stage.apply(*manifests)
        await stage.until(lambda: stage.rollout_phase() == "Healthy", FIRST_DEPLOY, "v1 Healthy")
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from conftest import require_program
from headway.clock import SystemClock
from headway.cluster.errors import NotFound
from headway.cluster.kube import KubeCluster
from headway.cluster.kube.transport import Transport
from headway.cluster.local.runtime import Runtime
from headway.cluster.protocol import Cluster
from headway.engine import Engine, EngineSettings, Loop
from headway.local_mesh.planes import RouterPlanes
from headway.model.obj import Obj
from polling import eventually

API = "argoproj.io/v1alpha1"
ISTIO = "networking.istio.io/v1beta1"
APP = Path(__file__).resolve().parents[2] / "examples" / "app" / "server.py"
IMAGE = "headway-demo/app"
# How long a Rollout's first version may take to become Healthy: the runtime starts its pods
# from nothing. Under a full test run (2 cores, two test workers, other tests' processes) a
# first deploy passed 30 s twice in sessions 12-13 (a local run, a fresh-clone CI), in two
# different tests; the wait only costs time when the deploy never happens.
FIRST_DEPLOY = 60.0


ROLLOUT_AND_ANALYSIS = frozenset({Loop.ROLLOUTS, Loop.ANALYSIS})


def runtime_config(path: Path, *, bad_tags: str = "", router: str = "embedded") -> Path:
    """Every tag of IMAGE runs examples/app as that version; the tags in `bad_tags` (a
    space-separated list) are releases that fail half their requests, the way a build bakes
    a bug into an image: the manifest names only the tag."""
    wrapper = (
        'case " $BAD_TAGS " in *" $HEADWAY_IMAGE_TAG "*) export ERROR_RATE=0.5;; esac; '
        f'exec "{sys.executable}" "{APP}"'
    )
    path.write_text(
        f"router: {router}\n"
        f"images:\n  {IMAGE}:\n    command: [/bin/sh, -c, {wrapper!r}]\n"
        f"    env: {{BAD_TAGS: {bad_tags!r}}}\n    versionFromTag: true\n"
    )
    return path


@dataclass
class Traffic:
    """What the request loop saw: the answering version (or `error`/`503`...) per request."""

    answers: list[tuple[str, int]] = field(default_factory=list)

    def since(self, mark: int) -> Counter[str]:
        return Counter(version for version, _ in self.answers[mark:])

    def codes_since(self, mark: int) -> Counter[int]:
        return Counter(code for _, code in self.answers[mark:])


def counted_errors(measurement: Obj) -> int:
    """How many failed requests the router counted in a `headway.dev/traffic` error-ratio
    measurement's window: its ratio times its `requests` (0 for an empty result).

    A whole count, not the ratio: the bad releases fail each request at random, so the ratio
    a window holds under load varies, while "the router counted some 500s" does not."""
    ratio = vector_value(str(measurement.get("value") or "[]"))
    requests = float((measurement.get("metadata") or {}).get("requests") or 0)
    return round(ratio * requests) if ratio is not None else 0


def vector_value(text: str) -> float | None:
    """The single number of a result vector as text (`[0.25]`), None for `[]`."""
    inner = text.strip().removeprefix("[").removesuffix("]").strip()
    return float(inner) if inner else None


async def request_versions(
    address: str, count: int, headers: dict[str, str] | None = None
) -> Counter[str]:
    """`count` real requests to `address`; the versions that answered 200 (else `error`)."""
    seen: Counter[str] = Counter()
    async with httpx2.AsyncClient(timeout=5) as client:
        for _ in range(count):
            response = await client.get(f"http://{address}/", headers=headers or {})
            seen[response.text.split()[0] if response.status_code == 200 else "error"] += 1
    return seen


class Stage:
    def __init__(self, runtime: Runtime, tmp_path: Path) -> None:
        self.runtime = runtime
        self.cluster = runtime.cluster
        self.state_dir = runtime.paths.state_dir
        self.tmp_path = tmp_path
        self._tasks: list[asyncio.Task[None]] = []
        self._stop = asyncio.Event()
        self.steps: Counter[str] = Counter()  # steps taken, per controller name
        self._api: KubeCluster | None = None

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        tmp_path: Path,
        *,
        loops: frozenset[Loop] | None = ROLLOUT_AND_ANALYSIS,
        app_poll_seconds: float = 180.0,
        bad_tags: str = "",
        router: str = "embedded",
        before: Sequence[Obj] = (),
        through_api: bool = False,
    ) -> AsyncIterator[Stage]:
        """The runtime, then `before` objects, then (once runtime.json names the metrics
        address) an engine running `loops` in this process; `loops=None` leaves the
        controllers to a `headway serve` process. `through_api`: the engine reaches the
        runtime only through its Kubernetes API, on the kube backend."""
        state = tmp_path / "state"
        clock = SystemClock()
        runtime = Runtime(
            state_dir=state,
            clock=clock,
            config_path=runtime_config(
                tmp_path / "headway-runtime.yaml", bad_tags=bad_tags, router=router
            ),
            shutdown_grace_seconds=3.0,
            api_port=0 if through_api else None,
            data_planes=RouterPlanes(haproxy_binary=require_program("haproxy"))
            if router == "haproxy"
            else RouterPlanes(),
        )
        stage = cls(runtime, tmp_path)
        started = asyncio.Event()
        stage._tasks.append(asyncio.create_task(runtime.run(stage._stop, ready=started.set)))
        try:
            await asyncio.wait_for(started.wait(), timeout=15)
            stage.apply(*before)
            async with httpx2.AsyncClient() as http:
                if loops is not None:
                    settings = EngineSettings(
                        state_dir=state,
                        loops=loops,
                        app_poll_seconds=app_poll_seconds,
                        resync_seconds=5.0,
                    )
                    engine = Engine(
                        cluster=stage._engine_cluster(), clock=clock, http=http,
                        settings=settings,
                    )
                    stage._count_steps(engine)
                    stage._tasks.append(asyncio.create_task(engine.run(stage._stop)))
                yield stage
        finally:
            stage._stop.set()
            await asyncio.wait_for(asyncio.gather(*stage._tasks), timeout=30)
            if stage._api is not None:
                stage._api.close()

    def _engine_cluster(self) -> Cluster:
        if self.runtime.api is None:
            return self.runtime.cluster
        base = f"http://{self.runtime.api.address}"
        self._api = KubeCluster(Transport(httpx2.Client(base_url=base, timeout=30.0)))
        return self._api

    def _count_steps(self, engine: Engine) -> None:
        """Count every step each controller takes (`steps`, by controller name), so a test
        can wait until a controller has looked at its objects again instead of sleeping."""
        for name in engine.controllers:
            controller = engine.controller(name)
            step = controller.step

            def counted(key: Any, name: str = name, step: Any = step) -> Any:
                self.steps[name] += 1
                return step(key)

            controller.step = counted  # type: ignore[method-assign]

    def apply(self, *objects: Obj) -> None:
        for obj in objects:
            self.cluster.apply(obj, field_manager="e2e")

    def get(self, api: str, kind: str, name: str) -> Obj | None:
        try:
            return self.cluster.get(api, kind, name, "default")
        except NotFound:
            return None

    def rollout_status(self, name: str = "web") -> dict[str, Any]:
        rollout = self.get(API, "Rollout", name)
        return dict((rollout or {}).get("status") or {})

    def rollout_phase(self, name: str = "web") -> str:
        return str(self.rollout_status(name).get("phase") or "")

    def analysis_runs(self) -> list[Obj]:
        runs = self.cluster.list(API, "AnalysisRun", namespace="default")
        return sorted(runs, key=lambda run: str(run["metadata"]["creationTimestamp"]))

    def vs_weights(self, name: str = "web") -> list[int]:
        """The weights of the VirtualService's first route, in order (stable, canary)."""
        vs = self.get(ISTIO, "VirtualService", name) or {}
        http = (vs.get("spec") or {}).get("http") or [{}]
        return [int(dest.get("weight") or 0) for dest in http[0].get("route") or []]

    def pods_of(self, version: str) -> list[Obj]:
        """The Pods running `IMAGE:version`."""
        pods = self.cluster.list("v1", "Pod", namespace="default")
        image = f"{IMAGE}:{version}"
        return [pod for pod in pods if pod["spec"]["containers"][0]["image"] == image]

    def vs_address(self, name: str = "web") -> str:
        vs = self.get(ISTIO, "VirtualService", name) or {}
        return str((vs.get("metadata", {}).get("annotations") or {}).get("headway.dev/address", ""))

    def pod_hash_of(self, name: str = "web", which: str = "stableRS") -> str:
        return str(self.rollout_status(name).get(which) or "")

    @staticmethod
    async def until(check: Callable[[], Any], timeout: float, what: str) -> Any:
        return await eventually(check, timeout=timeout, what=what)

    def send_traffic(self, address: str, *, pause: float = 0.02) -> Traffic:
        """A request loop against `address` until the stage closes (or `stop_traffic`)."""
        traffic = Traffic()
        self._tasks.append(asyncio.create_task(self._loop(address, traffic, pause)))
        return traffic

    async def _loop(self, address: str, traffic: Traffic, pause: float) -> None:
        async with httpx2.AsyncClient(timeout=3) as client:
            while not self._stop.is_set():
                try:
                    response = await client.get(f"http://{address}/")
                    version = response.text.split()[0] if response.status_code == 200 else ""
                    traffic.answers.append(
                        (version or str(response.status_code), response.status_code)
                    )
                except httpx2.TransportError:
                    traffic.answers.append(("unreachable", 0))
                await asyncio.sleep(pause)

    def watch(self, sample: Callable[[], Any], *, every: float = 0.1) -> list[Any]:
        """Record each distinct value `sample()` takes, in order, until the stage closes."""
        seen: list[Any] = [sample()]  # now, not when the task first runs

        async def poll() -> None:
            while not self._stop.is_set():
                value = sample()
                if not seen or seen[-1] != value:
                    seen.append(value)
                await asyncio.sleep(every)

        self._tasks.append(asyncio.create_task(poll()))
        return seen
