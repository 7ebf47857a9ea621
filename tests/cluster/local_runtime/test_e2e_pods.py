"""End to end: pods as real processes — restarts, back-off, readiness, liveness, images."""

from __future__ import annotations

import base64
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from cluster.local_runtime.harness import get_text, running_runtime, service, service_url
from headway.cluster.local.kubelet.processes import process_alive
from headway.kube.pod_facts import is_ready
from headway.model.obj import Obj
from polling import eventually

pytestmark = pytest.mark.slow


def pod(name: str, image: str, **container: Any) -> Obj:
    restart = container.pop("restartPolicy", "Always")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": {
            "restartPolicy": restart,
            "terminationGracePeriodSeconds": 3,
            "containers": [{"name": "app", "image": image, **container}],
        },
    }


def container_status(runtime: Any, name: str) -> dict[str, Any]:
    status = runtime.cluster.get("v1", "Pod", name, "default").get("status") or {}
    return (status.get("containerStatuses") or [{}])[0]


async def test_a_killed_process_is_restarted(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        runtime.cluster.apply(pod("killme", "headway-demo/app:v1"), field_manager="test")
        first = await eventually(
            lambda: container_status(runtime, "killme").get("containerID"), what="running"
        )
        log = tmp_path / "logs" / "default" / "killme"
        await eventually(lambda: "serving" in (log / "app.log").read_text(), what="app serving")
        os.kill(int(first.split("//")[1]), signal.SIGKILL)
        status = await eventually(
            lambda: (
                (s := container_status(runtime, "killme")).get("restartCount") == 1
                and s.get("containerID") not in (None, first)
                and s
            ),
            what="restart",
        )
        assert status["lastState"]["terminated"]["exitCode"] == 137
        assert status["lastState"]["terminated"]["reason"] == "Error"
        assert "running" in status["state"]
        assert "serving version v1" in (log / "app.previous.log").read_text()


async def test_an_app_that_exits_at_once_goes_into_crash_loop_back_off(tmp_path: Path) -> None:
    async with running_runtime(tmp_path, backoff=2.0) as runtime:
        runtime.cluster.apply(pod("crashy", "headway-demo/crash:v1"), field_manager="test")
        status = await eventually(
            lambda: (
                (s := container_status(runtime, "crashy"))
                .get("state", {})
                .get("waiting", {})
                .get("reason")
                == "CrashLoopBackOff"
                and s
            ),
            what="CrashLoopBackOff",
        )
        assert status["restartCount"] >= 1
        assert status["lastState"]["terminated"]["exitCode"] == 3
        assert (
            "back-off 2s restarting failed container=app pod=crashy"
            in status["state"]["waiting"]["message"]
        )
        got = runtime.cluster.get("v1", "Pod", "crashy", "default")
        assert got["status"]["phase"] == "Running"
        assert not is_ready(got)


async def test_never_restart_policy_ends_in_failed_phase(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        runtime.cluster.apply(
            pod("once", "headway-demo/crash:v1", restartPolicy="Never"), field_manager="test"
        )
        await eventually(
            lambda: (
                runtime.cluster.get("v1", "Pod", "once", "default").get("status", {}).get("phase")
                == "Failed"
            ),
            what="Failed",
        )
        status = container_status(runtime, "once")
        assert status["state"]["terminated"]["exitCode"] == 3 and status["restartCount"] == 0


async def test_readiness_gates_the_service_endpoints(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        probe = {
            "httpGet": {"path": "/readyz", "port": 8080},
            "periodSeconds": 1,
            "failureThreshold": 1,
        }
        slow = pod(
            "slow",
            "headway-demo/app:v1",
            env=[{"name": "READY_AFTER_SECONDS", "value": "3"}],
            ports=[{"containerPort": 8080}],
            readinessProbe=probe,
        )
        runtime.cluster.apply(slow, field_manager="test")
        runtime.cluster.apply(service("slow"), field_manager="test")
        await eventually(lambda: container_status(runtime, "slow").get("started"), what="started")
        await eventually(lambda: service_url(runtime, "slow"), what="address")
        # running but not ready: no endpoint
        assert not container_status(runtime, "slow")["ready"]
        assert "subsets" not in runtime.cluster.get("v1", "Endpoints", "slow", "default")
        await eventually(
            lambda: "subsets" in runtime.cluster.get("v1", "Endpoints", "slow", "default"),
            what="endpoint after readiness",
        )
        code, text = await get_text(service_url(runtime, "slow") or "")
        assert (code, text.split()[1]) == (200, "slow")


async def test_a_failing_liveness_probe_restarts_the_container(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        probe = {
            "httpGet": {"path": "/missing", "port": 8080},
            "periodSeconds": 1,
            "failureThreshold": 2,
        }
        sick = pod("sick", "headway-demo/app:v1", livenessProbe=probe, restartPolicy="OnFailure")
        runtime.cluster.apply(sick, field_manager="test")
        status = await eventually(
            lambda: (s := container_status(runtime, "sick")).get("restartCount", 0) >= 1 and s,
            what="liveness restart",
        )
        assert "failed liveness probe" in status["lastState"]["terminated"].get("message", "")
        # the app exits cleanly on SIGTERM; it is restarted all the same
        assert status["lastState"]["terminated"]["exitCode"] == 0


async def test_an_unknown_image_waits_in_image_pull_back_off(tmp_path: Path) -> None:
    async with running_runtime(tmp_path, backoff=0.3) as runtime:
        runtime.cluster.apply(pod("ghost", "nobody/ghost:v9"), field_manager="test")
        status = await eventually(
            lambda: (
                (s := container_status(runtime, "ghost"))
                .get("state", {})
                .get("waiting", {})
                .get("reason")
                == "ImagePullBackOff"
                and s
            ),
            what="ImagePullBackOff",
        )
        assert (
            'image "nobody/ghost:v9" is not in the runtime image map'
            in status["state"]["waiting"]["message"]
        )
        assert runtime.cluster.get("v1", "Pod", "ghost", "default")["status"]["phase"] == "Pending"


async def test_a_process_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        stubborn = pod("stubborn", "headway-demo/stubborn:v1")
        stubborn["spec"]["terminationGracePeriodSeconds"] = 1
        runtime.cluster.apply(stubborn, field_manager="test")
        log = tmp_path / "logs" / "default" / "stubborn" / "app.log"
        await eventually(lambda: log.exists() and "ignoring SIGTERM" in log.read_text(), what="up")
        pid = int(container_status(runtime, "stubborn")["containerID"].split("//")[1])
        runtime.cluster.delete("v1", "Pod", "stubborn", "default")
        # Terminating while its process runs: the kubelet's finalizer holds the Pod
        held = runtime.cluster.get("v1", "Pod", "stubborn", "default")
        assert held["metadata"]["deletionTimestamp"]
        assert held["metadata"]["finalizers"] == ["headway.dev/process"]
        await eventually(lambda: not runtime.cluster.list("v1", "Pod"), what="pod removed")
        assert not process_alive(pid)


async def test_env_sources_reach_the_process(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        cluster = runtime.cluster
        cluster.apply(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "cfg", "namespace": "default"},
                "data": {"MODE": "fast"},
            },
            field_manager="test",
        )
        cluster.apply(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "sec", "namespace": "default"},
                "data": {"TOKEN": base64.b64encode(b"s3cret").decode()},
            },
            field_manager="test",
        )
        script = (
            "import os; print(' '.join(os.environ.get(k, '-') for k in "
            "('CFG_MODE', 'TOKEN', 'ME', 'PORT', 'HEADWAY_IMAGE_TAG')), os.getcwd())"
        )
        spec = pod(
            "envy",
            "headway-demo/python:v4",
            restartPolicy="Never",
            workingDir=str(tmp_path),
            args=["-c", script, "$(ME)"],
            envFrom=[{"configMapRef": {"name": "cfg"}, "prefix": "CFG_"}],
            env=[
                {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "TOKEN"}}},
                {"name": "ME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            ],
        )
        cluster.apply(spec, field_manager="test")
        await eventually(
            lambda: (
                cluster.get("v1", "Pod", "envy", "default").get("status", {}).get("phase")
                == "Succeeded"
            ),
            what="Succeeded",
        )
        port = cluster.get("v1", "Pod", "envy", "default")["metadata"]["annotations"][
            "headway.dev/port"
        ]
        output = (tmp_path / "logs" / "default" / "envy" / "app.log").read_text().split()
        assert output == ["fast", "s3cret", "envy", port, "v4", str(tmp_path)]


async def test_pre_stop_hook_runs_before_sigterm(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        hooked = pod(
            "hooked",
            "headway-demo/app:v1",
            lifecycle={"preStop": {"httpGet": {"path": "/prestop", "port": 8080}}},
        )
        runtime.cluster.apply(hooked, field_manager="test")
        log = tmp_path / "logs" / "default" / "hooked" / "app.log"
        await eventually(lambda: log.exists() and "serving" in log.read_text(), what="serving")
        runtime.cluster.delete("v1", "Pod", "hooked", "default")
        await eventually(lambda: not runtime.cluster.list("v1", "Pod"), what="pod removed")
        text = log.read_text()
        assert '"GET /prestop HTTP/1.1" 404' in text and "stopped" in text
        assert text.index("GET /prestop") < text.index("stopped")


async def test_startup_probe_holds_back_liveness_until_it_passes(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        check = {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 1}
        slow = pod(
            "slowstart",
            "headway-demo/app:v1",
            env=[{"name": "READY_AFTER_SECONDS", "value": "2"}],
            startupProbe={**check, "failureThreshold": 10},
            livenessProbe={**check, "failureThreshold": 1},
        )
        runtime.cluster.apply(slow, field_manager="test")
        early = await eventually(
            lambda: (
                container_status(runtime, "slowstart").get("containerID")
                and container_status(runtime, "slowstart")
            ),
            what="running",
        )
        assert (early["started"], early["ready"]) == (False, False)
        status = await eventually(
            lambda: (s := container_status(runtime, "slowstart"))["ready"] and s,
            what="ready after startup",
        )
        assert status["started"] and status["restartCount"] == 0


async def test_a_failing_startup_probe_restarts_the_container(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        never = pod(
            "neverup",
            "headway-demo/app:v1",
            startupProbe={
                "httpGet": {"path": "/missing", "port": 8080},
                "periodSeconds": 1,
                "failureThreshold": 2,
            },
        )
        runtime.cluster.apply(never, field_manager="test")
        status = await eventually(
            lambda: (s := container_status(runtime, "neverup")).get("restartCount", 0) >= 1 and s,
            what="restart",
        )
        assert "failed startup probe" in status["lastState"]["terminated"]["message"]


async def test_a_config_edit_lets_a_waiting_image_start(tmp_path: Path) -> None:
    async with running_runtime(tmp_path, backoff=0.3) as runtime:
        runtime.cluster.apply(pod("late", "team/late:v1"), field_manager="test")
        await eventually(
            lambda: (
                container_status(runtime, "late").get("state", {}).get("waiting", {}).get("reason")
                in ("ErrImagePull", "ImagePullBackOff")
            ),
            what="waiting",
        )
        config = tmp_path / "headway-runtime.yaml"
        text = config.read_text().replace(
            "images:\n", "images:\n  team/late:\n    command: [sleep, '60']\n", 1
        )
        config.write_text(text)
        status = await eventually(
            lambda: (s := container_status(runtime, "late")).get("ready") and s,
            what="started after the edit",
        )
        assert status["restartCount"] == 0


async def test_every_container_of_a_pod_runs_with_its_own_port(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        two = pod("two", "headway-demo/app:v1")
        two["spec"]["containers"].append({"name": "side", "image": "headway-demo/app:v2"})
        runtime.cluster.apply(two, field_manager="test")
        got = await eventually(
            lambda: (
                (p := runtime.cluster.get("v1", "Pod", "two", "default"))
                .get("status", {})
                .get("phase")
                == "Running"
                and is_ready(p)
                and p
            ),
            what="both ready",
        )
        assert [s["name"] for s in got["status"]["containerStatuses"]] == ["app", "side"]
        logs = tmp_path / "logs" / "default" / "two"
        await eventually(
            lambda: all(
                (logs / f"{c}.log").exists() and "serving" in (logs / f"{c}.log").read_text()
                for c in ("app", "side")
            ),
            what="both serving",
        )
        pod_port = got["metadata"]["annotations"]["headway.dev/port"]
        assert f"127.0.0.1:{pod_port}" in (logs / "app.log").read_text()
        assert f"127.0.0.1:{pod_port}" not in (logs / "side.log").read_text()


async def test_a_missing_executable_ends_the_run_with_start_error(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        broken = pod(
            "noexec", "anything:v1", command=["/nonexistent/program"], restartPolicy="Never"
        )
        runtime.cluster.apply(broken, field_manager="test")
        await eventually(
            lambda: (
                runtime.cluster.get("v1", "Pod", "noexec", "default").get("status", {}).get("phase")
                == "Failed"
            ),
            what="Failed",
        )
        terminated = container_status(runtime, "noexec")["state"]["terminated"]
        assert (terminated["exitCode"], terminated["reason"]) == (128, "StartError")
        assert "failed to start /nonexistent/program" in terminated["message"]
