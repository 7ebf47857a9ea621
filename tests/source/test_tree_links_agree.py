"""One repository read as a working copy (`FilesystemTree`, what `headway check .` reads) and
as a commit (`GitTree`, what the controller and `check --revision` read) gives the same files
and the same directory render, whatever symlinks it holds, and both follow Argo CD's repo
server: a link to a file inside is read through, a link to a directory is not walked into,
a dangling link or a link to a directory under a manifest's name is skipped with a warning,
and a link leaving the repository is an error.

Before: the working copy left links to directories out of its listing while the commit listed
them, a link to a directory named `*.yaml` or a dangling one failed the commit's render ("does
not exist") but vanished from the working copy's, and `headway check` in a repository holding
any such link stopped with a traceback (its scan for CRDs read every `*.yaml` name)."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from headway.cli.check_crd_scans import crd_candidates
from headway.model.diagnostics import Severity
from headway.source.errors import LinkLeavesRepository
from headway.source.render import RenderRequest, RenderResult
from headway.source.render_directory import DirectoryRenderer
from headway.source.tree import FilesystemTree, GitTree, TreeReader

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\n"


def _working_copy(root: Path, *, leaving: bool = False) -> Path:
    (root / "app/sub").mkdir(parents=True)
    (root / "common").mkdir()
    (root / "app/own.yaml").write_text(CONFIGMAP.format(name="own"))
    (root / "app/sub/deep.yaml").write_text(CONFIGMAP.format(name="deep"))
    (root / "common/x.yaml").write_text(CONFIGMAP.format(name="x"))
    os.symlink("../common/x.yaml", root / "app/file-link.yaml")  # read through
    os.symlink("../common", root / "app/base")  # a directory: not walked into
    os.symlink("../common", root / "app/dir-named.yaml")  # skipped, with a warning
    os.symlink("nowhere.yaml", root / "app/dangling.yaml")  # skipped, with a warning
    os.symlink("../../common", root / "app/sub/up")  # a directory, one level down
    if leaving:
        os.symlink("/etc/hostname", root / "app/out.yaml")
    return root


def _trees(tmp_path: Path, *, leaving: bool = False) -> tuple[FilesystemTree, GitTree]:
    root = _working_copy(tmp_path / "repo", leaving=leaving)
    repo = pygit2.init_repository(str(root))
    repo.index.add_all()
    repo.index.write()
    sig = pygit2.Signature("Dev", "dev@example.com")
    commit = repo.create_commit("HEAD", sig, sig, "links", repo.index.write_tree(), [])
    return FilesystemTree(root), GitTree(repo, repo[commit].peel(pygit2.Tree), "commit")


def _render(tree: TreeReader, recurse: bool) -> RenderResult:
    source = {"path": "app", "directory": {"recurse": recurse}}
    return DirectoryRenderer().render(RenderRequest(source=source, tree=tree, app_name="a"))


def test_both_trees_list_the_same_files(tmp_path: Path) -> None:
    disk, commit = _trees(tmp_path)
    assert disk.files("app") == commit.files("app")
    assert "app/base" in disk.files("app")
    assert disk.files() == commit.files()


@pytest.mark.parametrize("recurse", [False, True])
def test_both_trees_render_the_same_objects_and_warnings(tmp_path: Path, recurse: bool) -> None:
    disk, commit = _trees(tmp_path)
    on_disk, in_commit = _render(disk, recurse), _render(commit, recurse)
    names = [d.obj["metadata"]["name"] for d in on_disk.documents]
    assert names == [d.obj["metadata"]["name"] for d in in_commit.documents]
    assert sorted(names) == (["deep", "own", "x"] if recurse else ["own", "x"])
    problems = [(d.file, d.severity, d.message) for d in on_disk.diagnostics]
    assert problems == [(d.file, d.severity, d.message) for d in in_commit.diagnostics]
    assert {(file, severity) for file, severity, _ in problems} == {
        ("app/dangling.yaml", Severity.WARNING),
        ("app/dir-named.yaml", Severity.WARNING),
    }


def test_a_link_leaving_the_repository_is_an_error_in_both(tmp_path: Path) -> None:
    disk, commit = _trees(tmp_path, leaving=True)
    for tree in (disk, commit):
        with pytest.raises(LinkLeavesRepository, match=r"out\.yaml is a symlink to /etc/hostname"):
            _render(tree, recurse=False)


def test_the_crd_scan_passes_over_names_that_read_as_no_file(tmp_path: Path) -> None:
    disk, commit = _trees(tmp_path, leaving=True)
    for tree in (disk, commit):
        assert crd_candidates(tree) == ()


def test_names_after_a_walk_are_the_directories_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`names` answers from the walk `files` made (`headway check` asks it of every app path):
    the same names a fresh reader lists, links, dangling links and `.git` included alike, and
    the same as the commit's; a directory the walk never entered is asked of the disk."""
    walked, commit = _trees(tmp_path)
    walked.files()
    fresh = FilesystemTree(tmp_path / "repo")
    expected = {path: fresh.names(path) for path in ("", "app", "app/sub", "common")}
    with monkeypatch.context() as patched:
        patched.setattr(os, "listdir", None)  # the walked directories are not listed again
        assert {path: walked.names(path) for path in expected} == expected
    assert walked.names("app") == commit.names("app")
    assert ".git" not in walked.names("")
    (tmp_path / "repo/app/sub/later").mkdir()
    (tmp_path / "repo/app/sub/later/x.yaml").write_text(CONFIGMAP.format(name="later"))
    assert walked.names("app/sub/later") == ["x.yaml"]
