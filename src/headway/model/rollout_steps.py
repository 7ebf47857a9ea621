"""Canary steps and the analysis references a Rollout makes (steps, background, blue-green).

Field names and defaults follow argo-rollouts `pkg/apis/rollouts/v1alpha1/types.go`.
A pause's `duration` is int-or-string: an integer or integer string is seconds, otherwise a
Go duration; a pause without a duration waits for a manual promotion (`duration` is None).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.model import schema as s
from headway.model.views import view

__all__ = [
    "ANALYSIS_TEMPLATE_REF",
    "BACKGROUND_ANALYSIS",
    "CANARY_STEP",
    "EXCLUSIVE_STEP_KINDS",
    "POD_TEMPLATE_METADATA",
    "ROLLOUT_ANALYSIS",
    "STEP_KINDS",
    "AnalysisTemplateRef",
    "BackgroundAnalysis",
    "CanaryStep",
    "RolloutAnalysis",
    "RolloutArgument",
]

STEP_KINDS = (
    "setWeight",
    "pause",
    "analysis",
    "experiment",
    "setCanaryScale",
    "setHeaderRoute",
    "setMirrorRoute",
    "plugin",
)

# Argo Rollouts' `hasMultipleStepsType`: at most one of these in a step.
EXCLUSIVE_STEP_KINDS = ("setWeight", "pause", "experiment", "analysis")


@view
class PodTemplateMetadata:
    labels: Mapping[str, str]
    annotations: Mapping[str, str]


@view
class AnalysisTemplateRef:
    template_name: str
    cluster_scope: bool


@view
class FieldRef:
    field_path: str


@view
class ArgumentValueFrom:
    pod_template_hash_value: str | None  # "Stable" or "Latest"
    field_ref: FieldRef | None


@view
class RolloutArgument:
    name: str
    value: str | None
    value_from: ArgumentValueFrom | None


@view
class RolloutAnalysis:
    templates: tuple[AnalysisTemplateRef, ...]
    args: tuple[RolloutArgument, ...]
    dry_run: tuple[Mapping[str, Any], ...]
    measurement_retention: tuple[Mapping[str, Any], ...]
    analysis_run_metadata: PodTemplateMetadata | None


@view
class BackgroundAnalysis:
    templates: tuple[AnalysisTemplateRef, ...]
    args: tuple[RolloutArgument, ...]
    dry_run: tuple[Mapping[str, Any], ...]
    measurement_retention: tuple[Mapping[str, Any], ...]
    analysis_run_metadata: PodTemplateMetadata | None
    starting_step: int | None


@view
class Pause:
    duration: float | None  # seconds; None waits for a manual promotion


@view
class SetCanaryScale:
    weight: int | None
    replicas: int | None
    match_traffic_weight: bool


@view
class SetHeaderRoute:
    name: str | None
    match: tuple[Mapping[str, Any], ...]


@view
class SetMirrorRoute:
    name: str
    match: tuple[Mapping[str, Any], ...]
    percentage: int | None


@view
class PluginStep:
    name: str
    config: Any


@view
class CanaryStep:
    set_weight: int | None
    pause: Pause | None
    analysis: RolloutAnalysis | None
    experiment: Mapping[str, Any] | None
    set_canary_scale: SetCanaryScale | None
    set_header_route: SetHeaderRoute | None
    set_mirror_route: SetMirrorRoute | None
    plugin: PluginStep | None

    @property
    def kind(self) -> str:
        """Which step this is, by its field name (`setWeight`, `pause`, ...)."""
        return next(iter(s.set_fields(self, STEP_KINDS)), "")


# ---- checks -------------------------------------------------------------------------------


def _step_kinds(step: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    """Argo Rollouts' rule: a step sets at least one kind, and at most one of the kinds that
    each decide when the step ends (setWeight, pause, experiment, analysis); setCanaryScale
    and the route steps may ride along with one of those."""
    present = [k for k, v in step.items() if k in STEP_KINDS and v is not None]
    if not present:
        report.error(path, f"a step needs one of: {', '.join(STEP_KINDS)}")
        return
    exclusive = [k for k in present if k in EXCLUSIVE_STEP_KINDS]
    if len(exclusive) > 1:
        report.error(
            (*path, exclusive[1]),
            f"a step may set only one of {', '.join(EXCLUSIVE_STEP_KINDS)}; "
            f"found {' and '.join(exclusive)}",
        )


def _one_value_source(value_from: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    present = [k for k in ("podTemplateHashValue", "fieldRef") if value_from.get(k) is not None]
    if len(present) != 1:
        report.error(path, "valueFrom needs exactly one of podTemplateHashValue, fieldRef")


def _has_templates(analysis: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    if analysis.get("templates"):
        return
    old_form = analysis.get("templateName")
    if isinstance(old_form, str):  # rollouts-demo's analysis example still writes it
        report.error(
            (*path, "templateName"),
            "Argo Rollouts v1.0 removed this field (an analysis names its templates in a "
            "list), so the analysis would run no template: write "
            f"`templates: [{{templateName: {old_form}}}]`",
        )
        return
    report.error((*path, "templates"), "an analysis needs at least one template")


# ---- tables -------------------------------------------------------------------------------

POD_TEMPLATE_METADATA = s.Schema(
    "PodTemplateMetadata",
    (s.Field("labels", s.STRING_MAP), s.Field("annotations", s.STRING_MAP)),
    PodTemplateMetadata,
)
ANALYSIS_TEMPLATE_REF = s.Schema(
    "AnalysisTemplateRef",
    (
        s.Field("templateName", s.STR, required=True),
        s.Field("clusterScope", s.BOOL, default=False),
    ),
    AnalysisTemplateRef,
)
_VALUE_FROM = s.Schema(
    "ArgumentValueFrom",
    (
        s.Field("podTemplateHashValue", s.Enum(("Stable", "Latest"))),
        s.Field(
            "fieldRef",
            s.Obj(s.Schema("FieldRef", (s.Field("fieldPath", s.STR, required=True),), FieldRef)),
        ),
    ),
    ArgumentValueFrom,
    checks=(_one_value_source,),
)
ROLLOUT_ARGUMENT = s.Schema(
    "AnalysisRunArgument",
    (
        s.Field("name", s.STR, required=True),
        s.Field("value", s.STR),
        s.Field("valueFrom", s.Obj(_VALUE_FROM)),
    ),
    RolloutArgument,
)
METRIC_NAME_ONLY = s.Schema("DryRun", (s.Field("metricName", s.STR, required=True),))
MEASUREMENT_RETENTION = s.Schema(
    "MeasurementRetention",
    (s.Field("metricName", s.STR, required=True), s.Field("limit", s.INT, required=True)),
)
_ANALYSIS_FIELDS = (
    s.Field("templates", s.ListOf(s.Obj(ANALYSIS_TEMPLATE_REF))),
    s.Field("args", s.ListOf(s.Obj(ROLLOUT_ARGUMENT))),
    s.Field("dryRun", s.ListOf(s.Obj(METRIC_NAME_ONLY))),
    s.Field("measurementRetention", s.ListOf(s.Obj(MEASUREMENT_RETENTION))),
    s.Field("analysisRunMetadata", s.Obj(POD_TEMPLATE_METADATA)),
)
ROLLOUT_ANALYSIS = s.Schema(
    "RolloutAnalysis", _ANALYSIS_FIELDS, RolloutAnalysis, checks=(_has_templates,)
)
BACKGROUND_ANALYSIS = s.Schema(
    "RolloutAnalysisBackground",
    (*_ANALYSIS_FIELDS, s.Field("startingStep", s.Scalar("integer", minimum=0))),
    BackgroundAnalysis,
    checks=(_has_templates,),
)

_STRING_MATCH = s.Schema(
    "StringMatch", (s.Field("exact", s.STR), s.Field("prefix", s.STR), s.Field("regex", s.STR))
)
_HEADER_MATCH = s.Schema(
    "HeaderRoutingMatch",
    (
        s.Field("headerName", s.STR, required=True),
        s.Field("headerValue", s.Obj(_STRING_MATCH), required=True),
    ),
)
_ROUTE_MATCH = s.Schema(
    "RouteMatch",
    (
        s.Field("method", s.Obj(_STRING_MATCH)),
        s.Field("path", s.Obj(_STRING_MATCH)),
        s.Field("headers", s.AnyValue(mapping=True)),
    ),
)
_EXPERIMENT_TEMPLATE = s.Schema(
    "RolloutExperimentTemplate",
    (
        s.Field("name", s.STR, required=True),
        s.Field("specRef", s.Enum(("canary", "stable")), required=True),
        s.Field("replicas", s.Scalar("integer", minimum=0)),
        s.Field("metadata", s.Obj(POD_TEMPLATE_METADATA)),
        s.Field("selector", s.AnyValue(mapping=True)),
        s.Field("weight", s.Scalar("integer", minimum=0, maximum=100)),
        s.Field("service", s.AnyValue(mapping=True)),
    ),
)
_EXPERIMENT_ANALYSIS = s.Schema(
    "RolloutExperimentStepAnalysisTemplateRef",
    (
        s.Field("name", s.STR, required=True),
        s.Field("templateName", s.STR, required=True),
        s.Field("clusterScope", s.BOOL),
        s.Field("args", s.ListOf(s.Obj(ROLLOUT_ARGUMENT))),
        s.Field("requiredForCompletion", s.BOOL),
    ),
)
_EXPERIMENT = s.Schema(
    "RolloutExperimentStep",
    (
        s.Field("templates", s.ListOf(s.Obj(_EXPERIMENT_TEMPLATE)), required=True),
        s.Field("duration", s.Duration()),
        s.Field("analyses", s.ListOf(s.Obj(_EXPERIMENT_ANALYSIS))),
        s.Field("dryRun", s.ListOf(s.Obj(METRIC_NAME_ONLY))),
        s.Field("analysisRunMetadata", s.Obj(POD_TEMPLATE_METADATA)),
        s.Field("scaleDownDelaySeconds", s.INT),
    ),
)

CANARY_STEP = s.Schema(
    "CanaryStep",
    (
        s.Field("setWeight", s.INT),
        s.Field(
            "pause",
            s.Obj(s.Schema("RolloutPause", (s.Field("duration", s.Duration(True)),), Pause)),
        ),
        s.Field("analysis", s.Obj(ROLLOUT_ANALYSIS)),
        s.Field("experiment", s.Obj(_EXPERIMENT)),
        s.Field(
            "setCanaryScale",
            s.Obj(
                s.Schema(
                    "SetCanaryScale",
                    (
                        s.Field("weight", s.Scalar("integer", minimum=0, maximum=100)),
                        s.Field("replicas", s.Scalar("integer", minimum=0)),
                        s.Field("matchTrafficWeight", s.BOOL, default=False),
                    ),
                    SetCanaryScale,
                )
            ),
        ),
        s.Field(
            "setHeaderRoute",
            s.Obj(
                s.Schema(
                    "SetHeaderRoute",
                    (s.Field("name", s.STR), s.Field("match", s.ListOf(s.Obj(_HEADER_MATCH)))),
                    SetHeaderRoute,
                )
            ),
        ),
        s.Field(
            "setMirrorRoute",
            s.Obj(
                s.Schema(
                    "SetMirrorRoute",
                    (
                        s.Field("name", s.STR, required=True),
                        s.Field("match", s.ListOf(s.Obj(_ROUTE_MATCH))),
                        s.Field("percentage", s.Scalar("integer", minimum=0, maximum=100)),
                    ),
                    SetMirrorRoute,
                )
            ),
        ),
        s.Field(
            "plugin",
            s.Obj(
                s.Schema(
                    "PluginStep",
                    (s.Field("name", s.STR, required=True), s.Field("config", s.ANY)),
                    PluginStep,
                )
            ),
        ),
    ),
    CanaryStep,
    checks=(_step_kinds,),
)
