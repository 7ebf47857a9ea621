"""Issue 11: the install's ClusterRole is the engine's access table, and the table covers
what the controllers touch, so the RBAC cannot drift from the code."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.engine import ALL_LOOPS, Engine, EngineSettings, controller_names
from headway.engine.access import READ, REQUIRED_ACCESS, Access, cluster_role_rules
from install.conftest import by_kind


def _role(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    [role] = [r for r in by_kind(objects, "ClusterRole") if r["metadata"]["name"] == name]
    return role


def _grants(rules: list[dict[str, Any]], entry: Access, verb: str) -> bool:
    return any(
        entry.group in rule["apiGroups"] and entry.resource in rule["resources"]
        and verb in rule["verbs"]
        for rule in rules
    )


@pytest.mark.parametrize("render", ["kustomized", "helmed"])
def test_the_controller_role_is_the_access_table(
    render: str, request: pytest.FixtureRequest
) -> None:
    objects = request.getfixturevalue(render)
    rules = _role(objects, "headway-controller")["rules"]
    assert rules == cluster_role_rules()  # nothing more, nothing less, in table order
    for entry in REQUIRED_ACCESS:
        for verb in entry.verbs:
            assert _grants(rules, entry, verb), (entry.resource, verb)


@pytest.mark.parametrize("render", ["kustomized", "helmed"])
def test_both_roles_are_bound_to_the_deployments_service_account(
    render: str, request: pytest.FixtureRequest
) -> None:
    objects = request.getfixturevalue(render)
    [deployment] = by_kind(objects, "Deployment")
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    namespace = deployment["metadata"]["namespace"]
    bound = {b["roleRef"]["name"] for b in by_kind(objects, "ClusterRoleBinding")
             if {"kind": "ServiceAccount", "name": account, "namespace": namespace}
             in b["subjects"]}
    assert bound == {"headway-controller", "headway-sync"}


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[Engine]:
    with LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store:
        async with httpx2.AsyncClient() as http:
            settings = EngineSettings(state_dir=tmp_path / "state", loops=ALL_LOOPS)
            yield Engine(cluster=store, clock=VirtualClock(), http=http, settings=settings)


async def test_every_kind_a_controller_watches_may_be_listed_and_watched(engine: Engine) -> None:
    """The Application loop also watches the kinds apps deploy (Deployments, HPAs...): those
    are the sync role's; everything else must be in the engine's own table."""
    from headway.controllers.app.steps import MANAGED_KINDS

    table = {(e.api_version, e.kind): e for e in REQUIRED_ACCESS if "/" not in e.resource}
    watched = {w for name in controller_names(ALL_LOOPS) for w in engine.controller(name).watches}
    assert watched, "no controller watches anything: the test would prove nothing"
    for api_version, kind in sorted(watched - set(MANAGED_KINDS)):
        entry = table.get((api_version, kind))
        assert entry is not None, f"{api_version} {kind} is watched but not in REQUIRED_ACCESS"
        assert set(READ) <= set(entry.verbs), f"{kind}: {entry.verbs}"
