"""Garbage-collection decisions for one object at a time, without a store."""

from __future__ import annotations

from typing import Any

from headway.cluster.local.api.gc import (
    CRD_FINALIZER,
    FOREGROUND_FINALIZER,
    NAMESPACE_FINALIZER,
    DropFinalizer,
    DropOwnerReferences,
    Purge,
    Revisit,
    StartDeletion,
    decide,
    finalizers_for_deletion,
)
from headway.model.obj import Obj


def obj(uid: str, *, deleting: bool = False, finalizers: tuple[str, ...] = (),
        owners: tuple[tuple[str, bool], ...] = (), kind: str = "ConfigMap",
        api_version: str = "v1") -> Obj:
    meta: dict[str, Any] = {"name": uid, "uid": uid}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if finalizers:
        meta["finalizers"] = list(finalizers)
    if owners:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": o,
                                    "uid": o, "blockOwnerDeletion": b} for o, b in owners]
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def test_live_object_with_live_owner_is_left_alone() -> None:
    child = obj("c", owners=(("o", False),))
    assert decide(child, owners={"o": obj("o")}, dependents=[]) == []


def test_dependent_whose_owners_are_all_gone_is_deleted() -> None:
    child = obj("c", owners=(("o1", False), ("o2", False)))
    assert decide(child, owners={"o1": None, "o2": None}, dependents=[]) == [
        StartDeletion("c", "Background")]
    assert decide(child, owners={"o1": None, "o2": obj("o2")}, dependents=[]) == [
        DropOwnerReferences("c", ("o1",))]


def test_owner_in_foreground_deletion_takes_its_dependents_along() -> None:
    waiting = obj("o", deleting=True, finalizers=(FOREGROUND_FINALIZER,))
    child = obj("c", owners=(("o", True),))
    assert decide(child, owners={"o": waiting}, dependents=[]) == [
        StartDeletion("c", "Background")]
    assert decide(child, owners={"o": waiting}, dependents=[], has_dependents=True) == [
        StartDeletion("c", "Foreground")]
    shared = obj("s", owners=(("o", True), ("p", False)))
    assert decide(shared, owners={"o": waiting, "p": obj("p")}, dependents=[]) == [
        DropOwnerReferences("s", ("o",))]
    # An owner deleted in the background but held by a finalizer is still solid.
    held = obj("o", deleting=True, finalizers=("example.com/x",))
    assert decide(child, owners={"o": held}, dependents=[]) == []


def test_deleting_without_finalizers_is_purged() -> None:
    assert decide(obj("x", deleting=True), owners={}, dependents=[]) == [Purge("x")]


def test_other_finalizers_hold() -> None:
    held = obj("x", deleting=True, finalizers=("example.com/f",))
    assert decide(held, owners={}, dependents=[]) == []


def test_foreground_deletes_dependents_and_waits_for_blockers() -> None:
    owner = obj("o", deleting=True, finalizers=(FOREGROUND_FINALIZER,))
    blocker = obj("b", owners=(("o", True),))
    loose = obj("l", owners=(("o", False),))
    assert decide(owner, owners={}, dependents=[blocker, loose]) == [
        Revisit("b"), Revisit("l")]
    going = obj("b", deleting=True, finalizers=("x",), owners=(("o", True),))
    assert decide(owner, owners={}, dependents=[going]) == []
    assert decide(owner, owners={}, dependents=[loose]) == [
        Revisit("l"), DropFinalizer("o", FOREGROUND_FINALIZER)]


def test_containers_empty_themselves_first() -> None:
    namespace = obj("ns", kind="Namespace", deleting=True, finalizers=(NAMESPACE_FINALIZER,))
    inside = obj("in")
    assert decide(namespace, owners={}, dependents=[], contents=[inside]) == [
        StartDeletion("in", "Background")]
    assert decide(namespace, owners={}, dependents=[], contents=[]) == [
        DropFinalizer("ns", NAMESPACE_FINALIZER)]


def test_finalizers_for_deletion() -> None:
    assert finalizers_for_deletion(obj("x", finalizers=("a",)), "Background") == ["a"]
    assert finalizers_for_deletion(obj("x"), "Foreground") == [FOREGROUND_FINALIZER]
    assert finalizers_for_deletion(obj("n", kind="Namespace"), "Background") == [
        NAMESPACE_FINALIZER]
    crd = obj("c", kind="CustomResourceDefinition", api_version="apiextensions.k8s.io/v1")
    assert finalizers_for_deletion(crd, "Orphan") == [CRD_FINALIZER]
