"""Build an AnalysisRun for a Rollout from its (Cluster)AnalysisTemplates, as Argo Rollouts does.

Purely computational: templates arrive as Kubernetes-shaped dicts, the rollout's analysis
block as its typed view. The run's metrics are the templates' metrics in order (a name used
twice is an error); its arguments are the templates' arguments merged by name, then the
rollout's arguments resolved and laid over them: a literal `value`, or `valueFrom`
`podTemplateHashValue: Stable|Latest` (the stable or the current pod-template hash) or
`fieldRef.fieldPath` (a path into the Rollout, e.g. `metadata.labels['app']`). An argument
that still has neither a value nor a `valueFrom` is an error naming it.

Names follow Argo: `<rollout>-<hash>-<revision>` for background analysis, with `-<step>` for a
step, `-pre`/`-post` for blue-green; a name taken by an older run gets `.1`, `.2`, ...
Labels: `rollout-type`, `rollouts-pod-template-hash`, `step-index` for steps, the
Rollout's selector labels and `analysisRunMetadata.labels`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.model.rollout_steps import AnalysisTemplateRef, RolloutArgument
from headway.rollout.replica_sets import (
    HASH_LABEL,
    REVISION_ANNOTATION,
    rollout_owner_reference,
)

__all__ = [
    "ROLLOUT_TYPE_LABEL",
    "STEP_INDEX_LABEL",
    "AnalysisRunError",
    "RunRequest",
    "build_analysis_run",
    "free_run_name",
    "template_key",
]

ROLLOUT_TYPE_LABEL = "rollout-type"
STEP_INDEX_LABEL = "step-index"


class AnalysisRunError(ValueError):
    """The run cannot be built; the message names the template or argument."""


@dataclass(frozen=True)
class RunRequest:
    """Everything that identifies one analysis run of a rollout."""

    rollout_type: str  # Step, Background, PrePromotion, PostPromotion
    step_index: int | None
    templates: tuple[AnalysisTemplateRef, ...]
    args: tuple[RolloutArgument, ...]
    dry_run: tuple[Mapping[str, Any], ...]
    measurement_retention: tuple[Mapping[str, Any], ...]
    labels: Mapping[str, str]
    annotations: Mapping[str, str]

    def base_name(self, rollout_name: str, pod_hash: str, revision: int) -> str:
        parts = [rollout_name, pod_hash, str(revision)]
        suffix = {"PrePromotion": "pre", "PostPromotion": "post"}.get(self.rollout_type)
        if self.step_index is not None:
            parts.append(str(self.step_index))
        elif suffix:
            parts.append(suffix)
        return "-".join(parts)


def template_key(ref: AnalysisTemplateRef) -> tuple[str, str]:
    return (
        "ClusterAnalysisTemplate" if ref.cluster_scope else "AnalysisTemplate",
        ref.template_name,
    )


def free_run_name(base: str, taken: set[str]) -> str:
    """`base`, or `base.N` for the smallest N not taken (Argo's collision counter)."""
    if base not in taken:
        return base
    n = 1
    while f"{base}.{n}" in taken:
        n += 1
    return f"{base}.{n}"


_FIELD_PATH = re.compile(r"^([A-Za-z0-9_]+)(?:\[['\"]([^'\"]+)['\"]\])?$")


def resolve_field_path(obj: Mapping[str, Any], path: str) -> str:
    """`metadata.name`, `metadata.labels['app']`, `spec.template.metadata.labels['x']`."""
    current: Any = obj
    for part in path.split("."):
        match = _FIELD_PATH.match(part)
        if match is None or not isinstance(current, Mapping):
            raise AnalysisRunError(f"fieldRef {path!r} does not resolve on the Rollout")
        current = current.get(match.group(1))
        if match.group(2) is not None:
            current = current.get(match.group(2)) if isinstance(current, Mapping) else None
        if current is None:
            raise AnalysisRunError(f"fieldRef {path!r} does not resolve on the Rollout")
    if isinstance(current, (Mapping, list)):
        raise AnalysisRunError(f"fieldRef {path!r} is not a single value")
    return str(current)


def _rollout_arg_value(
    arg: RolloutArgument, *, rollout: Mapping[str, Any], stable_hash: str, current_hash: str
) -> str:
    if arg.value is not None:
        return arg.value
    source = arg.value_from
    if source is not None and source.pod_template_hash_value is not None:
        return stable_hash if source.pod_template_hash_value == "Stable" else current_hash
    if source is not None and source.field_ref is not None:
        return resolve_field_path(rollout, source.field_ref.field_path)
    raise AnalysisRunError(f"argument {arg.name!r} has neither value nor valueFrom")


def _merge_template_args(templates: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for template in templates:
        for arg in (template.get("spec") or {}).get("args") or []:
            name = str(arg.get("name"))
            previous = merged.get(name)
            both = previous is not None and "value" in previous and "value" in arg
            if both and previous is not None and previous["value"] != arg["value"]:
                raise AnalysisRunError(f"argument {name!r} has different values in two templates")
            if previous is None or "value" not in previous:
                merged[name] = copy.deepcopy(dict(arg))
    return merged


def _metrics(templates: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    metrics: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for template in templates:
        owner = str((template.get("metadata") or {}).get("name"))
        spec = template.get("spec") or {}
        if spec.get("templates"):
            raise AnalysisRunError(f"template {owner!r}: nested templates are not supported")
        for metric in spec.get("metrics") or []:
            name = str(metric.get("name"))
            if name in seen:
                raise AnalysisRunError(
                    f"metric {name!r} is defined by both {seen[name]!r} and {owner!r}"
                )
            seen[name] = owner
            metrics.append(copy.deepcopy(dict(metric)))
    return metrics


def _union(lists: Sequence[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for items in lists:
        for item in items:
            if dict(item) not in out:
                out.append(dict(item))
    return out


def _resolved_args(
    request: RunRequest,
    templates: Sequence[Mapping[str, Any]],
    *,
    rollout: Mapping[str, Any],
    stable_hash: str,
    current_hash: str,
) -> list[dict[str, Any]]:
    args = _merge_template_args(templates)
    for arg in request.args:
        value = _rollout_arg_value(
            arg, rollout=rollout, stable_hash=stable_hash, current_hash=current_hash
        )
        args[arg.name] = {"name": arg.name, "value": value}
    for name, merged in args.items():
        if "value" not in merged and not merged.get("valueFrom"):
            raise AnalysisRunError(f"argument {name!r} was not supplied a value")
    return list(args.values())


def build_analysis_run(
    request: RunRequest,
    *,
    rollout: Mapping[str, Any],
    templates: Mapping[tuple[str, str], Mapping[str, Any]],
    name: str,
    stable_hash: str,
    current_hash: str,
    revision: int,
) -> dict[str, Any]:
    """The AnalysisRun object to create (see the module docstring)."""
    found: list[Mapping[str, Any]] = []
    for ref in request.templates:
        template = templates.get(template_key(ref))
        if template is None:
            kind, tname = template_key(ref)
            raise AnalysisRunError(f"{kind} {tname!r} not found")
        found.append(template)
    args = _resolved_args(
        request, found, rollout=rollout, stable_hash=stable_hash, current_hash=current_hash
    )
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AnalysisRun",
        "metadata": _run_metadata(
            request, rollout, name=name, pod_hash=current_hash, revision=revision
        ),
        "spec": _run_spec(request, found, args),
    }


def _run_metadata(
    request: RunRequest, rollout: Mapping[str, Any], *, name: str, pod_hash: str, revision: int
) -> dict[str, Any]:
    meta = rollout["metadata"]
    selector = ((rollout.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    labels = {**request.labels, **selector, ROLLOUT_TYPE_LABEL: request.rollout_type}
    labels[HASH_LABEL] = pod_hash
    if request.step_index is not None:
        labels[STEP_INDEX_LABEL] = str(request.step_index)
    return {
        "name": name,
        "namespace": meta.get("namespace") or "default",
        "labels": labels,
        "annotations": {**request.annotations, REVISION_ANNOTATION: str(revision)},
        "ownerReferences": [rollout_owner_reference(rollout)],
    }


def _run_spec(
    request: RunRequest, templates: Sequence[Mapping[str, Any]], args: list[dict[str, Any]]
) -> dict[str, Any]:
    specs = [t.get("spec") or {} for t in templates]
    spec: dict[str, Any] = {"metrics": _metrics(templates), "args": args}
    dry_run = _union([*(s.get("dryRun") or [] for s in specs), request.dry_run])
    retention = _union(
        [*(s.get("measurementRetention") or [] for s in specs), request.measurement_retention]
    )
    if dry_run:
        spec["dryRun"] = dry_run
    if retention:
        spec["measurementRetention"] = retention
    return spec
