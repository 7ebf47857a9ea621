"""The one narrow interface the engine uses to talk to any cluster backend.

Objects cross this boundary as plain JSON-like dicts shaped exactly like Kubernetes
objects (`apiVersion`, `kind`, `metadata`, `spec`, `status`). Backends: the local runtime
(`headway.cluster.local`) and Kubernetes through lightkube (`headway.cluster.kube`). The
contract tests in `tests/cluster/contract/` run the same cases against every backend.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, Protocol

from headway.model.obj import Obj

__all__ = [
    "Cluster",
    "FieldValidation",
    "ListPage",
    "PropagationPolicy",
    "ResourceKind",
    "WatchEvent",
    "WatchEventType",
]

PropagationPolicy = Literal["Foreground", "Background", "Orphan"]
# Kubernetes' `fieldValidation`: what a write does with a field its kind does not declare.
FieldValidation = Literal["Strict", "Warn", "Ignore"]


class WatchEventType(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


@dataclass(frozen=True)
class WatchEvent:
    type: WatchEventType
    object: Obj
    resource_version: str


@dataclass(frozen=True)
class ResourceKind:
    """One entry of discovery: a kind the cluster serves."""

    api_version: str  # "apps/v1", "v1", "argoproj.io/v1alpha1"
    kind: str
    plural: str
    namespaced: bool

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]


@dataclass(frozen=True)
class ListPage:
    """One page of a list: its items, the list's resourceVersion, and how to go on."""

    items: list[Obj]
    resource_version: str  # watch from it to miss nothing after this list
    continue_token: str  # "" on the last page
    remaining: int | None  # items left after this page (Kubernetes' remainingItemCount)


class Cluster(Protocol):
    """What every backend provides.

    Errors are raised as the types in `headway.cluster.errors`: `NotFound`, `Conflict`
    (a stale resourceVersion), `FieldConflict` (another field manager owns a field),
    `Invalid`, `UnknownKind` and `Gone` (a version older than the history: list again).
    """

    def discovery(self) -> list[ResourceKind]:
        """Every kind this cluster serves, with whether it is namespaced."""
        ...

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj:
        """The object, or `NotFound`."""
        ...

    def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: Mapping[str, str] | str | None = None,
    ) -> list[Obj]:
        """Objects of a kind, optionally in one namespace and matching a label selector
        (a dict of equalities or a selector string such as `app=web,tier!=db`)."""
        ...

    def list_page(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: Mapping[str, str] | str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ListPage:
        """One page of `list`: at most `limit` objects (every one when None or 0), starting
        after where `continue_token` (a previous page's) left off. Every page names the
        first page's resourceVersion; a token older than the history is `Gone`: list again
        from the first page. Without a limit, this is `list` plus the version to watch from."""
        ...

    def apply(
        self,
        obj: Obj,
        *,
        field_manager: str,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation = "Strict",
    ) -> Obj:
        """Server-side apply: create or update the fields `field_manager` owns.

        Fields this manager applied before and omits now are removed; a field owned by
        another manager with a different value is a `FieldConflict` unless `force`.
        A `metadata.resourceVersion` in `obj` is a precondition (`Conflict` when stale).
        Status is never written through apply. A value of the wrong type is `Invalid`; an
        unknown field too under `field_validation` `Strict` (kubectl's default), and is
        dropped under `Warn` and `Ignore` (Argo CD's `Validate=false`).
        """
        ...

    def update(self, obj: Obj, *, field_manager: str, dry_run: bool = False) -> Obj:
        """Replace an existing object's metadata and spec whole (Kubernetes' PUT), never its
        status. A `metadata.resourceVersion` in `obj` is a precondition (`Conflict` when
        stale); the fields the write changes become `field_manager`'s. `NotFound` when the
        object does not exist. `dry_run` returns the result without storing it."""
        ...

    def get_scale(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> Obj:
        """The `autoscaling/v1` Scale of a Deployment, ReplicaSet, StatefulSet or Rollout:
        `spec.replicas`, `status.replicas` and `status.selector` (a selector string), with
        the object's name, uid and resourceVersion. `NotFound` for a kind without one."""
        ...

    def update_scale(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        replicas: int,
        field_manager: str,
        resource_version: str | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """Set `spec.replicas` through the scale subresource and return the new Scale;
        `resource_version` (the object's) is a precondition. `dry_run` stores nothing."""
        ...

    def patch_status(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        status: Obj,
        *,
        resource_version: str | None = None,
    ) -> Obj:
        """Replace the status subresource; `resource_version` is a precondition."""
        ...

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: PropagationPolicy = "Background",
        uid: str | None = None,
        resource_version: str | None = None,
    ) -> None:
        """Delete, garbage-collecting dependents by `propagation_policy`. `uid` and
        `resource_version` are preconditions (Kubernetes' DeleteOptions.preconditions):
        `Conflict` when the live object is another one, or has changed since it was read."""
        ...

    def watch(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: float = 0.0,
    ) -> Iterator[WatchEvent]:
        """Events after `resource_version` (all current objects as ADDED when None),
        waiting up to `timeout_seconds` for new ones. A resourceVersion that is too old
        to resume from raises `Gone` (when the iterator is first advanced): list again
        (`list_page`) and watch from the list's `resource_version`."""
        ...
