"""`library_paths` lists a source directory once instead of looking up each candidate file
(Chart.yaml and the kustomization names), and finds what the lookups found."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from headway.source.library import library_paths
from headway.source.tree import EntryKind, FilesystemTree

KUSTOMIZATION = "resources: [../base, ./local.yaml]\ncomponents: [../../components/tls]\n"
CHART = "apiVersion: v2\nname: web\ndependencies:\n  - {name: lib, repository: file://../lib}\n"


class CountingTree(FilesystemTree):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.kinds: Counter[str] = Counter()

    def kind(self, path: str) -> EntryKind | None:
        self.kinds[path] += 1
        return super().kind(path)


def _layout(root: Path) -> None:
    (root / "overlays" / "prod").mkdir(parents=True)
    (root / "overlays" / "prod" / "kustomization.yaml").write_text(KUSTOMIZATION)
    (root / "charts" / "web").mkdir(parents=True)
    (root / "charts" / "web" / "Chart.yaml").write_text(CHART)
    (root / "plain").mkdir()
    (root / "plain" / "service.yaml").write_text("kind: Service\n")
    (root / "odd" / "Chart.yaml").mkdir(parents=True)  # a directory by a candidate's name
    (root / "odd" / "kustomization.yml").symlink_to("nowhere")  # a link to nothing
    (root / "file.yaml").write_text("kind: Service\n")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("overlays/prod", ["overlays/base", "components/tls"]),
        ("charts/web", ["charts/lib"]),
        ("plain", []),
        ("odd", []),
        ("file.yaml", []),
        ("missing", []),
        ("", []),
    ],
)
def test_the_library_paths_of_each_kind_of_path(
    tmp_path: Path, path: str, expected: list[str]
) -> None:
    _layout(tmp_path)
    tree = CountingTree(tmp_path)
    assert library_paths(tree, path) == expected


def test_missing_candidates_are_not_looked_up(tmp_path: Path) -> None:
    _layout(tmp_path)
    tree = CountingTree(tmp_path)
    library_paths(tree, "plain")
    library_paths(tree, "overlays/prod")
    asked = {"plain": 1, "overlays/prod": 1, "overlays/prod/kustomization.yaml": 1}
    assert tree.kinds == Counter(asked)


def test_a_case_insensitive_name_is_still_asked(tmp_path: Path) -> None:
    """A file system that ignores case answers `Chart.yaml` for `chart.yaml`: the listing's
    `chart.yaml` must not rule the candidate out (the tree's own answer decides)."""
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "chart.yaml").write_text(CHART)

    def lower(path: str) -> str:
        head, _, name = path.rpartition("/")
        return f"{head}/{name.lower()}" if name == "Chart.yaml" else path

    class IgnoringCase(CountingTree):
        def kind(self, path: str) -> EntryKind | None:
            return super().kind(lower(path))

        def read(self, path: str) -> bytes:
            return super().read(lower(path))

    assert library_paths(IgnoringCase(tmp_path), "web") == ["lib"]
    assert library_paths(CountingTree(tmp_path), "web") == []


def test_deprecated_bases_are_read_like_resources(tmp_path: Path) -> None:
    """christianh814/gitops-examples@54ec4b1 argo-rollouts/canary/overlays/localhost: the
    overlay names its base under `bases:`, which kustomize still builds. Before, the base was
    no library path, so a commit changing only the base's Rollout did not reach the overlay's
    Application in the source watcher, and `headway diff` did not name the file it reads."""
    overlay = tmp_path / "canary" / "overlays" / "localhost"
    overlay.mkdir(parents=True)
    (overlay / "kustomization.yaml").write_text(
        "namespace: canary\nbases:\n- ../../base\nresources:\n- ingress.yaml\n"
    )
    assert library_paths(FilesystemTree(tmp_path), "canary/overlays/localhost") == ["canary/base"]
