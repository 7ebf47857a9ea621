"""The job provider through the analysis controller: in the store with Job status set by the
test, and once with a real Job run by the local runtime's Job controller."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from provider_support import RunDriver, analysis_run

from cluster.local_runtime.harness import running_runtime
from headway.clock import SystemClock, VirtualClock
from headway.cluster.errors import NotFound
from headway.controllers.analysis.controller import AnalysisController
from headway.providers.registry import default_registry
from polling import eventually_async

JOB_TEMPLATE = {
    "spec": {
        "backoffLimit": 0,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "check", "image": "headway-demo/task:v1"}],
            }
        },
    }
}


def job_metric(name: str = "smoke", exit_code: int = 0, **extra: Any) -> dict[str, Any]:
    job: dict[str, Any] = {"metadata": {"labels": {"team": "a"}}, **JOB_TEMPLATE}
    if exit_code:
        container = job["spec"]["template"]["spec"]["containers"][0]
        job = {
            **job,
            "spec": {
                **job["spec"],
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {**container, "env": [{"name": "EXIT", "value": str(exit_code)}]}
                        ],
                    }
                },
            },
        }
    return {"name": name, "provider": {"job": job}, **extra}


@pytest.fixture
async def driver(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[RunDriver]:
    async with httpx2.AsyncClient() as client:
        run_driver = RunDriver(tmp_path, clock, client)
        yield run_driver
        run_driver.close()


def set_job_condition(driver: RunDriver, name: str, condition: str) -> None:
    status = {"conditions": [{"type": condition, "status": "True", "reason": "Test"}]}
    driver.cluster.patch_status("batch/v1", "Job", name, "default", status)


async def test_job_is_created_owned_and_its_completion_is_the_measurement(
    driver: RunDriver, clock: VirtualClock
) -> None:
    driver.cluster.create(analysis_run(job_metric()))
    uid = driver.cluster.get("argoproj.io/v1alpha1", "AnalysisRun", "run", "default")["metadata"][
        "uid"
    ]
    assert await driver.step() == 0.0
    (measurement,) = driver.measurements()
    name = f"{uid}.smoke.1"
    assert measurement["phase"] == "Running"
    assert measurement["metadata"] == {"job-name": name, "job-namespace": "default"}
    job = driver.cluster.get("batch/v1", "Job", name, "default")
    assert job["metadata"]["ownerReferences"][0]["uid"] == uid
    assert job["metadata"]["labels"] == {"team": "a", "analysisrun.argoproj.io/uid": uid}
    assert job["metadata"]["annotations"]["analysisrun.argoproj.io/metric-name"] == "smoke"
    assert await driver.step() == 1.0  # still running: look again in a second
    clock.advance(1)
    set_job_condition(driver, name, "Complete")
    assert await driver.step() is None
    assert driver.measurements()[0]["phase"] == "Successful"
    assert driver.status()["phase"] == "Successful"


async def test_failed_job_fails_the_run(driver: RunDriver) -> None:
    driver.cluster.create(analysis_run(job_metric()))
    await driver.step()
    name = driver.measurements()[0]["metadata"]["job-name"]
    set_job_condition(driver, name, "Failed")
    assert await driver.step() is None
    assert driver.status()["phase"] == "Failed"
    assert f"job {name} failed" in driver.measurements()[0]["message"]


async def test_terminate_deletes_the_running_job(driver: RunDriver) -> None:
    driver.cluster.create(analysis_run(job_metric()))
    await driver.step()
    name = driver.measurements()[0]["metadata"]["job-name"]
    live = driver.cluster.get("argoproj.io/v1alpha1", "AnalysisRun", "run", "default")
    live["spec"]["terminate"] = True
    driver.cluster.update(live)
    assert await driver.step() is None
    with pytest.raises(NotFound):
        driver.cluster.get("batch/v1", "Job", name, "default")
    assert driver.measurements()[0]["message"].endswith(f"metric terminated; job {name} deleted")


async def test_finished_jobs_beyond_the_retention_limit_are_removed(
    driver: RunDriver, clock: VirtualClock
) -> None:
    driver.cluster.create(
        analysis_run(
            job_metric(interval="5s", count=3),
            measurementRetention=[{"metricName": "smoke", "limit": 1}],
        )
    )
    for _ in range(10):
        wait = await driver.step()
        for job in driver.cluster.list("batch/v1", "Job", namespace="default"):
            if not (job.get("status") or {}).get("conditions"):
                set_job_condition(driver, job["metadata"]["name"], "Complete")
        if wait is None:
            break
        clock.advance(wait)
    assert driver.status()["phase"] == "Successful"
    names = [
        j["metadata"]["name"] for j in driver.cluster.list("batch/v1", "Job", namespace="default")
    ]
    assert [n.rsplit(".", 1)[1] for n in names] == ["3"]


@pytest.mark.slow
async def test_a_real_job_run_by_the_local_runtime(tmp_path: Path) -> None:
    clock = SystemClock()
    async with running_runtime(tmp_path) as runtime, httpx2.AsyncClient() as client:
        controller = AnalysisController(providers=default_registry(client, clock), clock=clock)
        runtime.cluster.create(analysis_run(job_metric("ok"), name="good"))
        runtime.cluster.create(analysis_run(job_metric("bad", exit_code=3), name="bad"))
        phases: dict[str, str] = {}

        async def both_finished() -> bool:
            for name in ("good", "bad"):
                if (
                    name not in phases
                    and await controller.step(runtime.cluster, "default", name, clock.now()) is None
                ):
                    run = runtime.cluster.get(
                        "argoproj.io/v1alpha1", "AnalysisRun", name, "default"
                    )
                    phases[name] = run["status"]["phase"]
            return len(phases) == 2

        await eventually_async(both_finished, timeout=25, what="both runs to finish")
    assert phases == {"good": "Successful", "bad": "Failed"}


async def test_a_job_left_by_a_crash_is_reused_and_a_strangers_job_is_an_error(
    driver: RunDriver,
) -> None:
    driver.cluster.create(analysis_run(job_metric()))
    run = driver.cluster.get("argoproj.io/v1alpha1", "AnalysisRun", "run", "default")
    uid = run["metadata"]["uid"]
    owner = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AnalysisRun",
        "name": "run",
        "uid": uid,
        "controller": True,
    }
    leftover = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"{uid}.smoke.1", "namespace": "default", "ownerReferences": [owner]},
        "spec": JOB_TEMPLATE["spec"],
    }
    driver.cluster.create(leftover)  # created before a crash, never recorded in the status
    await driver.step()
    assert driver.measurements()[0]["phase"] == "Running"
    assert len(driver.cluster.list("batch/v1", "Job", namespace="default")) == 1
    driver.cluster.create(analysis_run(job_metric(), name="other"))
    other = driver.cluster.get("argoproj.io/v1alpha1", "AnalysisRun", "other", "default")
    stranger = {
        **leftover,
        "metadata": {**leftover["metadata"], "name": f"{other['metadata']['uid']}.smoke.1"},
    }
    driver.cluster.create(stranger)
    await driver.step("other")
    (measurement,) = driver.measurements("other")
    assert measurement["phase"] == "Error" and "owned by another run" in measurement["message"]
