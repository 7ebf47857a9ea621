"""`headway diff BASE..HEAD` compares the two renders with the repository's argocd-cm
`resource.compareoptions` at HEAD, as the controller will compare them with the live objects.

Before: the review always used Argo CD's defaults, so with `ignoreResourceStatusField: none` a
change to a manifest's `status` (which the controller then compares, and reports) did not
show, and with `ignoreAggregatedRoles: true` a change to an aggregated ClusterRole's `rules`
(which the controller ignores, as the aggregation controller writes them) did.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from headway.cli.main import app as cli
from review.repo import GitopsRepo, application, deployment


def _argocd_cm(options: str) -> str:
    body = "".join(f"    {line}\n" for line in options.splitlines())
    return (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\n"
        f"data:\n  resource.compareoptions: |\n{body}"
    )


def _aggregated_role(verbs: str) -> str:
    return (
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n"
        "metadata:\n  name: web-view\n"
        "aggregationRule:\n  clusterRoleSelectors:\n"
        "  - matchLabels: {rbac.example.com/aggregate-to-web: 'true'}\n"
        f"rules:\n- apiGroups: ['']\n  resources: [pods]\n  verbs: [{verbs}]\n"
    )


def _review(root: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["diff", "HEAD~1..HEAD", "--repo", str(root), "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    document: dict[str, Any] = json.loads(result.output)
    return document


def _changed(document: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["kind"], r["change"]) for a in document["apps"] for r in a["resources"]]


def _commit_pair(
    tmp_path: Path, *, argocd_cm: str | None, before: str, after: str
) -> dict[str, Any]:
    repo = GitopsRepo(tmp_path)
    files = {"apps/web.yaml": application("web", path="web"), "web/object.yaml": before}
    if argocd_cm is not None:
        files["argocd/argocd-cm.yaml"] = argocd_cm
    repo.commit(files)
    repo.commit({"web/object.yaml": after})
    return _review(repo.root)


def _with_status(replicas: int) -> str:
    return deployment("web", "shop/web:1.0") + f"status:\n  replicas: {replicas}\n"


@pytest.mark.parametrize(
    ("options", "shown"),
    [
        (None, []),  # Argo CD 3's default: no status is compared
        ("ignoreResourceStatusField: all", []),
        ("ignoreResourceStatusField: crd", [("Deployment", "changed")]),
        ("ignoreResourceStatusField: none", [("Deployment", "changed")]),
    ],
)
def test_a_status_change_shows_when_the_controller_compares_status(
    tmp_path: Path, options: str | None, shown: list[tuple[str, str]]
) -> None:
    document = _commit_pair(
        tmp_path,
        argocd_cm=None if options is None else _argocd_cm(options),
        before=_with_status(1),
        after=_with_status(3),
    )
    assert _changed(document) == shown


@pytest.mark.parametrize(
    ("options", "shown"),
    [
        (None, [("ClusterRole", "changed")]),
        ("ignoreAggregatedRoles: false", [("ClusterRole", "changed")]),
        ("ignoreAggregatedRoles: true", []),
    ],
)
def test_an_aggregated_roles_rules_hide_only_when_the_controller_ignores_them(
    tmp_path: Path, options: str | None, shown: list[tuple[str, str]]
) -> None:
    document = _commit_pair(
        tmp_path,
        argocd_cm=None if options is None else _argocd_cm(options),
        before=_aggregated_role("get"),
        after=_aggregated_role("get, list"),
    )
    assert _changed(document) == shown


def test_argocd_cms_that_disagree_compare_the_most(tmp_path: Path) -> None:
    """Two argocd-cm ConfigMaps in the repository (one per environment, say) with different
    options: the review compares what either would (status compared, aggregated rules
    kept)."""
    repo = GitopsRepo(tmp_path)
    repo.commit({
        "apps/web.yaml": application("web", path="web"),
        "web/object.yaml": _with_status(1),
        "prod/argocd-cm.yaml": _argocd_cm("ignoreResourceStatusField: none"),
        "staging/argocd-cm.yaml": _argocd_cm(
            "ignoreResourceStatusField: all\nignoreAggregatedRoles: true"
        ),
    })  # fmt: skip
    repo.commit({"web/object.yaml": _with_status(3)})
    document = _review(repo.root)
    assert _changed(document) == [("Deployment", "changed")]
    assert document["problems"] == []
