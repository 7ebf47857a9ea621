"""The checks a write passes before the store takes it: resourceVersion and uid
preconditions, and no new finalizers on an object being deleted."""

from __future__ import annotations

from headway.cluster.errors import Conflict, Invalid, StaleVersion
from headway.cluster.local.api.objects import ObjectKey
from headway.model.obj import Obj

__all__ = [
    "check_no_new_finalizers",
    "check_preconditions",
    "check_version",
    "resource_version_of",
    "stale",
]


def resource_version_of(obj: Obj) -> str:
    return str(obj["metadata"].get("resourceVersion", ""))


def stale(key: ObjectKey, given: str, live: Obj) -> str:
    return (
        f"{key} has been modified: resourceVersion {given} is stale "
        f"(now {resource_version_of(live)}); read it again and retry"
    )


def check_version(key: ObjectKey, given: str | None, live: Obj) -> None:
    """`StaleVersion` when a resourceVersion was given and the live object is at another."""
    if given is not None and given != resource_version_of(live):
        raise StaleVersion(stale(key, given, live))


def check_preconditions(obj: Obj, live: Obj | None, key: ObjectKey) -> None:
    meta = obj["metadata"]
    given_rv, given_uid = meta.get("resourceVersion"), meta.get("uid")
    if live is None:
        if given_rv or given_uid:
            raise Conflict(f"{key} does not exist, but the write carries a precondition")
        return
    if given_rv and str(given_rv) != resource_version_of(live):
        raise StaleVersion(stale(key, str(given_rv), live))
    if given_uid and given_uid != live["metadata"]["uid"]:
        raise Conflict(f"{key}: uid precondition {given_uid} does not match the live object")


def check_no_new_finalizers(live: Obj, new: Obj, key: ObjectKey) -> None:
    """As in Kubernetes, an object being deleted may lose finalizers but gain none."""
    if "deletionTimestamp" not in live["metadata"]:
        return
    before = set(live["metadata"].get("finalizers") or [])
    added = [f for f in new["metadata"].get("finalizers") or [] if f not in before]
    if added:
        raise Invalid(
            f"{key}: metadata.finalizers: no new finalizers can be added while the object "
            f"is being deleted (adding {', '.join(added)})"
        )
