"""The scmProvider generator (GitHub) in the ApplicationSet controller, against a real local
HTTP server answering GitHub Enterprise's documented organization, branch and contents calls:
one Application per repository (or branch) of an organization with Argo CD's parameters, the
five filter kinds, allBranches, ssh or https URLs, pagination, the token from a Secret; every
failure is a condition naming the generator that changes no Application and holds no token."""

from __future__ import annotations

import base64
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from forge_servers import GitHubOrg, github_org
from forge_world import ForgeWorld

from e2e_sync.e2e_helpers import API
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import ObjectKey

KEY = ObjectKey("argocd", "org-apps")
TOKEN = "ghp_orgscantokenorgscantoken01234"
POLL = 180.0
SHOP_SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"


ALL_BRANCHES = [
    "billing-api-feature-refunds-v2",
    "billing-api-trunk",
    "legacy-portal-master",
    "shop-main",
    "shop-release-2.x",
]


def _appset(api: str, *, go_template: bool = True, **scm: Any) -> dict[str, Any]:
    github = {
        "organization": "example-org",
        "api": api,
        "tokenRef": {"secretName": "github-token", "key": "token"},
        **scm.pop("github", {}),
    }
    name = (
        "{{.repository}}-{{.branchNormalized}}"
        if go_template
        else "{{repository}}-{{branchNormalized}}"
    )
    ns = "{{.short_sha}}-{{.short_sha_7}}" if go_template else "{{short_sha}}-{{short_sha_7}}"
    annotations = {
        "org": "{{.organization}}",
        "id": "{{.repository_id}}",
        "labels": "{{.labels}}",
        "sha": "{{.sha}}",
        "branch": "{{.branch}}",
    }
    if not go_template:
        annotations = {k: v.replace("{{.", "{{") for k, v in annotations.items()}
    return {
        "apiVersion": API,
        "kind": "ApplicationSet",
        "metadata": {"name": "org-apps", "namespace": "argocd"},
        "spec": {
            "goTemplate": go_template,
            "generators": [{"scmProvider": {"github": github, "requeueAfterSeconds": 60, **scm}}],
            "template": {
                "metadata": {"name": name, "annotations": annotations},
                "spec": {
                    "project": "default",
                    "source": {
                        "repoURL": "{{.url}}" if go_template else "{{url}}",
                        "targetRevision": "{{.branch}}" if go_template else "{{branch}}",
                        "path": "deploy",
                    },
                    "destination": {"server": "https://kubernetes.default.svc", "namespace": ns},
                },
            },
        },
    }


class World(ForgeWorld):
    def __init__(self, tmp_path: Path, store: LocalCluster, server: GitHubOrg) -> None:
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
        github_org(GitHubOrg()) as server,
        LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store,
    ):
        world = World(tmp_path, store, server)
        yield world
        world.http.close()


def test_one_application_per_repository_of_the_organization_with_argo_parameters(
    world: World,
) -> None:
    requeue = world.apply(_appset(world.api))
    apps = world.apps()
    # the archived repository is listed and generated, as Argo CD does
    assert sorted(apps) == ["billing-api-trunk", "legacy-portal-master", "shop-main"]
    shop = apps["shop-main"]
    assert shop["spec"]["source"]["repoURL"] == "git@github.com:example-org/shop.git"  # ssh
    assert shop["spec"]["source"]["targetRevision"] == "main"
    assert shop["spec"]["destination"]["namespace"] == "6dcb09b5-6dcb09b"
    assert shop["metadata"]["annotations"] == {
        "org": "example-org",
        "id": "1296269",
        "labels": "team-web,tier-1",
        "sha": SHOP_SHA,
        "branch": "main",
    }
    assert apps["legacy-portal-master"]["metadata"]["annotations"]["labels"] == ""
    assert requeue == 60.0
    listing = [r for r in world.server.requests if r.path.endswith("/orgs/example-org/repos")]
    assert [r.query.get("page", ["1"])[0] for r in listing] == ["1", "2"]  # Link followed
    assert listing[0].query["per_page"] == ["100"]
    assert listing[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert listing[0].headers["x-github-api-version"] == "2022-11-28"
    # GitHub Enterprise: the api host root gets /api/v3, as go-github's enterprise client does
    assert all(p.startswith("/api/v3/") for p in world.paths())
    assert "/api/v3/repos/example-org/shop/branches/main" in world.paths()


def test_the_same_parameters_without_go_template(world: World) -> None:
    world.apply(_appset(world.api, go_template=False))
    shop = world.apps()["shop-main"]
    # Argo CD's fasttemplate replaces string parameters only: the numeric id stays as written
    assert shop["metadata"]["annotations"]["id"] == "{{repository_id}}"
    assert shop["metadata"]["annotations"]["labels"] == "team-web,tier-1"
    assert shop["spec"]["destination"]["namespace"] == "6dcb09b5-6dcb09b"


def test_an_api_url_ending_in_api_v3_is_used_as_it_is(world: World) -> None:
    world.apply(_appset(world.server.url))
    assert sorted(world.apps()) == ["billing-api-trunk", "legacy-portal-master", "shop-main"]


def test_https_clone_protocol_gives_the_clone_url(world: World) -> None:
    world.apply(_appset(world.api, cloneProtocol="https"))
    urls = {n: a["spec"]["source"]["repoURL"] for n, a in world.apps().items()}
    assert urls["shop-main"] == "https://github.com/example-org/shop.git"
    assert urls["billing-api-trunk"] == "https://github.com/example-org/billing-api.git"


def test_all_branches_gives_one_application_per_branch(world: World) -> None:
    world.apply(_appset(world.api, github={"allBranches": True}))
    apps = world.apps()
    assert sorted(apps) == ALL_BRANCHES
    refunds = apps["billing-api-feature-refunds-v2"]
    assert refunds["spec"]["source"]["targetRevision"] == "feature/Refunds_V2"
    assert refunds["metadata"]["annotations"]["sha"] == "abcdef0123456789abcdef0123456789abcdef01"
    assert "/api/v3/repos/example-org/shop/branches" in world.paths()


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (
            [{"repositoryMatch": "^(shop|bill)"}],
            [
                "billing-api-feature-refunds-v2",
                "billing-api-trunk",
                "shop-main",
                "shop-release-2.x",
            ],
        ),
        ([{"labelMatch": "^team-pay"}], ["billing-api-feature-refunds-v2", "billing-api-trunk"]),
        ([{"branchMatch": "^release/"}], ["shop-release-2.x"]),
        (
            [{"pathsExist": ["deploy/"]}],
            ["billing-api-trunk", "legacy-portal-master", "shop-main", "shop-release-2.x"],
        ),
        (
            [{"pathsDoNotExist": ["DEPRECATED"]}],
            ["billing-api-feature-refunds-v2", "billing-api-trunk", "shop-main"],
        ),
        # one filter ANDs its conditions
        ([{"repositoryMatch": "shop", "pathsDoNotExist": ["DEPRECATED"]}], ["shop-main"]),
        ([{"labelMatch": "tier-1", "branchMatch": "main"}], ["shop-main"]),
        # Argo CD's two passes: repositories by the filters with repository conditions,
        # then their branches by the filters with branch conditions; an empty filter
        # counts in neither pass
        ([{}, {"repositoryMatch": "^shop$"}], ["shop-main", "shop-release-2.x"]),
        ([{"repositoryMatch": "^shop$"}, {"branchMatch": "^main$"}], ["shop-main"]),
        (
            [{"repositoryMatch": "legacy"}, {"labelMatch": "team-pay", "branchMatch": "feature"}],
            ["billing-api-feature-refunds-v2"],
        ),
        (
            [
                {"repositoryMatch": "^shop$", "branchMatch": "main"},
                {"repositoryMatch": "^billing", "branchMatch": "trunk|release"},
            ],
            ["billing-api-trunk", "shop-main", "shop-release-2.x"],
        ),
    ],
)
def test_filters_select_repository_branches(
    world: World, filters: list[dict[str, Any]], expected: list[str]
) -> None:
    world.apply(_appset(world.api, github={"allBranches": True}, filters=filters))
    assert sorted(world.apps()) == expected


def test_a_repository_no_filter_passes_costs_no_branch_or_path_call(world: World) -> None:
    filters = [{"repositoryMatch": "^shop$", "pathsExist": ["deploy"]}]
    world.apply(_appset(world.api, filters=filters))
    assert sorted(world.apps()) == ["shop-main"]
    assert not [p for p in world.paths() if "billing-api" in p or "legacy-portal" in p]
    assert "/api/v3/repos/example-org/shop/contents/deploy" in world.paths()


def test_an_empty_repository_yields_no_application(world: World) -> None:
    world.server.data["branches"]["legacy-portal"] = []  # its default branch answers 404
    world.apply(_appset(world.api))
    assert sorted(world.apps()) == ["billing-api-trunk", "shop-main"]


def test_an_organization_left_without_repositories_follows_the_empty_generation_rule(
    world: World,
) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.data["repos"] = []
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    assert world.error()["reason"] == "EmptyGenerationRefused"


def test_values_are_rendered_with_the_parameters(world: World) -> None:
    appset = _appset(world.api, values={"team": "owned-by-{{.organization}}/{{.repository}}"})
    appset["spec"]["template"]["metadata"]["labels"] = {"team": "{{.values.team}}"}
    appset["spec"]["template"]["metadata"]["labels"]["team"] = (
        '{{ .values.team | replace "/" "-" }}'
    )
    world.apply(appset)
    assert world.apps()["shop-main"]["metadata"]["labels"] == {"team": "owned-by-example-org-shop"}


@pytest.mark.parametrize(
    ("status", "message"),
    [(401, "Bad credentials"), (404, "Not Found"), (403, "API rate limit exceeded")],
)
def test_a_refused_call_is_a_condition_without_the_token(
    world: World, status: int, message: str
) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    assert len(before) == 3
    world.server.refuse = (status, message)
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    error = world.error()
    assert error["reason"] == "ApplicationGenerationFromParamsError"
    assert error["message"].startswith("scmProvider generator: GitHub GET /orgs/example-org/repos")
    assert f"HTTP {status}: {message}" in error["message"]
    events = world.store.list("v1", "Event", namespace="argocd")
    assert TOKEN not in json.dumps(world.status())
    assert TOKEN not in json.dumps(events)


def test_an_unknown_organization_is_a_condition(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.org = "renamed-org"
    world.apply(_appset(world.api))
    assert world.versions() == before
    assert "GitHub GET /orgs/example-org/repos: HTTP 404: Not Found" in world.error()["message"]


def test_an_answer_that_is_not_json_is_a_condition(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.raw_answer = b"<html>proxy error</html>"
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    assert "GitHub GET /orgs/example-org/repos: the answer is not JSON" in world.error()["message"]


def test_a_refused_branch_call_is_a_condition_and_a_malformed_branch_names_itself(
    world: World,
) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.refuse, world.server.refuse_only = (500, "Server Error"), "/branches/"
    world.apply(_appset(world.api, cloneProtocol="https"))
    assert world.versions() == before
    assert world.error()["message"] == (
        "scmProvider generator: GitHub GET /repos/example-org/shop/branches/main: "
        "HTTP 500: Server Error"
    )
    world.server.refuse = None
    world.server.data["branches"]["shop"][0]["commit"] = "6dcb09b"
    world.apply(_appset(world.api, cloneProtocol="https"))
    assert world.versions() == before
    assert "branches/main: branch 0 is malformed" in world.error()["message"]


def test_a_refused_path_call_is_a_condition_not_a_missing_path(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.refuse, world.server.refuse_only = (403, "Resource not accessible"), "/contents/"
    world.apply(_appset(world.api, filters=[{"pathsDoNotExist": ["DEPRECATED"]}]))
    assert world.versions() == before  # a 403 is not read as "absent" (that would add apps)
    assert "contents/DEPRECATED: HTTP 403: Resource not accessible" in world.error()["message"]
    assert TOKEN not in json.dumps(world.status())


@pytest.mark.parametrize(
    ("change", "field", "expected"),
    [
        ({"bitbucket": {"owner": "x"}}, "bitbucket", "the bitbucket provider is not supported"),
        ({"awsCodeCommit": {}}, "awsCodeCommit", "the awsCodeCommit provider is not supported"),
        ({"github": {"appSecretName": "app"}}, "github.appSecretName", "GitHub App authentication"),
        ({"cloneProtocol": "git"}, "cloneProtocol", "unknown clone protocol for GitHub 'git'"),
        (
            {"filters": [{"branchMatch": "(x"}]},
            "filters[0].branchMatch",
            "not a regular expression",
        ),
    ],
)
def test_a_malformed_or_unsupported_generator_names_its_field(
    world: World, change: dict[str, Any], field: str, expected: str
) -> None:
    world.apply(_appset(world.api, **change))
    assert world.apps() == {}
    error = world.error()
    assert error["message"].startswith(f"scmProvider: {field}: ")
    assert expected in error["message"]
    assert world.server.requests == []  # refused before any call


def test_a_forge_that_does_not_answer_in_time_is_a_condition(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.hold = threading.Event()
    world.clock.advance(60)
    world.controller.step(KEY)
    world.server.hold.set()
    assert world.versions() == before
    assert world.error()["message"].startswith("scmProvider generator: GitHub GET /orgs/")
    assert "ReadTimeout" in world.error()["message"]


def test_a_missing_token_secret_or_key_is_a_condition_before_any_call(world: World) -> None:
    appset = _appset(world.api)
    appset["spec"]["generators"][0]["scmProvider"]["github"]["tokenRef"]["key"] = "tokn"
    world.apply(appset)
    assert world.apps() == {}
    assert world.error()["message"] == (
        "scmProvider generator: Secret argocd/github-token has no key 'tokn'"
    )
    assert world.server.requests == []


def test_the_generator_template_overrides_the_set_template(world: World) -> None:
    appset = _appset(world.api, filters=[{"repositoryMatch": "^shop$"}])
    own = {"metadata": {"name": "org-{{.repository}}"}, "spec": {"project": "default"}}
    appset["spec"]["generators"][0]["scmProvider"]["template"] = own
    world.apply(appset)
    assert sorted(world.apps()) == ["org-shop"]


def test_the_token_is_in_no_log_line(world: World, caplog: pytest.LogCaptureFixture) -> None:
    world.server.refuse = (401, "Bad credentials")
    with caplog.at_level(logging.DEBUG):
        world.apply(_appset(world.api))
    assert "HTTP 401: Bad credentials" in world.error()["message"]
    assert TOKEN not in caplog.text
    assert world.server.requests[0].headers["authorization"] == f"Bearer {TOKEN}"


def test_a_listing_past_the_page_limit_is_a_condition_not_a_shortened_list(
    world: World,
) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    template = world.server.data["repos"][0]
    world.server.data["repos"] = [{**template, "name": f"svc-{n}"} for n in range(51)]
    world.server.page_size = 1  # 51 pages: one past the limit
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    assert "GitHub GET /orgs/example-org/repos: more than 50 pages" in world.error()["message"]


def test_paths_are_asked_only_for_branches_whose_name_passes(world: World) -> None:
    filters = [{"branchMatch": "^release/", "pathsExist": ["deploy"]}]
    world.apply(_appset(world.api, github={"allBranches": True}, filters=filters))
    assert sorted(world.apps()) == ["shop-release-2.x"]
    contents = [r for r in world.server.requests if "/contents/" in r.path]
    assert [(r.path, r.query["ref"]) for r in contents] == [
        ("/api/v3/repos/example-org/shop/contents/deploy", ["release/2.x"])
    ]
