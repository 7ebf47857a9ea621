"""The promotion controller on a real local store and a virtual clock: a walk through three
environments, approval from the record, failure re-committing the previous image, and a
controller killed at every point of a step resuming without a second commit or a lost
approval."""

from __future__ import annotations

from pathlib import Path

import pytest
from promotion_harness import ARGO, NS, Harness

from headway.cluster.local.api.store import LocalCluster
from headway.promotion.controller import PromotionController, next_name
from headway.promotion.environments import FetchOncePerStep
from headway.promotion.record import API_VERSION, KIND, read_spec


class Killed(Exception):
    pass


def _walk_to_prod(h: Harness) -> str:
    h.promote("web-dev-1", "dev", "v2")
    h.step("web-dev-1")
    assert h.phase("web-dev-1") == "Committed"
    h.run_app("dev", "v2")
    h.step("web-dev-1")
    assert h.phase("web-dev-1") == "Succeeded"
    staging = h.status("web-dev-1")["nextPromotion"]
    h.step(staging)
    h.run_app("staging", "v2")
    h.step(staging)
    assert h.phase(staging) == "Succeeded"
    return str(h.status(staging)["nextPromotion"])


def test_a_good_image_walks_dev_staging_prod_with_the_prod_approval(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    prod = _walk_to_prod(h)
    h.step(prod)
    assert h.phase(prod) == "AwaitingApproval"
    assert h.repo.pins["prod"] == "v1"
    h.advance(60)
    h.decide(prod, "approve", "lead@x.io")
    h.step(prod)
    assert h.phase(prod) == "Committed" and h.repo.pins["prod"] == "v2"
    h.run_app("prod", "v2")
    h.step(prod)
    assert h.phase(prod) == "Succeeded"
    approval = h.status(prod)["approval"]
    assert approval["verdict"] == "Approved" and approval["decidedBy"] == "lead@x.io"
    assert [c["env"] for c in h.repo.commits] == ["dev", "staging", "prod"]


def test_self_approval_is_refused_and_the_timeout_denies(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    prod = _walk_to_prod(h)
    h.step(prod)
    h.decide(prod, "approve", "dev@x.io")  # the author, and not on the list either
    h.step(prod)
    assert h.phase(prod) == "AwaitingApproval"
    h.advance(3600)
    h.step(prod)
    assert h.phase(prod) == "TimedOut"
    assert h.repo.pins["prod"] == "v1"


def test_a_failed_rollout_re_commits_the_previous_image_and_stops(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.promote("web-dev-1", "dev", "v2")
    h.step("web-dev-1")
    h.run_app("dev", "v2", health="Progressing")
    h.advance(600)
    h.step("web-dev-1")
    assert h.phase("web-dev-1") == "Reverting"
    h.step("web-dev-1")
    status = h.status("web-dev-1")
    assert status["phase"] == "Failed" and "within 600s" in status["message"]
    assert h.repo.pins["dev"] == "v1" and status["revertCommit"]
    assert "nextPromotion" not in status


def test_a_direct_promotion_to_prod_is_refused_without_break_glass(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.promote("web-prod-x", "prod", "v9")
    h.step("web-prod-x")
    assert h.phase("web-prod-x") == "Refused"
    assert h.repo.commits == []


@pytest.mark.parametrize("point", ["before-action", "after-action", "after-status"])
def test_killed_at_the_commit_resumes_without_a_second_commit(tmp_path: Path, point: str) -> None:
    h = Harness(tmp_path)
    prod = _walk_to_prod(h)
    h.step(prod)
    h.decide(prod, "approve", "lead@x.io")

    def kill(at: str) -> None:
        if at == point:
            raise Killed(at)

    with pytest.raises(Killed):
        h.step(prod, h.new_controller(hook=kill))
    fresh = h.new_controller()
    h.step(prod, fresh)
    h.run_app("prod", "v2")
    h.step(prod, fresh)
    assert h.phase(prod) == "Succeeded"
    assert [c["env"] for c in h.repo.commits].count("prod") == 1
    assert h.status(prod)["approval"]["decidedBy"] == "lead@x.io"


@pytest.mark.parametrize("point", ["before-action", "after-action", "after-status"])
def test_killed_at_the_next_environment_starts_it_once(tmp_path: Path, point: str) -> None:
    h = Harness(tmp_path)
    h.promote("web-dev-1", "dev", "v2")
    h.step("web-dev-1")
    h.run_app("dev", "v2")

    def kill(at: str) -> None:
        if at == point:
            raise Killed(at)

    with pytest.raises(Killed):
        h.step("web-dev-1", h.new_controller(hook=kill))
    h.step("web-dev-1", h.new_controller())
    staging = [p for p in h.store.list(API_VERSION, KIND) if read_spec(p).environment == "staging"]
    assert [p["metadata"]["name"] for p in staging] == [
        next_name(read_spec(h.store.get(API_VERSION, KIND, "web-dev-1", "argocd")), "staging")
    ]


def test_a_newer_promotion_supersedes_the_older_waiting_for_approval(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    prod = _walk_to_prod(h)
    h.step(prod)
    h.advance(5)
    h.promote("web-prod-hotter", "prod", "v3", origin="rollback")
    h.step(prod)
    assert h.phase(prod) == "Superseded"
    assert "withdrawn" in h.status(prod)["message"]
    h.decide(prod, "approve", "lead@x.io")  # too late: superseded stays superseded
    h.step(prod)
    assert h.phase(prod) == "Superseded" and h.repo.pins["prod"] == "v1"


def test_rollouts_are_read_from_the_applications_destination_cluster(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    remote = LocalCluster(tmp_path / "remote.db", h.clock)
    remote.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dev"}},
                 field_manager="test")
    aborted = {
        "apiVersion": ARGO, "kind": "Rollout", "metadata": {"name": "web", "namespace": "dev"},
        "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "web:v2"}]}}},
    }
    remote.apply(aborted, field_manager="test")
    remote.patch_status(ARGO, "Rollout", "web", "dev",
                        {"abort": True, "phase": "Degraded", "message": "analysis failed"})
    h.promote("web-dev-1", "dev", "v2")
    h.step("web-dev-1")
    h.run_app("dev", "v2")
    status = dict(h.store.get(ARGO, "Application", "web-dev", NS)["status"])
    status["resources"] = [{"group": "argoproj.io", "kind": "Rollout", "name": "web",
                            "namespace": "dev"}]
    h.store.patch_status(ARGO, "Application", "web-dev", NS, status)
    in_store = h.new_controller()
    h.step("web-dev-1", in_store)  # no such Rollout in the store: it only sees the app Healthy
    assert h.phase("web-dev-1") == "Succeeded"

    (tmp_path / "second").mkdir()
    h2 = Harness(tmp_path / "second")
    h2.promote("web-dev-1", "dev", "v2")
    h2.step("web-dev-1")
    h2.run_app("dev", "v2")
    h2.store.patch_status(ARGO, "Application", "web-dev", NS, {
        **h2.store.get(ARGO, "Application", "web-dev", NS)["status"],
        "resources": status["resources"],
    })
    remote_aware = PromotionController(
        h2.store, h2.clock, resolve=h2.resolve, destination=lambda app: remote
    )
    h2.step("web-dev-1", remote_aware)
    assert h2.phase("web-dev-1") == "Reverting"
    assert "analysis failed" in h2.status("web-dev-1")["message"]


def test_a_malformed_promotion_is_refused_naming_its_fields(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.store.apply({
        "apiVersion": "headway.dev/v1alpha1", "kind": "Promotion",
        "metadata": {"name": "web-dev-bad", "namespace": NS},
        "spec": {"pipeline": "web", "environment": "dev", "decisions": [{"by": "lead"}]},
    }, field_manager="test")
    h.step("web-dev-bad")
    status = h.status("web-dev-bad")
    assert status["phase"] == "Refused"
    assert "spec.image: required" in status["message"]
    assert "spec.author: required" in status["message"]
    assert "spec.decisions[0]" in status["message"]
    assert h.repo.commits == []


def test_application_changes_wake_only_promotions_waiting_for_it_to_run(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.promote("web-dev-1", "dev", "v2")
    h.promote("web-prod-9", "prod", "v9", origin="rollback")
    h.step("web-dev-1")
    h.step("web-prod-9")
    assert (h.phase("web-dev-1"), h.phase("web-prod-9")) == ("Committed", "AwaitingApproval")
    app = h.store.get(ARGO, "Application", "web-dev", NS)
    keys = list(h.controller.keys_for(app))
    assert [k.name for k in keys] == ["web-dev-1"]


def test_a_step_fetches_a_remote_branch_once(tmp_path: Path) -> None:
    class Counting:
        def __init__(self) -> None:
            self.refreshes = 0

        repo = None
        branch = "main"
        remote = True

        def refresh(self) -> str:
            self.refreshes += 1
            return "a" * 40

        def write(self, *, parent: str, edits: object, message: str) -> str:
            return "b" * 40

    inner = Counting()
    once = FetchOncePerStep(inner)  # type: ignore[arg-type]
    assert once.refresh() == once.refresh() == "a" * 40
    assert inner.refreshes == 1
    once.write(parent="a" * 40, edits={}, message="m")
    once.refresh()
    assert inner.refreshes == 2
