"""The scmProvider generator's GitLab provider in the ApplicationSet controller, against a
stateful fake GitLab (tests/appset/gitlab_server.py): one Application per project (or
branch) of a group with Argo CD's parameters, subgroups, shared projects, topic, ssh or https
URLs, the filters, both ways GitLab pages; every failure is a condition naming the generator
that changes no Application and holds no token."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from forge_world import ForgeWorld
from gitlab_server import HOST, SHOP_SHA, FakeGitLab, fake_gitlab

from e2e_sync.e2e_helpers import API
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import ObjectKey

KEY = ObjectKey("argocd", "group-apps")
TOKEN = "glpat-groupscantokengroupscan0123"
POLL = 180.0
DEFAULT_APPS = ["billing-api-trunk", "legacy-portal-master", "shared-lib-main", "shop-main"]


def _appset(api: str, **scm: Any) -> dict[str, Any]:
    gitlab = {
        "group": "example-group",
        "api": api,
        "tokenRef": {"secretName": "gitlab-token", "key": "token"},
        **scm.pop("gitlab", {}),
    }
    annotations = {
        "org": "{{.organization}}",
        "id": "{{.repository_id}}",
        "labels": "{{.labels}}",
        "sha": "{{.sha}}",
        "branch": "{{.branch}}",
    }
    return {
        "apiVersion": API,
        "kind": "ApplicationSet",
        "metadata": {"name": "group-apps", "namespace": "argocd"},
        "spec": {
            "goTemplate": True,
            "generators": [{"scmProvider": {"gitlab": gitlab, "requeueAfterSeconds": 60, **scm}}],
            "template": {
                "metadata": {
                    "name": "{{.repository}}-{{.branchNormalized}}",
                    "annotations": annotations,
                },
                "spec": {
                    "project": "default",
                    "source": {
                        "repoURL": "{{.url}}",
                        "targetRevision": "{{.branch}}",
                        "path": "deploy",
                    },
                    "destination": {
                        "server": "https://kubernetes.default.svc",
                        "namespace": "{{.short_sha}}-{{.short_sha_7}}",
                    },
                },
            },
        },
    }


class World(ForgeWorld):
    def __init__(self, tmp_path: Path, store: LocalCluster, server: FakeGitLab) -> None:
        super().__init__(tmp_path, store, server, key=KEY, secret=token_secret(TOKEN))


def token_secret(token: str, *, labelled: bool = True) -> dict[str, Any]:
    labels = {"argocd.argoproj.io/secret-type": "scm-creds"} if labelled else {}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "gitlab-token", "namespace": "argocd", "labels": labels},
        "data": {"token": base64.b64encode(token.encode()).decode()},
    }


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with (
        fake_gitlab(FakeGitLab()) as server,
        LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store,
    ):
        world = World(tmp_path, store, server)
        yield world
        world.http.close()


def test_one_application_per_project_of_the_group_with_argo_parameters(world: World) -> None:
    requeue = world.apply(_appset(world.api))
    apps = world.apps()
    # shared projects are in by default; the archived one is listed; the empty one has no
    # default branch and yields nothing; subgroups are out by default
    assert sorted(apps) == DEFAULT_APPS
    shop = apps["shop-main"]
    assert shop["spec"]["source"]["repoURL"] == f"git@{HOST}:example-group/shop.git"  # ssh
    assert shop["spec"]["destination"]["namespace"] == f"{SHOP_SHA[:8]}-{SHOP_SHA[:7]}"
    assert shop["metadata"]["annotations"] == {
        "org": "example-group",
        "id": "101",
        "labels": "team-web,tier-1",
        "sha": SHOP_SHA,
        "branch": "main",
    }
    # a GitLab before 14.5 gives the topics only as tag_list
    assert apps["billing-api-trunk"]["metadata"]["annotations"]["labels"] == "team-pay"
    assert apps["shared-lib-main"]["metadata"]["annotations"]["org"] == "other-group"
    assert requeue == 60.0
    listing = [
        r for r in world.server.requests if r.path.endswith("/groups/example-group/projects")
    ]
    assert [r.query.get("page", ["1"])[0] for r in listing] == ["1", "2", "3"]  # X-Next-Page
    assert listing[0].query == {
        "per_page": ["100"],
        "include_subgroups": ["false"],
        "with_shared": ["true"],
    }
    assert listing[0].headers["private-token"] == TOKEN
    assert "authorization" not in listing[0].headers
    assert "/api/v4/projects/101/repository/branches/main" in world.paths()


def test_an_api_url_ending_in_api_v4_is_used_as_it_is(world: World) -> None:
    world.apply(_appset(f"{world.api}/api/v4/"))
    assert sorted(world.apps()) == DEFAULT_APPS
    assert all(p.startswith("/api/v4/") and "/api/v4/api/v4" not in p for p in world.paths())


def test_subgroups_shared_projects_and_topic_are_asked_of_gitlab(world: World) -> None:
    world.apply(_appset(world.api, gitlab={"includeSubgroups": True}))
    assert sorted(world.apps()) == sorted([*DEFAULT_APPS, "ingress-main"])
    ingress = world.apps()["ingress-main"]
    assert ingress["metadata"]["annotations"]["org"] == "example-group/platform"
    world.apply(_appset(world.api, gitlab={"includeSharedProjects": False}))
    assert "shared-lib-main" not in world.apps()
    world.apply(_appset(world.api, gitlab={"topic": "tier-1"}))
    assert sorted(world.apps()) == ["shop-main"]
    last = [r for r in world.server.requests if r.path.endswith("/projects")][-1]
    assert last.query["topic"] == ["tier-1"]


def test_include_archived_repos_sends_archived_true_as_argo_does(world: World) -> None:
    world.apply(_appset(world.api, gitlab={"includeArchivedRepos": True}))
    listing = [r for r in world.server.requests if r.path.endswith("/projects")]
    assert listing[0].query["archived"] == ["true"]
    assert sorted(world.apps()) == ["legacy-portal-master"]


def test_https_clone_protocol_gives_the_http_url(world: World) -> None:
    world.apply(_appset(world.api, cloneProtocol="https"))
    urls = {n: a["spec"]["source"]["repoURL"] for n, a in world.apps().items()}
    assert urls["shop-main"] == f"https://{HOST}/example-group/shop.git"


def test_all_branches_gives_one_application_per_branch(world: World) -> None:
    world.apply(_appset(world.api, gitlab={"allBranches": True}))
    assert sorted(world.apps()) == sorted(
        [*DEFAULT_APPS, "shop-release-2.x", "billing-api-feature-refunds-v2"]
    )
    refunds = world.apps()["billing-api-feature-refunds-v2"]
    assert refunds["spec"]["source"]["targetRevision"] == "feature/Refunds_V2"
    assert "/api/v4/projects/101/repository/branches" in world.paths()


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ([{"repositoryMatch": "^(shop|bill)"}], ["billing-api-trunk", "shop-main"]),
        ([{"labelMatch": "^team-pay$"}], ["billing-api-trunk"]),
        # a directory: the file call answers 404, the tree call finds it
        (
            [{"pathsExist": ["deploy"]}],
            ["billing-api-trunk", "legacy-portal-master", "shop-main"],
        ),
        ([{"pathsExist": ["deploy/kustomization.yaml"]}], ["shop-main"]),
        (
            [{"pathsDoNotExist": ["DEPRECATED"]}],
            ["billing-api-trunk", "shared-lib-main", "shop-main"],
        ),
        ([{"repositoryMatch": "^shop$"}, {"branchMatch": "^main$"}], ["shop-main"]),
    ],
)
def test_filters_select_projects_with_githubs_two_passes(
    world: World, filters: list[dict[str, Any]], expected: list[str]
) -> None:
    world.apply(_appset(world.api, filters=filters))
    assert sorted(world.apps()) == expected


def test_a_path_is_asked_by_the_projects_id_found_by_its_path(world: World) -> None:
    world.apply(
        _appset(world.api, filters=[{"repositoryMatch": "^shop$", "pathsExist": ["deploy"]}])
    )
    raw = [r.raw_path for r in world.server.requests]
    assert "/api/v4/projects/example-group%2Fshop" in raw  # as GitLab's Go client escapes it
    assert "/api/v4/projects/101/repository/files/deploy" in raw
    tree = [r for r in world.server.requests if r.path.endswith("/repository/tree")]
    assert tree[0].query == {"path": ["deploy"], "ref": ["main"]}
    assert not [p for p in world.paths() if "/projects/102" in p or "billing" in p]


def test_keyset_pages_are_followed_by_their_link(world: World) -> None:
    world.server.keyset = True
    world.apply(_appset(world.api))
    assert sorted(world.apps()) == DEFAULT_APPS
    listing = [
        r for r in world.server.requests if r.path.endswith("/groups/example-group/projects")
    ]
    assert len(listing) == 3


def test_a_project_gone_from_the_group_removes_its_application_others_stay(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.data["projects"] = [
        p for p in world.server.data["projects"] if p["path"] != "legacy-portal"
    ]
    world.clock.advance(60)
    world.controller.step(KEY)
    after = world.versions()
    assert sorted(after) == sorted(set(DEFAULT_APPS) - {"legacy-portal-master"})
    assert all(after[name] == before[name] for name in after)


@pytest.mark.parametrize(
    ("status", "message", "only"),
    [
        (401, "401 Unauthorized", ""),
        (404, "404 Group Not Found", ""),
        (429, "Retry later", ""),
        (500, "Internal Server Error", "/repository/branches/"),
    ],
)
def test_a_refused_call_is_a_condition_without_the_token_and_no_app_changes(
    world: World, status: int, message: str, only: str
) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    assert len(before) == 4
    world.server.refuse, world.server.refuse_only = (status, message), only
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    error = world.error()
    assert error["reason"] == "ApplicationGenerationFromParamsError"
    assert error["message"].startswith("scmProvider generator: GitLab GET /")
    assert f"HTTP {status}: {message}" in error["message"]
    events = world.store.list("v1", "Event", namespace="argocd")
    assert TOKEN not in json.dumps(world.status())
    assert TOKEN not in json.dumps(events)


def test_a_refused_path_call_is_a_condition_not_a_missing_path(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.refuse, world.server.refuse_only = (403, "403 Forbidden"), "/repository/files/"
    world.apply(_appset(world.api, filters=[{"pathsDoNotExist": ["DEPRECATED"]}]))
    assert world.versions() == before  # a 403 is not read as "absent" (that would add apps)
    assert "files/DEPRECATED: HTTP 403: 403 Forbidden" in world.error()["message"]


def test_an_answer_that_is_not_json_or_malformed_is_a_condition(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.raw_answer = b"<html>proxy error</html>"
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    assert "/groups/example-group/projects: the answer is not JSON" in world.error()["message"]
    world.server.raw_answer = None
    world.server.data["projects"][0]["ssh_url_to_repo"] = None
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    assert "projects: item 0 is malformed" in world.error()["message"]


def test_a_next_page_on_another_host_is_not_followed(world: World) -> None:
    world.apply(_appset(world.api))
    before = world.versions()
    world.server.keyset = True
    world.server.url = "http://127.0.0.2:9"
    world.clock.advance(60)
    world.controller.step(KEY)
    assert world.versions() == before
    assert "the next page is on 127.0.0.2, not on the API's own host" in world.error()["message"]


@pytest.mark.parametrize(
    ("change", "field", "expected"),
    [
        ({"gitlab": {"group": ""}}, "gitlab.group", "group is required"),
        (
            {"gitlab": {"includeSharedProjects": "yes"}},
            "gitlab.includeSharedProjects",
            "includeSharedProjects must be true or false",
        ),
        ({"gitlab": {"caRef": {"key": "ca"}}}, "gitlab.caRef", "needs configMapName and key"),
        ({"cloneProtocol": "git"}, "cloneProtocol", "unknown clone protocol for Gitlab 'git'"),
        ({"bitbucket": {"owner": "x"}}, "bitbucket", "the bitbucket provider is not supported"),
    ],
)
def test_a_malformed_generator_names_its_field_and_calls_nothing(
    world: World, change: dict[str, Any], field: str, expected: str
) -> None:
    world.apply(_appset(world.api, **change))
    assert world.apps() == {}
    error = world.error()
    assert error["message"].startswith(f"scmProvider: {field}: ")
    assert expected in error["message"]
    assert world.server.requests == []


def test_every_page_is_read_when_gitlab_leaves_out_the_total(world: World) -> None:
    """GitLab leaves out X-Total-Pages past 10,000 items; Argo CD's group listing then stops
    after the first page (fewer Applications, so deletions). Headway follows X-Next-Page."""
    world.server.total_pages = False
    world.apply(_appset(world.api))
    assert sorted(world.apps()) == DEFAULT_APPS
    listing = [
        r for r in world.server.requests if r.path.endswith("/groups/example-group/projects")
    ]
    assert len(listing) == 3


def test_no_token_from_the_controllers_environment_is_sent(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Argo CD's GitLab clients send the controller's GITLAB_TOKEN when a set names no
    tokenRef; the set's author would choose where it goes. Headway calls anonymously."""
    monkeypatch.setenv("GITLAB_TOKEN", "glpat-fromtheenvironment000")
    appset = _appset(world.api)
    del appset["spec"]["generators"][0]["scmProvider"]["gitlab"]["tokenRef"]
    world.apply(appset)
    assert sorted(world.apps()) == DEFAULT_APPS
    assert all("private-token" not in r.headers for r in world.server.requests)


def test_a_failing_call_is_made_once_per_generation(world: World) -> None:
    """Argo CD's client retries a 5xx up to four times within one generation; Headway asks
    once and generates again at the next requeue."""
    world.server.refuse = (503, "503 Service Unavailable")
    world.apply(_appset(world.api))
    assert len(world.server.requests) == 1
    assert "HTTP 503: 503 Service Unavailable" in world.error()["message"]


def test_argo_cds_fasttemplate_gitlab_example_shape_generates(world: World) -> None:
    """The shape of argo-cd's scm-provider-example-fasttemplate-gitlab.yaml (fasttemplate
    tags with spaces, includeSubgroups, https, a repositoryMatch filter), pointed at the fake
    GitLab: it used to be refused as an unsupported provider."""
    appset = _appset(world.api, cloneProtocol="https", filters=[{"repositoryMatch": "ingress"}])
    appset["spec"]["goTemplate"] = False
    appset["spec"]["generators"][0]["scmProvider"]["gitlab"]["includeSubgroups"] = True
    appset["spec"]["template"] = {
        "metadata": {"name": "{{ repository }}-guestbook"},
        "spec": {
            "project": "default",
            "source": {
                "repoURL": "{{ url }}",
                "targetRevision": "{{ branch }}",
                "path": "guestbook",
            },
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "guestbook"},
        },
    }
    world.apply(appset)
    source = world.apps()["ingress-guestbook"]["spec"]["source"]
    assert source["repoURL"] == f"https://{HOST}/example-group/platform/ingress.git"
    assert source["targetRevision"] == "main"
