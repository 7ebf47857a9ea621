"""`kubectl get pods`' READY, STATUS and RESTARTS from a Pod's status (pure)."""

from __future__ import annotations

from typing import Any

from headway.kube.pod_columns import pod_ready_text, pod_restarts, pod_status_text

SPEC: dict[str, Any] = {
    "initContainers": [{"name": "migrate"}, {"name": "proxy", "restartPolicy": "Always"},
                       {"name": "check"}],
    "containers": [{"name": "app"}],
}


def pod(inits: list[dict[str, Any]], mains: list[dict[str, Any]], *, initialized: bool = False,
        phase: str = "Pending") -> dict[str, Any]:
    return {
        "metadata": {"name": "web"}, "spec": SPEC,
        "status": {"phase": phase, "initContainerStatuses": inits, "containerStatuses": mains,
                   "conditions": [{"type": "Initialized",
                                   "status": "True" if initialized else "False"}]},
    }


DONE = {"name": "migrate", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
SIDECAR = {"name": "proxy", "started": True, "ready": True, "state": {"running": {}}}
WAITING_APP = {"name": "app", "state": {"waiting": {"reason": "PodInitializing"}}}


def test_init_progress_counts_completed_init_containers_and_started_sidecars() -> None:
    running = {"name": "check", "state": {"running": {}}}
    assert pod_status_text(pod([DONE, SIDECAR, running], [WAITING_APP])) == "Init:2/3"
    starting = {**SIDECAR, "started": False, "ready": False}
    assert pod_status_text(pod([DONE, starting, running], [WAITING_APP])) == "Init:1/3"


def test_a_failed_init_container_shows_its_reason() -> None:
    failed = {"name": "migrate", "state": {"terminated": {"exitCode": 3, "reason": "Error"}}}
    assert pod_status_text(pod([failed], [WAITING_APP], phase="Failed")) == "Init:Error"
    no_reason = {"name": "migrate", "state": {"terminated": {"exitCode": 3}}}
    assert pod_status_text(pod([no_reason], [WAITING_APP])) == "Init:ExitCode:3"
    backoff = {"name": "migrate", "restartCount": 4,
               "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    shown = pod([backoff], [WAITING_APP])
    assert pod_status_text(shown) == "Init:CrashLoopBackOff"
    assert pod_restarts(shown) == 4


def test_once_initialized_the_main_containers_decide_and_sidecars_count_as_ready() -> None:
    app = {"name": "app", "ready": True, "state": {"running": {}}}
    check = {"name": "check", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
    running = pod([DONE, SIDECAR, check], [app], initialized=True, phase="Running")
    assert pod_status_text(running) == "Running"
    assert pod_ready_text(running) == "2/2"
    crashing = {"name": "app", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    assert pod_status_text(pod([DONE, SIDECAR, check], [crashing], initialized=True,
                               phase="Running")) == "CrashLoopBackOff"
    completed = {"name": "app", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
    assert pod_status_text(pod([DONE, check], [completed], initialized=True,
                               phase="Succeeded")) == "Completed"
    deleting = {**running, "metadata": {"name": "web", "deletionTimestamp": "now"}}
    assert pod_status_text(deleting) == "Terminating"
