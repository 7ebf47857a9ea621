"""Analysis that measures the wrong thing or can never fail.

Seed 002 §3.7 (scope the query to the canary's pod-template hash; decide what an empty
result means) and seed 003 (gate on SLIs, not CPU or memory; tune the interval deliberately).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from headway.check.context import AppUnit, CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.gates import GateRef, canary_of, gate_refs, metrics_of
from headway.check.manifest import as_dict, as_list
from headway.model.durations import DurationError, format_duration, parse_duration
from headway.model.yamlload import Document

__all__ = [
    "INTERVAL_WINDOW_MISMATCH",
    "MEASURES_BEFORE_TRAFFIC",
    "RESOURCE_ONLY_ANALYSIS",
    "UNREACHABLE_FAILURE_LIMIT",
    "UNSCOPED_ANALYSIS_QUERY",
    "check_interval_windows",
    "check_measures_before_traffic",
    "check_resource_only_analysis",
    "check_unreachable_failure_limit",
    "check_unscoped_queries",
    "query_of",
    "unique_gates",
]

UNSCOPED_ANALYSIS_QUERY = Rule(
    id="HW203",
    slug="unscoped-analysis-query",
    severity=Severity.WARNING,
    title="A canary's analysis query measures the whole service",
    rationale="Seed 002 §3.7: a query over the whole service dilutes a 100% failure on one "
    "canary pod into a 25% blip.",
    hint="Pass the canary hash (`valueFrom: {podTemplateHashValue: Latest}`) as an arg and "
    'filter on `rollouts_pod_template_hash="{{args.canary-hash}}"`, or compare canary '
    "against stable.",
)
RESOURCE_ONLY_ANALYSIS = Rule(
    id="HW205",
    slug="resource-only-analysis",
    severity=Severity.WARNING,
    title="An analysis gate that measures only CPU or memory",
    rationale="Seed 003: a canary can look perfectly healthy on resource metrics while "
    "returning wrong responses; gate on what users feel.",
    hint="Add an error-rate, latency or business-event metric (or an E2E Job) to the gate.",
)
INTERVAL_WINDOW_MISMATCH = Rule(
    id="HW206",
    slug="interval-window-mismatch",
    severity=Severity.WARNING,
    title="A measurement interval that does not match the query's range window",
    rationale="Seed 003: tune interval deliberately. A window shorter than the interval "
    "leaves time no measurement sees; a window ten or more intervals long re-reads the same "
    "data and reacts to a failure only after most of the window has passed.",
    hint="Make the range window at least the interval (and under ~10 intervals), e.g. "
    "interval 1m with [2m].",
)
UNREACHABLE_FAILURE_LIMIT = Rule(
    id="HW207",
    slug="unreachable-failure-limit",
    severity=Severity.ERROR,
    title="A failureLimit the analysis can never reach",
    rationale="A gate that cannot fail is a rubber stamp (seed 002 §3.7): with count <= "
    "failureLimit, or fewer measurements before promotion than failures allowed, a broken "
    "canary passes.",
    hint="Lower failureLimit below count (and below the measurements that fit before "
    "promotion), or raise count / lengthen the steps.",
)

MEASURES_BEFORE_TRAFFIC = Rule(
    id="HW211",
    slug="measures-before-traffic",
    severity=Severity.WARNING,
    title="An analysis that measures the canary before it has served any traffic",
    rationale="Headway fails a measurement with no data (seed 002 §3.7: an empty result must "
    "never pass). An analysis step right after a setWeight, with no pause and no "
    "initialDelay, takes its first measurement before the new pods have answered a request, "
    "so a good release is aborted on an empty result.",
    hint="Put a `pause` between the `setWeight` and the `analysis` step, or give the metric an "
    "`initialDelay` (at least the query's range window), or set `onEmpty: Inconclusive` on it.",
)

_HASH_MARKERS = ("pod_template_hash", "pod-template-hash", "podtemplatehash")
_ARG_USE = re.compile(r"\{\{\s*args\.([A-Za-z0-9_.-]+)\s*\}\}")
_RANGE = re.compile(r"\[(\d+(?:\.\d+)?(?:ms|s|m|h|d|w|y))(?::[^\]]*)?\]")
_METRIC_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:.]*")
_RESOURCE = re.compile(r"cpu|memory|mem_|_mem\b|oom", re.IGNORECASE)
_PROMQL_KEYWORDS = frozenset(
    {"by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool", "and"}
    | {"or", "unless", "inf", "nan"}
)
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_WINDOW_SLACK = 10


def query_of(metric: dict[str, Any]) -> str:
    """The query text of any provider that has one (Prometheus, Datadog, New Relic...)."""
    for provider in as_dict(metric.get("provider")).values():
        query = as_dict(provider).get("query")
        if isinstance(query, str):
            return query
    return ""


def unique_gates(ctx: CheckContext) -> Iterator[tuple[AppUnit, GateRef]]:
    for unit, rollout in ctx.units_of_kind("Rollout"):
        for ref in gate_refs(ctx, unit, rollout):
            if ref.template is not None:
                yield unit, ref


def _scoped(query: str, ref: GateRef) -> bool:
    text = query.lower()
    if any(marker in text for marker in _HASH_MARKERS):
        return True
    canary = canary_of(ref.rollout) or {}
    canary_service = str(canary.get("canaryService") or "")
    # An arg fed the canary's hash, or the canary Service's name (Argo Rollouts adds the hash
    # to that Service's selector: rollouts-demo's istio example passes it as `service`).
    scoping_args = {
        str(a.get("name"))
        for a in ref.args
        if "podTemplateHashValue" in as_dict(a.get("valueFrom"))
        or (canary_service and a.get("value") == canary_service)
    }
    if scoping_args & set(_ARG_USE.findall(query)):
        return True
    if _matches_canary_label(query, ref, canary):
        return True
    return bool(canary_service) and canary_service in query


def _matches_canary_label(query: str, ref: GateRef, canary: dict[str, Any]) -> bool:
    """Whether the query selects on a label only the canary's pods carry: a pair of
    `canaryMetadata.labels` that `stableMetadata.labels` does not give the stable pods too
    (Argo Rollouts' ephemeral metadata, e.g. `role: canary` and `role="canary"`), written
    in the query or passed in an arg the query uses."""
    canary_labels = as_dict(as_dict(canary.get("canaryMetadata")).get("labels"))
    stable_labels = as_dict(as_dict(canary.get("stableMetadata")).get("labels"))
    values = {str(a.get("name")): str(a.get("value")) for a in ref.args if "value" in a}
    text = _ARG_USE.sub(lambda m: values.get(m.group(1), m.group(0)), query)
    for key, value in canary_labels.items():
        if stable_labels.get(key) == value:
            continue
        matcher = rf"(?<![\w.-]){re.escape(str(key))}\s*=~?\s*[\"']{re.escape(str(value))}[\"']"
        if re.search(matcher, text):
            return True
    return False


def check_unscoped_queries(ctx: CheckContext) -> Iterable[Finding]:
    for unit, ref in unique_gates(ctx):
        if canary_of(ref.rollout) is None or ref.template is None:
            continue
        for index, metric in metrics_of(ref.template):
            query = query_of(metric)
            if not query or _scoped(query, ref):
                continue
            yield finding_at(
                UNSCOPED_ANALYSIS_QUERY,
                ref.template,
                path=("spec", "metrics", index),
                message=f"metric {metric.get('name')!r}, gating Rollout/{ref.rollout.name}, "
                "queries the whole service, not the canary's pods: at a small canary weight a "
                "canary failing every request moves the service-wide ratio by a few percent "
                "and the gate passes",
                app=unit.name,
            )


def _metric_names(query: str) -> set[str]:
    """Metric names of a PromQL-like query: identifiers that are not functions or keywords."""
    stripped = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\"[^\"]*\"|'[^']*'", " ", query)
    stripped = _GROUPING.sub(" ", stripped)
    names = set()
    for match in _METRIC_NAME.finditer(stripped):
        word, rest = match.group(), stripped[match.end() :].lstrip()
        if rest.startswith("(") or word.lower() in _PROMQL_KEYWORDS or word[0].isdigit():
            continue
        names.add(word)
    return names


def _resource_only(template: Document) -> bool:
    metrics = [m for _, m in metrics_of(template)]
    if not metrics:
        return False
    for metric in metrics:
        names = _metric_names(query_of(metric))
        if not names or not all(_RESOURCE.search(n) for n in names):
            return False
    return True


def check_resource_only_analysis(ctx: CheckContext) -> Iterable[Finding]:
    for unit, rollout in ctx.units_of_kind("Rollout"):
        refs = list(gate_refs(ctx, unit, rollout))
        templates = [r.template for r in refs if r.template is not None]
        if not templates or not all(_resource_only(t) for t in templates):
            continue
        names = ", ".join(sorted({r.template_name for r in refs}))
        yield finding_at(
            RESOURCE_ONLY_ANALYSIS,
            rollout,
            path=refs[0].path,
            message=f"Rollout/{rollout.name} is gated only on CPU/memory ({names}): a "
            "version that returns errors or wrong answers at normal resource usage passes "
            "every check and is promoted",
            app=unit.name,
        )


def _seconds(value: object) -> float | None:
    try:
        return parse_duration(value, bare_seconds=False)
    except DurationError:
        return None


def check_interval_windows(ctx: CheckContext) -> Iterable[Finding]:
    seen: set[tuple[str, int, int]] = set()
    for unit, ref in unique_gates(ctx):
        assert ref.template is not None
        for index, metric in metrics_of(ref.template):
            key = (ref.template.file, ref.template.line, index)
            if key in seen:
                continue  # a template several Rollouts share is reported once
            interval = _seconds(metric.get("interval")) if metric.get("interval") else None
            windows = [_seconds(w) for w in _RANGE.findall(query_of(metric))]
            known = [w for w in windows if w]
            if not interval or not known:
                continue
            seen.add(key)
            finding = _window_finding(ref.template, index, metric, interval, max(known))
            if finding is not None:
                yield finding.with_app(unit.name)


def _window_finding(
    template: Document, index: int, metric: dict[str, Any], interval: float, window: float
) -> Finding | None:
    name, path = metric.get("name"), ("spec", "metrics", index, "interval")
    every, span = format_duration(interval), format_duration(window)
    if window < interval:
        message = (
            f"metric {name!r} measures every {every} over a [{span}] window: "
            f"{format_duration(interval - window)} of every interval is never measured, so "
            "a burst of errors between two measurements passes unseen"
        )
        return finding_at(INTERVAL_WINDOW_MISMATCH, template, path=path, message=message)
    if window >= _WINDOW_SLACK * interval:
        message = (
            f"metric {name!r} measures every {every} over a [{span}] window: each "
            "measurement re-reads mostly the data of the previous one, so a canary that "
            f"starts failing shows its full error rate only after about {span}"
        )
        return finding_at(
            INTERVAL_WINDOW_MISMATCH, template, path=path, message=message, severity=Severity.INFO
        )
    return None


def _pause_seconds(value: object) -> float | None:
    """A pause duration (int seconds or a duration string); None for an indefinite pause."""
    if value in (None, ""):
        return None
    try:
        return parse_duration(value, bare_seconds=True)
    except DurationError:
        return None


def _int(value: object, default: int) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    return default


def check_unreachable_failure_limit(ctx: CheckContext) -> Iterable[Finding]:
    seen: set[tuple[str, int, int, str]] = set()
    for unit, ref in unique_gates(ctx):
        assert ref.template is not None
        for index, metric in metrics_of(ref.template):
            key = (ref.template.file, ref.template.line, index, ref.rollout.name)
            if key in seen:
                continue
            seen.add(key)
            message = _limit_problem(metric, ref)
            if message is not None:
                yield finding_at(
                    UNREACHABLE_FAILURE_LIMIT,
                    ref.template,
                    path=("spec", "metrics", index),
                    message=message,
                    app=unit.name,
                )


def _limit_problem(metric: dict[str, Any], ref: GateRef) -> str | None:
    name = metric.get("name")
    limit = _int(metric.get("failureLimit"), 0)
    if limit < 0:
        return f"metric {name!r} has a negative failureLimit ({limit}): it never fails"
    count = _int(metric.get("count"), 0) if "count" in metric else None
    if count is not None and count > 0 and limit >= count:
        return (
            f"metric {name!r} takes {count} measurement(s) and tolerates {limit} failure(s) "
            "(it fails only when failures exceed failureLimit): even a canary failing every "
            "measurement passes this gate"
        )
    if ref.kind == "background" and count is None:
        return _background_budget(metric, ref, limit)
    return None


def _background_budget(metric: dict[str, Any], ref: GateRef, limit: int) -> str | None:
    interval = _seconds(metric.get("interval")) if metric.get("interval") else None
    steps = [as_dict(s) for s in as_list((canary_of(ref.rollout) or {}).get("steps"))]
    pauses = [
        _pause_seconds(as_dict(s.get("pause")).get("duration")) for s in steps if "pause" in s
    ]
    if not interval or not pauses or any(p is None for p in pauses):
        return None  # an indefinite pause leaves unlimited time to measure
    total = sum(float(p) for p in pauses if p is not None)
    possible = int(total // interval) + 1
    if possible > limit:
        return None
    return (
        f"background metric {metric.get('name')!r} measures every {format_duration(interval)}; "
        f"the canary steps pause {format_duration(total)} in all, room for {possible} "
        f"measurement(s), but the metric fails only after {limit + 1}: Rollout/"
        f"{ref.rollout.name} is promoted before this gate can trip"
    )


def _follows_weight_change(rollout: Document, step_index: int) -> bool:
    """True when the step before `step_index` moves traffic (no pause in between)."""
    if step_index == 0:
        return True  # the canary has had no traffic at all yet
    steps = [as_dict(s) for s in as_list((canary_of(rollout) or {}).get("steps"))]
    previous = steps[step_index - 1] if step_index <= len(steps) else {}
    return "setWeight" in previous or "setCanaryScale" in previous


def _can_be_empty(metric: dict[str, Any]) -> bool:
    """Whether the first measurement may see no data and fail for it: a Job succeeds or fails
    and never returns a result; a delay or an `onEmpty` other than Failed defuses it."""
    if "job" in as_dict(metric.get("provider")):
        return False
    return not metric.get("initialDelay") and metric.get("onEmpty") not in (
        "Inconclusive",
        "Evaluate",
    )


def check_measures_before_traffic(ctx: CheckContext) -> Iterable[Finding]:
    seen: set[tuple[str, int, int, str]] = set()
    for unit, ref in unique_gates(ctx):
        assert ref.template is not None
        if ref.kind != "step" or not _follows_weight_change(ref.rollout, int(ref.path[4])):
            continue
        for index, metric in metrics_of(ref.template):
            key = (ref.template.file, ref.template.line, index, ref.rollout.name)
            if key in seen or not _can_be_empty(metric):
                continue
            seen.add(key)
            yield finding_at(
                MEASURES_BEFORE_TRAFFIC,
                ref.template,
                path=("spec", "metrics", index),
                message=f"metric {metric.get('name')!r} is measured by Rollout/"
                f"{ref.rollout.name}'s analysis step {ref.path[4]} as soon as the weight "
                "before it is set: the canary has served nothing yet, the first result is "
                "empty, and Headway fails an empty result, aborting even a good release",
                app=unit.name,
            )
