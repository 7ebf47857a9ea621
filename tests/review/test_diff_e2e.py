"""`headway diff BASE..HEAD` on real Git repositories: directory, Kustomize, Helm with
`$values`, multi-source and app-of-apps, through the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pygit2
import pytest
from typer.testing import CliRunner

from check.conftest import FIXTURES
from check.gitrepo import commit_states
from headway.cli.main import app as cli
from review.repo import ORIGIN, GitopsRepo, application, config_map, deployment

runner = CliRunner()

CHART = "apiVersion: v2\nname: api\nversion: 0.1.0\n"
CHART_TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
        - name: api
          image: "registry.example.com/api:{{ .Values.tag }}"
"""
MULTI_SOURCE = f"""\
  sources:
    - repoURL: {ORIGIN}
      path: charts/api
      targetRevision: HEAD
      helm:
        valueFiles: [$values/env/prod/api.yaml]
    - repoURL: {ORIGIN}
      targetRevision: HEAD
      ref: values
"""
KUSTOMIZATION = "resources: [deployment.yaml]\nnamePrefix: prod-\n"


def _diff(root: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(cli, ["diff", "HEAD~1..HEAD", "--repo", str(root), *args])
    return result.exit_code, result.output


def _json(root: Path) -> dict[str, Any]:
    code, output = _diff(root, "--format", "json")
    assert code in (0, 1), output
    document: dict[str, Any] = json.loads(output)
    return document


def _apps(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["name"]: a for a in document["apps"]}


@pytest.fixture
def fleet(tmp_path: Path) -> GitopsRepo:
    """Four Applications, one per source kind, and an untouched one."""
    repo = GitopsRepo(tmp_path)
    repo.commit(
        {
            "apps/web.yaml": application("web", path="web"),
            "apps/shop.yaml": application("shop", path="kustomize/shop"),
            "apps/api.yaml": application("api", sources=MULTI_SOURCE),
            "apps/quiet.yaml": application("quiet", path="quiet"),
            "web/deploy.yaml": deployment("web", "shop/web:1.0"),
            "kustomize/shop/kustomization.yaml": KUSTOMIZATION,
            "kustomize/shop/deployment.yaml": deployment("shop", "shop/shop:1.0"),
            "charts/api/Chart.yaml": CHART,
            "charts/api/values.yaml": "replicas: 1\ntag: '1.0'\n",
            "charts/api/templates/deployment.yaml": CHART_TEMPLATE,
            "env/prod/api.yaml": "replicas: 3\n",
            "quiet/cm.yaml": config_map("quiet", a="1"),
        }
    )
    return repo


def test_a_values_file_change_diffs_the_helm_app_that_reads_it(fleet: GitopsRepo) -> None:
    fleet.commit({"env/prod/api.yaml": "replicas: 3\ntag: '2.0'\n"})
    apps = _apps(_json(fleet.root))
    assert list(apps) == ["api"]
    api = apps["api"]
    assert api["change"] == "changed"
    assert "it reads env/prod/api.yaml, which changed" in api["reasons"]
    [resource] = api["resources"]
    assert (resource["kind"], resource["name"], resource["change"]) == (
        "Deployment",
        "api",
        "changed",
    )
    assert "+      - image: registry.example.com/api:2.0" in resource["diff"]


def test_a_kustomize_base_change_renders_through_kustomize(fleet: GitopsRepo) -> None:
    fleet.commit({"kustomize/shop/deployment.yaml": deployment("shop", "shop/shop:2.0")})
    apps = _apps(_json(fleet.root))
    assert list(apps) == ["shop"]
    [resource] = apps["shop"]["resources"]
    assert resource["name"] == "prod-shop"  # the namePrefix shows the render really ran


def test_directory_app_added_removed_and_pruned(fleet: GitopsRepo) -> None:
    fleet.commit(
        {
            "web/deploy.yaml": deployment("web", "shop/web:2.0", wave=1),
            "web/cm.yaml": config_map("web-config", level="info"),
        }
    )
    fleet.commit({"web/cm.yaml": None, "apps/new.yaml": application("new", path="quiet")})
    document = _json(fleet.root)
    apps = _apps(document)
    assert apps["new"]["change"] == "added"
    web = apps["web"]
    assert (web["appNamespace"], web["namespace"]) == ("argocd", "shop")
    [removed] = web["resources"]
    assert (removed["kind"], removed["change"]) == ("ConfigMap", "removed")
    prunes = [p for step in web["sync"]["steps"] for p in step["prunes"]]
    assert prunes == ["ConfigMap/shop/web-config: deleted"]
    assert "quiet" not in apps  # `new` reads quiet/, but nothing under it changed


def test_app_of_apps_child_added_by_the_parent_render(fleet: GitopsRepo) -> None:
    fleet.commit(
        {
            "root/parent.yaml": application("root", path="children", namespace="argocd"),
            "children/child.yaml": application("child", path="quiet"),
        }
    )
    fleet.commit({"children/child.yaml": application("child", path="web")})
    apps = _apps(_json(fleet.root))
    assert set(apps) == {"root", "child"}
    child = apps["child"]
    assert child["change"] == "changed"
    assert "its Application manifest changed" in child["reasons"]
    kinds = sorted((r["kind"], r["change"]) for r in child["resources"])
    assert kinds == [("ConfigMap", "removed"), ("Deployment", "added")]


def test_no_affected_application_exits_0(fleet: GitopsRepo) -> None:
    fleet.commit({"README.md": "docs only\n"})
    code, output = _diff(fleet.root)
    assert code == 0, output
    assert "0 Applications affected" in output


def test_changes_exit_1_and_text_shows_the_diff(fleet: GitopsRepo) -> None:
    fleet.commit({"web/deploy.yaml": deployment("web", "shop/web:2.0")})
    code, output = _diff(fleet.root)
    assert code == 1, output
    # The Application as check and kubectl name it (its own namespace), then its destination;
    # before: "shop/web", the destination namespace where no Application is.
    assert "== Application argocd/web -> shop: changed" in output
    assert "+      - image: shop/web:2.0" in output


def test_head_that_does_not_render_exits_2(fleet: GitopsRepo) -> None:
    fleet.commit({"charts/api/templates/deployment.yaml": "{{ .Values.broken.field }\n"})
    code, output = _diff(fleet.root)
    assert code == 2, output
    assert "HEAD:" in output


@pytest.mark.parametrize("spec", ["HEAD", "..HEAD", "nope..HEAD"])
def test_bad_range_exits_2(fleet: GitopsRepo, spec: str) -> None:
    result = runner.invoke(cli, ["diff", spec, "--repo", str(fleet.root)])
    assert result.exit_code == 2
    assert "error:" in result.output


def test_three_dots_diff_from_the_fork_point(fleet: GitopsRepo) -> None:
    fork = fleet.commit({"web/deploy.yaml": deployment("web", "shop/web:2.0")})
    fleet.repo.branches.local.create("feature", fleet.repo[fork].peel(pygit2.Commit))
    fleet.commit({"quiet/cm.yaml": config_map("quiet", a="2")})  # main moves on
    fleet.repo.checkout("refs/heads/feature")
    fleet.commit({"kustomize/shop/deployment.yaml": deployment("shop", "shop/shop:3.0")})
    result = runner.invoke(
        cli, ["diff", "main...feature", "--repo", str(fleet.root), "--format", "json"]
    )
    apps = _apps(json.loads(result.output))
    assert list(apps) == ["shop"]  # main's own change to quiet/ is not the branch's


def test_findings_new_at_head_are_marked(fleet: GitopsRepo) -> None:
    project = "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: shop\n"
    fleet.commit({"apps/project.yaml": project})
    no_finalizer = application("web", path="web").replace(
        "  finalizers: [resources-finalizer.argocd.argoproj.io]\n", ""
    )
    fleet.commit({"apps/web.yaml": no_finalizer})
    web = _apps(_json(fleet.root))["web"]
    marked = {(f["rule"], f["new"]) for f in web["findings"]}
    assert ("HW303", True) in marked


APPSET = f"""\
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: services
  namespace: argocd
spec:
  generators:
    - git:
        repoURL: {ORIGIN}
        revision: HEAD
        directories:
          - path: services/*
  template:
    metadata:
      name: "svc-{{{{path.basename}}}}"
      finalizers: [resources-finalizer.argocd.argoproj.io]
    spec:
      project: shop
      source:
        repoURL: {ORIGIN}
        targetRevision: HEAD
        path: "{{{{path}}}}"
      destination:
        server: https://kubernetes.default.svc
        namespace: "{{{{path.basename}}}}"
"""


def test_applicationset_generated_apps_are_found_and_diffed(tmp_path: Path) -> None:
    repo = GitopsRepo(tmp_path)
    repo.commit(
        {
            "sets/services.yaml": APPSET,
            "services/cart/cm.yaml": config_map("cart", level="info"),
            "services/pay/cm.yaml": config_map("pay", level="info"),
        }
    )
    repo.commit(
        {
            "services/cart/cm.yaml": config_map("cart", level="debug"),
            "services/search/cm.yaml": config_map("search", level="info"),
        }
    )
    apps = _apps(_json(tmp_path))
    assert {name: a["change"] for name, a in apps.items()} == {
        "svc-cart": "changed",
        "svc-search": "added",
    }
    [resource] = apps["svc-cart"]["resources"]
    assert (resource["namespace"], resource["name"]) == ("cart", "cart")


def test_the_state_between_two_merges_is_a_new_finding(tmp_path: Path) -> None:
    """Seed 002 §5.4: keys moved to a new values file while the valueFiles list changed; the
    end states are fine, the state in between drops an env var (HW401)."""
    case = FIXTURES / "HW401-transition-drops-key" / "found"
    commit_states(tmp_path, case / "before", case / "after")
    apps = _apps(_json(tmp_path))
    marked = [(f["rule"], f["new"]) for f in apps["payments-prod"]["findings"]]
    assert ("HW401", True) in marked


def test_a_yaml_error_at_head_is_named_not_read_as_a_removal(fleet: GitopsRepo) -> None:
    broken = application("web", path="web").replace("spec:\n", "spec:\n  bad: [\n", 1)
    fleet.commit({"apps/web.yaml": broken})
    code, output = _diff(fleet.root)
    assert code == 2, output
    assert "error: HEAD: apps/web.yaml:" in output
    assert "YAML syntax error" in output
    document = json.loads(_diff(fleet.root, "--format", "json")[1])
    assert document["problems"] and document["problems"][0].startswith("HEAD: apps/web.yaml:")


def test_a_plugin_app_renders_through_the_plugins_dir(tmp_path: Path) -> None:
    """`headway diff --plugins-dir`: the plugin runs at both commits, in the checkout's
    files of each; without the directory the head does not render and says why."""
    plugins = tmp_path / "plugins" / "upper"
    plugins.mkdir(parents=True)
    (plugins / "plugin.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\n"
        "metadata: {name: upper}\nspec:\n"
        "  generate: {command: [cat, cm.tmpl]}\n"
    )
    template = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: upper}\ndata:\n  level: "
    repo = GitopsRepo(tmp_path / "repo")
    repo.commit(
        {
            "apps/upper.yaml": application("upper", path="upper").replace(
                "targetRevision: HEAD\n", "targetRevision: HEAD\n    plugin: {name: upper}\n"
            ),
            "upper/cm.tmpl": template + "info\n",
        }
    )
    repo.commit({"upper/cm.tmpl": template + "debug\n"})
    code, output = _diff(repo.root, "--format", "json", "--plugins-dir", str(tmp_path / "plugins"))
    assert code == 1, output
    [resource] = _apps(json.loads(output))["upper"]["resources"]
    assert (resource["kind"], resource["name"], resource["change"]) == (
        "ConfigMap",
        "upper",
        "changed",
    )
    assert "+  level: debug" in resource["diff"]
    code, output = _diff(repo.root)
    assert code == 2
    assert "no plugin 'upper' (no plugins are configured" in output
