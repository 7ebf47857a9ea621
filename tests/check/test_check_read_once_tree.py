"""`headway check` reads each file of the checkout once: the scan's read serves the directory
renderer too, and what a path is gets asked once (before: every manifest twice)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.cli.check_tree import ReadOnceTree
from headway.source.errors import PathNotFound
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
    assert counting.kinds["shop"] == 1
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
