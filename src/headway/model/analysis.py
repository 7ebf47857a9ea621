"""AnalysisTemplate, ClusterAnalysisTemplate and AnalysisRun: tables, typed views, checks.

Defaults follow argo-rollouts `analysis_types.go`: failureLimit 0, inconclusiveLimit 0,
consecutiveErrorLimit 4, consecutiveSuccessLimit 0 (off); a web metric's method GET,
timeoutSeconds 10 and jsonPath `{$}`. A metric's `interval` and `initialDelay` stay text in the
view, because an AnalysisTemplate may write them as `{{args.name}}` placeholders that are
resolved only when a run starts; call `durations.parse_duration(..., bare_seconds=False)`
after substitution. Limits and `count` are int-or-string for the same reason.
Provider blocks other than prometheus, web and job are validated and kept as mappings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.model import k8s
from headway.model import schema as s
from headway.model.analysis_providers import PROVIDER, MetricProvider
from headway.model.diagnostics import Diagnostic
from headway.model.rollout_steps import (
    ANALYSIS_TEMPLATE_REF,
    MEASUREMENT_RETENTION,
    METRIC_NAME_ONLY,
    AnalysisTemplateRef,
    FieldRef,
)
from headway.model.views import view
from headway.model.yamlload import Document

__all__ = [
    "ANALYSIS_RUN_SPEC",
    "ANALYSIS_TEMPLATE_SPEC",
    "AnalysisRun",
    "AnalysisTemplate",
    "Argument",
    "Metric",
    "parse_analysis_run",
    "parse_analysis_template",
]


@view
class SecretKeyRef:
    name: str
    key: str


@view
class ValueFrom:
    secret_key_ref: SecretKeyRef | None
    field_ref: FieldRef | None


@view
class Argument:
    name: str
    value: str | None
    value_from: ValueFrom | None


@view
class Metric:
    name: str
    interval: str | None
    initial_delay: str | None
    count: int | str | None
    success_condition: str | None
    failure_condition: str | None
    failure_limit: int | str
    inconclusive_limit: int | str
    consecutive_error_limit: int | str
    consecutive_success_limit: int | str
    provider: MetricProvider
    on_empty: str | None = None  # Headway: Failed (default) | Inconclusive | Evaluate
    on_non_finite: str | None = None  # Headway: Error (default) | Failed | Inconclusive | Evaluate


@view
class AnalysisTemplateSpec:
    metrics: tuple[Metric, ...]
    args: tuple[Argument, ...]
    dry_run: tuple[Mapping[str, Any], ...]
    measurement_retention: tuple[Mapping[str, Any], ...]
    templates: tuple[AnalysisTemplateRef, ...]


@view
class AnalysisRunSpec:
    metrics: tuple[Metric, ...]
    args: tuple[Argument, ...]
    terminate: bool
    dry_run: tuple[Mapping[str, Any], ...]
    measurement_retention: tuple[Mapping[str, Any], ...]
    ttl_strategy: Mapping[str, Any] | None


@view
class AnalysisTemplate:
    """An AnalysisTemplate or, with `kind`, a ClusterAnalysisTemplate."""

    api_version: str
    metadata: k8s.ObjectMeta
    spec: AnalysisTemplateSpec
    kind: str = "AnalysisTemplate"

    @property
    def name(self) -> str:
        return self.metadata.name or ""


@view
class AnalysisRun:
    api_version: str
    metadata: k8s.ObjectMeta
    spec: AnalysisRunSpec
    status: Mapping[str, Any] | None
    kind: str = "AnalysisRun"

    @property
    def name(self) -> str:
        return self.metadata.name or self.metadata.generate_name or ""


# ---- checks -------------------------------------------------------------------------------


def _as_int(value: Any, default: int) -> int | None:
    """An int-or-string limit as an int; None when it is a placeholder or not a number."""
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return None


def _metric_limits(metric: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    count = _as_int(metric.get("count"), 0)
    failure = _as_int(metric.get("failureLimit"), 0)
    success = _as_int(metric.get("consecutiveSuccessLimit"), 0)
    inconclusive = _as_int(metric.get("inconclusiveLimit"), 0)
    if failure is not None and failure < -1:
        report.error((*path, "failureLimit"), "must be >= 0, or -1 to disable it")
    if failure == -1 and success == 0:
        report.error((*path, "failureLimit"), "-1 needs a consecutiveSuccessLimit above 0")
    for name, value in (("consecutiveSuccessLimit", success), ("inconclusiveLimit", inconclusive)):
        if value is not None and value < 0:
            report.error((*path, name), "must be >= 0")
    if count and failure is not None and success is not None:
        needed = max(failure, 0) + success
        if count < needed:
            report.error(
                (*path, "count"),
                f"{count} is below failureLimit + consecutiveSuccessLimit ({needed})",
            )
    if count and inconclusive is not None and count < inconclusive:
        report.error((*path, "count"), f"{count} is below inconclusiveLimit ({inconclusive})")
    if count and count > 1 and metric.get("interval") is None:
        report.error((*path, "interval"), f"required when count is above 1 (count is {count})")


def _unique_metric_names(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    metrics = spec.get("metrics")
    seen: set[str] = set()
    for index, metric in enumerate(metrics if isinstance(metrics, list) else []):
        name = metric.get("name") if isinstance(metric, Mapping) else None
        if not isinstance(name, str):
            continue
        if name in seen:
            report.error((*path, "metrics", index, "name"), f'duplicate metric name "{name}"')
        seen.add(name)


def _metrics_or_templates(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    if not spec.get("metrics") and not spec.get("templates"):
        report.error((*path, "metrics"), "a template needs at least one metric (or templates)")


def _run_has_metrics(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    if not spec.get("metrics"):
        report.error((*path, "metrics"), "an AnalysisRun needs at least one metric")


def _one_value_from(value_from: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    present = [k for k in ("secretKeyRef", "fieldRef") if value_from.get(k) is not None]
    if len(present) != 1:
        report.error(path, "valueFrom needs exactly one of secretKeyRef, fieldRef")


# ---- tables -------------------------------------------------------------------------------

_LIMIT = s.INT_OR_STRING
_ARGUMENT = s.Schema(
    "Argument",
    (
        s.Field("name", s.STR, required=True),
        s.Field("value", s.STR),
        s.Field(
            "valueFrom",
            s.Obj(
                s.Schema(
                    "ValueFrom",
                    (
                        s.Field(
                            "secretKeyRef",
                            s.Obj(
                                s.Schema(
                                    "SecretKeyRef",
                                    (
                                        s.Field("name", s.STR, required=True),
                                        s.Field("key", s.STR, required=True),
                                    ),
                                    SecretKeyRef,
                                )
                            ),
                        ),
                        s.Field(
                            "fieldRef",
                            s.Obj(
                                s.Schema(
                                    "FieldRef",
                                    (s.Field("fieldPath", s.STR, required=True),),
                                    FieldRef,
                                )
                            ),
                        ),
                    ),
                    ValueFrom,
                    checks=(_one_value_from,),
                )
            ),
        ),
    ),
    Argument,
)

METRIC = s.Schema(
    "Metric",
    (
        s.Field("name", s.STR, required=True),
        s.Field("interval", s.Duration(as_seconds=False)),
        s.Field("initialDelay", s.Duration(as_seconds=False)),
        s.Field("count", _LIMIT),
        s.Field("successCondition", s.STR),
        s.Field("failureCondition", s.STR),
        s.Field("failureLimit", _LIMIT, default=0),
        s.Field("inconclusiveLimit", _LIMIT, default=0),
        s.Field("consecutiveErrorLimit", _LIMIT, default=4),
        s.Field("consecutiveSuccessLimit", _LIMIT, default=0),
        s.Field("provider", s.Obj(PROVIDER), required=True),
        s.Field("onEmpty", s.Enum(("Failed", "Inconclusive", "Evaluate"))),
        s.Field("onNonFinite", s.Enum(("Error", "Failed", "Inconclusive", "Evaluate"))),
    ),
    Metric,
    checks=(_metric_limits,),
)

_COMMON = (
    s.Field("metrics", s.ListOf(s.Obj(METRIC))),
    s.Field("args", s.ListOf(s.Obj(_ARGUMENT))),
    s.Field("dryRun", s.ListOf(s.Obj(METRIC_NAME_ONLY))),
    s.Field("measurementRetention", s.ListOf(s.Obj(MEASUREMENT_RETENTION))),
)
ANALYSIS_TEMPLATE_SPEC = s.Schema(
    "AnalysisTemplateSpec",
    (*_COMMON, s.Field("templates", s.ListOf(s.Obj(ANALYSIS_TEMPLATE_REF)))),
    AnalysisTemplateSpec,
    checks=(_metrics_or_templates, _unique_metric_names),
)
ANALYSIS_RUN_SPEC = s.Schema(
    "AnalysisRunSpec",
    (
        *_COMMON,
        s.Field("terminate", s.BOOL, default=False),
        s.Field(
            "ttlStrategy",
            s.Obj(
                s.Schema(
                    "TTLStrategy",
                    tuple(
                        s.Field(name, s.Scalar("integer", minimum=0))
                        for name in (
                            "secondsAfterCompletion",
                            "secondsAfterFailure",
                            "secondsAfterSuccess",
                        )
                    ),
                )
            ),
        ),
    ),
    AnalysisRunSpec,
    checks=(_run_has_metrics, _unique_metric_names),
)


def parse_analysis_template(
    document: Document,
) -> tuple[AnalysisTemplate | None, list[Diagnostic]]:
    """An AnalysisTemplate or ClusterAnalysisTemplate (the view's `kind` says which)."""
    parts, diagnostics = k8s.parse_typed(document, ANALYSIS_TEMPLATE_SPEC, status=False)
    if parts is None:
        return None, diagnostics
    kind = document.kind or "AnalysisTemplate"
    return AnalysisTemplate(parts.api_version, parts.metadata, parts.spec, kind), diagnostics


def parse_analysis_run(document: Document) -> tuple[AnalysisRun | None, list[Diagnostic]]:
    parts, diagnostics = k8s.parse_typed(document, ANALYSIS_RUN_SPEC)
    if parts is None:
        return None, diagnostics
    status = document.obj.get("status")
    status = dict(status) if isinstance(status, Mapping) else None
    return AnalysisRun(parts.api_version, parts.metadata, parts.spec, status), diagnostics
