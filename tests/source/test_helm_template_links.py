"""A Helm chart from Git whose templates are symlinks: Argo CD's repo server renders the chart
in a checkout of the whole repository, so a link to a file or directory elsewhere in the
repository is followed (Helm reads through it), and only a link leaving the repository is
refused. Headway writes just the chart for Helm, so a link out of the chart was written as a
link to nothing (before: 'error evaluating symlink .../tree/shared: no such file or
directory', naming a temporary path)."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from headway.source.errors import RenderError
from headway.source.git import GitCache, GitRepository
from headway.source.render import RenderRequest, RenderResult, render, render_key
from headway.source.render_helm import HelmRenderer
from headway.source.tree import GitTree
from source.gitrepos import Upstream, make_upstream

CHART = {
    "chart/Chart.yaml": "apiVersion: v2\nname: linked\nversion: 0.1.0\n",
    "chart/templates/own.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: own}\n",
    "shared/cm.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}-shared}\n"
    ),
    "shared/more/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: more-a}\n",
    "shared/more/b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: more-b}\n",
}


@pytest.fixture(autouse=True)
def _helm_sdk() -> None:
    from source.gitrepos import require_extra

    require_extra("helm_python", "helm")


def _chart_with_links(tmp_path: Path, cache: GitCache, links: dict[str, str]) -> GitRepository:
    """`CHART` in one repository, and each of `links` (path: link text) a symlink."""
    up = make_upstream(tmp_path / "links.git", CHART)
    ref = "refs/heads/main"
    parent = up.repo[up.repo.references[ref].target].peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(parent.tree)
    for path, target in links.items():
        blob = up.repo.create_blob(target.encode())
        index.add(pygit2.IndexEntry(path, blob, pygit2.GIT_FILEMODE_LINK))
    sig = pygit2.Signature("Dev", "dev@example.com")
    up.repo.create_commit(ref, sig, sig, "links", index.write_tree(up.repo), [parent.id])
    repo = cache.repository(up.url)
    repo.fetch()
    return repo


def _request(tree: GitTree) -> RenderRequest:
    return RenderRequest(source={"path": "chart"}, tree=tree, app_name="r")


def _render_chart(repo: GitRepository) -> RenderResult:
    return render(_request(repo.tree("main")))


def test_a_template_linking_to_a_file_elsewhere_in_the_repository_is_rendered(
    tmp_path: Path, cache: GitCache
) -> None:
    repo = _chart_with_links(tmp_path, cache, {"chart/templates/cm.yaml": "../../shared/cm.yaml"})
    result = _render_chart(repo)
    assert result.ok, result.diagnostics
    assert sorted(doc.name for doc in result.documents) == ["own", "r-shared"]


def test_a_link_to_a_link_to_a_directory_elsewhere_in_the_repository_is_rendered(
    tmp_path: Path, cache: GitCache
) -> None:
    repo = _chart_with_links(
        tmp_path, cache, {"chart/templates/more": "../../hop", "hop": "shared/more"}
    )
    result = _render_chart(repo)
    assert result.ok, result.diagnostics
    assert sorted(doc.name for doc in result.documents) == ["more-a", "more-b", "own"]


@pytest.mark.parametrize("target", ["/etc/hostname", "../../../outside.yaml"])
def test_a_template_linking_out_of_the_repository_is_refused_naming_the_link(
    tmp_path: Path, cache: GitCache, target: str
) -> None:
    repo = _chart_with_links(tmp_path, cache, {"chart/templates/out.yaml": target})
    with pytest.raises(RenderError) as raised:
        _render_chart(repo)
    assert raised.value.file == "chart/templates/out.yaml"
    assert f"symlink to {target}, which leaves the repository" in str(raised.value)


def test_a_directory_link_reaching_a_link_out_of_the_repository_is_refused_naming_it(
    tmp_path: Path, cache: GitCache
) -> None:
    repo = _chart_with_links(
        tmp_path, cache, {"chart/templates/more": "../../shared/more", "shared/more/c.yaml": "/etc"}
    )
    with pytest.raises(RenderError) as raised:
        _render_chart(repo)
    assert raised.value.file == "shared/more/c.yaml"


def test_the_file_a_template_link_leads_to_is_a_render_input(
    tmp_path: Path, cache: GitCache
) -> None:
    """A change of only the linked file (the chart's tree id stays) is a new render key, so the
    controller renders the chart again instead of serving the old render."""
    repo = _chart_with_links(tmp_path, cache, {"chart/templates/cm.yaml": "../../shared/cm.yaml"})
    before = repo.tree("main")
    up = Upstream(pygit2.Repository(str(tmp_path / "links.git")), (tmp_path / "links.git").as_uri())
    up.commit("main", {"shared/cm.yaml": CHART["shared/cm.yaml"].replace("shared", "changed")})
    repo.fetch()
    after = repo.tree("main")
    assert before.object_id("chart") == after.object_id("chart")
    keys = [render_key(HelmRenderer(), _request(tree)) for tree in (before, after)]
    assert keys[0] != keys[1]
    assert sorted(doc.name for doc in render(_request(after)).documents) == ["own", "r-changed"]
