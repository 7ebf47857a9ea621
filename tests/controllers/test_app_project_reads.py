"""Each version of an AppProject is parsed once, and every change of it is seen.

The Application controller read and parsed its project on every step; it now keeps each
parse by the project's uid and resourceVersion. Counted in parses (not timed), and checked
against what the project says: a project narrowed after a step refuses the app at the next
step, a project deleted and created again under the same name is read afresh, and an invalid
project stays an error at every step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_harness import APPS_NS, Harness, application, config_map, make_harness, manifests

from headway.clock import VirtualClock
from headway.controllers.app import project as project_module
from headway.controllers.app.controller import APP_API_VERSION
from headway.model.appproject import parse_appproject


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of every AppProject the controller parses."""
    seen: list[str] = []

    def counted(document: Any) -> Any:
        seen.append(str(document.obj["metadata"]["name"]))
        return parse_appproject(document)

    monkeypatch.setattr(project_module, "parse_appproject", counted)
    return seen


def _harness(tmp_path: Path, clock: VirtualClock) -> Harness:
    h = make_harness(tmp_path, clock, {"apps/web/cm.yaml": manifests(config_map("web"))})
    h.install(application("web", h.remote.url, path="apps/web"))
    return h


def _project(h: Harness) -> dict[str, Any]:
    return h.store.get(APP_API_VERSION, "AppProject", "default", APPS_NS)


def _conditions(h: Harness) -> list[str]:
    return [str(c["message"]) for c in h.status("web").get("conditions") or []]


def test_steps_parse_the_project_once_per_version(
    tmp_path: Path, clock: VirtualClock, parses: list[str]
) -> None:
    h = _harness(tmp_path, clock)
    for _ in range(3):
        h.step("web")
    assert parses == ["default"]
    assert _conditions(h) == []

    narrowed = _project(h)
    narrowed["spec"]["destinations"] = [{"server": "*", "namespace": "elsewhere"}]
    h.store.apply(narrowed, field_manager="admin")
    h.step("web")
    h.step("web")
    assert parses == ["default", "default"]
    assert any("elsewhere" in c or "not permitted" in c for c in _conditions(h)), _conditions(h)


def test_a_project_made_again_under_its_name_is_read_afresh(
    tmp_path: Path, clock: VirtualClock, parses: list[str]
) -> None:
    h = _harness(tmp_path, clock)
    h.step("web")
    again = _project(h)
    h.store.delete(APP_API_VERSION, "AppProject", "default", APPS_NS)
    again["metadata"] = {"name": "default", "namespace": APPS_NS}
    again["spec"]["sourceRepos"] = ["https://example.com/only.git"]
    h.store.apply(again, field_manager="admin")
    h.step("web")
    assert parses == ["default", "default"]
    assert any("only.git" in c or "not permitted" in c for c in _conditions(h)), _conditions(h)


def test_an_invalid_project_is_an_error_at_every_step(
    tmp_path: Path, clock: VirtualClock, parses: list[str]
) -> None:
    h = _harness(tmp_path, clock)
    broken = _project(h)
    broken["spec"]["destinations"] = "everywhere"
    h.store.apply(broken, field_manager="admin")
    for _ in range(2):
        h.step("web")
        assert any("AppProject argocd/default is invalid" in c for c in _conditions(h))
    assert parses == ["default", "default"]
