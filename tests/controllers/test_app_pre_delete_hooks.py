"""Delete hooks: an Application's deletion runs its PreDelete hooks (Argo CD 3.3) first and
deletes its resources only after every one succeeded; its PostDelete hooks (Argo CD 2.10) run
once the resources are gone, and the Application goes after they succeeded.

Before: a `PreDelete` hook was refused by `headway validate` and never run, and a
`PostDelete` hook validated but never ran either, so a teardown that needed one (drain,
backup, deregister) was deleted straight away, or not at all. The kill tests stop the
controller at the windows a random kill rarely hits: right after a hook was created, and after
the hooks succeeded with their finalizer still on.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_harness import (
    APPS_NS,
    Harness,
    application,
    config_map,
    hook_job,
    make_harness,
    manifests,
)

from headway.clock import VirtualClock
from headway.cluster.errors import ClusterError, NotFound
from headway.controllers import exit_points
from headway.controllers.app.controller import APP_API_VERSION
from headway.controllers.app.deletion import (
    DELETION_PATIENCE_SECONDS,
    POST_DELETE_FINALIZER,
    PRE_DELETE_FINALIZER,
    RESOURCES_FINALIZER,
)

TEARDOWN = hook_job("teardown", "PreDelete")


class Killed(BaseException):
    """The controller process dying at an exit point: nothing after it runs."""


def _synced(s: dict[str, Any]) -> bool:
    return (s.get("sync") or {}).get("status") == "Synced"


def _deleting_app(tmp_path: Path, clock: VirtualClock, *objects: dict[str, Any]) -> Harness:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"), *objects)})
    app = application("shop", h.remote.url, path="app", automated={})
    app["metadata"]["finalizers"] = [RESOURCES_FINALIZER]
    h.install(app)
    h.run("shop", _synced)
    h.store.delete(APP_API_VERSION, "Application", "shop", APPS_NS)
    return h


def _gone(h: Harness) -> bool:
    try:
        h.app("shop")
    except NotFound:
        return True
    return False


def _steps_until_gone(h: Harness, steps: int = 8) -> None:
    for _ in range(steps):
        if h.step("shop") is None and _gone(h):
            return
    assert _gone(h), h.app("shop")


def _uid(h: Harness, name: str) -> str:
    return str(h.get("Job", name)["metadata"]["uid"])


@pytest.fixture
def kill_at(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Names put in the list kill the controller the first time it reaches them."""
    armed: list[str] = []

    def reached(point: str) -> None:
        if point in armed:
            armed.remove(point)
            raise Killed(point)

    monkeypatch.setattr(exit_points, "reached", reached)
    yield armed


def test_an_app_rendering_a_pre_delete_hook_carries_argo_cds_finalizers(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"), TEARDOWN)})
    h.install(application("shop", h.remote.url, path="app", automated={}))
    h.run("shop", _synced)
    assert h.app("shop")["metadata"]["finalizers"] == [
        PRE_DELETE_FINALIZER,
        f"{PRE_DELETE_FINALIZER}/cleanup",
    ]
    assert not h.exists("Job", "teardown")  # not part of a sync
    h.remote.commit({"app/all.yaml": manifests(config_map("a"))})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    h.run("shop", lambda s: not h.app("shop")["metadata"].get("finalizers"))


def test_the_hook_runs_first_and_the_resources_go_after_it_succeeded(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _deleting_app(tmp_path, clock, TEARDOWN)
    h.step("shop")
    created = _uid(h, "teardown")
    for _ in range(3):  # the Job runs: nothing is deleted meanwhile
        h.step("shop")
        assert h.exists("ConfigMap", "a") and _uid(h, "teardown") == created
    assert h.app("shop")["status"]["conditions"] == []
    h.finish_job("teardown")
    _steps_until_gone(h)
    assert not h.exists("ConfigMap", "a")


def test_a_hook_that_never_finishes_is_named_once_the_deletion_outlived_its_patience(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """Before: the step cleared the conditions while it waited, so an app whose teardown Job
    hung (or a hook that stays Suspended, which Argo CD would pass) read as deleting forever
    with no word of why."""
    h = _deleting_app(tmp_path, clock, TEARDOWN)
    h.step("shop")
    h.step("shop")
    assert h.app("shop")["status"]["conditions"] == []  # a hook running for a while is normal
    clock.advance(DELETION_PATIENCE_SECONDS + 1)
    h.step("shop")
    (condition,) = h.app("shop")["status"]["conditions"]
    assert condition["type"] == "DeletionError"
    assert "still waits for its PreDelete hooks: batch/Job/demo/teardown (" in condition["message"]
    assert "resources are not deleted until every PreDelete hook succeeded" in condition["message"]
    assert h.exists("ConfigMap", "a")
    h.finish_job("teardown")
    _steps_until_gone(h)


def test_a_failed_hook_blocks_the_deletion_and_is_kept(tmp_path: Path, clock: VirtualClock) -> None:
    h = _deleting_app(tmp_path, clock, TEARDOWN)
    h.step("shop")
    created = _uid(h, "teardown")
    h.finish_job("teardown", ok=False)
    for _ in range(3):
        h.step("shop")
    (condition,) = h.app("shop")["status"]["conditions"]
    assert condition["type"] == "DeletionError"
    assert condition["message"].startswith("PreDelete hook batch/Job/demo/teardown: ")
    assert "resources are not deleted until every PreDelete hook succeeded" in condition["message"]
    assert h.exists("ConfigMap", "a")
    assert _uid(h, "teardown") == created  # kept as evidence, not run again in a loop
    events = h.store.list("v1", "Event", namespace=APPS_NS)
    assert any(e["reason"] == "PreDeleteHookFailed" and e["type"] == "Warning" for e in events)


def test_a_hook_fixed_in_git_runs_again_and_the_deletion_goes_on(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _deleting_app(tmp_path, clock, TEARDOWN)
    h.step("shop")
    failed = _uid(h, "teardown")
    h.finish_job("teardown", ok=False)
    h.step("shop")
    fixed = hook_job("teardown", "PreDelete")
    fixed["spec"]["template"]["spec"]["containers"][0]["image"] = "tool:2"
    h.remote.commit({"app/all.yaml": manifests(config_map("a"), fixed)})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    for _ in range(4):
        h.step("shop")
        if h.exists("Job", "teardown") and _uid(h, "teardown") != failed:
            break
    assert _uid(h, "teardown") != failed and h.exists("ConfigMap", "a")
    assert h.get("Job", "teardown")["spec"]["template"]["spec"]["containers"][0]["image"] == (
        "tool:2"
    )
    h.finish_job("teardown")
    _steps_until_gone(h)
    assert not h.exists("ConfigMap", "a")


def test_a_source_that_no_longer_renders_holds_the_deletion_and_names_the_way_out(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _deleting_app(tmp_path, clock, TEARDOWN)
    broken = "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n"  # a resource, unreadable
    h.remote.commit({"app/all.yaml": broken})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    for _ in range(3):
        h.step("shop")
    (condition,) = h.app("shop")["status"]["conditions"]
    assert condition["type"] == "DeletionError"
    assert condition["message"].startswith("cannot render the PreDelete hooks: ")
    assert f"remove the finalizer {PRE_DELETE_FINALIZER} from the Application" in (
        condition["message"]
    )
    assert h.exists("ConfigMap", "a") and not h.exists("Job", "teardown")


def test_killed_right_after_creating_the_hook_it_is_not_created_again(
    tmp_path: Path, clock: VirtualClock, kill_at: list[str]
) -> None:
    h = _deleting_app(tmp_path, clock, TEARDOWN)
    kill_at.append("pre-delete-hook-created")
    with pytest.raises(Killed):
        h.step("shop")
    created = _uid(h, "teardown")
    h.restart_controller()
    h.step("shop")
    assert _uid(h, "teardown") == created and h.exists("ConfigMap", "a")
    h.finish_job("teardown")
    _steps_until_gone(h)


def test_killed_after_the_hooks_succeeded_nothing_runs_twice_and_the_cascade_follows(
    tmp_path: Path, clock: VirtualClock, kill_at: list[str]
) -> None:
    h = _deleting_app(tmp_path, clock, TEARDOWN)
    h.step("shop")
    created = _uid(h, "teardown")
    h.finish_job("teardown")
    kill_at.append("pre-delete-hooks-succeeded")
    with pytest.raises(Killed):
        h.step("shop")
    assert PRE_DELETE_FINALIZER in h.app("shop")["metadata"]["finalizers"]
    assert h.exists("ConfigMap", "a")
    h.restart_controller()
    h.step("shop")
    assert PRE_DELETE_FINALIZER not in h.app("shop")["metadata"]["finalizers"]
    assert _uid(h, "teardown") == created
    _steps_until_gone(h)
    assert not h.exists("ConfigMap", "a")


def test_a_generate_name_hook_gets_one_name_per_deletion(
    tmp_path: Path, clock: VirtualClock
) -> None:
    hook = hook_job("x", "PreDelete")
    del hook["metadata"]["name"]
    hook["metadata"]["generateName"] = "drain-"
    h = _deleting_app(tmp_path, clock, hook)
    for _ in range(3):
        h.step("shop")
    jobs = h.store.list("batch/v1", "Job", namespace="demo")
    assert [j["metadata"]["name"].startswith("drain-predelete-") for j in jobs] == [True]


NOTIFY = hook_job("notify", "PostDelete")


def test_post_delete_hooks_run_after_the_resources_are_gone(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _deleting_app(tmp_path, clock, NOTIFY)
    assert POST_DELETE_FINALIZER in h.app("shop")["metadata"]["finalizers"]
    for _ in range(8):
        h.step("shop")
        if h.exists("Job", "notify"):
            break
    assert h.exists("Job", "notify") and not h.exists("ConfigMap", "a")
    created = _uid(h, "notify")
    h.step("shop")
    assert not _gone(h) and _uid(h, "notify") == created  # waits for the hook
    h.finish_job("notify")
    _steps_until_gone(h)


def test_a_failed_post_delete_hook_keeps_the_application(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _deleting_app(tmp_path, clock, NOTIFY)
    for _ in range(8):
        h.step("shop")
        if h.exists("Job", "notify"):
            break
    h.finish_job("notify", ok=False)
    for _ in range(3):
        h.step("shop")
    (condition,) = h.app("shop")["status"]["conditions"]
    assert condition["type"] == "DeletionError"
    assert condition["message"].startswith("PostDelete hook batch/Job/demo/notify: ")
    assert "the Application stays until every PostDelete hook succeeded" in condition["message"]


def test_killed_right_after_creating_a_post_delete_hook_it_is_not_created_again(
    tmp_path: Path, clock: VirtualClock, kill_at: list[str]
) -> None:
    h = _deleting_app(tmp_path, clock, NOTIFY)
    kill_at.append("post-delete-hook-created")
    with pytest.raises(Killed):
        for _ in range(8):
            h.step("shop")
    created = _uid(h, "notify")
    h.restart_controller()
    h.step("shop")
    assert _uid(h, "notify") == created
    h.finish_job("notify")
    kill_at.append("post-delete-hooks-succeeded")
    with pytest.raises(Killed):
        h.step("shop")
    h.restart_controller()
    _steps_until_gone(h)
    assert _uid(h, "notify") == created  # ran once; kept, as no delete policy asks otherwise


def test_a_succeeded_hook_the_cluster_refuses_to_delete_is_named(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the `/cleanup` step dropped the cluster's refusal and tried again every 2 s,
    so the Application stayed, deleting, with no condition saying why."""
    h = _deleting_app(tmp_path, clock, hook_job("notify", "PostDelete", policy="HookSucceeded"))
    real_delete = h.store.delete

    def refuse_the_hook(api: str, kind: str, name: str, *args: Any, **kwargs: Any) -> None:
        if (kind, name) == ("Job", "notify"):
            raise ClusterError('jobs.batch "notify" is forbidden')
        real_delete(api, kind, name, *args, **kwargs)

    monkeypatch.setattr(h.store, "delete", refuse_the_hook)
    for _ in range(8):
        h.step("shop")
        if h.exists("Job", "notify"):
            break
    h.finish_job("notify")
    for _ in range(4):
        h.step("shop")
    (condition,) = h.app("shop")["status"]["conditions"]
    assert condition["type"] == "DeletionError"
    assert condition["message"] == (
        "cannot delete the succeeded PostDelete hooks: batch/Job/demo/notify: "
        'jobs.batch "notify" is forbidden'
    )
    monkeypatch.setattr(h.store, "delete", real_delete)
    _steps_until_gone(h)
    assert not h.exists("Job", "notify")
