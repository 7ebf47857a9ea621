"""Issue 15 proof: ApplicationSets after each structure of Argo CD's examples (see
examples/README.md) validate, check and generate on the local store, with the Applications
Argo CD's generators would produce."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from e2e_sync.e2e_helpers import API, Remote, default_project
from headway.check.registry import run_checks
from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.appset.controller import ApplicationSetController
from headway.controllers.manager import ObjectKey
from headway.model.diagnostics import Severity
from headway.source.git import GitCache
from headway.source.manifest_files import check_paths
from headway.source.tree import FilesystemTree

EXAMPLES = Path(__file__).parent / "examples"
SELF = "https://git.example/headway/appset-examples.git"
EXPECTED = {
    "list.yaml": {"shop-qa", "shop-live"},
    "list-fasttemplate.yaml": {"shop-qa-small", "shop-live-large"},
    "clusters.yaml": {"shop-eu-west", "shop-lab", "shop-in-cluster"},
    "git-directories.yaml": {"addon-ingress", "addon-monitoring"},
    "git-files.yaml": {"shop-dev-internal", "shop-prod-public"},
    "matrix-git-list.yaml": {
        "ingress-blue",
        "ingress-green",
        "monitoring-blue",
        "monitoring-green",
    },
    "matrix-clusters-git.yaml": {"ingress-eu-west", "monitoring-eu-west"},
    "merge-clusters-list.yaml": {"shop-eu-west-medium", "shop-lab-tiny", "shop-in-cluster-medium"},
    "matrix-of-merge-and-matrix.yaml": {
        "shop-qa-web-a-z1",
        "shop-qa-web-b-z1",
        "shop-live-sre-a-z1",
        "shop-live-sre-b-z1",
    },
    "generator-template.yaml": {"shop-qa-override"},
    "create-only.yaml": {"sandbox-ana", "sandbox-li"},
    "rolling-sync.yaml": {"shop-qa-one", "shop-live-one", "shop-live-two"},
    "matrix-git-elements-yaml.yaml": {"component-ingress", "component-monitoring"},
    "merge-two-matrixes.yaml": {
        "shop-eu-west-qa",
        "shop-eu-west-live",
        "shop-lab-qa",
        "shop-lab-live",
        "shop-in-cluster-qa",
        "shop-in-cluster-live",
    },
}
MERGED = "merge-two-matrixes.yaml"
# matrix-clusters-git needs one too, but validate knows no cluster Secret labelled prod (they
# are in clusters/), so the matrix is empty before it reaches the repository, and says so.
NEEDS_A_CLUSTER = {"matrix-clusters-git.yaml"}
NEEDS_A_REPOSITORY = {
    "git-directories.yaml",
    "git-files.yaml",
    "matrix-git-list.yaml",
    "matrix-git-elements-yaml.yaml",
}


def test_every_example_is_listed() -> None:
    assert {p.name for p in (EXAMPLES / "sets").glob("*.yaml")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_example_validates(name: str) -> None:
    report = check_paths([EXAMPLES / "sets" / name])
    assert report.count(Severity.ERROR) == 0, [str(d) for d in report.diagnostics]
    notes = [d.message for d in report.diagnostics]
    if name in NEEDS_A_REPOSITORY:
        assert len(notes) == 1 and notes[0].startswith("not rendered:")
    elif name in NEEDS_A_CLUSTER:
        assert len(notes) == 1 and notes[0].startswith("generated no Application")
    else:
        assert notes == []


def _copy(tmp_path: Path, url: str) -> Path:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root)
    for path in (root / "sets").glob("*.yaml"):
        path.write_text(path.read_text().replace("REPO", url))
    return root


def test_every_example_checks_with_its_generated_applications(tmp_path: Path) -> None:
    root = _copy(tmp_path, SELF)
    loader = RepositoryLoader(tree=FilesystemTree(root), self_urls=frozenset({normalize_url(SELF)}))
    context = loader.load()
    assert [str(p) for p in context.load_problems] == []
    assert {u.name for u in context.applications} == set().union(*EXPECTED.values())
    shop = next(u for u in context.applications if u.name == "shop-qa")
    assert [d.obj["metadata"]["name"] for d in shop.objects] == ["shop-settings"]
    # Argo's examples use the `default` project, which check refuses (HW301) on every
    # generated Application, at the template's `project:` line of its set.
    errors = [f for f in run_checks(context) if f.severity == "error"]
    assert {f.rule for f in errors} == {"HW301"}
    assert {f.app for f in errors} == set().union(*EXPECTED.values())
    lines = {f.file: f.line for f in errors}
    assert lines["sets/list.yaml"] == 21 and lines["sets/rolling-sync.yaml"] == 37


def test_a_flat_override_and_a_list_read_from_a_file_generate_what_argo_cd_does(
    tmp_path: Path,
) -> None:
    """merge-two-matrixes without goTemplate: the list's `values.replicas` replaces the
    clusters generator's for the one (server, stage) it names. elementsYaml: each element of
    the git file's list is a parameter set, crossed with the file's own parameters."""
    root = _copy(tmp_path, SELF)
    loader = RepositoryLoader(tree=FilesystemTree(root), self_urls=frozenset({normalize_url(SELF)}))
    apps = {u.name: u.application.obj for u in loader.load().applications if u.application}
    replicas = {n: apps[n]["metadata"]["labels"]["replicas"] for n in EXPECTED[MERGED]}
    assert replicas == {n: "1" if n == "shop-lab-qa" else "2" for n in EXPECTED[MERGED]}
    ingress = apps["component-ingress"]["spec"]
    assert (ingress["source"]["path"], ingress["destination"]["namespace"]) == (
        "addons/ingress",
        "edge",
    )
    assert apps["component-monitoring"]["spec"]["destination"]["namespace"] == "observability"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "cluster.db", VirtualClock()) as cluster:
        yield cluster


def test_every_example_generates_on_the_local_store(tmp_path: Path, store: LocalCluster) -> None:
    remote = Remote(tmp_path / "remote.git")
    files = {
        p.relative_to(EXAMPLES).as_posix(): p.read_text()
        for p in EXAMPLES.rglob("*")
        if p.is_file()
    }
    remote.commit(files, "examples")
    store.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}, field_manager="t"
    )
    store.apply(default_project(), field_manager="t")
    for secret in yaml.safe_load_all((EXAMPLES / "clusters/secrets.yaml").read_text()):
        store.apply(secret, field_manager="t")
    clock = VirtualClock()
    controller = ApplicationSetController(
        cluster=store,
        clock=clock,
        git=GitCache(tmp_path / "cache"),
        namespace="argocd",
        poll_seconds=60,
    )
    for name, expected in sorted(EXPECTED.items()):
        appset = yaml.safe_load((EXAMPLES / "sets" / name).read_text().replace("REPO", remote.url))
        store.apply(appset, field_manager="t")
        controller.step(ObjectKey("argocd", appset["metadata"]["name"]))
        live = store.get(API, "ApplicationSet", appset["metadata"]["name"], "argocd")
        uid = live["metadata"]["uid"]
        owned = {
            a["metadata"]["name"]
            for a in store.list(API, "Application", namespace="argocd")
            if any(r.get("uid") == uid for r in a["metadata"].get("ownerReferences") or [])
        }
        assert owned == expected, name
        conditions = {c["type"]: c["status"] for c in live["status"]["conditions"]}
        assert conditions["ErrorOccurred"] == "False", (name, live["status"]["conditions"])
