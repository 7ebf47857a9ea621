"""Promotion through pull requests on a real Git remote, with a forge that merges the way
GitHub's squash merge does: one commit per promotion on the base branch, found again after a
restart, and rebuilt when the base branch moved under it."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pygit2
import pytest

from headway.model.promotion_pipeline import Environment, parse_promotion_pipeline
from headway.model.yamlload import Document
from headway.promotion.environment_repo import GitEnvironment
from headway.promotion.facts import FileChangedUnderGate
from headway.promotion.forge import Comment, ForgeConflict, Issue, PullRequest
from headway.promotion.forge_branch import PullRequestBranch, head_branch
from headway.promotion.record import PromotionSpec
from headway.promotion.trailers import promotion_of
from headway.source.git import GitRepository
from headway.source.git_commits import BotIdentity

VALUES = "# prod\nimage:\n  repository: registry.local/web\n  tag: v1  # moved by Headway\n"


class SquashingForge:
    """Pull requests on a bare repository; `merge` squashes the head onto the base branch
    with a three-way merge, as a forge does, and refuses a moved head or a conflict."""

    def __init__(self, remote: Path) -> None:
        self.repo = pygit2.Repository(str(remote))
        self.pulls: dict[int, PullRequest] = {}
        self.before_merge: Callable[[], None] = lambda: None
        self.refusal = ""  # a reason to refuse every merge (a required check not passed yet)

    def _tip(self, branch: str) -> pygit2.Commit:
        return self.repo.references[f"refs/heads/{branch}"].peel(pygit2.Commit)

    def find_pull_request(self, *, head: str) -> PullRequest | None:
        found = [pull for pull in self.pulls.values() if pull.head == head]
        return max(found, key=lambda pull: pull.number, default=None)

    def open_pull_request(self, *, head: str, base: str, title: str, body: str) -> PullRequest:
        number = len(self.pulls) + 1
        sha = str(self._tip(head).id)
        pull = PullRequest(number, f"pr/{number}", head, sha, base, True, False, "")
        self.pulls[number] = pull
        return pull

    def merge_pull_request(self, number: int, *, head_sha: str, title: str, message: str) -> str:
        self.before_merge()
        if self.refusal:
            raise ForgeConflict(self.refusal)
        pull = self.pulls[number]
        head, base = self._tip(pull.head), self._tip(pull.base)
        if str(head.id) != head_sha:
            raise ForgeConflict("Head branch was modified")
        ancestor = self.repo.merge_base(head.id, base.id)
        ancestor_tree = self.repo[ancestor].peel(pygit2.Commit).tree
        index = self.repo.merge_trees(ancestor_tree, base.tree, head.tree)
        if index.conflicts is not None:
            raise ForgeConflict("Pull Request is not mergeable")
        tree = index.write_tree(self.repo)
        who = pygit2.Signature("forge", "forge@x")
        full = f"{title}\n\n{message}"
        sha = self.repo.create_commit(f"refs/heads/{pull.base}", who, who, full, tree, [base.id])
        self.pulls[number] = replace(pull, open=False, merged=True, merge_commit=str(sha))
        return str(sha)

    def open_issue(self, *, title: str, body: str) -> Issue:
        raise NotImplementedError

    def find_issue(self, *, marker: str, opened_after: datetime) -> Issue | None:
        raise NotImplementedError

    def comments(self, number: int) -> list[Comment]:
        raise NotImplementedError

    def post_comment(self, number: int, body: str) -> Comment:
        raise NotImplementedError


def _git(path: Path, *args: str) -> None:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@x", *args]
    subprocess.run(command, cwd=path, check=True, capture_output=True)


def _environment() -> Environment:
    raw = {
        "apiVersion": "headway.dev/v1alpha1",
        "kind": "PromotionPipeline",
        "metadata": {"name": "web", "namespace": "argocd"},
        "spec": {
            "image": "registry.local/web",
            "environments": [
                {
                    "name": "prod",
                    "application": "web-prod",
                    "target": {"file": "values-prod.yaml", "helm": {"key": "image.tag"}},
                }
            ],
        },
    }
    pipeline, problems = parse_promotion_pipeline(Document(raw, "pipeline", 0, 0))
    assert pipeline is not None and not problems
    return pipeline.spec.environments[0]


def _spec(name: str, image: str) -> PromotionSpec:
    return PromotionSpec(
        name=name,
        namespace="argocd",
        pipeline="web",
        environment="prod",
        image=image,
        author="dev",
        requested_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, SquashingForge, GitEnvironment, PullRequestBranch]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "values-prod.yaml").write_text(VALUES)
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", ".")
    _git(work, "commit", "-qm", "init")
    remote = tmp_path / "remote.git"
    _git(tmp_path, "clone", "-q", "--bare", str(work), str(remote))
    forge = SquashingForge(remote)
    cache = GitRepository(str(remote), tmp_path / "cache")
    writer = PullRequestBranch(cache, "main", BotIdentity(), forge)
    repo = GitEnvironment(writer=writer, env=_environment(), repository="registry.local/web")
    return remote, forge, repo, writer


def _main_log(remote: Path) -> list[str]:
    repo = pygit2.Repository(str(remote))
    tip = repo.references["refs/heads/main"].peel(pygit2.Commit)
    return [c.message for c in repo.walk(tip.id)]


def test_a_promotion_is_one_squashed_commit_with_its_trailers(setup: tuple) -> None:  # type: ignore[type-arg]
    remote, forge, repo, _ = setup
    sha = repo.commit_image("registry.local/web:v2", promotion=_spec("p1", "v2"), previous="")
    assert [pull.head for pull in forge.pulls.values()] == ["headway/p1"]
    messages = _main_log(remote)
    assert len(messages) == 2 and promotion_of(messages[0]) == "p1"
    assert messages[0].startswith("promote web prod: registry.local/web:v2\n\n")
    assert repo.find_commit("p1") == sha and repo.pinned() == "registry.local/web:v2"
    blob = pygit2.Repository(str(remote)).revparse_single("main:values-prod.yaml")
    assert blob.data.decode() == VALUES.replace("tag: v1", "tag: v2")


def test_a_resumed_write_finds_the_merged_pull_request(setup: tuple) -> None:  # type: ignore[type-arg]
    remote, forge, repo, writer = setup
    sha = repo.commit_image("registry.local/web:v2", promotion=_spec("p1", "v2"), previous="")
    # A controller killed after the merge, before it recorded the commit, writes again:
    message = _main_log(remote)[0]
    tip = writer.refresh()
    again = writer.write(parent=tip, edits={"values-prod.yaml": b"anything"}, message=message)
    assert again == sha
    assert len(forge.pulls) == 1 and len(_main_log(remote)) == 2


class Killed(BaseException):
    """The controller process dying: nothing after this point runs, nothing catches it."""


def test_killed_after_the_pull_request_was_opened_merges_that_one(setup: tuple) -> None:  # type: ignore[type-arg]
    remote, forge, repo, _ = setup
    kills = [Killed()]

    def killed_once() -> None:
        if kills:
            raise kills.pop()

    forge.before_merge = killed_once  # the pull request is open; the merge never happened
    with pytest.raises(Killed):
        repo.commit_image("registry.local/web:v2", promotion=_spec("p1", "v2"), previous="")
    assert [pull.open for pull in forge.pulls.values()] == [True]
    sha = repo.commit_image("registry.local/web:v2", promotion=_spec("p1", "v2"), previous="")
    assert [(pull.number, pull.merged) for pull in forge.pulls.values()] == [(1, True)]
    assert len(_main_log(remote)) == 2 and repo.find_commit("p1") == sha


def test_a_base_that_moved_and_conflicts_is_rebuilt_on_the_new_tip(setup: tuple) -> None:  # type: ignore[type-arg]
    remote, forge, repo, _ = setup
    hand = pygit2.Repository(str(remote))

    def someone_pins_v9_by_hand() -> None:
        forge.before_merge = lambda: None
        base = hand.references["refs/heads/main"].peel(pygit2.Commit)
        blob = hand.create_blob(VALUES.replace("tag: v1", "tag: v9").encode())
        builder = hand.TreeBuilder(base.tree)
        builder.insert("values-prod.yaml", blob, pygit2.enums.FileMode.BLOB)
        who = pygit2.Signature("human", "h@x")
        hand.create_commit("refs/heads/main", who, who, "pin v9", builder.write(), [base.id])

    forge.before_merge = someone_pins_v9_by_hand
    sha = repo.commit_image("registry.local/web:v3", promotion=_spec("p2", "v3"), previous="")
    assert len(forge.pulls) == 1  # the same pull request, its branch rebuilt and merged
    assert [promotion_of(m) for m in _main_log(remote)] == ["p2", "", ""]
    assert repo.find_commit("p2") == sha and repo.pinned() == "registry.local/web:v3"


def test_branch_names_follow_the_promotion() -> None:
    assert head_branch("s\n\nHeadway-Promotion: web prod/1\n") == "headway/web-prod-1"
    revert = "s\n\nHeadway-Promotion: p1\nHeadway-Revert-Of: " + "a" * 40 + "\n"
    assert head_branch(revert) == "headway/p1-revert"
    assert head_branch("no trailers").startswith("headway/change-")


def test_a_merge_refused_by_a_check_is_shown_and_retried_on_the_same_pull_request(
    setup: tuple,  # type: ignore[type-arg]
) -> None:
    remote, forge, repo, _ = setup
    forge.refusal = 'HTTP 405: Required status check "ci" is expected.'
    with pytest.raises(ForgeConflict, match="Required status check"):
        repo.commit_image("registry.local/web:v2", promotion=_spec("p1", "v2"), previous="")
    assert len(_main_log(remote)) == 1 and [p.open for p in forge.pulls.values()] == [True]
    forge.refusal = ""
    sha = repo.commit_image("registry.local/web:v2", promotion=_spec("p1", "v2"), previous="")
    assert len(forge.pulls) == 1 and repo.find_commit("p1") == sha


def test_a_hand_edit_landing_before_the_merge_is_not_merged_under_the_judged_file(
    setup: tuple,  # type: ignore[type-arg]
) -> None:
    remote, forge, repo, _ = setup
    judged = repo.file_version()
    hand = pygit2.Repository(str(remote))
    opened = forge.open_pull_request

    def open_while_someone_edits(*, head: str, base: str, title: str, body: str) -> PullRequest:
        pull = opened(head=head, base=base, title=title, body=body)
        tip = hand.references["refs/heads/main"].peel(pygit2.Commit)
        edited = VALUES.replace("# prod\n", "# prod: by hand\n")  # lines apart: no conflict
        blob = hand.create_blob(edited.encode())
        builder = hand.TreeBuilder(tip.tree)
        builder.insert("values-prod.yaml", blob, pygit2.enums.FileMode.BLOB)
        who = pygit2.Signature("human", "h@x")
        hand.create_commit("refs/heads/main", who, who, "by hand", builder.write(), [tip.id])
        return pull

    forge.open_pull_request = open_while_someone_edits  # type: ignore[method-assign]
    with pytest.raises(FileChangedUnderGate):
        repo.commit_image(
            "registry.local/web:v2", promotion=_spec("p1", "v2"), previous="", file_version=judged
        )
    assert [promotion_of(m) for m in _main_log(remote)] == ["", ""]  # nothing merged
    assert not any(pull.merged for pull in forge.pulls.values())
