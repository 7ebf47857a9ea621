"""AnalysisRun objects built from templates and rollout args, as Argo Rollouts builds them."""

from __future__ import annotations

from typing import Any

import pytest

from headway.model.rollout_steps import (
    AnalysisTemplateRef,
    ArgumentValueFrom,
    FieldRef,
    RolloutArgument,
)
from headway.rollout.analysis_runs import (
    AnalysisRunError,
    RunRequest,
    build_analysis_run,
    free_run_name,
)

ROLLOUT: dict[str, Any] = {
    "apiVersion": "argoproj.io/v1alpha1",
    "kind": "Rollout",
    "metadata": {"name": "web", "namespace": "shop", "uid": "u-1", "labels": {"team": "pay"}},
    "spec": {"selector": {"matchLabels": {"app": "web"}}},
}


def _template(name: str, metrics: list[str], args: list[dict[str, Any]], **spec: Any) -> Any:
    return {
        "metadata": {"name": name},
        "spec": {"metrics": [{"name": m, "provider": {}} for m in metrics], "args": args, **spec},
    }


def _arg(
    name: str, value: str | None = None, *, hash_of: str | None = None, field: str | None = None
) -> RolloutArgument:
    source = None
    if hash_of or field:
        source = ArgumentValueFrom(hash_of, FieldRef(field) if field else None)
    return RolloutArgument(name, value, source)


def _request(
    args: tuple[RolloutArgument, ...],
    *refs: AnalysisTemplateRef,
    step: int | None = 2,
    dry_run: tuple[Any, ...] = (),
) -> RunRequest:
    return RunRequest("Step", step, refs, args, dry_run, (), {"extra": "x"}, {"note": "y"})


TEMPLATES = {
    ("AnalysisTemplate", "errors"): _template(
        "errors",
        ["error-rate"],
        [{"name": "hash"}, {"name": "service", "value": "web"}],
        dryRun=[{"metricName": "error-rate"}],
    ),
    ("ClusterAnalysisTemplate", "latency"): _template(
        "latency",
        ["p99"],
        [
            {"name": "hash"},
            {"name": "owner"},
            {"name": "token", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        ],
    ),
}
REFS = (AnalysisTemplateRef("errors", False), AnalysisTemplateRef("latency", True))


def _build(request: RunRequest) -> dict[str, Any]:
    return build_analysis_run(
        request,
        rollout=ROLLOUT,
        templates=TEMPLATES,
        name="web-abc-3-2",
        stable_hash="old",
        current_hash="abc",
        revision=3,
    )


def test_run_merges_templates_and_resolves_args() -> None:
    args = (_arg("hash", hash_of="Latest"), _arg("owner", field="metadata.labels['team']"))
    run = _build(_request(args, *REFS))
    assert [m["name"] for m in run["spec"]["metrics"]] == ["error-rate", "p99"]
    assert run["spec"]["args"] == [
        {"name": "hash", "value": "abc"},
        {"name": "service", "value": "web"},
        {"name": "owner", "value": "pay"},
        {"name": "token", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
    ]
    assert run["spec"]["dryRun"] == [{"metricName": "error-rate"}]
    meta = run["metadata"]
    assert meta["name"] == "web-abc-3-2" and meta["namespace"] == "shop"
    assert meta["labels"] == {
        "extra": "x",
        "app": "web",
        "rollout-type": "Step",
        "rollouts-pod-template-hash": "abc",
        "step-index": "2",
    }
    assert meta["annotations"] == {"note": "y", "rollout.argoproj.io/revision": "3"}
    assert meta["ownerReferences"][0] == {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "name": "web",
        "uid": "u-1",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def test_stable_hash_value() -> None:
    args = (_arg("hash", hash_of="Stable"), _arg("owner", "me"))
    run = _build(_request(args, *REFS))
    assert run["spec"]["args"][0] == {"name": "hash", "value": "old"}


@pytest.mark.parametrize(
    ("args", "refs", "message"),
    [
        ((_arg("owner", "me"),), REFS, "argument 'hash' was not supplied a value"),
        ((), (AnalysisTemplateRef("nope", False),), "AnalysisTemplate 'nope' not found"),
        (
            (_arg("hash", field="metadata.labels['x']"), _arg("owner", "me")),
            REFS,
            "fieldRef \"metadata.labels['x']\" does not resolve",
        ),
        ((_arg("hash", "h"),), (REFS[0], REFS[0]), "metric 'error-rate' is defined by both"),
    ],
)
def test_errors_name_the_problem(
    args: tuple[RolloutArgument, ...], refs: tuple[AnalysisTemplateRef, ...], message: str
) -> None:
    with pytest.raises(AnalysisRunError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _build(_request(args, *refs))


def test_names_follow_argo() -> None:
    request = _request((), *REFS)
    assert request.base_name("web", "abc", 3) == "web-abc-3-2"
    background = RunRequest("Background", None, REFS, (), (), (), {}, {})
    assert background.base_name("web", "abc", 3) == "web-abc-3"
    pre = RunRequest("PrePromotion", None, REFS, (), (), (), {}, {})
    assert pre.base_name("web", "abc", 3) == "web-abc-3-pre"
    assert free_run_name("r", {"r", "r.1"}) == "r.2"
    assert free_run_name("r", set()) == "r"
