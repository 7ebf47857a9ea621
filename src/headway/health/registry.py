"""The health dispatcher: built-in checks and Lua overrides, keyed by (group, kind).

A Lua script registered for a (group, kind) replaces the built-in check, as in Argo CD.
Kinds with neither have no health (`assess` returns None): a ConfigMap is not "Healthy",
it simply has no health to wait for.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from headway.clock import Clock, SystemClock
from headway.health.fields import get, get_str
from headway.health.kinds import (
    apiservice,
    application,
    applicationset,
    cronjob,
    daemonset,
    deployment,
    hpa,
    ingress,
    job,
    pdb,
    pod,
    pvc,
    replicaset,
    rollout,
    scaledobject,
    service,
    statefulset,
    workflow,
)
from headway.health.lua_script import LuaHealthScript
from headway.health.status import HealthResult, HealthStatus

__all__ = [
    "BUILTIN_CHECKS",
    "GroupKind",
    "HealthCheck",
    "HealthRegistry",
    "assess",
    "default_registry",
    "group_kind_of",
]

GroupKind = tuple[str, str]
HealthCheck = Callable[[Any], HealthResult]

_HOOK_FINALIZER = "argocd.argoproj.io/hook-finalizer"

BUILTIN_CHECKS: Mapping[GroupKind, HealthCheck] = MappingProxyType(
    {
        ("apps", "Deployment"): deployment.assess,
        ("apps", "StatefulSet"): statefulset.assess,
        ("apps", "DaemonSet"): daemonset.assess,
        ("apps", "ReplicaSet"): replicaset.assess,
        ("", "Pod"): pod.assess,
        ("", "Service"): service.assess,
        ("", "PersistentVolumeClaim"): pvc.assess,
        ("networking.k8s.io", "Ingress"): ingress.assess,
        ("extensions", "Ingress"): ingress.assess,
        ("batch", "Job"): job.assess,
        ("batch", "CronJob"): cronjob.assess,
        ("policy", "PodDisruptionBudget"): pdb.assess,
        ("keda.sh", "ScaledObject"): scaledobject.assess,
        ("apiregistration.k8s.io", "APIService"): apiservice.assess,
        ("autoscaling", "HorizontalPodAutoscaler"): hpa.assess,
        ("argoproj.io", "Rollout"): rollout.assess,
        ("argoproj.io", "Application"): application.assess,
        ("argoproj.io", "ApplicationSet"): applicationset.assess,
        ("argoproj.io", "Workflow"): workflow.assess,
    }
)


def group_kind_of(obj: Any) -> GroupKind:
    """`apps/v1` + Deployment -> ("apps", "Deployment"); `v1` + Pod -> ("", "Pod")."""
    api_version = get_str(obj, "apiVersion")
    group = api_version.rpartition("/")[0]
    return group, get_str(obj, "kind")


@dataclass(frozen=True)
class HealthRegistry:
    builtins: Mapping[GroupKind, HealthCheck] = field(default_factory=lambda: BUILTIN_CHECKS)
    scripts: Mapping[GroupKind, LuaHealthScript] = field(
        default_factory=lambda: MappingProxyType({})
    )
    clock: Clock = field(default_factory=SystemClock)  # "now" for scripts' os.time()

    def with_scripts(self, scripts: Mapping[GroupKind, LuaHealthScript]) -> HealthRegistry:
        """A registry where `scripts` override built-ins and earlier scripts."""
        merged = {**self.scripts, **scripts}
        return replace(self, scripts=MappingProxyType(merged))

    def with_clock(self, clock: Clock) -> HealthRegistry:
        return replace(self, clock=clock)

    def has_check(self, group_kind: GroupKind) -> bool:
        return group_kind in self.scripts or group_kind in self.builtins

    def reads_clock(self, obj: Any) -> bool:
        """Whether the health of `obj` comes from a script that can read the clock, so that
        it (or the script's giving no verdict) may change with time alone."""
        group_kind = group_kind_of(obj)
        script = self.scripts.get(group_kind) or self._wildcard_script(group_kind)
        return script is not None and script.reads_clock

    def assess(self, obj: Any) -> HealthResult | None:
        """The health of one live object, or None when its kind has no health check.

        An object being deleted is Progressing ("Pending deletion") whatever its kind,
        unless the deletion is only held by Argo's hook finalizer. A script that gives no
        verdict (returns nil or `{}`) leaves the decision to the built-in check, if any."""
        if _pending_deletion(obj):
            return HealthResult(HealthStatus.PROGRESSING, "Pending deletion")
        group_kind = group_kind_of(obj)
        script = self.scripts.get(group_kind) or self._wildcard_script(group_kind)
        if script is not None:
            verdict = script.assess(obj, now=self.clock.now())
            if verdict is not None:
                return verdict
        check = self.builtins.get(group_kind)
        return check(obj) if check is not None else None

    def _wildcard_script(self, group_kind: GroupKind) -> LuaHealthScript | None:
        """The first script registered under a glob key (`*.crossplane.io`, `*`) that
        matches; exact keys are tried first, as in Argo CD."""
        group, kind = group_kind
        for (group_glob, kind_glob), script in self.scripts.items():
            if "*" not in group_glob + kind_glob:
                continue
            if fnmatch.fnmatchcase(group, group_glob) and fnmatch.fnmatchcase(kind, kind_glob):
                return script
        return None


def _pending_deletion(obj: Any) -> bool:
    if get(obj, "metadata", "deletionTimestamp") is None:
        return False
    finalizers = get(obj, "metadata", "finalizers")
    return not (isinstance(finalizers, list) and _HOOK_FINALIZER in finalizers)


_DEFAULT = HealthRegistry()


def default_registry() -> HealthRegistry:
    return _DEFAULT


def assess(obj: Any) -> HealthResult | None:
    """Assess with the built-in checks only."""
    return _DEFAULT.assess(obj)
