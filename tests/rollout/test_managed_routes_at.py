"""The managed routes the steps leave at each index (pure: `rollout/canary_steps.py`)."""

from __future__ import annotations

import pytest

from headway.model.rollout_steps import CanaryStep, SetHeaderRoute, SetMirrorRoute
from headway.rollout.canary_steps import header_routes_at, mirror_routes_at, unnamed_routes
from headway.rollout.plan import HeaderRoute, MirrorRoute

QA = ({"headerName": "x-qa", "headerValue": {"exact": "yes"}},)
BETA = ({"headerName": "x-beta", "headerValue": {"exact": "1"}},)
GET = ({"method": {"exact": "GET"}},)


def _step(
    *,
    weight: int | None = None,
    header: SetHeaderRoute | None = None,
    mirror: SetMirrorRoute | None = None,
) -> CanaryStep:
    return CanaryStep(weight, None, None, None, None, header, mirror, None)


STEPS = [
    _step(weight=10),  # 0
    _step(header=SetHeaderRoute("qa", QA)),  # 1
    _step(mirror=SetMirrorRoute("shadow", GET, 20)),  # 2
    _step(header=SetHeaderRoute("qa", BETA)),  # 3: replaces qa's match
    _step(header=SetHeaderRoute("qa", ())),  # 4: removes qa
]


@pytest.mark.parametrize(
    ("index", "header", "mirror"),
    [
        (0, HeaderRoute("qa", ()), MirrorRoute("shadow", ())),
        (1, HeaderRoute("qa", QA), MirrorRoute("shadow", ())),
        (2, HeaderRoute("qa", QA), MirrorRoute("shadow", GET, 20)),
        (3, HeaderRoute("qa", BETA), MirrorRoute("shadow", GET, 20)),
        (4, HeaderRoute("qa", ()), MirrorRoute("shadow", GET, 20)),
        (5, HeaderRoute("qa", ()), MirrorRoute("shadow", GET, 20)),
    ],
)
def test_each_route_stands_as_the_last_step_up_to_the_index_left_it(
    index: int, header: HeaderRoute, mirror: MirrorRoute
) -> None:
    assert header_routes_at(STEPS, index) == (header,)
    assert mirror_routes_at(STEPS, index) == (mirror,)


def test_a_managed_name_no_step_uses_is_removed() -> None:
    managed = ("qa", "shadow", "dropped")
    assert unnamed_routes(STEPS, managed) == (HeaderRoute("dropped", ()),)
    assert unnamed_routes(STEPS, ("qa", "shadow")) == ()
