"""A CustomResourceDefinition is established in the write that creates it (its kind is
served from that write on), with the status kube-apiserver gives it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from headway.clock import VirtualClock
from headway.cluster.local.api.store import LocalCluster


def crd(*, versions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"]},
                 "versions": versions or [{"name": "v1", "served": True, "storage": True}]},
    }


def conditions(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in obj["status"]["conditions"]}


def test_a_new_crd_is_established_with_its_names_accepted(tmp_path: Path) -> None:
    clock = VirtualClock()
    with LocalCluster(tmp_path / "db", clock) as store:
        live = store.apply(crd(), field_manager="test")
        found = conditions(live)
        assert {t: (c["status"], c["reason"]) for t, c in found.items()} == {
            "NamesAccepted": ("True", "NoConflicts"),
            "Established": ("True", "InitialNamesAccepted")}
        assert live["status"]["acceptedNames"] == {
            "kind": "Widget", "listKind": "WidgetList", "plural": "widgets",
            "singular": "widget", "shortNames": ["wd"]}
        assert live["status"]["storedVersions"] == ["v1"]
        assert store.get("apiextensions.k8s.io/v1", "CustomResourceDefinition",
                         "widgets.example.com") == live


def test_a_change_keeps_the_transition_time_and_every_stored_version(tmp_path: Path) -> None:
    clock = VirtualClock()
    with LocalCluster(tmp_path / "db", clock) as store:
        first = store.apply(crd(), field_manager="test")
        clock.advance(300)
        second = store.apply(crd(versions=[
            {"name": "v1", "served": True, "storage": False},
            {"name": "v2", "served": True, "storage": True}]), field_manager="test")
        established = conditions(second)["Established"]["lastTransitionTime"]
        assert established == conditions(first)["Established"]["lastTransitionTime"]
        assert second["status"]["storedVersions"] == ["v1", "v2"]
