"""Validation of the values given to routers."""

from __future__ import annotations

import pytest

from headway.routers.dataplane.protocol import (
    HeaderMatch,
    HeaderRoute,
    MatchKind,
    RouterError,
    WeightDestination,
    header_route_from_argo,
    validate_weights,
)


def test_header_matches_by_kind() -> None:
    assert HeaderMatch("x-canary", "always").matches("always")
    assert not HeaderMatch("x-canary", "always").matches("always-not")
    assert HeaderMatch("x-canary", "always", MatchKind.PREFIX).matches("always-yes")
    assert HeaderMatch("x-user", "^[0-9]+$", MatchKind.REGEX).matches("123")
    assert not HeaderMatch("x-user", "^[0-9]+$", MatchKind.REGEX).matches("12a")
    assert not HeaderMatch("x-canary", "always").matches(None)


def test_bad_values_are_refused_with_the_field_named() -> None:
    with pytest.raises(RouterError, match="invalid regex"):
        HeaderMatch("x-user", "([", MatchKind.REGEX)
    with pytest.raises(RouterError, match="headerName"):
        HeaderMatch("", "x")
    with pytest.raises(RouterError, match="name"):
        HeaderRoute("")


def test_stable_gets_what_canary_and_additional_leave() -> None:
    assert validate_weights(10, [WeightDestination("preview", 5)]) == 85
    assert validate_weights(100, []) == 0
    with pytest.raises(RouterError, match="add up to 101"):
        validate_weights(100, [WeightDestination("preview", 1)])


def test_argo_set_header_route_fields_become_a_route() -> None:
    route = header_route_from_argo(
        "canary-qa",
        [
            {"headerName": "x-canary", "headerValue": {"exact": "always"}},
            {"headerName": "user-agent", "headerValue": {"regex": "Android.*"}},
        ],
    )
    assert route == HeaderRoute(
        "canary-qa",
        (
            HeaderMatch("x-canary", "always", MatchKind.EXACT),
            HeaderMatch("user-agent", "Android.*", MatchKind.REGEX),
        ),
    )
    assert header_route_from_argo("canary-qa", []).matches == ()


@pytest.mark.parametrize(
    "entry",
    [
        {"headerName": "x-canary"},
        {"headerName": "x-canary", "headerValue": {"exact": "a", "prefix": "b"}},
        {"headerName": "x-canary", "headerValue": {"suffix": "a"}},
        {"headerName": "x-canary", "headerValue": {"exact": 3}},
    ],
)
def test_malformed_argo_header_match_names_the_entry(entry: dict[str, object]) -> None:
    with pytest.raises(RouterError, match=r"setHeaderRoute 'qa' match\[0\]"):
        header_route_from_argo("qa", [entry])
