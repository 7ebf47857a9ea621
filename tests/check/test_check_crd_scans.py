"""The base commit's CRDs, found from a kept scan, are the ones a full read finds.

Differential: `collect_crds` from the kept candidates of a tree equals a read of every file
(CRDs in several files, a `.yml`, a hidden file, JSON, a file that only mentions the kind);
`check -o json` prints the same with `--no-cache`, an empty and a warm cache, and the kept
scan is really read (a planted empty scan hides the HW104 finding), but not when damaged or
written for another filter.
"""

from __future__ import annotations

import hashlib
import marshal
from pathlib import Path

import pygit2
import pytest
from typer.testing import CliRunner

from check.gitrepo import commit_states
from headway.cli import check_crd_scans
from headway.cli.check_loader import collect_crds
from headway.cli.main import _register_all, app
from headway.source.tree import GitTree

_register_all()
runner = CliRunner()

CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: {plural}.example.com}}
spec:
  group: example.com
  names: {{kind: {kind}, plural: {plural}}}
  scope: Namespaced
  versions:
{versions}"""
V1 = "    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n"
V2 = "    - {name: v2, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}\n"
V2_STORED = V2.replace("storage: false", "storage: true")
MENTION = """apiVersion: v1
kind: ConfigMap
metadata: {name: notes}
data: {a: CustomResourceDefinition}
"""


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


def _state(directory: Path, versions: str) -> Path:
    (directory / "crds").mkdir(parents=True)
    (directory / "crds" / "widgets.yaml").write_text(
        CRD.format(kind="Widget", plural="widgets", versions=versions)
    )
    (directory / "crds" / "gadgets.yml").write_text(
        CRD.format(kind="Gadget", plural="gadgets", versions=V1)
    )
    (directory / ".hidden.yaml").write_text(CRD.format(kind="Secretive", plural="s", versions=V1))
    (directory / "crd.json").write_text('{"kind": "CustomResourceDefinition"}\n')
    (directory / "notes.yaml").write_text(MENTION)
    return directory


def _repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    commit_states(root, _state(tmp_path / "before", V1 + V2), _state(tmp_path / "after", V2_STORED))
    return root


def _read_every_file(tree: GitTree) -> list[str]:
    """The scan as it was before the kept candidates: every file read and filtered here."""
    return [
        file
        for file in tree.files()
        if file.endswith((".yaml", ".yml"))
        and not file.startswith(".")
        and b"CustomResourceDefinition" in tree.read(file)
    ]


def _base_tree(root: Path) -> GitTree:
    repo = pygit2.Repository(str(root))
    commit = repo.head.peel(pygit2.Commit).parents[0]
    return GitTree(repo, commit.tree, "base")


def test_kept_candidates_find_the_crds_a_full_read_finds(tmp_path: Path) -> None:
    tree = _base_tree(_repository(tmp_path))
    assert list(check_crd_scans.crd_candidates(tree)) == _read_every_file(tree)
    written = check_crd_scans.open_scans(tmp_path, directory=tmp_path / "cache")
    full = collect_crds(tree)
    assert [d.name for d in full] == ["gadgets.example.com", "widgets.example.com"]
    assert collect_crds(tree, candidates=written.candidates(tree)) == full
    written.save()
    read = check_crd_scans.open_scans(tmp_path, directory=tmp_path / "cache")
    assert read.known == {tree.tree_id: ("crds/gadgets.yml", "crds/widgets.yaml", "notes.yaml")}
    assert collect_crds(tree, candidates=read.candidates(tree)) == full


def _check(root: Path, *options: str) -> str:
    result = runner.invoke(app, ["check", "-o", "json", *options, str(root)])
    return f"exit {result.exit_code}\n{result.output}"


def _scans_file(home: Path) -> Path:
    (file,) = sorted((home / "headway" / "check").glob("crdscans-*.marshal"))
    return file


def _plant(file: Path, entries: dict[str, tuple[str, ...]], fingerprint: bytes) -> None:
    payload = marshal.dumps(entries)
    checksum = hashlib.sha256(payload).hexdigest().encode()
    file.write_bytes(check_crd_scans._FORMAT + fingerprint + b"\n" + checksum + b"\n" + payload)


def test_kept_scans_print_the_same_and_are_read(tmp_path: Path, cache_home: Path) -> None:
    root = _repository(tmp_path)
    scanned = _check(root, "--no-cache")
    assert "HW104" in scanned
    assert _check(root) == scanned  # cache empty
    assert _check(root) == scanned  # cache warm
    file = _scans_file(cache_home)
    base = _base_tree(root).tree_id
    _plant(file, {base: ()}, check_crd_scans._fingerprint())
    assert "HW104" not in _check(root)  # the kept scan was read
    _plant(file, {base: ()}, b"0" * 64)
    assert _check(root) == scanned  # another filter's scan is not
    file.write_bytes(file.read_bytes()[:-5])
    assert _check(root) == scanned  # nor a damaged one


def test_kept_scans_are_not_read_after_the_tree_readers_code_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from headway.source import tree

    check_crd_scans._fingerprint.cache_clear()
    before = check_crd_scans._fingerprint()
    changed = tmp_path / "tree.py"
    changed.write_bytes(Path(tree.__file__).read_bytes() + b"\n# files() lists other files\n")
    monkeypatch.setattr(tree, "__file__", str(changed))
    check_crd_scans._fingerprint.cache_clear()
    try:
        assert check_crd_scans._fingerprint() != before
    finally:
        monkeypatch.undo()
        check_crd_scans._fingerprint.cache_clear()
    assert check_crd_scans._fingerprint() == before
