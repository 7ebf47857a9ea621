"""An AnalysisRun made ready to measure: arguments resolved, metrics parsed, policies built.

As in Argo Rollouts, every `{{args.NAME}}` in the run's metrics is replaced by the argument's
`value`, or by a Secret's key for `valueFrom.secretKeyRef` (read from the run's namespace).
`fieldRef` and `podTemplateHashValue` arguments are resolved by whoever creates the run (the
Rollout controller) into plain values. A placeholder naming an argument with no value, an
unreadable Secret, a metric that does not validate, or a provider Headway lacks is a
`RunProblem`: the run ends in Error with that message, before anything is measured.

The values read from Secrets are kept (`PreparedRun.secrets`) so that the controller masks them
in everything it writes (`headway.redaction`).
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.analysis.measurement import MetricConditions, compile_metric_conditions
from headway.analysis.policy import MetricPolicy, PolicyError, metric_policies
from headway.cluster.errors import ClusterError
from headway.cluster.protocol import Cluster
from headway.model.analysis import Metric, parse_analysis_run
from headway.model.diagnostics import Severity
from headway.model.obj import Obj
from headway.model.yamlload import Document

__all__ = ["PreparedMetric", "PreparedRun", "RunProblem", "prepare_run", "substitute_args"]

_PLACEHOLDER = re.compile(r"\{\{\s*args\.([A-Za-z0-9_.-]+?)\s*\}\}")


class RunProblem(Exception):
    """Why a run cannot be measured at all."""


@dataclass(frozen=True)
class PreparedMetric:
    metric: Metric
    policy: MetricPolicy
    conditions: MetricConditions


@dataclass(frozen=True)
class PreparedRun:
    metrics: tuple[PreparedMetric, ...]
    terminate: bool
    secrets: tuple[str, ...] = ()  # argument values read from Secrets, never to be shown

    @property
    def policies(self) -> list[MetricPolicy]:
        return [m.policy for m in self.metrics]


def _secret_value(cluster: Cluster, namespace: str, ref: Mapping[str, Any], arg: str) -> str:
    name, key = str(ref.get("name", "")), str(ref.get("key", ""))
    try:
        secret = cluster.get("v1", "Secret", name, namespace)
    except ClusterError as error:
        raise RunProblem(f"args.{arg}: cannot read secret {namespace}/{name}: {error}") from None
    if key in (secret.get("stringData") or {}):
        return str(secret["stringData"][key])
    encoded = (secret.get("data") or {}).get(key)
    if encoded is None:
        raise RunProblem(f"args.{arg}: secret {namespace}/{name} has no key {key!r}")
    try:
        return base64.b64decode(str(encoded), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise RunProblem(
            f"args.{arg}: secret {namespace}/{name} key {key!r} is not base64"
        ) from None


def _arg_values(
    args: Sequence[Any], cluster: Cluster | None, namespace: str
) -> tuple[dict[str, str], tuple[str, ...]]:
    """Every argument's value, and those of them that came from a Secret."""
    values: dict[str, str] = {}
    secrets: list[str] = []
    for arg in args:
        if not isinstance(arg, Mapping) or not arg.get("name"):
            continue
        name = str(arg["name"])
        ref = (arg.get("valueFrom") or {}).get("secretKeyRef")
        if arg.get("value") is not None:
            values[name] = str(arg["value"])
        elif isinstance(ref, Mapping) and cluster is not None:
            values[name] = _secret_value(cluster, namespace, ref, name)
            secrets.append(values[name])
    return values, tuple(secrets)


def substitute_args(value: Any, args: Mapping[str, str]) -> Any:
    """`value` with every `{{args.NAME}}` in its strings replaced; unknown names raise."""
    if isinstance(value, str):

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in args:
                raise RunProblem(f"args.{name} is used but has no value")
            return args[name]

        return _PLACEHOLDER.sub(replace, value)
    if isinstance(value, list):
        return [substitute_args(item, args) for item in value]
    if isinstance(value, dict):
        return {key: substitute_args(item, args) for key, item in value.items()}
    return value


def _parsed(obj: Obj) -> tuple[Metric, ...]:
    meta = obj.get("metadata") or {}
    where = f"AnalysisRun {meta.get('namespace', '')}/{meta.get('name', '')}"
    document = Document(obj=obj, file=where, index=0, line=0)
    run, diagnostics = parse_analysis_run(document)
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if run is None or errors:
        shown = "; ".join(f"{d.field}: {d.message}" for d in errors) or "cannot be read"
        raise RunProblem(f"invalid spec: {shown}")
    return run.spec.metrics


@functools.lru_cache(maxsize=1024)
def _conditions(metric: str, success: str, failure: str) -> MetricConditions:
    """Compiled once per distinct text: a run is prepared again at every step."""
    return compile_metric_conditions(metric, success_condition=success, failure_condition=failure)


def prepare_run(obj: Obj, cluster: Cluster | None) -> PreparedRun:
    """Resolve, substitute, parse and build policies; `RunProblem` says what is wrong."""
    spec = obj.get("spec") or {}
    namespace = str((obj.get("metadata") or {}).get("namespace") or "default")
    args, secrets = _arg_values(spec.get("args") or [], cluster, namespace)
    resolved = {**obj, "spec": {**spec, "metrics": substitute_args(spec.get("metrics"), args)}}
    metrics = _parsed(resolved)
    try:
        policies = metric_policies(
            metrics,
            dry_run=spec.get("dryRun") or (),
            measurement_retention=spec.get("measurementRetention") or (),
        )
    except PolicyError as error:
        raise RunProblem(str(error)) from None
    prepared = tuple(
        PreparedMetric(
            metric,
            policy,
            _conditions(
                metric.name, metric.success_condition or "", metric.failure_condition or ""
            ),
        )
        for metric, policy in zip(metrics, policies, strict=True)
    )
    return PreparedRun(prepared, bool(spec.get("terminate")), secrets)
