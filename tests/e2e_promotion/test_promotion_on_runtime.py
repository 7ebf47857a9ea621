"""Issue 12 end to end, on the local runtime with real processes and a real Git repository:
three environments (three Applications from one repository) and one PromotionPipeline.

* a good image walks dev -> staging -> prod, each a commit of only the image line, with the
  prod approval given from the CLI; the author cannot approve it;
* at the prod gate: an older promotion is superseded by a newer one (its approval withdrawn,
  an approve on it refused), a deny and a timeout both end without touching prod;
* a bad image passes dev, is aborted in staging and its tag re-committed there (once), prod
  untouched; a hand edit of an env var in staging's file then holds the next promotion at
  staging's gate as a config change, though the gate exempts image-only changes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e_promotion.promotion_stage import FIELD, IMAGE, PromotionStage, pipeline, promotion_stage
from headway.promotion.record import read_spec
from polling import eventually

pytestmark = pytest.mark.slow

WALK_SECONDS = 120.0  # a bound on a broken run on a loaded machine, not a timing claim


def _promotion_commits(stage: PromotionStage, tag: str) -> dict[str, str]:
    """environment -> message, for the commits that promoted `tag`."""
    found = {}
    for commit in stage.log():
        message = commit.message or ""
        if f"Headway-Image: {IMAGE}:{tag}" in message and "Headway-Revert-Of" not in message:
            env = message.split("Headway-Environment: ", 1)[1].split("\n", 1)[0]
            found[env] = message
    return found


async def _to_prod_gate(stage: PromotionStage, tag: str) -> str:
    stage.cli("promote", "web", "--to", "dev", "--image", tag, "--as", "dev")
    return await stage.until_phase(
        lambda: stage.newest("prod", tag), "AwaitingApproval", WALK_SECONDS,
        f"{tag} at the prod gate",
    )


async def test_a_good_image_walks_to_prod_and_the_prod_gate_fails_closed(tmp_path: Path) -> None:
    async with promotion_stage(tmp_path, pipeline(prod_timeout="40s")) as stage:
        prod = await _to_prod_gate(stage, "v2")
        assert stage.pinned("prod") == f"{IMAGE}:v1"
        assert stage.app_runs("dev", "v2") and stage.app_runs("staging", "v2")
        refused = stage.cli("approve", prod, "--as", "dev", code=1)
        assert "author of this change and cannot approve it" in refused
        stage.write_decision(prod, "approve", "dev")  # past the CLI: the controller refuses too
        await eventually(
            lambda: "author" in str(stage.status(prod).get("approval", {}).get("ignored")),
            timeout=30, what="the self-approval recorded as ignored",
        )
        assert stage.phase(prod) == "AwaitingApproval" and stage.pinned("prod") == f"{IMAGE}:v1"
        stage.cli("approve", prod, "--as", "lead")
        await stage.until_phase(lambda: prod, "Succeeded", WALK_SECONDS, "v2 live in prod")
        assert stage.app_runs("prod", "v2")
        approval = stage.status(prod)["approval"]
        assert (approval["verdict"], approval["decidedBy"]) == ("Approved", "lead")
        assert approval["ignored"] and "author" in approval["ignored"][0]
        commits = _promotion_commits(stage, "v2")
        assert sorted(commits) == ["dev", "prod", "staging"]
        assert all("Headway-Promotion: " in m for m in commits.values())

        # Two promotions of v3 at the prod gate: the older is superseded, not left waiting.
        older = await _to_prod_gate(stage, "v3")
        out = stage.cli("promote", "web", "--to", "prod", "--image", "v3", "--as", "dev")
        newer = out.split()[1].rstrip(":")
        await stage.until_phase(lambda: older, "Superseded", 30, "the older v3 superseded")
        assert "withdrawn" in stage.status(older)["message"]
        assert "Superseded" in stage.cli("approve", older, "--as", "lead", code=1)
        await stage.until_phase(lambda: newer, "AwaitingApproval", 30, "the newer v3 waits")
        stage.cli("deny", newer, "--as", "lead", "--comment", "not during the freeze")
        await stage.until_phase(lambda: newer, "Denied", 30, "v3 denied")

        # No decision at all: the gate closes by itself at its deadline.
        out = stage.cli("promote", "web", "--to", "prod", "--image", "v3", "--as", "dev")
        silent = out.split()[1].rstrip(":")
        await stage.until_phase(lambda: silent, "TimedOut", 90, "v3 timed out at the gate")
        assert stage.pinned("prod") == f"{IMAGE}:v2"
        assert stage.app_runs("prod", "v2")
        assert "prod" not in _promotion_commits(stage, "v3")


async def test_a_bad_image_is_aborted_in_staging_and_a_hand_edit_is_held(tmp_path: Path) -> None:
    staging_gate = {"approval": {"required": True, "approvers": ["lead"]}, "exempt": [FIELD]}
    config = pipeline(staging_gate=staging_gate)
    async with promotion_stage(tmp_path, config, bad_tags="bad") as stage:
        stage.cli("promote", "web", "--to", "dev", "--image", "bad", "--as", "dev")
        # The first promotion into an exempt environment has nothing to compare with: held.
        staging = await stage.until_phase(
            lambda: stage.newest("staging", "bad"), "AwaitingApproval", WALK_SECONDS,
            "bad at the staging gate",
        )
        stage.cli("approve", staging, "--as", "lead")
        await stage.until_phase(lambda: staging, "Failed", WALK_SECONDS, "bad failed in staging")
        status = stage.status(staging)
        assert "aborted" in status["message"] and "pipeline stopped in staging" in status["message"]
        assert stage.pinned("staging") == f"{IMAGE}:v1"
        promoted = stage.status(staging)["commit"]
        reverts = [c for c in stage.log() if f"Headway-Revert-Of: {promoted}" in c.message]
        assert len(reverts) == 1  # the promotion and Git convergence did not both revert
        assert stage.promotions("prod") == []
        assert stage.pinned("prod") == f"{IMAGE}:v1"
        await eventually(lambda: stage.app_runs("staging", "v1"), timeout=WALK_SECONDS,
                         what="staging back on v1")

        # An env var changed by hand in staging's file cannot ride along with v2.
        stage.commit_by_hand("staging", LOG_LEVEL="debug")
        stage.cli("promote", "web", "--to", "dev", "--image", "v2", "--as", "dev")
        held = await stage.until_phase(
            lambda: stage.newest("staging", "v2"), "AwaitingApproval", WALK_SECONDS,
            "v2 held at the staging gate",
        )
        status = stage.status(held)
        # Named whichever step wrote the status last: the request, or any later look at the gate
        # (its own status write wakes it again, so a slow reader sees that one).
        assert "config change" in status["message"] and "env[0].value" in status["message"]
        assert "env[0].value: changed" in status["approval"]["reason"]
        assert stage.pinned("staging") == f"{IMAGE}:v1"
        assert read_spec(stage.promotions("dev")[-1]).image == f"{IMAGE}:v2"
