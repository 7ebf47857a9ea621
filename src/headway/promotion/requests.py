"""What a person asks of the promotion loop, written into the store: a new promotion, a
rollback, an approve or deny. Used by the CLI (and any other surface: a forge comment, the
dashboard), checked here the same way for all of them.

Every check here is repeated by the controller, which is what actually fails closed: a
decision written straight into the store by someone off the allow-list, or by the author,
is recorded and ignored there. The checks here only turn those mistakes into a clear
refusal at the moment they are made.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from headway.cluster.errors import Conflict
from headway.cluster.protocol import Cluster
from headway.kubetime import format_precise_time
from headway.model.obj import Obj
from headway.model.promotion_pipeline import Environment, PromotionPipeline
from headway.promotion.approval import Decision, same_identity, why_not_counted
from headway.promotion.controller import promotion_object
from headway.promotion.environments import load_pipeline
from headway.promotion.live import image_matches
from headway.promotion.record import (
    API_VERSION,
    KIND,
    BreakGlass,
    Phase,
    PromotionSpec,
    read_spec,
    read_status,
)

__all__ = [
    "RequestRefused",
    "full_image",
    "previous_good_image",
    "record_decision",
    "request_promotion",
]

FIELD_MANAGER = "headway-promote-cli"
_ATTEMPTS = 5


class RequestRefused(Exception):
    """The request cannot be made; the message says why and what to do instead."""


@dataclass(frozen=True)
class Request:
    pipeline: str
    namespace: str
    environment: str
    image: str  # a tag, or a whole reference
    author: str
    rollback: bool = False
    break_glass_reason: str = ""
    hotfix_reason: str = ""


def full_image(pipeline: PromotionPipeline, image: str) -> str:
    """A bare tag becomes `<spec.image>:<tag>`; a whole reference stays as written."""
    if ":" in image or "@" in image or "/" in image:
        return image
    return f"{pipeline.spec.image}:{image}"


def _pipeline(cluster: Cluster, name: str, namespace: str) -> PromotionPipeline:
    pipeline = load_pipeline(cluster, name, namespace)
    if isinstance(pipeline, str):
        raise RequestRefused(pipeline)
    return pipeline


def _succeeded(cluster: Cluster, spec_filter: tuple[str, str, str]) -> list[PromotionSpec]:
    """Succeeded promotions of (namespace, pipeline, environment), oldest first."""
    namespace, pipeline, environment = spec_filter
    found = []
    for obj in cluster.list(API_VERSION, KIND, namespace=namespace):
        spec = read_spec(obj)
        if (spec.pipeline, spec.environment) != (pipeline, environment):
            continue
        if read_status(obj).phase is Phase.SUCCEEDED:
            found.append(spec)
    return sorted(found, key=lambda s: (s.requested_at, s.name))


def previous_good_image(cluster: Cluster, request: Request) -> str:
    """The image that succeeded in the environment before the one that succeeded last."""
    done = _succeeded(cluster, (request.namespace, request.pipeline, request.environment))
    if not done:
        raise RequestRefused(
            f"no promotion of {request.pipeline} succeeded in "
            f"{request.environment} yet: nothing to roll back to"
        )
    current = done[-1].image
    for spec in reversed(done):
        if not image_matches(spec.image, current):
            return spec.image
    raise RequestRefused(
        f"{request.environment} has only ever run {current} through a "
        f"promotion: there is no previous good image"
    )


def _environment(pipeline: PromotionPipeline, request: Request) -> Environment:
    env = pipeline.environment(request.environment)
    if env is None:
        names = ", ".join(e.name for e in pipeline.spec.environments)
        raise RequestRefused(
            f"pipeline {request.pipeline} has no environment "
            f"{request.environment!r} (it has: {names})"
        )
    if request.hotfix_reason and env.hotfix is None:
        raise RequestRefused(
            f"environment {env.name} of pipeline {request.pipeline} declares no hotfix keys "
            "(hotfix.skipAnalysisKey, hotfix.nonceKey)"
        )
    return env


def _check_pipeline_order(
    cluster: Cluster, *, pipeline: PromotionPipeline, env: Environment, request: Request, image: str
) -> None:
    """Into a gated environment, the image must have succeeded in the one before it (unless
    this is a rollback, or declared break-glass)."""
    index = pipeline.spec.environments.index(env)
    if index == 0 or not env.gate.approval.required:
        return
    if request.rollback or request.break_glass_reason:
        return
    before = pipeline.spec.environments[index - 1]
    passed = _succeeded(cluster, (request.namespace, request.pipeline, before.name))
    if not any(image_matches(s.image, image) for s in passed):
        raise RequestRefused(
            f"{image} has not succeeded in {before.name}: a promotion to {env.name} that "
            "skips the pipeline is refused; declare it with --break-glass --reason TEXT "
            "(it is recorded as such)"
        )


def request_promotion(cluster: Cluster, request: Request, *, now: datetime) -> PromotionSpec:
    """Check the request against the pipeline and store the new Promotion."""
    pipeline = _pipeline(cluster, request.pipeline, request.namespace)
    env = _environment(pipeline, request)
    if request.rollback:
        image = previous_good_image(cluster, request)
    else:
        image = full_image(pipeline, request.image)
    _check_pipeline_order(cluster, pipeline=pipeline, env=env, request=request, image=image)
    glass = request.break_glass_reason
    spec = PromotionSpec(
        name=f"{request.pipeline}-{env.name}-{secrets.token_hex(4)}",
        namespace=request.namespace,
        pipeline=request.pipeline,
        environment=env.name,
        image=image,
        author=request.author,
        requested_at=now,
        origin="rollback" if request.rollback else "cli",
        break_glass=BreakGlass(request.author, glass) if glass else None,
        hotfix_reason=request.hotfix_reason,
    )
    cluster.apply(promotion_object(spec), field_manager=FIELD_MANAGER)
    return spec


def _check_decision(cluster: Cluster, obj: Obj, decision: Decision) -> None:
    spec, status = read_spec(obj), read_status(obj)
    if status.phase is not Phase.AWAITING_APPROVAL or status.approval is None:
        withdrawn = " (its approval was withdrawn)" if status.phase is Phase.SUPERSEDED else ""
        raise RequestRefused(
            f"{spec.name} is {status.phase.value}{withdrawn}: there is no approval to decide"
        )
    pipeline = _pipeline(cluster, spec.pipeline, spec.namespace)
    env = pipeline.environment(spec.environment)
    approvers = env.gate.approval.approvers if env is not None else ()
    reason = why_not_counted(
        decision,
        approvers=approvers,
        author=spec.author,
        requested_at=status.approval.requested_at,
        deadline=status.approval.deadline,
    )
    if reason is not None:
        raise RequestRefused(f"refused: {reason}")
    for earlier in spec.decisions:
        if same_identity(earlier.by, decision.by) and earlier.verdict == decision.verdict:
            raise RequestRefused(
                f"{decision.by} already recorded {decision.verdict} on {spec.name}"
            )


def record_decision(
    cluster: Cluster, *, namespace: str, name: str, decision: Decision
) -> PromotionSpec:
    """Append an approve or deny to the promotion's `spec.decisions` (the controller acts on
    it at its next step). Written under the object's resourceVersion, so a decision is never
    lost to a concurrent one."""
    entry = {
        "decision": decision.verdict,
        "by": decision.by,
        "at": format_precise_time(decision.at),
        "via": decision.via,
    }
    if decision.comment:
        entry["comment"] = decision.comment
    for _ in range(_ATTEMPTS):
        obj = cluster.get(API_VERSION, KIND, name, namespace)
        _check_decision(cluster, obj, decision)
        obj["spec"]["decisions"] = [*(obj["spec"].get("decisions") or []), entry]
        try:
            cluster.update(obj, field_manager=FIELD_MANAGER)
        except Conflict:
            continue
        return read_spec(obj)
    raise RequestRefused(f"{name} kept changing; try again")
