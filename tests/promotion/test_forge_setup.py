"""A pipeline's `spec.forge`: the token comes from the Secret it names, the repository from the
clone URL, and whatever is missing is a reason the promotion shows, not a crash."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest

from headway.appset.forge_policy import ForgePolicy
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.model.promotion_pipeline import ForgeSettings, GitHubSettings, SecretKey
from headway.promotion.environments import PipelineResolver
from headway.promotion.forge_setup import forge_for
from headway.promotion.record import PromotionSpec
from headway.source.git import GitCache

NS = "argocd"
SCM_CREDS = {"argocd.argoproj.io/secret-type": "scm-creds"}
GITHUB_URL = "https://github.com/example-org/infra.git"
SETTINGS = ForgeSettings(GitHubSettings("https://api.github.com", SecretKey("gh", "token")))


def _secret(data: dict[str, str] | None = None, string: dict[str, str] | None = None) -> Any:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret"}
    obj["metadata"] = {"name": "gh", "namespace": NS, "labels": SCM_CREDS}
    if data is not None:
        obj["data"] = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    if string is not None:
        obj["stringData"] = string
    return obj


@pytest.fixture
def store(tmp_path: Path) -> LocalCluster:
    cluster = LocalCluster(tmp_path / "cluster.db", VirtualClock())
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
    cluster.apply(namespace, field_manager="test")
    return cluster


def test_the_token_comes_from_the_secret_and_the_repository_from_the_url(
    store: LocalCluster,
) -> None:
    store.apply(_secret(data={"token": "ghp_fromsecret\n"}), field_manager="test")
    seen: list[httpx2.Request] = []

    def github(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=[])

    client = httpx2.Client(transport=httpx2.MockTransport(github))
    forge = forge_for(
        SETTINGS, cluster=store, namespace=NS, url=GITHUB_URL, client=client, policy=ForgePolicy()
    )
    assert not isinstance(forge, str)
    assert forge.find_pull_request(head="headway/p1") is None
    [request] = seen
    assert request.url.path == "/repos/example-org/infra/pulls"
    assert request.headers["authorization"] == "Bearer ghp_fromsecret"


@pytest.mark.parametrize(
    ("secret", "url", "reason"),
    [
        (None, GITHUB_URL, "spec.forge.github.tokenSecret: Secret argocd/gh not found"),
        (_secret(data={"other": "x"}), GITHUB_URL, "Secret argocd/gh has no key 'token'"),
        (_secret(string={"token": "t"}), "https://gitlab.com/o/r.git", "needs a github.com"),
    ],
)
def test_a_forge_that_cannot_be_set_up_is_a_reason(
    store: LocalCluster, secret: Any, url: str, reason: str
) -> None:
    if secret is not None:
        store.apply(secret, field_manager="test")
    client = httpx2.Client(transport=httpx2.MockTransport(lambda r: httpx2.Response(500)))
    found = forge_for(
        SETTINGS, cluster=store, namespace=NS, url=url, client=client, policy=ForgePolicy()
    )
    assert isinstance(found, str) and reason in found


@pytest.mark.parametrize(
    ("api", "labels", "policy", "reason"),
    [
        (
            "https://ghe.evil.example/api/v3",
            SCM_CREDS,
            ForgePolicy(),
            "spec.forge.github.apiURL: API URL 'https://ghe.evil.example/api/v3' is not allowed",
        ),
        (
            "https://api.github.com",
            {},
            ForgePolicy(),
            "spec.forge.github.tokenSecret: Secret argocd/gh is not labelled "
            "argocd.argoproj.io/secret-type: scm-creds",
        ),
        (
            "https://ghe.example.com/api/v3",
            SCM_CREDS,
            ForgePolicy(enabled=False, allowed_api_urls=("https://ghe.example.com",)),
            "spec.forge.github.apiURL: SCM providers are disabled",
        ),
    ],
)
def test_a_pipeline_cannot_send_its_token_where_the_operator_did_not_allow(
    store: LocalCluster, api: str, labels: dict[str, str], policy: ForgePolicy, reason: str
) -> None:
    """A pipeline comes from Git: its author chooses `apiURL` and `tokenSecret`. The token
    goes only where `headway serve --allowed-scm-providers` allows, from a Secret labelled
    for forge tokens; otherwise the promotion shows why, and no request is made."""
    secret = _secret(string={"token": "ghp_mustnotleave"})
    secret["metadata"]["labels"] = labels
    store.apply(secret, field_manager="test")
    seen: list[httpx2.Request] = []

    def anywhere(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=[])

    settings = ForgeSettings(GitHubSettings(api, SecretKey("gh", "token")))
    client = httpx2.Client(transport=httpx2.MockTransport(anywhere))
    found = forge_for(
        settings, cluster=store, namespace=NS, url=GITHUB_URL, client=client, policy=policy
    )
    assert isinstance(found, str) and found.startswith(reason)
    assert "ghp_mustnotleave" not in found
    assert seen == []


def test_an_allowed_enterprise_api_gets_the_token(store: LocalCluster) -> None:
    store.apply(_secret(string={"token": "ghp_enterprise"}), field_manager="test")
    seen: list[httpx2.Request] = []

    def ghe(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=[])

    api = "https://ghe.example.com/api/v3"
    settings = ForgeSettings(GitHubSettings(api, SecretKey("gh", "token")))
    policy = ForgePolicy(allowed_api_urls=("https://ghe.example.com/",))
    client = httpx2.Client(transport=httpx2.MockTransport(ghe))
    forge = forge_for(
        settings, cluster=store, namespace=NS, url=GITHUB_URL, client=client, policy=policy
    )
    assert not isinstance(forge, str)
    assert forge.find_pull_request(head="headway/p1") is None
    [request] = seen
    assert request.url.host == "ghe.example.com"
    assert request.headers["authorization"] == "Bearer ghp_enterprise"


def test_the_resolver_shows_a_missing_token_on_the_promotion(
    store: LocalCluster, tmp_path: Path
) -> None:
    target = {"file": "values-dev.yaml", "helm": {"key": "image.tag"}}
    store.apply(
        {
            "apiVersion": "headway.dev/v1alpha1",
            "kind": "PromotionPipeline",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {
                "image": "registry.local/web",
                "forge": {"github": {"tokenSecret": {"name": "gh", "key": "token"}}},
                "environments": [{"name": "dev", "application": "web-dev", "target": target}],
            },
        },
        field_manager="test",
    )
    store.apply(
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Application",
            "metadata": {"name": "web-dev", "namespace": NS},
            "spec": {
                "project": "default",
                "source": {"repoURL": GITHUB_URL, "targetRevision": "main", "path": "."},
                "destination": {"server": "https://kubernetes.default.svc", "namespace": "web"},
            },
        },
        field_manager="test",
    )
    resolver = PipelineResolver(store, git=GitCache(tmp_path / "git"))
    spec = PromotionSpec("p1", NS, "web", "dev", "registry.local/web:v2", "dev", datetime.now(UTC))
    assert resolver(spec) == "spec.forge.github.tokenSecret: Secret argocd/gh not found"
