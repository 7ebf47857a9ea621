"""The Helm renderer for real (Helm SDK), from Git trees, including multi-source `$values`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headway.model.diagnostics import Severity
from headway.source.errors import RenderError, ToolNotInstalled
from headway.source.git import GitCache, GitRepository
from headway.source.helm_values import merge_maps, set_expression
from headway.source.render import RenderRequest, RenderResult, choose_renderer, render
from headway.source.render_helm import split_helm_output
from headway.source.spec import ApplicationSource
from headway.source.tree import GitTree
from source.gitrepos import FIXTURES, Upstream, add_tree, make_upstream


@pytest.fixture(autouse=True)
def _helm_sdk() -> None:
    from source.gitrepos import require_extra

    require_extra("helm_python", "helm")


@pytest.fixture
def infra(tmp_path: Path, cache: GitCache) -> tuple[Upstream, GitRepository]:
    up = make_upstream(tmp_path / "infra.git", {"README.md": "infra"})
    add_tree(up, "main", FIXTURES / "helm" / "checkout", "charts/checkout", "chart")
    add_tree(up, "main", FIXTURES / "helm" / "values", "", "values")
    repo = cache.repository(up.url)
    repo.fetch()
    return up, repo


def _by_kind(result: RenderResult) -> dict[str, dict[str, Any]]:
    return {doc.kind: doc.obj for doc in result.documents}


def _request(tree: GitTree, source: ApplicationSource, **kw: Any) -> RenderRequest:
    return RenderRequest(source=source, tree=tree, app_name="checkout-prod", **kw)


def test_chart_renders_with_defaults(infra: tuple[Upstream, GitRepository]) -> None:
    _, repo = infra
    request = _request(repo.tree("main"), {"path": "charts/checkout"}, namespace="shop")
    assert choose_renderer(request).name == "Helm"
    result = render(request)
    assert result.ok, result.diagnostics
    objs = _by_kind(result)
    assert set(objs) == {"Rollout", "Service", "CustomResourceDefinition", "Pod"}
    rollout = objs["Rollout"]
    assert rollout["metadata"]["name"] == "checkout-prod-checkout"
    assert rollout["metadata"]["namespace"] == "shop"
    assert rollout["metadata"]["labels"]["helm.sh/chart"] == "checkout-0.3.0"
    container = rollout["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example.com/checkout:1.0.0"
    assert {"name": "REGION", "value": "eu-west-1"} in container["env"]
    files = {doc.kind: doc.file for doc in result.documents}
    assert files["Rollout"] == "charts/checkout/templates/rollout.yaml"
    assert files["CustomResourceDefinition"] == "charts/checkout/crds/widgets.yaml"


def test_release_name_value_files_values_and_parameters(
    infra: tuple[Upstream, GitRepository],
) -> None:
    _, repo = infra
    source: ApplicationSource = {
        "path": "charts/checkout",
        "helm": {
            "releaseName": "shop",
            "valueFiles": ["values.yaml", "values-staging.yaml"],
            "values": "service:\n  port: 9090\n",
            "parameters": [
                {"name": "image.tag", "value": "1.10", "forceString": True},
                {"name": "env.LOG_LEVEL", "value": "warn,error"},
                {"name": "replicas", "value": "7"},
            ],
            "skipCrds": True,
            "skipTests": True,
        },
    }
    result = render(_request(repo.tree("main"), source))
    objs = _by_kind(result)
    assert set(objs) == {"Rollout", "Service"}
    rollout = objs["Rollout"]
    assert rollout["metadata"]["name"] == "shop-checkout"
    assert rollout["spec"]["replicas"] == 7
    container = rollout["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example.com/checkout:1.10"  # not the float 1.1
    assert {"name": "LOG_LEVEL", "value": "warn,error"} in container["env"]
    assert objs["Service"]["spec"]["ports"][0]["port"] == 9090


def test_values_object_replaces_values_string(infra: tuple[Upstream, GitRepository]) -> None:
    _, repo = infra
    source: ApplicationSource = {
        "path": "charts/checkout",
        "helm": {"values": "replicas: 9\n", "valuesObject": {"service": {"port": 7070}}},
    }
    objs = _by_kind(render(_request(repo.tree("main"), source)))
    assert objs["Service"]["spec"]["ports"][0]["port"] == 7070
    assert objs["Rollout"]["spec"]["replicas"] == 2


def _multi_source(values_tree: GitTree, chart_tree: GitTree) -> RenderRequest:
    source: ApplicationSource = {
        "path": "charts/checkout",
        "helm": {
            "valueFiles": [
                "values.yaml",
                "$values/argocd/apps/values-prod.yaml",
                "$values/argocd/apps/checkout/values-prod.yaml",
            ]
        },
    }
    return _request(chart_tree, source, refs={"values": values_tree})


def test_multi_source_values_from_another_repository(
    infra: tuple[Upstream, GitRepository], tmp_path: Path, cache: GitCache
) -> None:
    _, chart_repo = infra
    values_up = make_upstream(tmp_path / "values.git", {"README.md": "values"})
    add_tree(values_up, "main", FIXTURES / "helm" / "values", "", "values")
    values_repo = cache.repository(values_up.url)
    values_repo.fetch()
    result = render(_multi_source(values_repo.tree("HEAD"), chart_repo.tree("main")))
    rollout = _by_kind(result)["Rollout"]
    assert rollout["spec"]["replicas"] == 6  # the app's prod file wins over the env-wide one
    container = rollout["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example.com/checkout:2.4.1"
    assert {"name": "REGION", "value": "us-east-1"} in container["env"]


def test_missing_value_file_is_an_error_naming_it(
    infra: tuple[Upstream, GitRepository],
) -> None:
    up, repo = infra
    up.commit("main", {"argocd/apps/checkout/values-prod.yaml": None}, "rename prod values")
    repo.fetch()
    request = _multi_source(repo.tree("main"), repo.tree("main"))
    with pytest.raises(RenderError, match=r"\$values/argocd/apps/checkout/values-prod\.yaml"):
        render(request)


def test_ignore_missing_value_files_warns(infra: tuple[Upstream, GitRepository]) -> None:
    up, repo = infra
    up.commit("main", {"argocd/apps/checkout/values-prod.yaml": None}, "rename prod values")
    repo.fetch()
    request = _multi_source(repo.tree("main"), repo.tree("main"))
    helm = dict(request.source["helm"])
    helm["ignoreMissingValueFiles"] = True
    source: ApplicationSource = {"path": "charts/checkout", "helm": helm}  # type: ignore[typeddict-item]
    result = render(RenderRequest(source, request.tree, "checkout-prod", refs=request.refs))
    assert result.ok
    warnings = [d for d in result.diagnostics if d.severity is Severity.WARNING]
    assert [w.file for w in warnings] == ["$values/argocd/apps/checkout/values-prod.yaml"]
    assert _by_kind(result)["Rollout"]["spec"]["replicas"] == 4  # silently on env defaults


@pytest.mark.parametrize(
    ("value_file", "message"),
    [
        ("$other/values.yaml", r"no source of the Application has `ref: other`"),
        ("envs/$values/prod.yaml", r"must be the first path segment"),
        ("https://example.com/values.yaml", r"remote value files"),
    ],
)
def test_bad_value_file_references(
    infra: tuple[Upstream, GitRepository], value_file: str, message: str
) -> None:
    _, repo = infra
    tree = repo.tree("main")
    source: ApplicationSource = {"path": "charts/checkout", "helm": {"valueFiles": [value_file]}}
    with pytest.raises(RenderError, match=message):
        render(_request(tree, source, refs={"values": tree}))


def test_template_error_is_a_render_error(infra: tuple[Upstream, GitRepository]) -> None:
    _, repo = infra
    source: ApplicationSource = {"path": "charts/checkout", "helm": {"valuesObject": {"image": 5}}}
    with pytest.raises(RenderError, match=r"helm template failed: .*rollout\.yaml"):
        render(_request(repo.tree("main"), source))


def test_merge_maps_and_set_expressions() -> None:
    base = {"a": {"b": 1, "c": 2}, "d": [1]}
    assert merge_maps(base, {"a": {"c": 3}, "d": [2]}) == {"a": {"b": 1, "c": 3}, "d": [2]}
    assert merge_maps(base, {"a": None}) == {"a": None, "d": [1]}
    assert set_expression("x", "a,b") == "x=a\\,b"
    assert set_expression("x", "{a,b}") == "x={a,b}"
    assert set_expression("x", "a\\,b") == "x=a\\,b"


def test_split_helm_binary_output() -> None:
    text = (
        "---\n# Source: c/templates/a.yaml\nkind: A\n---\n# Source: c/templates/a.yaml\n"
        "kind: A2\n---\n# Source: c/templates/b.yaml\nkind: B\n"
    )
    parts = split_helm_output(text)
    assert sorted(parts) == ["c/templates/a.yaml", "c/templates/b.yaml"]
    assert "kind: A2" in parts["c/templates/a.yaml"] and "kind: A\n" in parts["c/templates/a.yaml"]


def test_file_dependency_library_chart(infra: tuple[Upstream, GitRepository]) -> None:
    up, repo = infra
    add_tree(up, "main", FIXTURES / "helm" / "common", "charts/common", "library")
    add_tree(up, "main", FIXTURES / "helm" / "payments", "charts/payments", "payments")
    repo.fetch()
    request = _request(repo.tree("main"), {"path": "charts/payments"})
    result = render(request)
    assert result.ok, result.diagnostics
    (configmap,) = result.documents
    assert configmap.file == "charts/payments/templates/configmap.yaml"
    assert configmap.obj["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/part-of": "payments-platform",
    }
    # A change to the library alone changes the render inputs (and so the cache key).
    before = choose_renderer(request).inputs(request)
    up.commit("main", {"charts/common/templates/_extra.tpl": "{{/* more */}}"})
    repo.fetch()
    after = choose_renderer(request).inputs(
        _request(repo.tree("main"), {"path": "charts/payments"})
    )
    assert before != after


def test_remote_dependency_not_vendored_is_an_error(infra: tuple[Upstream, GitRepository]) -> None:
    up, repo = infra
    chart = (
        "apiVersion: v2\nname: web\nversion: 0.1.0\ndependencies:\n"
        "  - name: redis\n    version: 19.0.0\n    repository: https://charts.example.com\n"
    )
    up.commit("main", {"charts/web/Chart.yaml": chart, "charts/web/templates/a.yaml": ""})
    repo.fetch()
    with pytest.raises(RenderError, match=r"redis \(https://charts\.example\.com\).*vendor"):
        render(_request(repo.tree("main"), {"path": "charts/web"}))


def test_missing_helm_names_the_extra(
    infra: tuple[Upstream, GitRepository], monkeypatch: pytest.MonkeyPatch
) -> None:
    from headway.source import render_helm, tools

    _, repo = infra
    monkeypatch.setattr(render_helm, "helm_sdk_available", lambda: False)
    monkeypatch.setattr(tools.shutil, "which", lambda name: None)
    with pytest.raises(ToolNotInstalled, match=r"pip install 'headway\[helm\]'"):
        render(_request(repo.tree("main"), {"path": "charts/checkout"}))


def test_unsupported_helm_field_is_an_error(infra: tuple[Upstream, GitRepository]) -> None:
    _, repo = infra
    source: ApplicationSource = {"path": "charts/checkout", "helm": {"fileParameters": []}}  # type: ignore[typeddict-unknown-key]
    with pytest.raises(RenderError, match="fileParameters not supported"):
        render(_request(repo.tree("main"), source))


def test_application_sources_end_to_end(
    infra: tuple[Upstream, GitRepository], tmp_path: Path, cache: GitCache
) -> None:
    from headway.source.sources import render_requests, resolve_sources

    up, _ = infra
    values_up = make_upstream(tmp_path / "values.git", {"README.md": "values"})
    add_tree(values_up, "main", FIXTURES / "helm" / "values", "", "values")
    tagged = values_up.tip("main")
    values_up.tag("v1.0.0", tagged)
    values_up.commit("main", {"argocd/apps/checkout/values-prod.yaml": "replicas: 1\n"}, "later")
    sources: list[ApplicationSource] = [
        {"repoURL": values_up.url, "targetRevision": "v1.0.0", "ref": "values"},
        {
            "repoURL": up.url,
            "targetRevision": "HEAD",
            "path": "charts/checkout",
            "helm": {"valueFiles": ["$values/argocd/apps/checkout/values-prod.yaml"]},
        },
    ]
    resolved = resolve_sources(sources, cache=cache)
    assert [r.sha for r in resolved] == [tagged, up.tip("main")]
    requests = render_requests(resolved, app_name="checkout-prod", namespace="shop")
    assert len(requests) == 1  # the ref-only source renders nothing itself
    rollout = _by_kind(render(requests[0]))["Rollout"]
    assert rollout["spec"]["replicas"] == 6  # from the tagged values, not the later commit
    with pytest.raises(RenderError, match="used by two sources"):
        render_requests([resolved[0], resolved[0]], app_name="x")


def test_helm_program_fallback_arguments(
    infra: tuple[Upstream, GitRepository], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the SDK, `helm template` on PATH is run; a recording stand-in checks our side.

    (No real helm program is installed on these machines; the SDK path is the tested one.)
    """
    import json
    import sys

    from headway.source import render_helm

    record = tmp_path / "argv.json"
    fake = tmp_path / "bin" / "helm"
    fake.parent.mkdir()
    fake.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"json.dump(sys.argv[1:], open({str(record)!r}, 'w'))\n"
        "print('---\\n# Source: checkout/templates/a.yaml\\n'"
        "      'apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: a}')\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(render_helm, "helm_sdk_available", lambda: False)
    monkeypatch.setenv("PATH", str(fake.parent))
    _, repo = infra
    source: ApplicationSource = {
        "path": "charts/checkout",
        "helm": {
            "parameters": [
                {"name": "a", "value": "1,2"},
                {"name": "b", "value": "x", "forceString": True},
            ]
        },
    }
    result = render(_request(repo.tree("main"), source, namespace="shop"))
    assert [(d.file, d.name) for d in result.documents] == [
        ("charts/checkout/templates/a.yaml", "a")
    ]
    argv = json.loads(record.read_text())
    assert argv[0] == "template" and argv[1].endswith("/tree/charts/checkout")
    assert argv[argv.index("--name-template") + 1] == "checkout-prod"
    assert argv[argv.index("--namespace") + 1] == "shop"
    assert argv[argv.index("--set") + 1] == "a=1\\,2"
    assert argv[argv.index("--set-string") + 1] == "b=x"
    assert "--include-crds" in argv
