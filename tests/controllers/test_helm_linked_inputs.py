"""A Helm render reads a value file that is a symlink through the link, so the file it leads
to is an input of the render: changing that file renders the app again (before: the render
was kept under the link's own content id, which does not move, and the app served the old
values; found by test_carry_over_random_commits.py)."""

from __future__ import annotations

from pathlib import Path

from app_harness import application, make_harness
from test_app_commit_reuse import CHART, commit, commit_link, data, desired

from headway.clock import VirtualClock
from source.gitrepos import require_extra


def test_the_file_a_value_file_link_leads_to_is_an_input(
    tmp_path: Path, clock: VirtualClock
) -> None:
    require_extra("helm_python", "helm")
    h = make_harness(tmp_path, clock, {**CHART, "shared/values.yaml": "flag: one\n"})
    commit_link(h, "envs/prod.yaml", "../shared/values.yaml")
    app = application("web", h.remote.url, path="charts/web")
    app["spec"]["source"]["helm"] = {"valueFiles": ["../../envs/prod.yaml"]}
    h.install(app)
    assert data(desired(h, "web"), "web") == {"flag": "one"}
    commit(h, {"shared/values.yaml": "flag: two\n"})
    assert data(desired(h, "web"), "web") == {"flag": "two"}
