"""Semver constraints over Git tags, as Argo CD accepts them in `targetRevision`.

Argo CD uses Masterminds/semver: a revision that parses as a version (`v1.2.3`, `1.2`) is a pin
resolved like any tag; one that parses as a constraint (`1.2.*`, `>=1.0 <2.0`, `~1.4`, `^2`,
`1.x || 2.x`) selects the highest tag that satisfies it. Pre-release tags only match a
constraint that itself names a pre-release. Purely computational.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

__all__ = ["highest_matching_tag", "is_constraint", "parse_version"]

Version = tuple[int, int, int, str]  # major, minor, patch, pre-release ("" when none)
_VERSION = re.compile(
    r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)
_ATOM = re.compile(
    r"^(=|!=|>=|=>|<=|=<|>|<|~>|~|\^)?\s*v?([0-9xX*]+)(?:\.([0-9xX*]+))?(?:\.([0-9xX*]+))?"
    r"(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)
_WILD = {"x", "X", "*"}
Check = Callable[[Version], bool]


def parse_version(text: str) -> Version | None:
    match = _VERSION.match(text.strip())
    if not match:
        return None
    major, minor, patch, pre = match.groups()
    return int(major), int(minor or 0), int(patch or 0), pre or ""


def _key(v: Version) -> tuple[int, int, int, int, str]:
    # A release sorts after its pre-releases.
    return v[0], v[1], v[2], 0 if v[3] else 1, v[3]


def _atom(text: str) -> tuple[Check, bool] | None:
    """One comparison as a predicate, and whether it names a pre-release."""
    match = _ATOM.match(text)
    if not match:
        return None
    op, *raw, pre = match.groups()
    op = {"=>": ">=", "=<": "<=", "~>": "~", None: "="}.get(op, op)
    parts = [p for p in raw if p is not None]
    fixed: list[int] = []
    for part in parts:
        if part in _WILD:
            break
        fixed.append(int(part))
    low_parts = [*fixed, 0, 0, 0][:3]
    low: Version = (low_parts[0], low_parts[1], low_parts[2], pre or "")
    high = _upper(op, fixed, len(parts))
    return _predicate(op, low, high, exact=len(fixed) == 3), bool(pre)


def _bump(fixed: list[int], index: int) -> Version:
    out = [*fixed[:index], fixed[index] + 1 if index < len(fixed) else 0, 0, 0][:3]
    return out[0], out[1], out[2], ""


def _upper(op: str, fixed: list[int], given: int) -> Version | None:
    """The exclusive upper bound of the range a partial or tilde/caret version stands for."""
    if not fixed:
        return None
    if op == "^":
        first_nonzero = next((i for i, n in enumerate(fixed) if n != 0), len(fixed) - 1)
        return _bump(fixed, first_nonzero)
    if op == "~":
        return _bump(fixed, 0 if len(fixed) == 1 else 1)
    return _bump(fixed, len(fixed) - 1) if len(fixed) < 3 or given < 3 else None


def _predicate(op: str, low: Version, high: Version | None, *, exact: bool) -> Check:
    def within(v: Version) -> bool:
        return _key(v) >= _key(low) and (high is None or _key(v) < _key(high))

    if op in ("^", "~"):
        return within
    if op == "=":
        return (lambda v: _key(v) == _key(low)) if exact else within
    if op == "!=":
        return (lambda v: _key(v) != _key(low)) if exact else (lambda v: not within(v))
    if op == ">=":
        return lambda v: _key(v) >= _key(low)
    if op == "<":
        return lambda v: _key(v) < _key(low)
    if op == ">":
        bound = low if exact or high is None else high
        return (lambda v: _key(v) > _key(bound)) if exact else (lambda v: _key(v) >= _key(bound))
    # "<=": everything up to the end of the partial range
    if exact or high is None:
        return lambda v: _key(v) <= _key(low)
    return lambda v: _key(v) < _key(high)


def _parse(constraint: str) -> list[list[tuple[Check, bool]]] | None:
    groups: list[list[tuple[Check, bool]]] = []
    for group in constraint.split("||"):
        text = re.sub(r"(=|!=|>=|=>|<=|=<|>|<|~>|~|\^)\s+", r"\1", group.strip())
        atoms = [a for a in re.split(r"[,\s]+", text) if a]
        parsed = [_atom(a) for a in atoms]
        if not atoms or any(p is None for p in parsed):
            return None
        groups.append([p for p in parsed if p is not None])
    return groups


def is_constraint(revision: str) -> bool:
    """True for a range such as `1.2.*`; False for a plain version, a branch or a SHA."""
    return parse_version(revision) is None and _parse(revision) is not None


def _satisfies(groups: list[list[tuple[Check, bool]]], version: Version) -> bool:
    for group in groups:
        allows_pre = any(pre for _check, pre in group)
        if version[3] and not allows_pre:
            continue
        if all(check(version) for check, _pre in group):
            return True
    return False


def highest_matching_tag(constraint: str, tags: Iterable[str]) -> str | None:
    """The tag with the highest version satisfying `constraint`; None when none does."""
    groups = _parse(constraint)
    if groups is None:
        return None
    best: tuple[tuple[int, int, int, int, str], str] | None = None
    for tag in tags:
        version = parse_version(tag)
        if version is None or not _satisfies(groups, version):
            continue
        if best is None or _key(version) > best[0]:
            best = (_key(version), tag)
    return best[1] if best else None
