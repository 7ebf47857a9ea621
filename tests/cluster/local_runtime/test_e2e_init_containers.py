"""End to end: init containers run in order to completion before the main containers,
sidecars start in their place in the order, keep running and stop after the main
containers; a failing init container shows as kubectl shows it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from cluster.local_runtime.harness import running_runtime
from headway.kube.pod_columns import pod_ready_text, pod_status_text
from headway.model.obj import Obj
from polling import eventually

pytestmark = pytest.mark.slow

# Appends "start NAME" to $ORDER, then: exits $EXIT (MODE=task), waits for $GATE to exist
# (MODE=gate), or serves until SIGTERM and appends "stop NAME" (MODE=serve).
STEP = """\
import os, signal, sys, time
order, name = os.environ['ORDER'], os.environ['NAME']
def note(line):
    with open(order, 'a') as f:
        f.write(line + '\\n')
note('start ' + name)
mode = os.environ.get('MODE', 'task')
if mode == 'task':
    sys.exit(int(os.environ.get('EXIT', '0')))
if mode == 'gate':
    while not os.path.exists(os.environ['GATE']):
        time.sleep(0.1)
    sys.exit(0)
def stop(*_):
    note('stop ' + name)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
while True:
    time.sleep(0.1)
"""


def step(name: str, order: Path, mode: str, **extra: Any) -> Obj:
    env = [{"name": "ORDER", "value": str(order)}, {"name": "NAME", "value": name},
           {"name": "MODE", "value": mode}]
    env += [{"name": k, "value": str(v)} for k, v in extra.pop("env", {}).items()]
    return {"name": name, "image": "none", "command": [sys.executable, "-c", STEP], "env": env,
            **extra}


def pod(name: str, *, init: list[Obj], main: list[Obj], policy: str = "Always") -> Obj:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
        "spec": {"terminationGracePeriodSeconds": 5, "restartPolicy": policy,
                 "initContainers": init, "containers": main},
    }


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def test_init_containers_run_in_order_and_sidecars_stop_after_the_app(
    tmp_path: Path,
) -> None:
    order, gate = tmp_path / "order.txt", tmp_path / "gate"
    spec = pod("web", init=[
        step("migrate", order, "task"),
        step("proxy", order, "serve", restartPolicy="Always"),
        step("wait", order, "gate", env={"GATE": gate}),
    ], main=[step("app", order, "serve")])
    async with running_runtime(tmp_path) as runtime:
        cluster = runtime.cluster
        cluster.apply(spec, field_manager="test")

        def live() -> Obj:
            return cluster.get("v1", "Pod", "web", "default")

        await eventually(lambda: pod_status_text(live()) == "Init:2/3" and
                         len(lines(order)) == 3, what="Init:2/3 while 'wait' runs")
        # 'wait' starts once the sidecar has started, not once the sidecar wrote its first
        # line: either line may come first (seen once under load). The start order of the
        # two is read from the status, as Kubernetes reports it.
        first, *next_two = lines(order)
        assert first == "start migrate"
        assert sorted(next_two) == ["start proxy", "start wait"]
        init = {s["name"]: s["state"] for s in live()["status"]["initContainerStatuses"]}
        assert init["proxy"]["running"]["startedAt"] <= init["wait"]["running"]["startedAt"]
        assert live()["status"]["phase"] == "Pending"
        conditions = {c["type"]: c for c in live()["status"]["conditions"]}
        assert conditions["Initialized"]["message"] == "containers with incomplete status: [wait]"
        app_state = live()["status"]["containerStatuses"][0]["state"]
        assert app_state == {"waiting": {"reason": "PodInitializing"}}

        gate.write_text("open")
        await eventually(lambda: pod_status_text(live()) == "Running" and
                         pod_ready_text(live()) == "2/2" and len(lines(order)) == 4,
                         what="Running with app and sidecar")
        assert lines(order)[3] == "start app"

        cluster.delete("v1", "Pod", "web", "default")
        await eventually(lambda: len(lines(order)) == 6, what="both stopped")
        assert lines(order)[4:] == ["stop app", "stop proxy"]


async def test_a_job_pod_with_a_sidecar_succeeds_once_its_main_container_is_done(
    tmp_path: Path,
) -> None:
    order = tmp_path / "order.txt"
    spec = pod("batch", policy="Never",
               init=[step("proxy", order, "serve", restartPolicy="Always")],
               main=[step("work", order, "task")])
    async with running_runtime(tmp_path) as runtime:
        runtime.cluster.apply(spec, field_manager="test")

        def phase() -> str:
            live = runtime.cluster.get("v1", "Pod", "batch", "default")
            return str((live.get("status") or {}).get("phase"))

        await eventually(lambda: phase() == "Succeeded", what="the Pod Succeeded")
        # Kubernetes orders the containers' starts, not their first lines: once both run,
        # either may write first (seen once in a whole-suite run). The start order is read
        # from the status; the sidecar stops only after the main container is done.
        written = lines(order)
        assert sorted(written[:2]) == ["start proxy", "start work"]
        assert written[2:] == ["stop proxy"]
        status = runtime.cluster.get("v1", "Pod", "batch", "default")["status"]
        [proxy] = status["initContainerStatuses"]
        [work] = status["containerStatuses"]
        started = {
            name: s["state"]["terminated"]["startedAt"] for name, s in (("proxy", proxy),
                                                                       ("work", work))
        }
        assert started["proxy"] <= started["work"]


@pytest.mark.parametrize(("policy", "shown"), [("Never", "Init:Error"),
                                                ("Always", "Init:CrashLoopBackOff")])
async def test_a_failing_init_container_keeps_the_app_from_starting(
    tmp_path: Path, policy: str, shown: str
) -> None:
    order = tmp_path / "order.txt"
    spec = pod("web", policy=policy, init=[step("migrate", order, "task", env={"EXIT": 3})],
               main=[step("app", order, "serve")])
    async with running_runtime(tmp_path, backoff=2.0) as runtime:
        created = runtime.cluster.apply(spec, field_manager="test")

        def live() -> Obj:
            return runtime.cluster.get("v1", "Pod", "web", "default")

        await eventually(lambda: pod_status_text(live()) == shown, what=shown)
        assert "start app" not in lines(order)
        status = live()["status"]
        phase = "Failed" if policy == "Never" else "Pending"
        assert status["phase"] == phase
        # Every version that showed it had that phase (once, a step read Running).
        history = runtime.cluster.watch("v1", "Pod", namespace="default",
                                        resource_version=created["metadata"]["resourceVersion"])
        phases = {e.object["status"].get("phase") for e in history
                  if e.object.get("status") and pod_status_text(e.object) == shown}
        assert phases == {phase}
        migrate = status["initContainerStatuses"][0]
        if policy == "Never":
            assert migrate["state"]["terminated"]["exitCode"] == 3
        else:
            assert migrate["restartCount"] >= 1
            assert migrate["lastState"]["terminated"]["exitCode"] == 3


async def test_a_restarted_runtime_does_not_run_completed_init_containers_again(
    tmp_path: Path,
) -> None:
    order = tmp_path / "order.txt"
    spec = pod("web", init=[step("migrate", order, "task")], main=[step("app", order, "serve")])
    for _ in range(2):
        # Counted before the runtime starts: a restarted runtime may start the app while it
        # comes up, before the body runs (counting after it made the wait flaky).
        starts = lines(order).count("start app") + 1
        async with running_runtime(tmp_path) as runtime:
            runtime.cluster.apply(spec, field_manager="test")
            await eventually(lambda n=starts: lines(order).count("start app") == n,
                             what="the app started")
            live = runtime.cluster.get("v1", "Pod", "web", "default")
            assert pod_status_text(live) == "Running"
    assert lines(order).count("start migrate") == 1


async def test_an_init_container_prepares_files_the_app_reads_from_a_shared_volume(
    tmp_path: Path,
) -> None:
    prepare = ("import os; os.makedirs('/shared/conf', exist_ok=True); "
               "open('/shared/conf/seed.txt', 'w').write('seeded by ' + os.environ['HOSTNAME'])")
    read = "import time; print(open('/shared/conf/seed.txt').read(), flush=True); time.sleep(600)"
    mount = [{"name": "work", "mountPath": "/shared"}]
    spec: Obj = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "terminationGracePeriodSeconds": 1,
            "volumes": [{"name": "work", "emptyDir": {}}],
            "initContainers": [{"name": "prepare", "image": "none", "volumeMounts": mount,
                                "command": [sys.executable, "-c", prepare]}],
            "containers": [{"name": "app", "image": "none", "volumeMounts": mount,
                            "command": [sys.executable, "-c", read]}],
        },
    }
    async with running_runtime(tmp_path) as runtime:
        runtime.cluster.apply(spec, field_manager="test")
        log = tmp_path / "logs" / "default" / "web" / "app.log"
        await eventually(lambda: lines(log) == ["seeded by web"], what=f"the seed in {log}")


async def test_a_failed_init_container_fails_the_pod_at_once_while_its_sidecar_stops(
    tmp_path: Path,
) -> None:
    """As the kubelet decides the phase: a plain init container failed under `Never` is
    `Failed` whatever still runs, so no version of the Pod shows Init:Error as Running."""
    order = tmp_path / "order.txt"
    spec = pod("web", policy="Never",
               init=[step("proxy", order, "serve", restartPolicy="Always"),
                     step("migrate", order, "task", env={"EXIT": 3})],
               main=[step("app", order, "serve")])
    async with running_runtime(tmp_path) as runtime:
        created = runtime.cluster.apply(spec, field_manager="test")
        await eventually(lambda: "stop proxy" in lines(order), what="the sidecar stopped")
        await eventually(lambda: runtime.cluster.get("v1", "Pod", "web", "default")["status"]
                         ["initContainerStatuses"][0]["state"].get("terminated"),
                         what="the sidecar's stop recorded")
        history = runtime.cluster.watch(
            "v1", "Pod", namespace="default",
            resource_version=created["metadata"]["resourceVersion"])
        shown = [(pod_status_text(e.object), e.object["status"].get("phase"))
                 for e in history if e.object.get("status")]
        assert ("Init:Error", "Failed") in shown
        assert [s for s in shown if s[0] == "Init:Error" and s[1] != "Failed"] == []
        assert "start app" not in lines(order)
