"""Which Applications a commit touches: the ordering core of the source watcher."""

from __future__ import annotations

from typing import Any

from headway.review.commit_order import commit_order, touched_by_commit

REPO = "file:///git/config"
OTHER = "https://charts.example/helm"


def app(name: str, *sources: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"sources": list(sources)}}


def test_apps_reading_a_changed_path_go_first_each_group_in_its_order() -> None:
    apps = [app(f"app-{i}", {"repoURL": REPO, "path": f"apps/app-{i}"}) for i in range(5)]
    ordered = commit_order(apps, {REPO: ("apps/app-3/x.yaml",)}, libraries={})
    assert [a["metadata"]["name"] for a in ordered] == ["app-3", "app-0", "app-1", "app-2", "app-4"]


def test_a_values_file_read_through_a_ref_touches_the_app() -> None:
    helm = app(
        "web",
        {"repoURL": OTHER, "chart": "web", "helm": {"valueFiles": ["$values/env/prod.yaml"]}},
        {"repoURL": REPO, "ref": "values"},
    )
    assert touched_by_commit(helm, {REPO: ("env/prod.yaml",)})
    assert not touched_by_commit(helm, {REPO: ("env/staging.yaml",)})


def test_library_paths_outside_the_source_touch_the_app() -> None:
    kustomized = app("k", {"repoURL": REPO, "path": "apps/k"})
    assert not touched_by_commit(kustomized, {REPO: ("base/cm.yaml",)})
    assert touched_by_commit(kustomized, {REPO: ("base/cm.yaml",)}, library=("base",))


def test_unknown_changes_count_every_app_of_the_repository_and_none_of_others() -> None:
    mine = app("mine", {"repoURL": REPO, "path": "a"})
    theirs = app("theirs", {"repoURL": "file:///git/other", "path": "a"})
    assert touched_by_commit(mine, {REPO: None})
    assert not touched_by_commit(theirs, {REPO: None})
