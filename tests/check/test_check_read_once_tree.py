"""`headway check` reads each file of the checkout once: the scan's read serves the directory
renderer too, and what a path is gets asked once (before: every manifest twice)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.cli.check_tree import ReadOnceTree
from headway.source.errors import PathNotFound, SourceError
from headway.source.tree import EntryKind, FilesystemTree

URL = "https://example.com/shop.git"

APP = f"""apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: shop, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: "{URL}", path: shop}}
  destination: {{name: in-cluster, namespace: shop}}
"""

SERVICE = """apiVersion: v1
kind: Service
metadata: {name: shop}
spec: {ports: [{port: 80}]}
"""


class CountingTree(FilesystemTree):
    """A real checkout that counts what it is asked."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()

    def read(self, path: str) -> bytes:
        self.reads[path] += 1
        return super().read(path)

    def kind(self, path: str) -> EntryKind | None:
        self.kinds[path] += 1
        return super().kind(path)


def checkout(root: Path) -> CountingTree:
    (root / "apps").mkdir()
    (root / "apps" / "shop.yaml").write_text(APP)
    (root / "shop").mkdir()
    (root / "shop" / "service.yaml").write_text(SERVICE)
    return CountingTree(root)


def test_an_app_s_manifest_is_read_once_by_scan_and_render(tmp_path: Path) -> None:
    counting = checkout(tmp_path)
    loader = RepositoryLoader(
        tree=ReadOnceTree(counting), self_urls=frozenset({normalize_url(URL)})
    )
    context = loader.load()
    assert [(unit.name, [d.kind for d in unit.objects]) for unit in context.units] == [
        ("shop", ["Service"])
    ]
    assert counting.reads == Counter({"apps/shop.yaml": 1, "shop/service.yaml": 1})
    assert counting.kinds["shop"] == 0  # the listing holds shop/service.yaml: a directory
    assert all(count == 1 for count in counting.kinds.values())


def test_without_the_wrapper_the_render_reads_again(tmp_path: Path) -> None:
    counting = checkout(tmp_path)
    RepositoryLoader(tree=counting, self_urls=frozenset({normalize_url(URL)})).load()
    assert counting.reads["shop/service.yaml"] == 2
    assert counting.kinds["shop"] > 1


def test_a_missing_file_is_refused_each_time(tmp_path: Path) -> None:
    counting = checkout(tmp_path)
    tree = ReadOnceTree(counting)
    for _ in range(2):
        with pytest.raises(PathNotFound):
            tree.read("shop/missing.yaml")
    assert counting.reads["shop/missing.yaml"] == 2


def odd_checkout(root: Path) -> CountingTree:
    """A checkout with what a listing cannot see: links to a directory, to a file and to
    nothing, an empty directory, a directory holding only directories, and a `.git`."""
    checkout(root)
    (root / "shop" / "nested" / "deeper").mkdir(parents=True)
    (root / "shop" / "nested" / "deeper" / "cm.yaml").write_text(SERVICE)
    (root / "empty").mkdir()
    (root / "only-dirs" / "inner").mkdir(parents=True)
    (root / "linked-dir").symlink_to("shop")
    (root / "shop" / "linked.yaml").symlink_to("service.yaml")
    (root / "shop" / "dangling.yaml").symlink_to("missing.yaml")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return CountingTree(root)


PATHS = [
    ".",
    "./shop",
    "shop/",
    "shop",
    "shop/nested",
    "shop/nested/deeper",
    "apps",
    "empty",
    "only-dirs",
    "nowhere",
    "shop/nested/deeper/cm.yaml",
    "shop/service.yaml",
    "shop/linked.yaml",
    "apps/shop.yaml",
    "only-dirs/inner",
    "shop/dangling.yaml",
    "shop/missing.yaml",
    "linked-dir",
    "linked-dir/service.yaml",
    "linked-dir/nested",
    ".git",
    ".git/HEAD",
    "nowhere/deeper",
    "../outside",
    "shop/../../outside",
    "",
]


def _answer(ask: Callable[[str], object], path: str) -> object:
    try:
        return ask(path)
    except SourceError as err:
        return f"{type(err).__name__}: {err}"


@pytest.mark.parametrize("read_first", [False, True])
def test_kinds_and_listings_are_the_tree_s_own(tmp_path: Path, read_first: bool) -> None:
    tree = odd_checkout(tmp_path)
    wrapped = ReadOnceTree(tree)
    if read_first:  # what the scan does before the renderer asks
        for file in tree.files():
            _answer(wrapped.read, file)
    for path in PATHS:
        assert _answer(wrapped.kind, path) == _answer(tree.kind, path), path
        assert _answer(wrapped.files, path) == _answer(tree.files, path), path
        assert _answer(wrapped.names, path) == _answer(tree.names, path), path


def test_directories_are_listed_once_for_the_whole_check(tmp_path: Path) -> None:
    listings: list[str] = []

    class ListingTree(CountingTree):
        def files(self, path: str = "") -> list[str]:
            listings.append(path)
            return super().files(path)

    (tmp_path / "apps").mkdir()
    for name in ("shop", "cart", "till"):
        app = APP.replace("name: shop", f"name: {name}").replace("path: shop", f"path: {name}")
        (tmp_path / "apps" / f"{name}.yaml").write_text(app)
        (tmp_path / name).mkdir()
        (tmp_path / name / "service.yaml").write_text(SERVICE.replace("shop", name))
    tree = ListingTree(tmp_path)
    loader = RepositoryLoader(tree=ReadOnceTree(tree), self_urls=frozenset({normalize_url(URL)}))
    context = loader.load()
    assert sorted(unit.name for unit in context.units) == ["cart", "shop", "till"]
    assert all(len(unit.objects) == 1 for unit in context.units)
    assert listings == [""]
    assert all(tree.kinds[name] == 0 for name in ("shop", "cart", "till"))
