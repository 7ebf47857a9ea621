"""The pullRequest generator (GitHub) in the ApplicationSet controller, against a real local
HTTP server answering GitHub's documented pulls listing: one preview Application per open
pull request, Argo CD's parameters, label and branch filters, pagination, the token from a
Secret; every failure is a condition naming the generator and changes no Application."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from forge_servers import GitHubPulls, github_pulls
from forge_world import ForgeWorld

from e2e_sync.e2e_helpers import API
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import ObjectKey

KEY = ObjectKey("argocd", "previews")
TOKEN = "ghp_previewtokenpreviewtoken0123"
POLL = 180.0


def _appset(api: str, **github: Any) -> dict[str, Any]:
    generator: dict[str, Any] = {
        "github": {
            "owner": "example-org",
            "repo": "shop",
            "api": api,
            "tokenRef": {"secretName": "github-token", "key": "token"},
            **github,
        },
        "requeueAfterSeconds": 60,
    }
    return {
        "apiVersion": API,
        "kind": "ApplicationSet",
        "metadata": {"name": "previews", "namespace": "argocd"},
        "spec": {
            "goTemplate": True,
            "goTemplateOptions": ["missingkey=error"],
            "generators": [{"pullRequest": generator}],
            "template": {
                "metadata": {
                    "name": "shop-{{.branch_slug}}-{{.number}}",
                    "labels": {"author": "{{.author}}"},
                    "annotations": {"pr-labels": '{{join "," .labels}}'},
                },
                "spec": {
                    "project": "default",
                    "source": {
                        "repoURL": "https://github.com/example-org/shop.git",
                        "targetRevision": "{{.head_sha}}",
                        "path": "deploy",
                    },
                    "destination": {
                        "server": "https://kubernetes.default.svc",
                        "namespace": "pr-{{.number}}-{{.head_short_sha}}-{{.target_branch_slug}}",
                    },
                },
            },
        },
    }


class World(ForgeWorld):
    def __init__(self, tmp_path: Path, store: LocalCluster, server: GitHubPulls) -> None:
        super().__init__(
            tmp_path,
            store,
            server,
            key=KEY,
            secret=_token_secret(TOKEN),
            api=server.url.removesuffix("/api/v3"),
        )


def _token_secret(token: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "github-token",
            "namespace": "argocd",
            "labels": {"argocd.argoproj.io/secret-type": "scm-creds"},
        },
        "data": {"token": base64.b64encode(token.encode()).decode()},
    }


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with (
        github_pulls(GitHubPulls()) as server,
        LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store,
    ):
        world = World(tmp_path, store, server)
        yield world
        world.http.close()


def test_one_application_per_open_pull_request_with_argo_parameters(world: World) -> None:
    requeue = world.apply(_appset(world.api))
    apps = world.apps()
    assert sorted(apps) == ["shop-docs-typo-18", "shop-feature-payment-form-17", "shop-rc-2-21"]
    payment = apps["shop-feature-payment-form-17"]
    assert payment["spec"]["source"]["targetRevision"] == "6dcb09b5b57875f334f61aebed695e2e4193db5e"
    assert payment["spec"]["destination"]["namespace"] == "pr-17-6dcb09b5-main"
    assert payment["metadata"]["labels"] == {"author": "octocat"}
    assert payment["metadata"]["annotations"] == {"pr-labels": "preview"}
    rc = apps["shop-rc-2-21"]
    assert rc["spec"]["destination"]["namespace"] == "pr-21-9f8e7d6c-release-2-x"
    assert rc["metadata"]["annotations"] == {"pr-labels": "preview,release"}
    assert requeue == 60.0  # requeueAfterSeconds, shorter than the Git poll
    pages = [r.query.get("page", ["1"])[0] for r in world.server.requests]
    assert pages == ["1", "2"]  # the Link: rel="next" page was followed
    first = world.server.requests[0]
    assert first.query["state"] == ["open"] and first.query["per_page"] == ["100"]
    assert first.headers["authorization"] == f"Bearer {TOKEN}"
    assert first.headers["x-github-api-version"] == "2022-11-28"


def test_labels_and_branch_filters_select_pull_requests(world: World) -> None:
    appset = _appset(world.api, labels=["preview"])
    appset["spec"]["generators"][0]["pullRequest"]["filters"] = [
        {"branchMatch": "^feature/"},
        {"targetBranchMatch": "^release/", "branchMatch": "rc"},
    ]
    world.apply(appset)
    assert sorted(world.apps()) == ["shop-feature-payment-form-17", "shop-rc-2-21"]
    appset["spec"]["generators"][0]["pullRequest"]["github"]["labels"] = ["preview", "release"]
    world.apply(appset)
    assert sorted(world.apps()) == ["shop-rc-2-21"]


def test_a_closed_pull_request_loses_its_application_at_the_next_poll(world: World) -> None:
    world.apply(_appset(world.api))
    world.server.pulls = [p for p in world.server.pulls if p["number"] != 18]
    world.clock.advance(60)
    world.controller.step(KEY)
    assert sorted(world.apps()) == ["shop-feature-payment-form-17", "shop-rc-2-21"]


def test_the_last_closed_pull_request_follows_the_empty_generation_rule(world: World) -> None:
    world.apply(_appset(world.api))
    world.server.pulls = []
    world.controller.step(KEY)
    assert len(world.apps()) == 3
    assert world.error()["reason"] == "EmptyGenerationRefused"


def _break(server: GitHubPulls, how: str) -> None:
    if how == "bad token":
        server.refuse = (401, "Bad credentials")
    elif how == "rate limited":
        server.refuse = (403, "API rate limit exceeded")
    elif how == "not JSON":
        server.raw_answer = b"<html>proxy error</html>"
    elif how == "not a list":
        server.raw_answer = json.dumps({"message": "moved"}).encode()
    elif how == "item without head":
        server.raw_answer = json.dumps([{"number": 3, "user": {"login": "x"}}]).encode()


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ("bad token", "HTTP 401: Bad credentials"),
        ("rate limited", "HTTP 403: API rate limit exceeded"),
        ("not JSON", "the answer is not JSON"),
        ("not a list", "expected a list"),
        ("item without head", "item 0 is malformed"),
    ],
)
def test_a_failing_forge_is_a_condition_and_changes_no_application(
    world: World, how: str, expected: str
) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    _break(world.server, how)
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    error = world.error()
    assert error["reason"] == "ApplicationGenerationFromParamsError"
    assert error["message"].startswith(
        "pullRequest generator: GitHub GET /repos/example-org/shop/pulls"
    )
    assert expected in error["message"]
    _assert_no_token_anywhere(world)


def test_a_forge_that_does_not_answer_in_time_is_a_condition(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.hold = threading.Event()
    world.controller.step(KEY)
    world.server.hold.set()
    assert world.versions() == before
    assert "ReadTimeout" in world.error()["message"]
    assert "pullRequest generator" in world.error()["message"]


def test_a_missing_token_secret_or_key_is_a_condition(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    appset = _appset(world.api)
    appset["spec"]["generators"][0]["pullRequest"]["github"]["tokenRef"]["key"] = "tokn"
    world.apply(appset)
    assert world.versions() == before
    assert world.error()["message"] == (
        "pullRequest generator: Secret argocd/github-token has no key 'tokn'"
    )
    appset["spec"]["generators"][0]["pullRequest"]["github"]["tokenRef"]["secretName"] = "nope"
    world.apply(appset)
    assert "Secret argocd/nope: cannot be read" in world.error()["message"]
    assert world.versions() == before


def test_a_malformed_generator_names_its_field(world: World) -> None:
    appset = _appset(world.api)
    appset["spec"]["generators"][0]["pullRequest"]["filters"] = [{"branchMatch": "(unclosed"}]
    world.apply(appset)
    assert world.apps() == {}
    message = world.error()["message"]
    assert message.startswith("pullRequest: filters[0].branchMatch: not a regular expression")
    assert world.server.requests == []  # refused before any call


def _assert_no_token_anywhere(world: World) -> None:
    events = world.store.list("v1", "Event", namespace="argocd")
    assert TOKEN not in json.dumps(world.status())
    assert TOKEN not in json.dumps(events)


def test_excluded_labels_leave_pull_requests_out(world: World) -> None:
    world.apply(_appset(world.api, excludedLabels=["release"]))
    assert sorted(world.apps()) == ["shop-docs-typo-18", "shop-feature-payment-form-17"]


def test_an_unknown_repository_is_an_error_unless_the_set_says_continue(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.repo = "renamed"  # the repository the set names is now a 404
    world.controller.step(KEY)
    assert "HTTP 404: Not Found" in world.error()["message"]
    appset = _appset(world.api)
    appset["spec"]["generators"][0]["pullRequest"]["continueOnRepoNotFoundError"] = True
    world.apply(appset)
    # Argo CD reads the 404 as zero pull requests; zero then deletes nothing here
    assert world.error()["reason"] == "EmptyGenerationRefused"
    assert world.versions() == before
