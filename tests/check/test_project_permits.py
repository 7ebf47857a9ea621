"""HW325: what an Application's AppProject refuses, found by `check` with the controller's
own refusals (sync/project.py) instead of a failed sync in production."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from check.conftest import FIXTURES, CheckDir

FOUND = FIXTURES / "HW325-outside-project" / "found"
NEAR_MISS = FIXTURES / "HW325-outside-project" / "near_miss"


def _repo(tmp_path: Path, base: Path = FOUND) -> Path:
    shutil.copytree(base, tmp_path, dirs_exist_ok=True)
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new))


def _hw325(check_dir: CheckDir, root: Path) -> list[tuple[str, int, str]]:
    return [(f.file, f.line, f.message) for f in check_dir(root) if f.rule == "HW325"]


def test_a_refused_kind_is_named_once_at_its_first_object(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    root = _repo(tmp_path)
    (root / "services/checkout/more.yaml").write_text(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: b\n"
    )
    [(file, line, message)] = _hw325(check_dir, root)
    assert (file, line) == ("services/checkout/more.yaml", 2)  # the first in the tree's order
    assert "rbac.authorization.k8s.io/ClusterRole b: cluster-scoped kind not in" in message
    assert "(and 1 more ClusterRole of this Application)" in message


def test_a_source_repository_outside_source_repos(tmp_path: Path, check_dir: CheckDir) -> None:
    root = _repo(tmp_path, NEAR_MISS)
    _edit(
        root / "projects/workloads.yaml",
        "sourceRepos: [https://github.com/example/fixtures.git]",
        "sourceRepos: ['https://github.com/example/*', '!https://github.com/example/fixtures']",
    )
    [(file, line, message)] = _hw325(check_dir, root)
    assert (file, line) == ("apps/checkout.yaml", 10)
    assert "is denied by !https://github.com/example/fixtures" in message


@pytest.mark.parametrize(
    ("destination", "refused"),
    [
        ("name: in-cluster\n    namespace: payments", True),  # in-cluster is known: judged
        ("server: https://kubernetes.default.svc\n    namespace: payments", True),
        ("name: prod\n    namespace: checkout", False),  # prod's server unknown: not judged
        ("name: in-cluster\n    namespace: checkout", False),
    ],
)
def test_a_destination_is_judged_only_where_check_knows_the_cluster(
    tmp_path: Path, check_dir: CheckDir, destination: str, refused: bool
) -> None:
    root = _repo(tmp_path, NEAR_MISS)
    _edit(root / "apps/checkout.yaml", "name: in-cluster\n    namespace: checkout", destination)
    found = [m for _f, _l, m in _hw325(check_dir, root) if "destination" in m]
    assert bool(found) is refused, found


def test_a_cluster_secret_in_the_repository_names_its_server(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    root = _repo(tmp_path, NEAR_MISS)
    _edit(root / "apps/checkout.yaml", "name: in-cluster", "name: prod")
    (root / "clusters.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: prod\n  namespace: argocd\n"
        "  labels: {argocd.argoproj.io/secret-type: cluster}\n"
        "stringData: {name: prod, server: 'https://prod.example.com'}\n"
    )
    [(file, _line, message)] = _hw325(check_dir, root)
    assert file == "apps/checkout.yaml"
    assert "server https://prod.example.com, name prod, namespace checkout" in message


def test_an_object_written_into_another_namespace_is_judged_there(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    root = _repo(tmp_path, NEAR_MISS)
    rbac = root / "services/checkout/rbac.yaml"
    _edit(rbac, "  name: checkout\n", "  name: checkout\n  namespace: kube-system\n")
    [(file, _line, message)] = _hw325(check_dir, root)
    assert file == "services/checkout/rbac.yaml"
    assert "core/ConfigMap checkout into namespace kube-system" in message


def test_a_custom_kind_is_cluster_scoped_when_its_crd_says_so(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    root = _repo(tmp_path, NEAR_MISS)
    (root / "services/checkout/quota.yaml").write_text(
        "apiVersion: example.com/v1\nkind: TeamQuota\nmetadata: {name: checkout}\n"
    )
    assert _hw325(check_dir, root) == []  # an unknown kind is taken as namespaced
    (root / "crds.yaml").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: teamquotas.example.com}\n"
        "spec:\n  group: example.com\n  scope: Cluster\n"
        "  names: {kind: TeamQuota, plural: teamquotas}\n"
        "  versions: [{name: v1, served: true, storage: true,"
        " schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]\n"
    )
    [(_file, _line, message)] = _hw325(check_dir, root)
    assert "example.com/TeamQuota checkout: cluster-scoped kind not in" in message


def test_a_project_the_repository_does_not_define_is_not_judged(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    root = _repo(tmp_path)
    (root / "projects/workloads.yaml").unlink()
    assert _hw325(check_dir, root) == []
