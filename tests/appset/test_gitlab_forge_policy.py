"""Where the forge policy lets a GitLab generator's token go (pure): the public GitLab API
(gitlab.com) always, as the public GitHub API is; a self-hosted GitLab only when the operator
lists it, written with or without `/api/v4`; nothing that only looks like an allowed URL."""

from __future__ import annotations

import pytest

from headway.appset.forge_policy import ForgePolicy, gitlab_api_root

SELF_HOSTED = ForgePolicy(allowed_api_urls=("https://gitlab.example.com/",))


@pytest.mark.parametrize(
    ("api", "root"),
    [
        ("", "https://gitlab.com/api/v4"),
        ("https://gitlab.com", "https://gitlab.com/api/v4"),
        ("https://gitlab.example.com/", "https://gitlab.example.com/api/v4"),
        ("https://gitlab.example.com/api/v4/", "https://gitlab.example.com/api/v4"),
        ("https://example.com/gitlab", "https://example.com/gitlab/api/v4"),
    ],
)
def test_the_rest_root_is_the_gitlab_clients(api: str, root: str) -> None:
    assert gitlab_api_root(api) == root


@pytest.mark.parametrize("api", ["", "https://gitlab.com", "https://GitLab.com/api/v4/"])
def test_gitlab_com_is_allowed_by_default(api: str) -> None:
    assert ForgePolicy().api_refusal(api, "gitlab") is None


@pytest.mark.parametrize(
    "api", ["https://gitlab.example.com", "https://gitlab.example.com/api/v4", ""]
)
def test_a_listed_self_hosted_gitlab_is_allowed(api: str) -> None:
    assert SELF_HOSTED.api_refusal(api, "gitlab") is None


@pytest.mark.parametrize(
    "api",
    [
        "https://gitlab.example.com.evil.example",
        "https://gitlab.example.com@evil.example",
        "https://evil.example/gitlab.example.com",
        "http://gitlab.example.com",
        "https://gitlab.example.com:8443",
        "https://gitlab.example.com/other",
        "https://api.github.com",  # GitHub's public API is not GitLab's
    ],
)
def test_anything_else_is_refused_naming_the_public_gitlab_api(api: str) -> None:
    refusal = SELF_HOSTED.api_refusal(api, "gitlab")
    assert refusal is not None
    assert "the public GitLab API (https://gitlab.com/api/v4)" in refusal or "refused" in refusal


def test_the_default_refuses_a_self_hosted_gitlab_and_says_how_to_allow_it() -> None:
    refusal = ForgePolicy().api_refusal("https://gitlab.example.com", "gitlab")
    assert refusal == (
        "API URL 'https://gitlab.example.com' is not allowed: the controller sends forge "
        "tokens only to the public GitLab API (https://gitlab.com/api/v4); an operator allows "
        "more with `headway serve --allowed-scm-providers`"
    )
