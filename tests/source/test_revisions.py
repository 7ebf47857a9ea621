"""targetRevision resolution over a ref snapshot, and semver constraints over tags (pure)."""

from __future__ import annotations

import pytest

from headway.source.revisions import RefSnapshot, resolve_revision
from headway.source.semver_tags import highest_matching_tag, is_constraint

TAGS = ["v0.9.0", "v1.0.0", "v1.2.0", "v1.2.9", "v1.3.0-rc.1", "v1.3.0", "v2.0.0", "latest"]


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        ("*", "v2.0.0"),
        ("1.x", "v1.3.0"),
        ("1.2.*", "v1.2.9"),
        ("=1.2", "v1.2.9"),
        ("~1.2.0", "v1.2.9"),
        ("~1", "v1.3.0"),
        ("^0.9", "v0.9.0"),
        ("^1.2.3", "v1.3.0"),
        (">1.2", "v2.0.0"),
        ("<1.2", "v1.0.0"),
        ("<=1.2", "v1.2.9"),
        (">=1.0, <1.3", "v1.2.9"),
        ("!=2.0.0", "v1.3.0"),
        ("<1 || >=2", "v2.0.0"),
        ("~1.3.0-rc.0", "v1.3.0"),
        (">=3", None),
    ],
)
def test_highest_matching_tag(constraint: str, expected: str | None) -> None:
    assert is_constraint(constraint)
    assert highest_matching_tag(constraint, TAGS) == expected


def test_prerelease_only_for_prerelease_constraints() -> None:
    assert highest_matching_tag(">=1.3.0-rc.0 <1.3.0", TAGS) == "v1.3.0-rc.1"
    assert highest_matching_tag(">=1.2.9 <1.3.0", TAGS) == "v1.2.9"


@pytest.mark.parametrize("revision", ["main", "HEAD", "v1.2.3", "1.2", "abc1234", "release-1.x"])
def test_not_constraints(revision: str) -> None:
    assert not is_constraint(revision)


SNAPSHOT = RefSnapshot(
    refs={
        "refs/heads/main": "a" * 40,
        "refs/heads/x": "b" * 40,
        "refs/tags/v1.0.0": "c" * 40,
    },
    head_target="refs/heads/main",
)


def test_resolution_order() -> None:
    assert resolve_revision("", SNAPSHOT).sha == "a" * 40  # type: ignore[union-attr]
    # "x" parses as a wildcard constraint (as in Argo CD): it picks the highest tag, and only
    # falls back to the branch of that name when no tag matches.
    assert resolve_revision("x", SNAPSHOT).sha == "c" * 40  # type: ignore[union-attr]
    no_tags = RefSnapshot({"refs/heads/x": "b" * 40}, None)
    assert resolve_revision("x", no_tags).sha == "b" * 40  # type: ignore[union-attr]
    short = resolve_revision("abcdef1", SNAPSHOT)
    assert short is not None and short.abbreviated
    assert resolve_revision("nope", SNAPSHOT) is None
