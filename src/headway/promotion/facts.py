"""What a promotion step reads before it decides: the other promotions of its app and
environment, the previous environment's record, the Application and its Rollouts.

The Git side (what the environment's file pins, the promotion's commit, a revert of it) comes
from an `EnvironmentRepo`, the one edge to the repository, so tests can hand in a fake.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.promotion.forge_approvals import ApprovalChannel
from headway.promotion.lifecycle import Queue, Stage
from headway.promotion.live import image_matches
from headway.promotion.record import (
    API_VERSION,
    KIND,
    Phase,
    PromotionSpec,
    read_spec,
    read_status,
)
from headway.source.errors import SourceError

__all__ = [
    "ARGO_API",
    "EnvironmentRepo",
    "FileChangedUnderGate",
    "Resolved",
    "StageResolver",
    "app_and_rollouts",
    "promotions_of",
    "queue_of",
    "upstream_passed",
]

ARGO_API = "argoproj.io/v1alpha1"
_IN_FLIGHT = frozenset({Phase.COMMITTED, Phase.VERIFYING, Phase.REVERTING})


class FileChangedUnderGate(SourceError):
    """The environment's file at the branch tip is not the one the gate judged: nothing was
    committed, and the promotion is decided again against the new tip."""


class EnvironmentRepo(Protocol):
    """The repository branch an environment's image is written to."""

    def pinned(self) -> str:
        """The image (or tag) the environment's file pins at the branch tip."""
        ...

    def find_commit(self, promotion: str) -> str:
        """The commit carrying `Headway-Promotion: <promotion>`, or ""."""
        ...

    def find_revert(self, commit: str) -> str:
        """A later commit that takes `commit` back (`Headway-Revert-Of`), or ""."""
        ...

    def config_change(self) -> str:
        """Why the environment's file differs from its last promoted state in more than the
        automation's keys ("" when it does not)."""
        ...

    def exempt(self) -> bool:
        """Whether the environment lets a change of only the automation's keys skip its gate."""
        ...

    def file_version(self) -> str:
        """The environment's file at the branch tip, as an id that changes with its bytes."""
        ...

    def commit_image(
        self, image: str, *, promotion: PromotionSpec, previous: str, file_version: str = ""
    ) -> str:
        """Commit `image` into the environment's file; returns the commit. With
        `file_version`, only onto a tip whose file is that version (the one the gate judged);
        otherwise raise `FileChangedUnderGate` and commit nothing."""
        ...

    def revert_image(self, image: str, *, promotion: PromotionSpec, commit: str) -> str:
        """Re-commit the previous `image`, taking back `commit`; returns the new commit."""
        ...

    def contains(self, revision: str, commit: str) -> bool:
        """`revision` is `commit` or descends from it."""
        ...


@dataclass(frozen=True)
class Resolved:
    stage: Stage
    app_namespace: str
    repo: EnvironmentRepo
    approvals: ApprovalChannel | None = None  # a forge's issue comments, when configured


class StageResolver(Protocol):
    def __call__(self, spec: PromotionSpec) -> Resolved | str:
        """The environment's settings and repository edge, or why they cannot be had."""
        ...


def promotions_of(cluster: Cluster, spec: PromotionSpec) -> list[Obj]:
    """Every promotion of the same pipeline, in the same namespace."""
    found = cluster.list(API_VERSION, KIND, namespace=spec.namespace)
    return [p for p in found if read_spec(p).pipeline == spec.pipeline]


def _order(spec: PromotionSpec) -> tuple[object, str]:
    return (spec.requested_at, spec.name)


def queue_of(spec: PromotionSpec, siblings: Sequence[Obj]) -> Queue:
    older_in_flight, newer = "", ""
    for obj in siblings:
        other = read_spec(obj)
        if other.name == spec.name or other.environment != spec.environment:
            continue
        phase = read_status(obj).phase
        if phase is Phase.REFUSED:
            continue  # never a valid promotion: it supersedes nothing
        if _order(other) > _order(spec):
            newer = newer or other.name
        elif phase in _IN_FLIGHT:
            older_in_flight = older_in_flight or other.name
    return Queue(older_in_flight=older_in_flight, newer=newer)


def upstream_passed(spec: PromotionSpec, *, stage: Stage, siblings: Sequence[Obj]) -> bool:
    """The image succeeded in the previous environment (a rollback needs no upstream: the
    image it brings back was good here before)."""
    if not stage.previous or spec.origin == "rollback":
        return True
    for obj in siblings:
        other = read_spec(obj)
        if other.environment != stage.previous or read_status(obj).phase is not Phase.SUCCEEDED:
            continue
        if image_matches(other.image, spec.image) or image_matches(spec.image, other.image):
            return True
    return False


Destination = Callable[[Obj], Cluster]
"""An Application -> the cluster its resources live in (the store for in-cluster)."""


def app_and_rollouts(
    cluster: Cluster, *, name: str, namespace: str, destination: Destination | None = None
) -> tuple[Obj, list[Obj]]:
    """The Application ({} when missing) and the Rollouts its status lists, read from the
    Application's destination cluster."""
    try:
        app = cluster.get(ARGO_API, "Application", name, namespace)
    except NotFound:
        return {}, []
    try:
        where = destination(app) if destination is not None else cluster
    except (ClusterError, LookupError, ValueError):
        return app, []  # an unknown destination: the Application's own health says so
    rollouts: list[Obj] = []
    for entry in (app.get("status") or {}).get("resources") or []:
        if entry.get("kind") != "Rollout" or entry.get("group") != "argoproj.io":
            continue
        try:
            rollouts.append(
                where.get(ARGO_API, "Rollout", str(entry["name"]), entry.get("namespace"))
            )
        except ClusterError:
            continue
    return app, rollouts
