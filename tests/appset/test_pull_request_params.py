"""The pullRequest generator's pure half: Argo CD's parameters and slugs, filters, the
requeue interval, and generation through `StaticInputs`."""

from __future__ import annotations

from typing import Any

import pytest

from headway.appset.generate import generate, requeue_after
from headway.appset.inputs import OpenPullRequest, StaticInputs
from headway.appset.pull_requests import params_of, slug
from headway.github_rest import enterprise_api_url

PULL = OpenPullRequest(
    number=7,
    title="t",
    branch="Feature/Über_Cool & fast",
    target_branch="main",
    head_sha="0123456789abcdef",
    author="octocat",
    labels=("preview",),
)


@pytest.mark.parametrize(
    ("branch", "expected"),
    [
        ("feature/Payment_Form", "feature-payment-form"),
        ("Feature/Über_Cool & fast", "feature-uber-cool-and-fast"),
        ("--release/2.x--", "release-2-x"),
        ("fix @ 'quotes'", "fix-at-quotes"),
        # longer than 50: cut at the last dash within the first 51 characters
        ("a" * 30 + "-" + "b" * 30, "a" * 30),
        ("c" * 60, "c" * 50),
    ],
)
def test_slugs_follow_argo_settings(branch: str, expected: str) -> None:
    assert slug(branch) == expected


def test_parameters_labels_only_with_go_template() -> None:
    plain = params_of(PULL, go_template=False)
    assert plain == {
        "number": "7",
        "title": "t",
        "branch": "Feature/Über_Cool & fast",
        "branch_slug": "feature-uber-cool-and-fast",
        "target_branch": "main",
        "target_branch_slug": "main",
        "head_sha": "0123456789abcdef",
        "head_short_sha": "01234567",
        "head_short_sha_7": "0123456",
        "author": "octocat",
    }
    assert params_of(PULL, go_template=True)["labels"] == ["preview"]


def _set(generators: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "metadata": {"name": "s", "namespace": "argocd"},
        "spec": {
            "generators": generators,
            "template": {
                "metadata": {"name": "pr-{{number}}-{{values.env}}"},
                "spec": {
                    "project": "default",
                    "source": {"repoURL": "r", "targetRevision": "{{head_sha}}", "path": "."},
                    "destination": {"server": "https://kubernetes.default.svc"},
                },
            },
        },
    }


def test_fasttemplate_generation_with_values_from_static_inputs() -> None:
    inputs = StaticInputs(pulls={("o", "r"): (PULL,)})
    generator = {
        "pullRequest": {"github": {"owner": "o", "repo": "r"}, "values": {"env": "pr{{number}}"}}
    }
    generation = generate(_set([generator]), inputs)
    assert generation.error is None
    [app] = generation.apps
    assert app.name == "pr-7-pr7"
    assert app.manifest["spec"]["source"]["targetRevision"] == "0123456789abcdef"
    assert generation.requeue_after == 1800.0  # Argo CD's default, 30 minutes


@pytest.mark.parametrize(
    ("generators", "expected"),
    [
        ([{"list": {"elements": []}}], None),
        ([{"pullRequest": {"requeueAfterSeconds": 45}}], 45.0),
        ([{"pullRequest": {"requeueAfterSeconds": 0}}], None),
        ([{"plugin": {}}], 1800.0),
        ([{"pullRequest": {}}, {"pullRequest": {"requeueAfterSeconds": 600}}], 600.0),
        (
            [
                {
                    "matrix": {
                        "generators": [{"git": {}}, {"pullRequest": {"requeueAfterSeconds": 90}}]
                    }
                }
            ],
            90.0,
        ),
    ],
)
def test_requeue_is_the_shortest_polling_interval(
    generators: list[dict[str, Any]], expected: float | None
) -> None:
    assert requeue_after(generators) == expected


def test_other_providers_are_refused_by_name() -> None:
    generator = {"pullRequest": {"bitbucket": {"owner": "o", "repo": "r"}}}
    error = generate(_set([generator]), StaticInputs()).error
    assert error is not None
    assert error.message == (
        "pullRequest: bitbucket: the bitbucket provider is not supported by Headway; "
        "use github, gitlab or gitea"
    )
    assert error.path == ("spec", "generators", 0, "pullRequest", "bitbucket")


@pytest.mark.parametrize(
    ("api", "root"),
    [
        ("", "https://api.github.com"),
        ("https://ghe.example.com", "https://ghe.example.com/api/v3"),
        ("https://ghe.example.com/api/v3/", "https://ghe.example.com/api/v3"),
        ("https://api.ghe.example.com", "https://api.ghe.example.com"),
    ],
)
def test_enterprise_api_roots(api: str, root: str) -> None:
    assert enterprise_api_url(api) == root
