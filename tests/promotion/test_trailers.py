"""Trailers are read from the message's last paragraph only, as git does."""

from __future__ import annotations

from datetime import UTC, datetime

from headway.model.promotion_pipeline import Approval, Environment, Gate, HelmKey, ImageTarget
from headway.promotion.environment_repo import promotion_message
from headway.promotion.record import BreakGlass, PromotionSpec
from headway.promotion.trailers import promotion_of, trailers

PROMOTION = """promote web prod: registry.local/web:v2

values-prod.yaml: registry.local/web:v1 -> registry.local/web:v2

Headway-Promotion: web-prod-1
Headway-Environment: prod
Headway-Previous-Image:
Headway-Break-Glass: alice: pager says the relayer is down
"""


def test_a_promotion_commit_is_read_back() -> None:
    found = trailers(PROMOTION)
    assert found["Headway-Promotion"] == ["web-prod-1"]
    assert found["Headway-Previous-Image"] == [""]
    assert found["Headway-Break-Glass"] == ["alice: pager says the relayer is down"]
    assert promotion_of(PROMOTION) == "web-prod-1"
    assert promotion_of(PROMOTION, reverts=True) == ""


def test_a_re_commit_of_the_previous_image_is_told_apart() -> None:
    revert = PROMOTION + "Headway-Revert-Of: " + "a" * 40 + "\n"
    assert promotion_of(revert) == ""
    assert promotion_of(revert, reverts=True) == "web-prod-1"


def test_prose_that_quotes_a_trailer_is_not_one() -> None:
    quoted = 'Revert "promote web prod"\n\nIt said\nHeadway-Promotion: web-prod-1\nin its body.\n'
    assert promotion_of(quoted) == ""
    assert promotion_of("Headway-Promotion: web-prod-1") == ""  # a subject is not a trailer
    assert trailers("subject\n\nbody\n\nHeadway-Promotion: a\nHeadway-Promotion: b\n") == {
        "Headway-Promotion": ["a", "b"]
    }
    assert promotion_of("subject\n\nHeadway-Promotion: a\nHeadway-Promotion: b\n") == ""


def test_a_reason_typed_on_several_lines_keeps_the_commit_findable() -> None:
    env = Environment(
        "prod",
        "web-prod",
        None,
        ImageTarget("values.yaml", HelmKey("image.tag"), None, None),
        False,
        600.0,
        Gate(Approval(True, ("lead",), 3600.0), ()),
        None,
    )
    spec = PromotionSpec(
        name="web-prod-7",
        namespace="argocd",
        pipeline="web",
        environment="prod",
        image="registry.local/web:v2",
        author="dev",
        requested_at=datetime(2026, 1, 1, tzinfo=UTC),
        break_glass=BreakGlass("alice", "relayer down\n\nsee the incident channel"),
        hotfix_reason="nonce stuck\non the signer",
    )
    message = promotion_message(spec, env, previous="registry.local/web:v1", image=spec.image)
    assert promotion_of(message) == "web-prod-7"
    found = trailers(message)
    assert found["Headway-Break-Glass"] == ["alice: relayer down see the incident channel"]
    assert found["Headway-Hotfix"][0].startswith("nonce stuck on the signer (nonce ")
