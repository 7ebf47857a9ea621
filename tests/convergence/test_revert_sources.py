"""Reverts through Application sources: Helm `$values` files, Kustomize bases, and a remote
branch in Headway's Git cache that is pushed to (and moves under us once)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pygit2
import pytest
from gitwork import WorkRepo

from headway.controllers.convergence.facts import FailedMetric, FailedRelease, ImageSwap
from headway.controllers.convergence.git import BranchWriter, RemoteBranch, open_branch
from headway.controllers.convergence.revert import RevertResult, revert_release
from headway.source.errors import PushRejected
from headway.source.git import GitCache
from headway.source.git_commits import BotIdentity
from headway.source.image_scope import application_scopes

VALUES = """\
image:
  repository: shop/web
  tag: {tag}  # set by the release pipeline
resources:
  limits: {{cpu: {cpu}}}
"""


def release(stable: str, failed: str) -> FailedRelease:
    return FailedRelease(
        namespace="shop",
        rollout="web",
        pod_hash="canary1",
        stable_hash="stable1",
        swaps=(ImageSwap("web", stable, failed),),
        analysis_run="web-canary1-2",
        failed_metrics=(FailedMetric("error-ratio", "Failed", "0.3", ""),),
        abort_message="RolloutAborted",
    )


def reader(cache: GitCache, identity: BotIdentity):  # type: ignore[no-untyped-def]
    def read(url: str, revision: str, path: str) -> str | None:
        writer = open_branch(cache, url, revision, identity)
        tree = writer.repo[writer.refresh()].peel(pygit2.Commit).tree
        try:
            blob = tree[path]
        except KeyError:
            return None
        assert isinstance(blob, pygit2.Blob)
        return blob.data.decode()

    return read


def test_helm_values_file_through_a_values_ref_is_a_one_line_revert(tmp_path: Path) -> None:
    charts = WorkRepo(tmp_path / "charts")
    charts.commit(
        {"web/Chart.yaml": "name: web\n", "web/values.yaml": VALUES.format(tag="v0", cpu=1)},
        "chart",
    )
    env = WorkRepo(tmp_path / "env")
    env.commit({"prod/values.yaml": VALUES.format(tag="v2", cpu=1)}, "prod at v2")
    bump = env.commit({"prod/values.yaml": VALUES.format(tag="v3", cpu=2)}, "prod: v3, more cpu")
    sources = [
        {"repoURL": env.url, "targetRevision": "main", "ref": "values"},
        {
            "repoURL": charts.url,
            "targetRevision": "main",
            "path": "web",
            "helm": {"valueFiles": ["values.yaml", "$values/prod/values.yaml"]},
        },
    ]
    cache, identity = GitCache(tmp_path / "cache"), BotIdentity()
    scopes = application_scopes(sources, reader(cache, identity))  # type: ignore[arg-type]
    assert {(s.repo_url, s.scope.files) for s in scopes} == {
        (env.url, ("prod/values.yaml",)),
        (charts.url, ("web/values.yaml",)),
    }

    def branch(url: str, revision: str) -> BranchWriter:
        return open_branch(cache, url, revision, identity)

    outcome = revert_release(
        release("shop/web:v2", "shop/web:v3"), scopes=scopes, open_branch=branch
    )
    assert outcome.result is RevertResult.REVERTED, outcome.message
    assert outcome.revert_of == (bump,)
    assert env.changed_lines(env.tip()) == [
        "-  tag: v3  # set by the release pipeline",
        "+  tag: v2  # set by the release pipeline",
    ]
    assert "cpu: 2" in env.read("prod/values.yaml")  # the commit's other change stays
    assert len(charts.log()) == 1


def test_kustomize_base_reached_from_the_overlay(tmp_path: Path) -> None:
    repo = WorkRepo(tmp_path / "repo")
    overlay = "resources:\n  - ../../base\nimages:\n  - name: shop/web\n    newTag: {tag}\n"
    repo.commit(
        {
            "web/base/kustomization.yaml": "resources: [rollout.yaml]\n",
            "web/base/rollout.yaml": "image: shop/web:v1\n",
            "web/overlays/prod/kustomization.yaml": overlay.format(tag="v2"),
        },
        "v2",
    )
    repo.commit({"web/overlays/prod/kustomization.yaml": overlay.format(tag="v3")}, "v3")
    cache, identity = GitCache(tmp_path / "cache"), BotIdentity()
    sources = [{"repoURL": repo.url, "targetRevision": "HEAD", "path": "web/overlays/prod"}]
    scopes = application_scopes(sources, reader(cache, identity))  # type: ignore[arg-type]
    assert scopes[0].scope.directories == ("web/overlays/prod", "web/base")
    outcome = revert_release(
        release("shop/web:v2", "shop/web:v3"),
        scopes=scopes,
        open_branch=lambda u, r: open_branch(cache, u, r, identity),
    )
    assert outcome.result is RevertResult.REVERTED
    assert repo.changed_lines(repo.tip()) == ["-    newTag: v3", "+    newTag: v2"]


class RacingBranch:
    """A remote branch where someone else pushes once, right before our first push."""

    def __init__(self, inner: RemoteBranch, upstream: WorkRepo) -> None:
        self.inner, self.upstream, self.raced = inner, upstream, False

    @property
    def repo(self) -> pygit2.Repository:
        return self.inner.repo

    @property
    def branch(self) -> str:
        return self.inner.branch

    @property
    def remote(self) -> bool:
        return True

    def refresh(self) -> str:
        return self.inner.refresh()

    def write(self, *, parent: str, edits: Mapping[str, bytes], message: str) -> str:
        if not self.raced:
            self.raced = True
            self.upstream.commit({"docs/notes.md": "someone else\n"}, "a colleague's commit")
        return self.inner.write(parent=parent, edits=edits, message=message)


@pytest.mark.parametrize("race", [False, True])
def test_remote_branch_is_pushed_and_a_rejected_push_is_redone(tmp_path: Path, race: bool) -> None:
    upstream = WorkRepo(tmp_path / "remote.git", bare=True)
    upstream.commit({"app/rollout.yaml": "image: shop/web:v2\n"}, "v2")
    bump = upstream.commit({"app/rollout.yaml": "image: shop/web:v3\n"}, "v3")
    cache, identity = GitCache(tmp_path / "cache"), BotIdentity("Headway", "bot@example.com")
    # an https-like remote: reached through the cache, not edited in place
    remote = RemoteBranch(cache.repository(upstream.url), "main", identity)
    writer: BranchWriter = RacingBranch(remote, upstream) if race else remote
    scopes = application_scopes([{"repoURL": upstream.url, "path": "app"}], lambda *a: None)
    outcome = revert_release(
        release("shop/web:v2", "shop/web:v3"), scopes=scopes, open_branch=lambda u, r: writer
    )
    assert outcome.result is RevertResult.REVERTED, outcome.message
    tip = upstream.repo[upstream.tip()].peel(pygit2.Commit)
    assert str(tip.id) == outcome.commits[0]
    assert f"Headway-Revert-Of: {bump}" in tip.message
    assert tip.author.email == "bot@example.com"
    assert upstream.read("app/rollout.yaml") == "image: shop/web:v2\n"
    if race:
        assert tip.parents[0].message == "a colleague's commit"


def test_a_remote_write_is_built_on_the_tip_read_not_one_fetched_since(tmp_path: Path) -> None:
    upstream = WorkRepo(tmp_path / "remote.git", bare=True)
    upstream.commit({"app/values.yaml": "tag: v1\nlevel: info\n"}, "v1")
    cache, identity = GitCache(tmp_path / "cache"), BotIdentity()
    remote = RemoteBranch(cache.repository(upstream.url), "main", identity)
    read = remote.refresh()  # the tip the caller judged
    upstream.commit({"app/values.yaml": "tag: v1\nlevel: debug\n"}, "a hand edit")
    cache.repository(upstream.url).fetch()  # another reader of the shared cache fetches
    with pytest.raises(PushRejected):
        remote.write(
            parent=read, edits={"app/values.yaml": b"tag: v2\nlevel: info\n"}, message="promote v2"
        )
    assert upstream.read("app/values.yaml") == "tag: v1\nlevel: debug\n"  # the edit stands
