"""What a Rollout is doing, gathered from the cluster as plain data: the read path behind
`headway rollouts get` and the dashboard's Rollout page.

`summarize()` reads the Rollout, the ReplicaSets and AnalysisRuns it owns and the pods of each
ReplicaSet; `weight_line()` says what traffic the canary really gets (with a router, the weights
the router reported; without one, the share of available pods).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from headway.cluster.errors import NotFound
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.rollout.canary_replicas import replica_weight_percent
from headway.rollout.replica_sets import view_of

if TYPE_CHECKING:  # the model loads only where a Rollout is parsed, not for --help
    from headway.model.rollout import Rollout

__all__ = [
    "ARGO_API",
    "ExperimentRun",
    "ExperimentTemplate",
    "ExperimentView",
    "RolloutSummary",
    "experiment_view",
    "owned",
    "summarize",
    "weight_line",
]

ARGO_API = "argoproj.io/v1alpha1"


@dataclass(frozen=True)
class ExperimentTemplate:
    template: str
    replica_set: str  # "" while the Experiment controller has not created it
    available: int
    replicas: int
    status: str  # the template's status as the Experiment reports it (Progressing, Running, ...)


@dataclass(frozen=True)
class ExperimentRun:
    analysis: str
    run: str  # the AnalysisRun's name
    phase: str
    message: str


@dataclass(frozen=True)
class ExperimentView:
    """The Experiment of the current `experiment` step (`status.canary.currentExperiment`)."""

    name: str
    phase: str  # "" while its controller has not written a status; Missing once it is gone
    message: str
    templates: tuple[ExperimentTemplate, ...]
    runs: tuple[ExperimentRun, ...]


@dataclass(frozen=True)
class RolloutSummary:
    obj: Obj
    rollout: Rollout | None
    replica_sets: tuple[Obj, ...]  # newest revision first
    pods: Mapping[str, tuple[Obj, ...]]  # ReplicaSet name -> pods
    runs: tuple[Obj, ...]  # oldest first
    experiment: ExperimentView | None = None

    @property
    def status(self) -> Mapping[str, Any]:
        return self.obj.get("status") or {}


def owned(items: list[Obj], uid: str) -> list[Obj]:
    """The objects of `items` with an owner reference to `uid`."""
    return [
        o
        for o in items
        if any(r.get("uid") == uid for r in (o["metadata"].get("ownerReferences") or []))
    ]


def summarize(
    cluster: Cluster, namespace: str, name: str, rollout: Rollout | None
) -> RolloutSummary:
    obj = cluster.get(ARGO_API, "Rollout", name, namespace)
    uid = str(obj["metadata"].get("uid"))
    sets = sorted(
        owned(cluster.list("apps/v1", "ReplicaSet", namespace=namespace), uid),
        key=lambda rs: view_of(rs).revision,
        reverse=True,
    )
    pods = cluster.list("v1", "Pod", namespace=namespace)
    by_set = {
        rs["metadata"]["name"]: tuple(owned(pods, str(rs["metadata"]["uid"]))) for rs in sets
    }
    runs = sorted(
        owned(cluster.list(ARGO_API, "AnalysisRun", namespace=namespace), uid),
        key=lambda r: str(r["metadata"].get("creationTimestamp", "")),
    )
    return RolloutSummary(obj, rollout, tuple(sets), by_set, tuple(runs),
                          _current_experiment(cluster, namespace, obj))


def _dicts(value: object) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _current_experiment(cluster: Cluster, namespace: str, obj: Obj) -> ExperimentView | None:
    canary = (obj.get("status") or {}).get("canary")
    name = canary.get("currentExperiment") if isinstance(canary, Mapping) else None
    if not name:
        return None
    try:
        exp = cluster.get(ARGO_API, "Experiment", str(name), namespace)
    except NotFound:
        return ExperimentView(str(name), "Missing", "", (), ())
    uid = str(exp["metadata"].get("uid"))
    sets = owned(cluster.list("apps/v1", "ReplicaSet", namespace=namespace), uid)
    return experiment_view(exp, sets)


def experiment_view(exp: Obj, replica_sets: list[Obj]) -> ExperimentView:
    """An Experiment as shown: each template with the ReplicaSet running it (matched by the
    template's pod hash among the ReplicaSets the Experiment owns), each analysis's run."""
    found = exp.get("status")
    status: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    by_hash = {view_of(rs).pod_hash: view_of(rs).name for rs in replica_sets}
    templates = tuple(
        ExperimentTemplate(
            template=str(t.get("name")),
            replica_set=by_hash.get(str(t.get("podTemplateHash")), ""),
            available=int(t.get("availableReplicas") or 0),
            replicas=int(t.get("replicas") or 0),
            status=str(t.get("status") or ""),
        )
        for t in _dicts(status.get("templateStatuses"))
    )
    runs = tuple(
        ExperimentRun(str(r.get("name")), str(r.get("analysisRun")), str(r.get("phase") or ""),
                      str(r.get("message") or ""))
        for r in _dicts(status.get("analysisRuns"))
    )
    return ExperimentView(str(exp["metadata"]["name"]), str(status.get("phase") or ""),
                          str(status.get("message") or ""), templates, runs)


def weight_line(summary: RolloutSummary) -> str:
    """`setWeight 10 -> 1 of 4 pods = 25%` without a router; `canary 10%, stable 90%` with
    (a weighted experiment's templates between them: `canary 20%, exp-a 10%, stable 70%`)."""
    from headway.rollout.canary_steps import set_weight_at
    status, ro = summary.status, summary.rollout
    canary = ro.spec.strategy.canary if ro else None
    if canary is None:
        return ""
    weights = (status.get("canary") or {}).get("weights")
    if canary.traffic_routing is not None and weights:
        verified = weights.get("verified")
        note = "" if verified is None else (" (verified)" if verified else " (not yet applied)")
        extra = "".join(f", {a.get('serviceName')} {a.get('weight')}%"
                        for a in weights.get("additional") or [] if isinstance(a, dict))
        return (f"canary {weights['canary']['weight']}%{extra}, "
                f"stable {weights['stable']['weight']}%{note}")
    index = int(status.get("currentStepIndex") or 0)
    wanted = set_weight_at(canary.steps, index) if canary.steps else 100
    current = status.get("currentPodHash")
    canary_pods = sum(
        int((rs.get("status") or {}).get("availableReplicas") or 0)
        for rs in summary.replica_sets
        if view_of(rs).pod_hash == current
    )
    total = sum(
        int((rs.get("status") or {}).get("availableReplicas") or 0) for rs in summary.replica_sets
    )
    percent = replica_weight_percent(canary_pods, total - canary_pods)
    return f"setWeight {wanted} -> {canary_pods} of {total} pods = {percent:.0f}%"
