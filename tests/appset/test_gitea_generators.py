"""The scmProvider and pullRequest generators' Gitea provider in the ApplicationSet
controller, against a stateful fake Gitea (tests/appset/gitea_server.py): Argo CD's
parameters (labels are the repository's issue labels; https URLs are the web URL, as Argo CD
reads them), every page read, failures as conditions that change no Application, and the
forge policy: no Gitea host is allowed until the operator lists it."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from gitea_server import HOST, SHOP_SHA, FakeGitea, fake_gitea

from e2e_sync.e2e_helpers import API, default_project
from headway.appset.forge_policy import ForgePolicy, gitea_api_root
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.appset.controller import ApplicationSetController
from headway.controllers.manager import ObjectKey
from headway.source.git import GitCache

KEY = ObjectKey("argocd", "gitea-apps")
TOKEN = "giteatokengiteatokengiteatoken0123456789"
TOKEN_REF = {"secretName": "gitea-token", "key": "token"}


def _appset(generator: dict[str, Any], name: str) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ApplicationSet",
        "metadata": {"name": "gitea-apps", "namespace": "argocd"},
        "spec": {
            "goTemplate": True,
            "generators": [generator],
            "template": {
                "metadata": {"name": name, "annotations": {"all": "{{ toJson . }}"}},
                "spec": {
                    "project": "default",
                    "source": {"repoURL": f"https://{HOST}/x.git", "path": "deploy"},
                    "destination": {"server": "https://kubernetes.default.svc", "namespace": "a"},
                },
            },
        },
    }


def scm_set(
    api: str, clone_protocol: str = "", filters: Any = None, **gitea: Any
) -> dict[str, Any]:
    spec: dict[str, Any] = {"gitea": {"owner": "example-org", "api": api, "tokenRef": TOKEN_REF}}
    spec["gitea"].update(gitea)
    if clone_protocol:
        spec["cloneProtocol"] = clone_protocol
    if filters is not None:
        spec["filters"] = filters
    return _appset({"scmProvider": spec}, "{{.repository}}-{{.branchNormalized}}")


def pr_set(api: str, **gitea: Any) -> dict[str, Any]:
    spec = {"owner": "example-org", "repo": "shop", "api": api, "tokenRef": TOKEN_REF, **gitea}
    return _appset({"pullRequest": {"gitea": spec}}, "shop-{{.branch_slug}}-{{.number}}")


class World:
    def __init__(self, tmp_path: Path, store: LocalCluster, server: FakeGitea, allow: bool) -> None:
        self.store, self.server = store, server
        self.clock = VirtualClock()
        self.http = httpx2.Client(timeout=2.0)
        allowed = (server.url,) if allow else ()
        self.controller = ApplicationSetController(
            cluster=store,
            clock=self.clock,
            git=GitCache(tmp_path / "git-cache"),
            namespace="argocd",
            poll_seconds=180.0,
            http=self.http,
            forge_policy=ForgePolicy(allowed_api_urls=allowed),
        )
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": "gitea-token",
                "namespace": "argocd",
                "labels": {"argocd.argoproj.io/secret-type": "scm-creds"},
            },
            "data": {"token": base64.b64encode(TOKEN.encode()).decode()},
        }
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}
        for manifest in (namespace, default_project(), secret):
            store.apply(manifest, field_manager="t")
        self.api = server.url

    def apply(self, appset: dict[str, Any]) -> None:
        self.store.apply(appset, field_manager="t", force=True)
        self.controller.step(KEY)

    def params(self) -> dict[str, dict[str, Any]]:
        apps = self.store.list(API, "Application", namespace="argocd")
        return {
            a["metadata"]["name"]: json.loads(a["metadata"]["annotations"]["all"])
            for a in apps
            if not a["metadata"].get("deletionTimestamp")
        }

    def versions(self) -> dict[str, str]:
        apps = self.store.list(API, "Application", namespace="argocd")
        return {a["metadata"]["name"]: a["metadata"]["resourceVersion"] for a in apps}

    def error(self) -> str:
        status = self.store.get(API, "ApplicationSet", "gitea-apps", "argocd").get("status")
        conditions = {c["type"]: c for c in (status or {}).get("conditions") or []}
        return str(conditions["ErrorOccurred"]["message"])


def _world(tmp_path: Path, *, allow: bool) -> Iterator[World]:
    with (
        fake_gitea(FakeGitea()) as server,
        LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store,
    ):
        world = World(tmp_path, store, server, allow)
        yield world
        world.http.close()


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from _world(tmp_path, allow=True)


@pytest.fixture
def default_world(tmp_path: Path) -> Iterator[World]:
    yield from _world(tmp_path, allow=False)


def test_one_application_per_repository_with_argo_parameters(world: World) -> None:
    world.apply(scm_set(world.api))
    params = world.params()
    assert sorted(params) == ["billing-api-trunk", "legacy-portal-master", "shop-main"]
    assert params["shop-main"] == {
        "organization": "example-org",
        "repository": "shop",
        "repository_id": 11,
        "url": f"git@{HOST}:example-org/shop.git",
        "branch": "main",
        "branchNormalized": "main",
        "sha": SHOP_SHA,
        "short_sha": SHOP_SHA[:8],
        "short_sha_7": SHOP_SHA[:7],
        "labels": "team-web,tier-1",  # the repository's issue labels, as Argo CD reads them
    }
    listing = [r for r in world.server.requests if r.path == "/api/v1/orgs/example-org/repos"]
    assert len(listing) == 2  # every page, by Link: rel="next"
    assert listing[0].headers["authorization"] == f"token {TOKEN}"


def test_https_is_the_web_url_archived_can_be_left_out_all_branches(world: World) -> None:
    world.apply(scm_set(world.api, clone_protocol="https", excludeArchivedRepos=True))
    params = world.params()
    assert sorted(params) == ["billing-api-trunk", "shop-main"]
    assert params["shop-main"]["url"] == f"https://{HOST}/example-org/shop"
    world.apply(scm_set(world.api, allBranches=True))
    assert "billing-api-feature-refunds-v2" in world.params()
    assert "shop-release-2.x" in world.params()


def test_path_filters_read_contents_files_and_directories(world: World) -> None:
    world.apply(scm_set(world.api, filters=[{"pathsExist": ["deploy"]}]))
    assert sorted(world.params()) == ["billing-api-trunk", "legacy-portal-master", "shop-main"]
    world.apply(scm_set(world.api, filters=[{"pathsDoNotExist": ["DEPRECATED"]}]))
    assert sorted(world.params()) == ["billing-api-trunk", "shop-main"]


def test_a_missing_default_branch_is_an_error_as_in_argo(world: World) -> None:
    world.apply(scm_set(world.api))
    before = world.versions()
    world.server.data["branches"]["shop"] = []
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    assert "Gitea GET /repos/example-org/shop/branches/main: HTTP 404" in world.error()


def test_a_refused_call_keeps_every_application_and_hides_the_token(world: World) -> None:
    world.apply(scm_set(world.api))
    before = world.versions()
    world.server.refuse, world.server.refuse_only = (500, "internal error"), "/labels"
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    assert world.error() == (
        "scmProvider generator: Gitea GET /repos/example-org/shop/labels: HTTP 500: internal error"
    )
    assert TOKEN not in world.error()


def test_open_pull_requests_with_argo_parameters_and_labels(world: World) -> None:
    world.apply(pr_set(world.api))
    params = world.params()
    assert sorted(params) == [
        "shop-feature-cart-5",
        "shop-feature-search-3",
        "shop-fix-typo-docs-4",
    ]
    assert params["shop-feature-cart-5"]["labels"] == ["preview", "ui"]
    assert params["shop-feature-cart-5"]["author"] == "carol"
    assert params["shop-feature-cart-5"]["head_short_sha"] == "05bebebe"
    pulls = [r for r in world.server.requests if r.path.endswith("/pulls")]
    assert pulls[0].query["state"] == ["open"] and len(pulls) == 2
    world.apply(pr_set(world.api, labels=["preview"]))
    assert sorted(world.params()) == ["shop-feature-cart-5", "shop-feature-search-3"]


def test_an_unknown_repository_is_an_error_unless_the_set_says_continue(world: World) -> None:
    world.apply(pr_set(world.api, repo="renamed"))
    assert "Gitea GET /repos/example-org/renamed/pulls: HTTP 404" in world.error()


@pytest.mark.parametrize(
    ("appset", "expected"),
    [
        (scm_set(""), "scmProvider: gitea.api: api is required"),
        (pr_set("", repo=""), "pullRequest: gitea.repo: repo is required"),
    ],
)
def test_a_malformed_generator_names_its_field(
    world: World, appset: dict[str, Any], expected: str
) -> None:
    world.apply(appset)
    assert world.error().startswith(expected)
    assert world.server.requests == []


def test_no_gitea_host_is_allowed_until_the_operator_lists_it(default_world: World) -> None:
    default_world.apply(scm_set(default_world.api))
    error = default_world.error()
    assert error.startswith("scmProvider generator spec.generators[0].scmProvider.gitea.api: ")
    assert "Gitea has no public API allowed by default" in error
    assert default_world.server.requests == []


@pytest.mark.parametrize(
    ("api", "root"),
    [
        ("https://gitea.example.com", "https://gitea.example.com/api/v1"),
        ("https://gitea.example.com/api/v1/", "https://gitea.example.com/api/v1"),
        ("https://example.com/git/", "https://example.com/git/api/v1"),
    ],
)
def test_a_listed_gitea_root_is_allowed_with_or_without_api_v1(api: str, root: str) -> None:
    assert gitea_api_root(api) == root
    policy = ForgePolicy(allowed_api_urls=(api.removesuffix("/api/v1/"),))
    assert policy.api_refusal(api, "gitea") is None
    assert ForgePolicy().api_refusal(api, "gitea") is not None
    assert policy.api_refusal("https://gitea.example.com.evil.example", "gitea") is not None


def test_no_token_from_the_controllers_environment_is_sent(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Argo CD's Gitea clients send the controller's GITEA_TOKEN when a set names no
    tokenRef; Headway calls anonymously."""
    monkeypatch.setenv("GITEA_TOKEN", "fromtheenvironment0000000000000000000000")
    appset = pr_set(world.api)
    del appset["spec"]["generators"][0]["pullRequest"]["gitea"]["tokenRef"]
    world.apply(appset)
    assert len(world.params()) == 3
    assert all("authorization" not in r.headers for r in world.server.requests)
