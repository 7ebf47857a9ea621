"""A Pod's phase, conditions and container statuses from its containers' records (pure)."""

from __future__ import annotations

from datetime import timedelta

from headway.clock import EPOCH
from headway.cluster.local.kubelet.containers import ContainerRun, should_restart, terminated_state
from headway.cluster.local.kubelet.pod_status import pod_phase, pod_status
from headway.cluster.local.kubelet.pods import PodRun
from headway.kubetime import format_time


def _done(name: str, code: int) -> ContainerRun:
    run = ContainerRun(name=name, image="x:1", starts=1, done=True)
    run.terminated = terminated_state(exit_code=code, started=EPOCH, finished=EPOCH)
    return run


def test_phases() -> None:
    waiting = ContainerRun(name="a", image="x:1")
    assert pod_phase([waiting]) == "Pending"
    restarting = ContainerRun(name="a", image="x:1", starts=2, waiting=("CrashLoopBackOff", "m"))
    assert pod_phase([restarting]) == "Running"
    assert pod_phase([_done("a", 0), _done("b", 0)]) == "Succeeded"
    assert pod_phase([_done("a", 0), _done("b", 1)]) == "Failed"
    assert pod_phase([_done("a", 1), restarting]) == "Running"


def test_restart_policy() -> None:
    assert [should_restart(p, 0) for p in ("Always", "OnFailure", "Never")] == [True, False, False]
    assert [should_restart(p, 2) for p in ("Always", "OnFailure", "Never")] == [True, True, False]


def test_terminated_state_reports_signals_as_the_kubelet() -> None:
    state = terminated_state(exit_code=137, started=EPOCH, finished=EPOCH + timedelta(seconds=3))
    assert state == {
        "exitCode": 137,
        "reason": "Error",
        "signal": 9,
        "startedAt": "2026-01-01T00:00:00Z",
        "finishedAt": "2026-01-01T00:00:03Z",
    }
    assert terminated_state(exit_code=0, started=None, finished=EPOCH)["reason"] == "Completed"


def test_waiting_container_status_and_last_state() -> None:
    run = ContainerRun(
        name="app",
        image="x:1",
        starts=3,
        restart_count=2,
        waiting=("CrashLoopBackOff", "back-off 20s restarting failed container=app pod=p"),
    )
    run.terminated = terminated_state(exit_code=3, started=EPOCH, finished=EPOCH)
    status = run.status()
    assert status["state"] == {
        "waiting": {
            "reason": "CrashLoopBackOff",
            "message": "back-off 20s restarting failed container=app pod=p",
        }
    }
    assert status["lastState"]["terminated"]["exitCode"] == 3
    assert (status["ready"], status["started"], status["restartCount"]) == (False, False, 2)


def test_ready_condition_keeps_its_transition_time_until_it_changes() -> None:
    pod = {"spec": {"containers": [{"name": "app"}]}, "status": {}}
    run = PodRun(uid="u", namespace="default", name="p", port=1, started_at="t")
    run.containers["app"] = ContainerRun(name="app", image="x:1")
    first = pod_status(pod=pod, run=run, now=EPOCH)
    ready = {c["type"]: c for c in first["conditions"]}["Ready"]
    assert (ready["status"], ready["reason"]) == ("False", "ContainersNotReady")
    assert ready["message"] == "containers with unready status: [app]"
    later = pod_status(pod={**pod, "status": first}, run=run, now=EPOCH + timedelta(seconds=30))
    assert later == first  # nothing changed, nothing to write
    assert [c["type"] for c in first["conditions"]] == [
        "PodScheduled",
        "Initialized",
        "ContainersReady",
        "Ready",
    ]
    assert first["podIP"] == "127.0.0.1" and first["phase"] == "Pending"
    assert ready["lastTransitionTime"] == format_time(EPOCH)
