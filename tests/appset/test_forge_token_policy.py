"""A forge token only goes where the operator allows (docs/reliability.md).

An ApplicationSet comes from Git, so whoever commits one chooses the pullRequest or
scmProvider generator's `api:` URL and its `tokenRef` Secret. These tests run the
ApplicationSet controller against real local GitHub servers that count every request: a URL
the operator did not allow, a Secret not labelled for forge tokens, or generators disabled
on the controller is a condition naming the generator's index and field, sent to no server,
and the token appears in no status or Event."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from forge_servers import GitHubOrg, GitHubPulls, github_org, github_pulls

from e2e_sync.e2e_helpers import API, default_project
from headway.appset.forge_policy import ForgePolicy
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.appset.controller import ApplicationSetController
from headway.controllers.manager import ObjectKey
from headway.source.git import GitCache

KEY = ObjectKey("argocd", "forge-set")
TOKEN = "ghp_mustnotleavemustnotleave012345"
SCM_CREDS = {"argocd.argoproj.io/secret-type": "scm-creds"}


@dataclass
class Servers:
    """The two fake GitHub Enterprise servers; `requests()` counts what reached either."""

    pulls: GitHubPulls
    org: GitHubOrg

    def requests(self) -> int:
        return len(self.pulls.requests) + len(self.org.requests)


@pytest.fixture
def servers() -> Iterator[Servers]:
    with github_pulls(GitHubPulls()) as pulls, github_org(GitHubOrg()) as org:
        yield Servers(pulls, org)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "cluster.db", VirtualClock()) as cluster:
        for manifest in (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
            default_project(),
        ):
            cluster.apply(manifest, field_manager="t")
        yield cluster


def _secret(labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "github-token", "namespace": "argocd", "labels": labels},
        "data": {"token": base64.b64encode(TOKEN.encode()).decode()},
    }


def _generator(kind: str, api: str) -> dict[str, Any]:
    token = {"secretName": "github-token", "key": "token"}
    github: dict[str, Any] = {"api": api, "tokenRef": token}
    if kind == "pullRequest":
        github.update(owner="example-org", repo="shop")
    else:
        github.update(organization="example-org")
    return {kind: {"github": github}}


def _appset(generators: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ApplicationSet",
        "metadata": {"name": "forge-set", "namespace": "argocd"},
        "spec": {
            "goTemplate": True,
            "generators": generators,
            "template": {
                "metadata": {"name": "app-{{.branch}}"},
                "spec": {
                    "project": "default",
                    "source": {"repoURL": "https://example.com/r.git", "path": "."},
                    "destination": {"server": "https://kubernetes.default.svc"},
                },
            },
        },
    }


def _run(
    tmp_path: Path, store: LocalCluster, appset: dict[str, Any], policy: ForgePolicy
) -> dict[str, Any]:
    """One controller step over `appset`; the set's ErrorOccurred condition."""
    with ExitStack() as stack:
        http = stack.enter_context(httpx2.Client(timeout=2.0))
        controller = ApplicationSetController(
            cluster=store, clock=VirtualClock(), git=GitCache(tmp_path / "git-cache"),
            namespace="argocd", poll_seconds=180.0, http=http, forge_policy=policy,
        )
        store.apply(appset, field_manager="t", force=True)
        controller.step(KEY)
    status = store.get(API, "ApplicationSet", "forge-set", "argocd").get("status") or {}
    conditions = {c["type"]: c for c in status.get("conditions") or []}
    assert TOKEN not in json.dumps(status)
    assert TOKEN not in json.dumps(store.list("v1", "Event", namespace="argocd"))
    assert store.list(API, "Application", namespace="argocd") == []
    return conditions["ErrorOccurred"]


def _api(servers: Servers, kind: str) -> str:
    server = servers.pulls if kind == "pullRequest" else servers.org
    return server.url.removesuffix("/api/v3")


KINDS = ["pullRequest", "scmProvider"]


@pytest.mark.parametrize("kind", KINDS)
def test_an_api_url_the_operator_did_not_allow_gets_no_request(
    tmp_path: Path, store: LocalCluster, servers: Servers, kind: str
) -> None:
    store.apply(_secret(SCM_CREDS), field_manager="t")
    api = _api(servers, kind)
    error = _run(tmp_path, store, _appset([_generator(kind, api)]), ForgePolicy())
    assert error["reason"] == "ApplicationGenerationFromParamsError"
    assert error["message"].startswith(
        f"{kind} generator spec.generators[0].{kind}.github.api: API URL '{api}' is not allowed"
    )
    assert "https://api.github.com" in error["message"]
    assert servers.requests() == 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_token_secret_without_the_scm_creds_label_is_not_sent(
    tmp_path: Path, store: LocalCluster, servers: Servers, kind: str
) -> None:
    store.apply(_secret({"argocd.argoproj.io/secret-type": "repository"}), field_manager="t")
    api = _api(servers, kind)
    allowed = ForgePolicy(allowed_api_urls=(api,))
    error = _run(tmp_path, store, _appset([_generator(kind, api)]), allowed)
    assert error["message"] == (
        f"{kind} generator spec.generators[0].{kind}.github.tokenRef: Secret "
        "argocd/github-token is not labelled argocd.argoproj.io/secret-type: scm-creds; only "
        "Secrets labelled for forge tokens are sent to a forge"
    )
    assert servers.requests() == 0


@pytest.mark.parametrize("kind", KINDS)
def test_disabled_generators_call_no_forge(
    tmp_path: Path, store: LocalCluster, servers: Servers, kind: str
) -> None:
    store.apply(_secret(SCM_CREDS), field_manager="t")
    api = _api(servers, kind)
    off = ForgePolicy(enabled=False, allowed_api_urls=(api,))
    error = _run(tmp_path, store, _appset([_generator(kind, api)]), off)
    assert error["message"].startswith(
        f"{kind} generator spec.generators[0].{kind}: SCM providers are disabled"
    )
    assert servers.requests() == 0


def test_a_refused_generator_inside_a_matrix_names_its_nested_field(
    tmp_path: Path, store: LocalCluster, servers: Servers
) -> None:
    store.apply(_secret(SCM_CREDS), field_manager="t")
    api = _api(servers, "pullRequest")
    matrix = {
        "matrix": {"generators": [{"list": {"elements": [{"x": "1"}]}}, _generator(
            "pullRequest", api
        )]}
    }
    listed = {"list": {"elements": [{"branch": "main"}]}}
    error = _run(tmp_path, store, _appset([listed, matrix]), ForgePolicy())
    assert error["message"].startswith(
        "pullRequest generator spec.generators[1].matrix.generators[1].pullRequest.github.api:"
    )
    assert servers.requests() == 0


def test_the_operators_list_lets_the_same_host_through_and_unlabelled_is_allowed_when_lax(
    tmp_path: Path, store: LocalCluster, servers: Servers
) -> None:
    """The allowed root matches with a trailing `/` or `/api/v3` either side; with strict mode
    off (Argo CD's default) an unlabelled Secret is read: the token reaches the allowed host."""
    store.apply(_secret({}), field_manager="t")
    root = servers.pulls.url  # .../api/v3
    lax = ForgePolicy(allowed_api_urls=(f"{root}/",), token_ref_strict=False)
    appset = _appset([_generator("pullRequest", root.removesuffix("/api/v3") + "/")])
    with httpx2.Client(timeout=2.0) as http:
        controller = ApplicationSetController(
            cluster=store, clock=VirtualClock(), git=GitCache(tmp_path / "git-cache"),
            namespace="argocd", poll_seconds=180.0, http=http, forge_policy=lax,
        )
        store.apply(appset, field_manager="t", force=True)
        controller.step(KEY)
    assert servers.pulls.requests
    assert servers.pulls.requests[0].headers["authorization"] == f"Bearer {TOKEN}"


def test_a_next_page_on_another_host_is_not_followed(
    tmp_path: Path, store: LocalCluster, servers: Servers
) -> None:
    """A forge whose `Link: rel="next"` points elsewhere (here: the other server) does not
    get the token sent there; generation stops with a condition."""
    store.apply(_secret(SCM_CREDS), field_manager="t")
    allowed_root = servers.pulls.url
    servers.pulls.url = servers.org.url  # the next-page links now name the other server
    policy = ForgePolicy(allowed_api_urls=(allowed_root,))
    appset = _appset([_generator("pullRequest", allowed_root)])
    error = _run(tmp_path, store, appset, policy)
    assert len(servers.pulls.requests) == 1
    assert servers.org.requests == []
    other = servers.org.url.removeprefix("http://").removesuffix("/api/v3")
    assert f"the next page is on {other}, not on the API's own host" in error["message"]
