"""Which AnalysisTemplates gate a Rollout, and where each reference is written."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

from headway.check.context import AppUnit, CheckContext
from headway.check.manifest import as_dict, as_list
from headway.model.yamlload import Document, PathPart

__all__ = ["GateRef", "canary_of", "gate_refs", "metrics_of", "strategy_of", "template_names"]


@dataclass(frozen=True)
class GateRef:
    """One template reference of a Rollout: where (`path`), how (`kind`), and with what args."""

    rollout: Document
    template: Document | None
    template_name: str
    kind: str  # "step", "background", "prePromotion" or "postPromotion"
    path: tuple[PathPart, ...]
    args: tuple[dict[str, Any], ...]
    template_kind: str = "AnalysisTemplate"  # or "ClusterAnalysisTemplate" (clusterScope)


def strategy_of(rollout: Document) -> dict[str, Any]:
    return as_dict(as_dict(as_dict(rollout.obj).get("spec")).get("strategy"))


def canary_of(rollout: Document) -> dict[str, Any] | None:
    strategy = strategy_of(rollout)
    return as_dict(strategy.get("canary")) if "canary" in strategy else None


def _analysis_blocks(rollout: Document) -> Iterator[tuple[str, tuple[PathPart, ...], Any]]:
    base: tuple[PathPart, ...] = ("spec", "strategy")
    strategy = strategy_of(rollout)
    canary = as_dict(strategy.get("canary"))
    for index, step in enumerate(as_list(canary.get("steps"))):
        if "analysis" in as_dict(step):
            yield "step", (*base, "canary", "steps", index, "analysis"), step["analysis"]
        experiment = as_dict(as_dict(step).get("experiment"))
        for number, analysis in enumerate(as_list(experiment.get("analyses"))):
            entry = as_dict(analysis)  # one template per analysis, read like a step's block
            ref = {"templateName": entry.get("templateName"),
                   "clusterScope": entry.get("clusterScope")}
            path = (*base, "canary", "steps", index, "experiment", "analyses", number)
            yield "experiment", path, {"templates": [ref], "args": entry.get("args")}
    if canary.get("analysis"):
        yield "background", (*base, "canary", "analysis"), canary["analysis"]
    blue_green = as_dict(strategy.get("blueGreen"))
    for key in ("prePromotionAnalysis", "postPromotionAnalysis"):
        if blue_green.get(key):
            yield key.removesuffix("Analysis"), (*base, "blueGreen", key), blue_green[key]


def gate_refs(ctx: CheckContext, unit: AppUnit, rollout: Document) -> Iterator[GateRef]:
    """The template references of `rollout`, found once per run: seven rules ask for them
    (18 reads per Rollout; a twentieth of a check of 1,000 Applications)."""
    key = ("gate_refs", id(unit), id(rollout))  # units and documents live as long as `ctx`
    if key not in ctx.derived:
        ctx.derived[key] = tuple(_find_gate_refs(ctx, unit, rollout))
    return iter(cast("tuple[GateRef, ...]", ctx.derived[key]))  # a string: no alias per call


def _find_gate_refs(ctx: CheckContext, unit: AppUnit, rollout: Document) -> Iterator[GateRef]:
    for kind, path, block in _analysis_blocks(rollout):
        args = tuple(as_dict(a) for a in as_list(as_dict(block).get("args")))
        for index, name, wanted in _block_templates(block):
            template = ctx.lookup(wanted, name, near=unit, beside=rollout)
            where = (*path, "templates", index)
            yield GateRef(rollout, template, name, kind, where, args, template_kind=wanted)


def template_names(rollout: Document) -> Iterator[tuple[str, str, str]]:
    """(kind of block, template name, template kind) of each template reference, in the
    order `gate_refs` gives them, without resolving any."""
    for kind, _path, block in _analysis_blocks(rollout):
        for _index, name, wanted in _block_templates(block):
            yield kind, name, wanted


def _block_templates(block: Any) -> Iterator[tuple[int, str, str]]:
    for index, raw_ref in enumerate(as_list(as_dict(block).get("templates"))):
        ref = as_dict(raw_ref)
        wanted = "ClusterAnalysisTemplate" if ref.get("clusterScope") else "AnalysisTemplate"
        yield index, str(ref.get("templateName", "")), wanted


def metrics_of(template: Document) -> Iterator[tuple[int, dict[str, Any]]]:
    spec = as_dict(as_dict(template.obj).get("spec"))
    for index, metric in enumerate(as_list(spec.get("metrics"))):
        if isinstance(metric, dict):
            yield index, metric
