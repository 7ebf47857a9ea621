"""Finding the commit that set an image, an earlier revert of it, and the edit at the tip."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitwork import WorkRepo, rollout_yaml

from headway.source.image_history import (
    ImageRevertRefused,
    PathScope,
    find_image_change,
    find_revert_of,
    image_revert_edits,
)

SCOPE = PathScope(directories=("apps/web",))


@pytest.fixture
def work(tmp_path: Path) -> WorkRepo:
    repo = WorkRepo(tmp_path / "repo")
    repo.commit({"apps/web/rollout.yaml": rollout_yaml("v1"), "README.md": "x\n"}, "web v1")
    repo.commit({"apps/web/rollout.yaml": rollout_yaml("v2")}, "web v2")
    repo.commit({"apps/other/cm.yaml": "kind: ConfigMap\n"}, "unrelated")
    return repo


def test_finds_the_commit_that_set_the_image_not_a_later_one(work: WorkRepo) -> None:
    bump = work.commit(
        {"apps/web/rollout.yaml": rollout_yaml("v3", greeting="hi")}, "web v3, new greeting"
    )
    work.commit({"apps/other/cm.yaml": "kind: ConfigMap\n# later\n"}, "later, elsewhere")
    change = find_image_change(work.repo, tip=work.tip(), scope=SCOPE, image="shop/web:v3")
    assert change is not None
    assert (change.commit, change.file, change.subject) == (
        bump,
        "apps/web/rollout.yaml",
        "web v3, new greeting",
    )
    assert [s.before for s in change.sites] == ["shop/web:v2"]


def test_the_edit_takes_back_only_the_image_and_keeps_the_rest_of_the_commit(
    work: WorkRepo,
) -> None:
    work.commit({"apps/web/rollout.yaml": rollout_yaml("v3", greeting="hi")}, "v3 + greeting")
    change = find_image_change(work.repo, tip=work.tip(), scope=SCOPE, image="shop/web:v3")
    assert change is not None
    edits = image_revert_edits(work.repo, tip=work.tip(), change=change, image="shop/web:v3")
    assert edits == {"apps/web/rollout.yaml": rollout_yaml("v2", greeting="hi").encode()}


def test_outside_the_scope_nothing_is_found(work: WorkRepo) -> None:
    work.commit({"apps/web/rollout.yaml": rollout_yaml("v3")}, "v3")
    scope = PathScope(directories=("apps/other",))
    assert find_image_change(work.repo, tip=work.tip(), scope=scope, image="shop/web:v3") is None


def test_a_revert_is_found_by_its_trailer(work: WorkRepo) -> None:
    bump = work.commit({"apps/web/rollout.yaml": rollout_yaml("v3")}, "v3")
    assert find_revert_of(work.repo, tip=work.tip(), commit=bump) is None
    revert = work.commit(
        {"apps/web/rollout.yaml": rollout_yaml("v2")},
        f"Revert web\n\nHeadway-Revert-Of: {bump}\n",
    )
    work.commit({"README.md": "y\n"}, "later")
    assert find_revert_of(work.repo, tip=work.tip(), commit=bump) == revert
    # the history walk still finds the bump (the revert removed v3, it did not add it)
    change = find_image_change(work.repo, tip=work.tip(), scope=SCOPE, image="shop/web:v3")
    assert change is not None and change.commit == bump


def test_a_moved_branch_is_refused_with_the_place(work: WorkRepo) -> None:
    work.commit({"apps/web/rollout.yaml": rollout_yaml("v3")}, "v3")
    change = find_image_change(work.repo, tip=work.tip(), scope=SCOPE, image="shop/web:v3")
    assert change is not None
    work.commit({"apps/web/rollout.yaml": rollout_yaml("v4")}, "v4 on top")
    with pytest.raises(ImageRevertRefused, match=r"branch moved: apps/web/rollout\.yaml:15"):
        image_revert_edits(work.repo, tip=work.tip(), change=change, image="shop/web:v3")


def test_an_image_with_no_earlier_value_is_refused(tmp_path: Path) -> None:
    repo = WorkRepo(tmp_path / "r")
    repo.commit({"apps/web/rollout.yaml": rollout_yaml("v3")}, "first")
    change = find_image_change(repo.repo, tip=repo.tip(), scope=SCOPE, image="shop/web:v3")
    assert change is not None and not change.revertible
    with pytest.raises(ImageRevertRefused, match="no earlier value"):
        image_revert_edits(repo.repo, tip=repo.tip(), change=change, image="shop/web:v3")
