"""Garbage collection decisions: finalizers, owner references, propagation policies.

Purely computational. The store examines one object at a time (the object, its owners as
they exist now, and its dependents) and carries out the actions `decide` returns:

* an object marked for deletion (`deletionTimestamp`) with no finalizers left is purged;
* an owner in foreground deletion (`foregroundDeletion` finalizer) has its dependents
  looked at, and loses that finalizer once no dependent with `blockOwnerDeletion` remains;
* a dependent with no solid owner left (all gone, or in foreground deletion) is deleted;
  one with a solid owner stays and drops its references to the others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from headway.cluster.protocol import PropagationPolicy
from headway.model.obj import Obj

__all__ = [
    "CRD_FINALIZER",
    "FOREGROUND_FINALIZER",
    "NAMESPACE_FINALIZER",
    "DropFinalizer",
    "DropOwnerReferences",
    "GcAction",
    "Purge",
    "Revisit",
    "StartDeletion",
    "blocks_owner",
    "container_finalizer",
    "decide",
    "finalizers_for_deletion",
    "is_deleting",
    "owner_uids",
    "waits_for_dependents",
]

FOREGROUND_FINALIZER = "foregroundDeletion"
# Containers empty themselves before they go: a Namespace of its objects (Kubernetes keeps
# this one in `spec.finalizers`), a CustomResourceDefinition of its custom resources.
NAMESPACE_FINALIZER = "kubernetes"
CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_CONTAINER_FINALIZERS = {
    ("v1", "Namespace"): NAMESPACE_FINALIZER,
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): CRD_FINALIZER,
}


@dataclass(frozen=True)
class Purge:
    """Remove the object for good."""

    uid: str
    kind: Literal["purge"] = "purge"


@dataclass(frozen=True)
class StartDeletion:
    """Begin deleting the object (a dependent, or an orphan) with `policy`."""

    uid: str
    policy: PropagationPolicy
    kind: Literal["start"] = "start"


@dataclass(frozen=True)
class DropFinalizer:
    uid: str
    finalizer: str
    kind: Literal["drop"] = "drop"


@dataclass(frozen=True)
class DropOwnerReferences:
    """Remove the references to these owners (gone, or waiting for their dependents)."""

    uid: str
    owner_uids: tuple[str, ...]
    kind: Literal["unown"] = "unown"


@dataclass(frozen=True)
class Revisit:
    """Decide again for this object (a dependent of an owner in foreground deletion)."""

    uid: str
    kind: Literal["revisit"] = "revisit"


GcAction = Purge | StartDeletion | DropFinalizer | DropOwnerReferences | Revisit


def _meta(obj: Obj) -> dict[str, Any]:
    meta: dict[str, Any] = obj.get("metadata") or {}
    return meta


def is_deleting(obj: Obj) -> bool:
    return "deletionTimestamp" in _meta(obj)


def owner_uids(obj: Obj) -> list[str]:
    return [str(r["uid"]) for r in _meta(obj).get("ownerReferences") or []]


def blocks_owner(dependent: Obj, owner_uid: str) -> bool:
    """Whether `dependent` holds up the foreground deletion of the owner `owner_uid`."""
    return any(
        r.get("uid") == owner_uid and bool(r.get("blockOwnerDeletion"))
        for r in _meta(dependent).get("ownerReferences") or []
    )


def finalizers_for_deletion(obj: Obj, policy: PropagationPolicy) -> list[str]:
    """The finalizers an object carries once deletion with `policy` starts."""
    finalizers = list(_meta(obj).get("finalizers") or [])
    container = container_finalizer(obj)
    if container and container not in finalizers:
        finalizers.append(container)
    if policy == "Foreground" and FOREGROUND_FINALIZER not in finalizers:
        finalizers.append(FOREGROUND_FINALIZER)
    return finalizers


def container_finalizer(obj: Obj) -> str | None:
    """The finalizer that makes `obj` wait until what it contains is gone, if it has one."""
    return _CONTAINER_FINALIZERS.get((str(obj.get("apiVersion")), str(obj.get("kind"))))


def decide(
    obj: Obj,
    *,
    owners: Mapping[str, Obj | None],
    dependents: Sequence[Obj],
    contents: Sequence[Obj] = (),
    has_dependents: bool = False,
) -> list[GcAction]:
    """What garbage collection does next for `obj`.

    `owners` maps each owner uid in `obj`'s ownerReferences to the owner, or None when no
    object with that uid exists; `dependents` are the objects that name `obj` as an owner;
    `contents` are the objects a deleting container (Namespace, CRD) still holds;
    `has_dependents` says whether a live object is itself an owner (only asked when one of
    its owners waits for it).
    """
    uid = str(_meta(obj)["uid"])
    if is_deleting(obj):
        return [*_decide_contents(obj, uid, contents), *_decide_deleting(obj, uid, dependents)]
    return _decide_dependent(obj, uid, owners, has_dependents=has_dependents)


def _decide_dependent(
    obj: Obj, uid: str, owners: Mapping[str, Obj | None], *, has_dependents: bool
) -> list[GcAction]:
    """Like the Kubernetes collector: owners are gone (dangling), in foreground deletion
    (waiting for their dependents) or solid. With a solid owner the object stays and lets go
    of the others; without one it is deleted."""
    refs = owner_uids(obj)
    dangling = [o for o in refs if owners.get(o) is None]
    waiting = [o for o in refs if o not in dangling and waits_for_dependents(owners[o])]
    if not dangling and not waiting:
        return []
    if len(dangling) + len(waiting) < len(refs):
        return [DropOwnerReferences(uid, tuple(dangling + waiting))]
    # Foreground only where it matters: an owner waits and this object has dependents.
    return [StartDeletion(uid, "Foreground" if waiting and has_dependents else "Background")]


def waits_for_dependents(owner: Obj | None) -> bool:
    """Whether `owner` is in foreground deletion."""
    return (
        owner is not None
        and is_deleting(owner)
        and FOREGROUND_FINALIZER in (_meta(owner).get("finalizers") or [])
    )


def _decide_contents(obj: Obj, uid: str, contents: Sequence[Obj]) -> list[GcAction]:
    finalizer = container_finalizer(obj)
    if finalizer is None or finalizer not in (_meta(obj).get("finalizers") or []):
        return []
    if not contents:
        return [DropFinalizer(uid, finalizer)]
    return [StartDeletion(str(_meta(c)["uid"]), "Background") for c in contents
            if not is_deleting(c)]


def _decide_deleting(obj: Obj, uid: str, dependents: Sequence[Obj]) -> list[GcAction]:
    finalizers = _meta(obj).get("finalizers") or []
    if not finalizers:
        return [Purge(uid)]
    if FOREGROUND_FINALIZER not in finalizers:
        return []
    # Each dependent decides for itself (it may have another, solid owner).
    actions: list[GcAction] = [
        Revisit(str(_meta(d)["uid"])) for d in dependents if not is_deleting(d)
    ]
    if not any(blocks_owner(d, uid) for d in dependents):
        actions.append(DropFinalizer(uid, FOREGROUND_FINALIZER))
    return actions
