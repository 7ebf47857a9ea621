"""End to end: Jobs run real processes to completion, or fail at their limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cluster.local_runtime.harness import running_runtime
from headway.model.obj import Obj
from polling import eventually

pytestmark = pytest.mark.slow


def job(name: str, *, exit_code: int = 0, sleep: float = 0, **spec: Any) -> Obj:
    env = [{"name": "EXIT", "value": str(exit_code)}, {"name": "SLEEP", "value": str(sleep)}]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            **spec,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 1,
                    "containers": [{"name": "task", "image": "headway-demo/task:v1", "env": env}],
                }
            },
        },
    }


def finished(runtime: Any, name: str) -> dict[str, Any] | None:
    status = runtime.cluster.get("batch/v1", "Job", name, "default").get("status") or {}
    done = [c for c in status.get("conditions") or [] if c.get("status") == "True"]
    return status if done else None


async def test_a_job_runs_to_completion(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        runtime.cluster.apply(job("batch", completions=3, parallelism=2), field_manager="test")
        status = await eventually(lambda: finished(runtime, "batch"), what="job finished")
        assert [c["type"] for c in status["conditions"]] == ["Complete"]
        assert (status["succeeded"], status["failed"], status["active"]) == (3, 0, 0)
        assert "completionTime" in status and "startTime" in status
        pods = runtime.cluster.list(
            "v1", "Pod", namespace="default", label_selector={"job-name": "batch"}
        )
        assert len(pods) == 3 and all(p["status"]["phase"] == "Succeeded" for p in pods)
        # finished pods hold no finalizer: deleting the Job removes them at once
        await eventually(
            lambda: (
                not any(p["metadata"].get("finalizers") for p in runtime.cluster.list("v1", "Pod"))
            ),
            what="released",
        )
        runtime.cluster.delete("batch/v1", "Job", "batch", "default")
        assert runtime.cluster.list("v1", "Pod", namespace="default") == []


async def test_a_failing_job_stops_at_its_backoff_limit(tmp_path: Path) -> None:
    async with running_runtime(tmp_path, backoff=0.2) as runtime:
        runtime.cluster.apply(job("flaky", exit_code=2, backoffLimit=1), field_manager="test")
        status = await eventually(lambda: finished(runtime, "flaky"), what="job failed")
        failed = [c for c in status["conditions"] if c["type"] == "Failed"]
        assert failed and failed[0]["reason"] == "BackoffLimitExceeded"
        assert status["failed"] == 2 and status.get("succeeded", 0) == 0
        pods = runtime.cluster.list(
            "v1", "Pod", namespace="default", label_selector={"job-name": "flaky"}
        )
        assert len(pods) == 2


async def test_a_job_past_its_deadline_is_stopped(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        runtime.cluster.apply(
            job("slowjob", sleep=60, activeDeadlineSeconds=2), field_manager="test"
        )
        status = await eventually(lambda: finished(runtime, "slowjob"), what="deadline")
        assert [c["reason"] for c in status["conditions"]] == ["DeadlineExceeded"]
        await eventually(
            lambda: not runtime.cluster.list("v1", "Pod", namespace="default"), what="pods gone"
        )
        await eventually(lambda: not runtime.kubelet.live_process_groups(), what="processes gone")
