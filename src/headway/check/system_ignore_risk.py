"""Whether a system-wide argocd-cm ignore rule hides a release: HW322's judgement, shared by
`headway check` and the Application controller (which reports it on the affected apps).

A release is what Headway's gates and the Rollout controller act on: the workloads' container
images, a Rollout's strategy (steps, analysis, traffic) and analysis templates' metrics. A rule
hides one when it names such a path, a parent of one or a field inside one; when it ignores
the fields a manager other than a known controller owns (after a `kubectl edit`, that manager
owns the image); or when a jq expression that is not a plain path may reach one.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from headway.check.jq_path import normalize_pointer

if TYPE_CHECKING:  # the reader brings jq; this module only looks at what it read
    from headway.model.argocd_diff import SystemIgnore

__all__ = ["HiddenRelease", "managers_apply", "releases_hidden_by"]

_IMAGES = ("/spec/template/spec/containers/image", "/spec/template/spec/initContainers/image")
_GUARDED: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "Deployment"): _IMAGES,
    ("apps", "StatefulSet"): _IMAGES,
    ("apps", "DaemonSet"): _IMAGES,
    ("argoproj.io", "Rollout"): (*_IMAGES, "/spec/strategy"),
    ("argoproj.io", "AnalysisTemplate"): ("/spec/metrics",),
    ("argoproj.io", "ClusterAnalysisTemplate"): ("/spec/metrics",),
}
# Controllers that write replicas, status or route weights, never an image or a strategy
# (Argo CD's documentation ignores `kube-controller-manager` system-wide).
_CONTROLLER_MANAGERS = frozenset({"kube-controller-manager", "rollouts-controller"})
# What a jq expression must mention to possibly reach a guarded path (`..` reaches anything).
_MENTIONS = re.compile(r"image|containers|strategy|metrics|\.\.", re.IGNORECASE)
_CONSEQUENCE = (
    "a change to it in Git leaves the app Synced, so automated sync never applies it (a new "
    "image never deploys, a new step or metric never gates) and a hand edit is never reported"
)


@dataclass(frozen=True)
class HiddenRelease:
    """What one rule hides: its argocd-cm data key, the (group, kind)s it hides it on, and
    the message saying what is hidden and why it matters."""

    key: str
    targets: tuple[tuple[str, str], ...]
    message: str


def managers_apply(rule: SystemIgnore) -> bool:
    """Whether Argo CD's lookup by the literal `<group>/<kind>` (or `*/*`) finds the rule's
    managers for some kind: not for a glob key, nor one without a group."""
    literal = not any(c in rule.override for c in "*?[")
    return rule.override == "*/*" or (literal and rule.managers_by_literal_key)


def releases_hidden_by(rule: SystemIgnore) -> tuple[HiddenRelease, ...]:
    """One entry per way `rule` hides a release (a path, its managers, a jq expression)."""
    targets = tuple(t for t in _GUARDED if _glob_matches(rule, *t))
    if not targets:
        return ()
    found = [_by_path(rule, targets), _by_expression(rule, targets), _by_managers(rule, targets)]
    return tuple(hidden for hidden in found if hidden is not None)


def _by_path(rule: SystemIgnore, targets: tuple[tuple[str, str], ...]) -> HiddenRelease | None:
    hidden: dict[str, list[tuple[str, str]]] = {}
    raw = (*rule.entry.json_pointers, *rule.entry.jq_path_expressions)
    for pointer in (p for p in map(normalize_pointer, raw) if p is not None):
        for target in targets:
            if any(_overlaps(pointer, field) for field in _GUARDED[target]):
                hidden.setdefault(pointer, []).append(target)
    if not hidden:
        return None
    pointer, kinds = min(hidden.items())
    message = f"argocd-cm {rule.key} ignores {pointer} of every {_kinds(kinds)}: {_CONSEQUENCE}"
    return HiddenRelease(rule.key, tuple(kinds), message)


def _by_expression(
    rule: SystemIgnore, targets: tuple[tuple[str, str], ...]
) -> HiddenRelease | None:
    unread = [e for e in rule.entry.jq_path_expressions if normalize_pointer(e) is None]
    for expression in unread:
        mention = _MENTIONS.search(expression)
        if mention is None:
            continue
        message = (
            f"argocd-cm {rule.key} ignores what `{expression}` selects on every "
            f"{_kinds(targets)}: it is not a plain path, so Headway cannot tell which fields "
            f"it reaches, and it mentions `{mention.group()}`: if it reaches a container "
            f"image, a Rollout's strategy or a metric, {_CONSEQUENCE}"
        )
        return HiddenRelease(rule.key, targets, message)
    return None


def _by_managers(rule: SystemIgnore, targets: tuple[tuple[str, str], ...]) -> HiddenRelease | None:
    if not managers_apply(rule):
        return None
    risky = [m for m in rule.entry.managed_fields_managers if m not in _CONTROLLER_MANAGERS]
    if not risky:
        return None
    names = ", ".join(risky)
    message = (
        f"argocd-cm {rule.key} ignores every field that {names} owns on every "
        f"{_kinds(targets)}: once {risky[0]} writes a container image or a strategy (a "
        f"`kubectl edit` during an incident), {_CONSEQUENCE.replace('to it', 'to that field')}"
    )
    return HiddenRelease(rule.key, targets, message)


def _kinds(targets: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> str:
    return "/".join(kind for _, kind in targets)


def _glob_matches(rule: SystemIgnore, group: str, kind: str) -> bool:
    return fnmatch.fnmatchcase(group, rule.entry.group or "") and fnmatch.fnmatchcase(
        kind, rule.entry.kind
    )


def _overlaps(pointer: str, field: str) -> bool:
    """`pointer` (normalized) is `field`, one of its parents, or a field inside it."""
    root = pointer.rstrip("/")
    return field == pointer or field.startswith(root + "/") or pointer.startswith(field + "/")
