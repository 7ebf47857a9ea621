"""Hypothesis strategies for manifests, derived from the model's own field tables.

Each field of each kind Headway models gets a value of its declared shape most of the time
and a value of a wrong type otherwise (a huge integer, a date, a list, a mapping, NaN...),
so generated documents reach both the checks behind valid shapes and every error path.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from headway.model import schema as s
from headway.model.analysis import ANALYSIS_RUN_SPEC, ANALYSIS_TEMPLATE_SPEC
from headway.model.application import APPLICATION_SPEC
from headway.model.appproject import APPPROJECT_SPEC
from headway.model.rollout import ROLLOUT_SPEC

SPECS: dict[str, s.Schema] = {
    "Application": APPLICATION_SPEC,
    "AppProject": APPPROJECT_SPEC,
    "Rollout": ROLLOUT_SPEC,
    "AnalysisTemplate": ANALYSIS_TEMPLATE_SPEC,
    "ClusterAnalysisTemplate": ANALYSIS_TEMPLATE_SPEC,
    "AnalysisRun": ANALYSIS_RUN_SPEC,
}
MAX_DEPTH = 6

HUGE = st.sampled_from([2**63, -(2**63) - 1, 10**20, int("9" * 400)])
WORDS = st.sampled_from(
    [
        "", "x", "web", "checkout", "*", "!*", "default", "argocd", "kube-system", "..",
        "../../etc", "/abs", "{{args.x}}", "$values/prod.yaml", "result[0] < 1", "30s", "25%",
        "https://git.example/r.git", "https://u:p@git.example/r.git", "main", "HEAD", "v1",
        "argoproj.io", "apps", "Deployment", "Service", "in-cluster", "é", "a" * 300,
    ]
)  # fmt: skip
TEXT = WORDS | st.text(max_size=8)
JSON_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | HUGE
    | st.floats(allow_nan=True, allow_infinity=True)
    | TEXT
)
LEAF = JSON_LEAF | st.dates()  # YAML reads an unquoted 2024-01-02 as a date
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
JSONISH = st.recursive(
    LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
WRONG = LEAF | st.just([]) | st.just({}) | st.lists(LEAF, max_size=2) | JSONISH


def value_for(shape: s.Shape, depth: int = 0) -> st.SearchStrategy[Any]:
    """A value for `shape`: of its shape about nine times in ten, of any other otherwise."""
    right = _right(shape, depth)
    return st.one_of(*[right] * 9, WRONG)


def _right(shape: s.Shape, depth: int) -> st.SearchStrategy[Any]:
    if isinstance(shape, s.Scalar):
        return _scalar(shape)
    if isinstance(shape, s.IntOrString):
        return st.integers(-2, 10) | st.sampled_from(["25%", "0%", "100%", "x", "-5%"])
    if isinstance(shape, s.Duration):
        texts = st.sampled_from(["30s", "1m", "2h", "0s", "1h30m", "{{args.i}}", "-1s", "9999999h"])
        return texts | st.integers(-1, 100) if shape.bare_seconds else texts
    if isinstance(shape, s.Enum):
        return st.sampled_from(shape.values)
    if isinstance(shape, s.StringMap):
        return st.dictionaries(TEXT, TEXT, max_size=3)
    if isinstance(shape, s.ListOf):
        if depth >= MAX_DEPTH:
            return st.just([])
        return st.lists(value_for(shape.item, depth + 1), max_size=3)
    if isinstance(shape, s.Obj):
        return object_for(shape.schema, depth + 1)
    if isinstance(shape, s.AnyValue):
        return st.dictionaries(TEXT, JSONISH, max_size=3) if shape.mapping else JSONISH
    raise AssertionError(f"no strategy for the shape {shape!r}: add one")


def _scalar(shape: s.Scalar) -> st.SearchStrategy[Any]:
    if shape.kind == "string":
        return TEXT
    if shape.kind == "boolean":
        return st.booleans()
    low = shape.minimum if shape.minimum is not None else -3
    high = shape.maximum if shape.maximum is not None else max(low, 0) + 10
    if shape.kind == "integer":
        return st.integers(low, high) | HUGE
    return st.floats(low, high) | st.sampled_from([float("nan"), float("inf"), 1e308])


def object_for(table: s.Schema, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """A mapping for `table`: required fields always, others sometimes."""
    if depth >= MAX_DEPTH:
        return st.just({})
    required = {f.name: value_for(f.shape, depth) for f in table.fields if f.required}
    optional = {f.name: value_for(f.shape, depth) for f in table.fields if not f.required}
    return st.fixed_dictionaries(required, optional=optional)


@st.composite
def argo_manifest(draw: st.DrawFn, kind: str | None = None) -> dict[str, Any]:
    """A whole Argo object of `kind` (any modelled kind when None)."""
    chosen = kind or draw(st.sampled_from(sorted(SPECS)))
    name = draw(st.sampled_from(["web", "checkout", "a"]) | TEXT)
    metadata = draw(st.one_of(*[st.just({"name": name, "namespace": "argocd"})] * 4, WRONG))
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": chosen,
        "metadata": metadata,
        "spec": draw(value_for(s.Obj(SPECS[chosen]))),
    }


# ---- built-in kinds the check rules read (workloads, autoscalers, budgets, Services) ----


def _mostly(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(*[strategy] * 4, WRONG)


_ANNOTATIONS = st.dictionaries(
    st.sampled_from(
        [
            "argocd.argoproj.io/sync-wave",
            "argocd.argoproj.io/hook",
            "argocd.argoproj.io/sync-options",
            "argocd.argoproj.io/compare-options",
        ]
    ),
    _mostly(TEXT | st.sampled_from(["-1", "1", "PreSync", "Prune=false"])),
    max_size=2,
)
_META = st.fixed_dictionaries(
    {"name": st.sampled_from(["web", "a"])},
    optional={"namespace": _mostly(TEXT), "annotations": _mostly(_ANNOTATIONS), "labels": JSONISH},
)
_LABELS = _mostly(st.dictionaries(TEXT, TEXT, max_size=2))
_CONTAINER = st.fixed_dictionaries(
    {"name": _mostly(TEXT), "image": _mostly(TEXT)},
    optional={
        "ports": _mostly(st.lists(st.fixed_dictionaries({"containerPort": JSONISH}), max_size=2)),
        "resources": JSONISH,
        "readinessProbe": JSONISH,
        "env": _mostly(st.lists(JSONISH, max_size=2)),
    },
)
_CONTAINERS = st.lists(_mostly(_CONTAINER), max_size=2)
_TEMPLATE = st.fixed_dictionaries(
    {
        "metadata": _mostly(st.fixed_dictionaries({"labels": _LABELS})),
        "spec": _mostly(st.fixed_dictionaries({"containers": _mostly(_CONTAINERS)})),
    }
)


def _kind(api: str, kinds: list[str], spec: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "apiVersion": st.just(api),
            "kind": st.sampled_from(kinds),
            "metadata": _META,
            "spec": _mostly(st.fixed_dictionaries({}, optional=spec)),
        }
    )


CORE_OBJECTS = st.one_of(
    _kind(
        "apps/v1",
        ["Deployment", "StatefulSet", "DaemonSet"],
        {
            "replicas": _mostly(st.integers(-1, 5)),
            "selector": _mostly(st.fixed_dictionaries({"matchLabels": _LABELS})),
            "template": _mostly(_TEMPLATE),
            "strategy": JSONISH,
        },
    ),
    _kind(
        "autoscaling/v2",
        ["HorizontalPodAutoscaler"],
        {
            "scaleTargetRef": _mostly(st.fixed_dictionaries({"kind": TEXT, "name": TEXT})),
            "minReplicas": _mostly(st.integers(0, 5)),
            "maxReplicas": _mostly(st.integers(0, 5)),
            "metrics": JSONISH,
        },
    ),
    _kind(
        "policy/v1",
        ["PodDisruptionBudget"],
        {"selector": JSONISH, "minAvailable": JSONISH, "maxUnavailable": JSONISH},
    ),
    _kind(
        "v1",
        ["Service"],
        {"selector": _LABELS, "ports": _mostly(st.lists(JSONISH, max_size=2)), "type": TEXT},
    ),
    _kind("apiextensions.k8s.io/v1", ["CustomResourceDefinition"], {"names": JSONISH}),
)
