"""`FilesystemTree.read` refuses files reached through a link that leaves the root, whether
the link is the file or a directory above it, while resolving each directory only once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from headway.source.errors import PathNotFound
from headway.source.tree import FilesystemTree


def _checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "apps/web").mkdir(parents=True)
    (root / "apps/web/a.yaml").write_text("a: 1\n")
    (root / "apps/web/b.yaml").write_text("b: 2\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.yaml").write_text("secret: 1\n")
    (outside / "b.yaml").write_text("secret: 2\n")
    return root


def test_every_file_under_a_directory_link_leaving_the_root_is_refused(tmp_path: Path) -> None:
    root = _checkout(tmp_path)
    (root / "apps/linked").symlink_to(tmp_path / "outside")
    tree = FilesystemTree(root)
    assert tree.read("apps/web/a.yaml") == b"a: 1\n"
    for name in ("a.yaml", "b.yaml"):  # the second answer comes from the directory's cache
        with pytest.raises(PathNotFound, match=r"apps/linked is a symlink to .*outside"):
            tree.read(f"apps/linked/{name}")


def test_a_file_link_leaving_the_root_is_refused_beside_plain_files(tmp_path: Path) -> None:
    root = _checkout(tmp_path)
    (root / "apps/web/c.yaml").symlink_to(tmp_path / "outside/a.yaml")
    tree = FilesystemTree(root)
    assert tree.read("apps/web/b.yaml") == b"b: 2\n"
    with pytest.raises(PathNotFound, match=r"apps/web/c\.yaml is a symlink"):
        tree.read("apps/web/c.yaml")


def test_links_that_stay_inside_the_root_are_read(tmp_path: Path) -> None:
    root = _checkout(tmp_path)
    (root / "apps/alias").symlink_to(root / "apps/web")
    (root / "apps/web/d.yaml").symlink_to("a.yaml")
    tree = FilesystemTree(root)
    assert tree.read("apps/alias/b.yaml") == b"b: 2\n"
    assert tree.read("apps/web/d.yaml") == b"a: 1\n"
    assert tree.read("apps/alias/d.yaml") == b"a: 1\n"


def test_a_root_reached_through_a_link_is_the_root(tmp_path: Path) -> None:
    root = _checkout(tmp_path)
    (tmp_path / "via").symlink_to(root)
    assert FilesystemTree(tmp_path / "via").read("apps/web/a.yaml") == b"a: 1\n"


def _maze(tmp_path: Path) -> Path:
    """Directories and files reached plainly, through links inside the root (to a directory,
    to a link to a directory, with `..`), and through links leaving it."""
    root = tmp_path / "repo"
    (root / "apps/web/deep").mkdir(parents=True)
    (tmp_path / "outside/deep").mkdir(parents=True)
    for directory in (root / "apps/web", root / "apps/web/deep", tmp_path / "outside"):
        (directory / "a.yaml").write_text(f"kind: ConfigMap # {directory.name}\n")
    (tmp_path / "outside/deep/a.yaml").write_text("kind: Secret\n")
    (root / "apps/alias").symlink_to("web")
    (root / "apps/alias2").symlink_to("alias")
    (root / "apps/web/up").symlink_to("../../apps/web/deep")
    (root / "apps/away").symlink_to(tmp_path / "outside")
    (root / "apps/web/deep/away").symlink_to("../../../../outside/deep")
    (root / "apps/web/b.yaml").symlink_to("deep/a.yaml")
    (root / "apps/web/c.yaml").symlink_to(tmp_path / "outside/a.yaml")
    (root / "apps/web/sub").mkdir()
    return root


def _expected(root: Path, path: str) -> bytes | None:
    """What reading `path` must give: the content of a file whose real path is inside the
    root, nothing (a refusal) for anything else."""
    full = root / path
    real, top = os.path.realpath(full), os.path.realpath(root)
    return full.read_bytes() if full.is_file() and real.startswith(top + os.sep) else None


def test_reads_follow_links_exactly_as_far_as_the_root(tmp_path: Path) -> None:
    root = _maze(tmp_path)
    tree = FilesystemTree(root)
    names = ["a.yaml", "b.yaml", "c.yaml", "sub", "missing.yaml", "deep/a.yaml"]
    dirs = ["apps/web", "apps/alias", "apps/alias2", "apps/web/up", "apps/away"]
    dirs += ["apps/web/deep", "apps/web/deep/away", "apps/alias/deep/away", "apps/alias2/up"]
    for path in [f"{d}/{n}" for d in dirs for n in names] + ["apps", ""]:
        try:
            got: bytes | None = tree.read(path)
        except PathNotFound:
            got = None
        assert got == _expected(root, path), path


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    """The one `open` of a plain read must not block on a FIFO (nothing ever writes to it)."""
    root = _checkout(tmp_path)
    os.mkfifo(root / "apps/web/pipe.yaml")
    with pytest.raises(PathNotFound):
        FilesystemTree(root).read("apps/web/pipe.yaml")


def test_a_directory_is_not_read_as_a_file(tmp_path: Path) -> None:
    root = _checkout(tmp_path)
    with pytest.raises(PathNotFound):
        FilesystemTree(root).read("apps/web")


def test_a_file_larger_than_one_read_is_read_whole(tmp_path: Path) -> None:
    root = _checkout(tmp_path)
    content = b"".join(b"key%d: %d\n" % (n, n) for n in range(60_000))  # about 700 KB
    (root / "apps/web/big.yaml").write_bytes(content)
    assert FilesystemTree(root).read("apps/web/big.yaml") == content


def _files_by_paths(root: Path, path: str) -> list[str]:
    """`FilesystemTree.files` as it was written with `Path.relative_to` (the reference); a
    link to a directory is an entry of its own, as in a Git tree (test_tree_links_agree)."""
    found: list[str] = []
    top = root.resolve()
    for dirpath, dirnames, filenames in os.walk(top / path if path else top):
        links = [d for d in dirnames if (Path(dirpath) / d).is_symlink()]
        dirnames[:] = [d for d in dirnames if d != ".git" and d not in links]
        rel = Path(dirpath).relative_to(top).as_posix()
        found.extend(f"{rel}/{f}" if rel != "." else f for f in [*filenames, *links])
    return sorted(found)


def test_listings_name_files_as_the_path_arithmetic_did(tmp_path: Path) -> None:
    root = _maze(tmp_path)
    (root / ".git").mkdir()
    (root / ".git/HEAD").write_text("ref\n")
    (root / "top.yaml").write_text("a: 1\n")
    (tmp_path / "via").symlink_to(root)
    for base in (root, tmp_path / "via"):
        tree = FilesystemTree(base)
        for path in ("", "apps", "apps/web", "apps/web/deep", "apps/alias"):
            assert tree.files(path) == _files_by_paths(base, path), (base, path)
    assert "top.yaml" in FilesystemTree(root).files()
