"""The local runtime with 100 Pods, against starting the same 100 processes by hand.

    .venv/bin/python bench/bench_runtime_pods.py

1. Pods started per second: from applying a Deployment of 100 replicas (`sleep 600`, no
   probes) until every Pod is Running (its process spawned), vs `subprocess.Popen` of the
   same command 100 times.
2. Idle CPU with 100 Pods: over the same wall-clock window, the CPU seconds of the runtime
   (this process: its controllers, kubelet and proxies all run here) plus its Pods'
   processes, vs the 100 hand-started processes alone. Printed as cores (CPU seconds per
   second) and as the ratio.
"""

from __future__ import annotations

import asyncio
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from headway.clock import SystemClock
from headway.cluster.local.kubelet.resource_usage import group_cpu_seconds
from headway.cluster.local.runtime import Runtime

PODS = 100
IDLE_WINDOW_SECONDS = 10.0
SLEEP = shutil.which("sleep") or "/bin/sleep"


def _deployment() -> dict[str, object]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "idle", "namespace": "default"},
        "spec": {"replicas": PODS, "selector": {"matchLabels": {"app": "idle"}},
                 "template": {"metadata": {"labels": {"app": "idle"}},
                              "spec": {"terminationGracePeriodSeconds": 1,
                                       "containers": [{"name": "main",
                                                       "image": "bench/sleep:v1"}]}}},
    }


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _running(runtime: Runtime) -> int:
    return sum(1 for p in runtime.cluster.list("v1", "Pod")
               if (p.get("status") or {}).get("phase") == "Running")


async def _runtime_case(state: Path) -> tuple[float, float]:
    (state / "headway-runtime.yaml").write_text(
        f"images:\n  bench/sleep:\n    command: [{SLEEP!r}, '600']\n")
    runtime = Runtime(state_dir=state, clock=SystemClock(),
                      config_path=state / "headway-runtime.yaml", shutdown_grace_seconds=2.0)
    stop, started = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(runtime.run(stop, ready=started.set))
    await started.wait()
    try:
        begin = time.perf_counter()
        runtime.cluster.apply(_deployment(), field_manager="bench")
        while _running(runtime) < PODS:
            await asyncio.sleep(0.05)
        start_seconds = time.perf_counter() - begin
        await asyncio.sleep(2.0)  # let the last status writes settle
        groups = runtime.kubelet.live_process_groups()
        # Reading the Pods' CPU scans /proc in this process: keep both reads out of the window.
        cpu_before = group_cpu_seconds(groups)
        self_before = _self_cpu()
        await asyncio.sleep(IDLE_WINDOW_SECONDS)
        self_spent = _self_cpu() - self_before
        spent = (group_cpu_seconds(groups) - cpu_before) + self_spent
        return start_seconds, spent / IDLE_WINDOW_SECONDS
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=60)


def _by_hand_case() -> tuple[float, float]:
    begin = time.perf_counter()
    processes = [subprocess.Popen([SLEEP, "600"], start_new_session=True) for _ in range(PODS)]
    start_seconds = time.perf_counter() - begin
    try:
        groups = [p.pid for p in processes]
        before = group_cpu_seconds(groups)
        time.sleep(IDLE_WINDOW_SECONDS)
        return start_seconds, (group_cpu_seconds(groups) - before) / IDLE_WINDOW_SECONDS
    finally:
        for process in processes:
            process.kill()
            process.wait()


def main() -> None:
    hand_start, hand_cpu = _by_hand_case()
    with tempfile.TemporaryDirectory() as state:
        runtime_start, runtime_cpu = asyncio.run(_runtime_case(Path(state)))
    print(f"{PODS} pods started: runtime {PODS / runtime_start:.1f}/s ({runtime_start:.2f} s), "
          f"by hand {PODS / hand_start:.1f}/s ({hand_start:.3f} s): "
          f"runtime at {hand_start / runtime_start:.4f}x the by-hand rate")
    print(f"idle CPU over {IDLE_WINDOW_SECONDS:.0f} s with {PODS} pods: runtime+pods "
          f"{runtime_cpu:.3f} cores, by hand {hand_cpu:.4f} cores "
          f"(ratio {runtime_cpu / max(hand_cpu, 1e-3):.0f}x, by-hand floored at 0.001 cores)")


if __name__ == "__main__":
    main()
