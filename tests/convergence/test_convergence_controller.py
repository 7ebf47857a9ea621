"""The Git convergence controller against a real store and real repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest
from convergence_harness import NS, Harness, application
from gitwork import WorkRepo, rollout_yaml

from headway.clock import VirtualClock

CONFIG = "kind: ConfigMap\nmetadata: {name: web}\ndata: {greeting: hello}\n"
CONFIG_V3 = "kind: ConfigMap\nmetadata: {name: web}\ndata: {greeting: hi}\n"


@pytest.fixture
def work(tmp_path: Path) -> WorkRepo:
    repo = WorkRepo(tmp_path / "gitops")
    repo.commit({"apps/web/rollout.yaml": rollout_yaml("v1"), "apps/web/cm.yaml": CONFIG}, "v1")
    repo.commit({"apps/web/rollout.yaml": rollout_yaml("v2")}, "release web v2")
    repo.commit(
        {"apps/web/rollout.yaml": rollout_yaml("v3"), "apps/web/cm.yaml": CONFIG_V3},
        "release web v3 and a new greeting",
    )
    return repo


@pytest.fixture
def harness(tmp_path: Path, clock: VirtualClock, work: WorkRepo) -> Harness:
    return Harness(tmp_path, clock, work.url)


def test_abort_commits_a_revert_of_only_the_image(harness: Harness, work: WorkRepo) -> None:
    bump = work.tip()
    harness.abort(stable="shop/web:v2", failed="shop/web:v3")
    assert harness.step() is None
    revert = work.tip()
    assert (
        revert != bump and work.repo[revert].peel(pygit2.Commit).parents[0].id == work.repo[bump].id
    )
    assert work.changed_lines(revert) == [
        "-          image: shop/web:v3   # the release",
        "+          image: shop/web:v2   # the release",
    ]
    assert work.read("apps/web/cm.yaml") == CONFIG_V3  # the same commit's other change stays
    message = work.repo[revert].peel(pygit2.Commit).message
    for fact in (
        "Rollout shop/web",
        "shop/web:v3",
        "canary1",
        "web-canary1-2",
        "error-ratio Failed (last value 0.29)",
        f"Headway-Revert-Of: {bump}",
    ):
        assert fact in message
    assert "p99-latency" not in message
    assert work.repo.status() == {}  # the checked-out working tree followed the branch


def test_the_outcome_is_recorded_on_rollout_and_application(
    harness: Harness, work: WorkRepo
) -> None:
    harness.abort(stable="shop/web:v2", failed="shop/web:v3")
    harness.step()
    revert = work.tip()
    for obj in (
        harness.rollout(),
        harness.cluster.get("argoproj.io/v1alpha1", "Application", "web", "argocd"),
    ):
        state = json.loads(obj["metadata"]["annotations"]["headway.dev/git-convergence"])
        assert (state["podHash"], state["result"], state["commits"]) == (
            "canary1",
            "Reverted",
            [revert],
        )
    condition = harness.condition()
    assert (condition["status"], condition["reason"]) == ("True", "GitReverted")
    assert revert[:12] in condition["message"]
    assert any(r == "GitReverted" and t == "Normal" for t, r, _ in harness.events())
    assert harness.rollout()["status"]["abort"] is True  # the rest of the status is untouched


def test_never_twice_even_after_a_restart_that_lost_the_annotation(
    harness: Harness, work: WorkRepo
) -> None:
    harness.abort(stable="shop/web:v2", failed="shop/web:v3")
    harness.step()
    revert = work.tip()
    harness.step()
    assert work.tip() == revert
    _wipe_annotation(harness)  # killed after the commit, before the annotation was written
    assert "headway.dev/git-convergence" not in harness.rollout()["metadata"].get("annotations", {})
    harness.restart()
    harness.step()
    assert work.tip() == revert
    assert len(work.log()) == 4
    condition = harness.condition()
    assert (condition["status"], condition["reason"]) == ("True", "GitRevertFound")


def test_a_branch_that_moved_on_is_reported_not_reverted(harness: Harness, work: WorkRepo) -> None:
    harness.abort(stable="shop/web:v2", failed="shop/web:v3")
    moved = work.commit({"apps/web/rollout.yaml": rollout_yaml("v4")}, "release web v4")
    harness.step()
    assert work.tip() == moved
    condition = harness.condition()
    assert (condition["status"], condition["reason"]) == ("False", "GitRevertFailed")
    assert (
        "branch moved" in condition["message"]
        and "apps/web/rollout.yaml:15" in condition["message"]
    )
    assert any(t == "Warning" and r == "GitRevertFailed" for t, r, _ in harness.events())


def test_an_image_not_in_the_source_is_reported(harness: Harness, work: WorkRepo) -> None:
    harness.abort(stable="shop/web:v2", failed="shop/api:v9")
    harness.step()
    assert len(work.log()) == 3
    assert "shop/api:v9 was not found" in harness.condition()["message"]


@pytest.mark.parametrize(
    ("automated", "annotation", "reverts"),
    [(True, None, True), (False, None, False), (True, "false", False), (False, "true", True)],
)
def test_policy_per_application(
    harness: Harness, work: WorkRepo, automated: bool, annotation: str | None, reverts: bool
) -> None:
    notes = {"headway.dev/revert-on-abort": annotation} if annotation else {}
    harness.abort(
        stable="shop/web:v2",
        failed="shop/web:v3",
        app=application(work.url, automated=automated, **notes),
    )
    harness.step()
    assert (len(work.log()) == 4) is reverts
    assert harness.condition()["reason"] == ("GitReverted" if reverts else "GitRevertDisabled")


def test_an_abort_without_a_revision_yet_records_nothing(harness: Harness, work: WorkRepo) -> None:
    harness.abort(stable="shop/web:v2", failed="shop/web:v3")
    status = dict(harness.rollout()["status"], currentPodHash="")
    harness.cluster.patch_status("argoproj.io/v1alpha1", "Rollout", "web", NS, status)
    harness.step()
    assert len(work.log()) == 3
    assert "headway.dev/git-convergence" not in (
        harness.rollout()["metadata"].get("annotations") or {}
    )


def test_a_rollout_that_is_not_aborted_is_left_alone(harness: Harness, work: WorkRepo) -> None:
    harness.abort(stable="shop/web:v2", failed="shop/web:v3")
    status = dict(harness.rollout()["status"], abort=False, phase="Paused", message="")
    harness.cluster.patch_status("argoproj.io/v1alpha1", "Rollout", "web", NS, status)
    harness.step()
    assert len(work.log()) == 3


def test_aborting_a_fully_promoted_rollout_reverts_nothing_and_reports_nothing(
    harness: Harness, work: WorkRepo
) -> None:
    # `rollouts abort` on a Healthy rollout: the current revision IS the stable one, so there
    # is no failed release to revert and nothing has gone wrong in Git.
    harness.abort(stable="shop/web:v2", failed="shop/web:v3")
    status = harness.rollout()["status"]
    status = dict(status, currentPodHash=status["stableRS"])
    harness.cluster.patch_status("argoproj.io/v1alpha1", "Rollout", "web", NS, status)
    harness.step()
    assert len(work.log()) == 3
    assert harness.events() == []
    conditions = (harness.rollout().get("status") or {}).get("conditions") or []
    assert [c for c in conditions if c["type"] == "GitConvergence"] == []


def _wipe_annotation(harness: Harness) -> None:
    """What a controller killed after its commit and before its annotation leaves behind."""
    harness.cluster.apply(
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Rollout",
            "metadata": {"name": "web", "namespace": NS},
        },
        field_manager="headway-git-convergence",
        force=True,
    )


def test_the_same_bad_image_released_again_is_reverted_again_once(
    harness: Harness, work: WorkRepo
) -> None:
    """Issue 16 item 4: v3 aborts and is reverted; someone commits v3 again; it aborts again
    (same pod hash): Git is converged again — once for that abort, also across a restart."""
    harness.abort(stable="shop/web:v2", failed="shop/web:v3", aborted_at="2026-01-01T00:00:00Z")
    harness.step()
    first_revert = work.tip()
    assert "image: shop/web:v2" in work.read("apps/web/rollout.yaml")
    harness.recover()
    assert harness.step() is None and work.tip() == first_revert
    again = work.commit({"apps/web/rollout.yaml": rollout_yaml("v3")}, "release web v3 again")
    harness.abort(
        stable="shop/web:v2",
        failed="shop/web:v3",
        run="web-canary1-5",
        aborted_at="2026-01-01T00:10:00Z",
    )
    harness.step()
    second_revert = work.tip()
    assert second_revert != again, "the re-released bad image was not reverted"
    commit = work.repo[second_revert].peel(pygit2.Commit)
    assert str(commit.parents[0].id) == again
    assert f"Headway-Revert-Of: {again}" in commit.message and "web-canary1-5" in commit.message
    assert work.changed_lines(second_revert) == [
        "-          image: shop/web:v3   # the release",
        "+          image: shop/web:v2   # the release",
    ]
    state = json.loads(harness.rollout()["metadata"]["annotations"]["headway.dev/git-convergence"])
    assert (state["result"], state["abortedAt"], state["analysisRun"]) == (
        "Reverted",
        "2026-01-01T00:10:00Z",
        "web-canary1-5",
    )
    harness.step()  # the same abort again: nothing
    _wipe_annotation(harness)  # killed between the commit and the annotation
    harness.restart()
    harness.step()
    assert work.tip() == second_revert and len(work.log()) == 6
    assert harness.condition()["reason"] == "GitRevertFound"
    reverted = [m for _, r, m in harness.events() if r == "GitReverted"]
    assert len(reverted) == 2  # one per abort


def test_credentials_in_the_repo_url_stay_out_of_events_and_records(
    harness: Harness, work: WorkRepo
) -> None:
    """Issue 16 item 5: a revert that cannot reach `http://user:password@...` reports the
    remote without its credentials (events, annotations, the condition)."""
    from prometheus_support import free_port

    password = "pw-planted-in-url"
    url = f"http://deploy:{password}@127.0.0.1:{free_port()}/gitops.git"
    harness.abort(stable="shop/web:v2", failed="shop/web:v3", app=application(url))
    for _ in range(5):
        harness.step()
    events = harness.events()
    assert any(r == "GitRevertRetrying" for _, r, _ in events)  # the remote was named
    assert any("http://***@127.0.0.1" in m for _, _, m in events)
    app = harness.cluster.get("argoproj.io/v1alpha1", "Application", "web", "argocd")
    shown = json.dumps(
        [events, harness.rollout()["metadata"], harness.condition(), app["metadata"]]
    )
    assert password not in shown
