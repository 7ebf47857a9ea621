"""The pullRequest generator's GitLab provider in the ApplicationSet controller, against a
stateful fake GitLab (tests/appset/gitlab_server.py): one Application per merge request with
Argo CD's parameters, every state unless `pullRequestState` names one (as in Argo CD), labels
asked of GitLab, the branch filters, pagination; failures are conditions that change no
Application and hold no token; the forge policy decides before any call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from forge_world import ForgeWorld
from gitlab_server import FakeGitLab, fake_gitlab
from test_gitlab_scm_provider import token_secret

from e2e_sync.e2e_helpers import API
from headway.appset.forge_policy import ForgePolicy
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import ObjectKey

KEY = ObjectKey("argocd", "previews")
TOKEN = "glpat-previewtokenpreviewtoken01"
POLL = 180.0


def _appset(api: str, *, go_template: bool = True, **gitlab: Any) -> dict[str, Any]:
    generator: dict[str, Any] = {
        "gitlab": {
            "project": "example-group/shop",
            "api": api,
            "tokenRef": {"secretName": "gitlab-token", "key": "token"},
            **gitlab,
        },
        "requeueAfterSeconds": 60,
    }
    dot = "." if go_template else ""
    annotations = {
        "title": f"{{{{{dot}title}}}}",
        "branch": f"{{{{{dot}branch}}}}",
        "target": f"{{{{{dot}target_branch}}}}",
        "sha": f"{{{{{dot}head_sha}}}}",
        "author": f"{{{{{dot}author}}}}",
    }
    if go_template:
        annotations["labels"] = '{{join "," .labels}}'
    return {
        "apiVersion": API,
        "kind": "ApplicationSet",
        "metadata": {"name": "previews", "namespace": "argocd"},
        "spec": {
            "goTemplate": go_template,
            "generators": [{"pullRequest": generator}],
            "template": {
                "metadata": {
                    "name": f"shop-{{{{{dot}branch_slug}}}}-{{{{{dot}number}}}}",
                    "annotations": annotations,
                },
                "spec": {
                    "project": "default",
                    "source": {
                        "repoURL": "https://gitlab.example.com/example-group/shop.git",
                        "targetRevision": f"{{{{{dot}head_sha}}}}",
                        "path": "deploy",
                    },
                    "destination": {
                        "server": "https://kubernetes.default.svc",
                        "namespace": (
                            f"mr-{{{{{dot}number}}}}-{{{{{dot}head_short_sha}}}}"
                            f"-{{{{{dot}target_branch_slug}}}}"
                        ),
                    },
                },
            },
        },
    }


class World(ForgeWorld):
    def __init__(
        self, tmp_path: Path, store: LocalCluster, server: FakeGitLab, policy: ForgePolicy
    ) -> None:
        super().__init__(
            tmp_path, store, server, key=KEY, secret=token_secret(TOKEN), policy=policy
        )

    def no_token_anywhere(self) -> bool:
        events = self.store.list("v1", "Event", namespace="argocd")
        return TOKEN not in json.dumps(self.status()) + json.dumps(events)


@pytest.fixture
def server() -> Iterator[FakeGitLab]:
    with fake_gitlab(FakeGitLab()) as running:
        yield running


def _world(tmp_path: Path, server: FakeGitLab, policy: ForgePolicy) -> Iterator[World]:
    with LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store:
        world = World(tmp_path, store, server, policy)
        yield world
        world.http.close()


@pytest.fixture
def world(tmp_path: Path, server: FakeGitLab) -> Iterator[World]:
    yield from _world(tmp_path, server, ForgePolicy(allowed_api_urls=(server.url,)))


@pytest.fixture
def default_world(tmp_path: Path, server: FakeGitLab) -> Iterator[World]:
    """A controller with the default forge policy (`headway serve` without flags)."""
    yield from _world(tmp_path, server, ForgePolicy())


ALL_MRS = [
    "shop-docs-notes-11",
    "shop-feature-dark-mode-10",
    "shop-feature-refunds-7",
    "shop-renovate-base-image-8",
    "shop-spike-old-9",
]


def test_every_merge_request_by_default_with_argo_parameters(world: World) -> None:
    requeue = world.apply(_appset(world.api))
    apps = world.apps()
    assert sorted(apps) == ALL_MRS  # no pullRequestState: every state, as in Argo CD
    dark = apps["shop-feature-dark-mode-10"]
    sha = "10" + "c0ffee" * 6 + "ab"
    assert dark["metadata"]["annotations"] == {
        "title": "Dark mode",
        "branch": "Feature/Dark_Mode",
        "target": "main",
        "sha": sha,
        "author": "carol",
        "labels": "preview,ui",
    }
    assert dark["spec"]["destination"]["namespace"] == f"mr-10-{sha[:8]}-main"
    assert requeue == 60.0
    listing = world.server.requests
    assert [r.raw_path for r in listing] == [
        "/api/v4/projects/example-group%2Fshop/merge_requests"
    ] * 3
    assert [r.query.get("page", ["1"])[0] for r in listing] == ["1", "2", "3"]
    assert listing[0].query == {"per_page": ["100"]}
    assert listing[1].query == {"per_page": ["100"], "page": ["2"]}
    assert listing[0].headers["private-token"] == TOKEN


def test_the_same_parameters_without_go_template_and_no_labels(world: World) -> None:
    world.apply(_appset(world.api, go_template=False))
    dark = world.apps()["shop-feature-dark-mode-10"]
    assert dark["metadata"]["annotations"]["author"] == "carol"
    assert "labels" not in dark["metadata"]["annotations"]


def test_state_and_labels_are_asked_of_gitlab(world: World) -> None:
    world.apply(_appset(world.api, pullRequestState="opened"))
    assert sorted(world.apps()) == [
        "shop-feature-dark-mode-10",
        "shop-feature-refunds-7",
        "shop-renovate-base-image-8",
    ]
    assert world.server.requests[-1].query["state"] == ["opened"]
    world.apply(_appset(world.api, labels=["preview", "ui"]))
    assert sorted(world.apps()) == ["shop-feature-dark-mode-10"]
    assert world.server.requests[-1].query["labels"] == ["preview,ui"]


def test_branch_filters_apply_to_merge_requests(world: World) -> None:
    appset = _appset(world.api)
    appset["spec"]["generators"][0]["pullRequest"]["filters"] = [{"branchMatch": "^feature/"}]
    world.apply(appset)
    assert sorted(world.apps()) == ["shop-feature-refunds-7"]


def test_a_project_by_numeric_id(world: World) -> None:
    world.apply(_appset(world.api, project=101))
    assert sorted(world.apps()) == ALL_MRS
    assert world.server.requests[0].raw_path == "/api/v4/projects/101/merge_requests"


def test_a_closed_merge_request_leaves_when_only_open_ones_are_listed(world: World) -> None:
    world.apply(_appset(world.api, pullRequestState="opened"))
    before = world.versions()
    world.server.data["merge_requests"]["example-group/shop"][0]["state"] = "merged"
    world.clock.advance(60)
    world.controller.step(KEY)
    after = world.versions()
    assert sorted(after) == ["shop-feature-dark-mode-10", "shop-renovate-base-image-8"]
    assert all(after[name] == before[name] for name in after)


@pytest.mark.parametrize(
    ("status", "message"),
    [(401, "401 Unauthorized"), (403, "403 Forbidden"), (500, "500 Internal Server Error")],
)
def test_a_refused_listing_keeps_every_application(world: World, status: int, message: str) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.refuse = (status, message)
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    error = world.error()
    assert error["message"] == (
        "pullRequest generator: GitLab GET /projects/example-group%2Fshop/merge_requests: "
        f"HTTP {status}: {message}"
    )
    assert world.no_token_anywhere()


def test_a_failing_second_page_keeps_every_application(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.raw_answer = None
    world.server.page_size = 1  # the listing now needs five pages ...
    world.server.data["merge_requests"]["example-group/shop"][1]["author"] = None  # ... one bad
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    assert "merge_requests: item 1 is malformed" in world.error()["message"]


def test_an_unknown_project_is_an_error_unless_the_set_says_continue(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.apply(_appset(world.api, project="example-group/renamed"))
    assert "HTTP 404: 404 Project Not Found" in world.error()["message"]
    appset = _appset(world.api, project="example-group/renamed")
    appset["spec"]["generators"][0]["pullRequest"]["continueOnRepoNotFoundError"] = True
    world.apply(appset)
    assert world.error()["reason"] == "EmptyGenerationRefused"  # zero deletes nothing here
    assert world.versions() == before


@pytest.mark.parametrize(
    ("change", "field", "expected"),
    [
        ({"project": ""}, "gitlab.project", "project is required"),
        ({"pullRequestState": "open"}, "gitlab.pullRequestState", "unknown state 'open'"),
        ({"labels": "preview"}, "gitlab.labels", "labels must be a list of strings"),
        ({"insecure": "yes"}, "gitlab.insecure", "insecure must be true or false"),
    ],
)
def test_a_malformed_generator_names_its_field_and_calls_nothing(
    world: World, change: dict[str, Any], field: str, expected: str
) -> None:
    world.apply(_appset(world.api, **change))
    error = world.error()
    assert error["message"].startswith(f"pullRequest: {field}: ")
    assert expected in error["message"]
    assert world.server.requests == []


def test_the_default_policy_refuses_a_self_hosted_gitlab_before_any_call(
    default_world: World,
) -> None:
    default_world.apply(_appset(default_world.api))
    error = default_world.error()
    assert error["message"].startswith(
        "pullRequest generator spec.generators[0].pullRequest.gitlab.api: "
    )
    assert "the public GitLab API (https://gitlab.com/api/v4)" in error["message"]
    assert "--allowed-scm-providers" in error["message"]
    assert default_world.server.requests == []
    assert default_world.apps() == {}


def test_an_unlabelled_token_secret_is_refused_before_any_call(world: World) -> None:
    world.store.apply(token_secret(TOKEN, labelled=False), field_manager="t", force=True)
    world.apply(_appset(world.api))
    error = world.error()
    assert "spec.generators[0].pullRequest.gitlab.tokenRef" in error["message"]
    assert "is not labelled argocd.argoproj.io/secret-type: scm-creds" in error["message"]
    assert world.server.requests == []
    assert world.no_token_anywhere()
