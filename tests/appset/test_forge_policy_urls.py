"""Which `api:` URLs the ApplicationSet forge policy lets a token go to (pure): the public
GitHub API always, an operator-listed root by where its requests go, and nothing that only
looks like an allowed URL."""

from __future__ import annotations

import pytest

from headway.appset.forge_policy import ForgePolicy, github_api_root, same_origin

GHE = ForgePolicy(allowed_api_urls=("https://ghe.example.com/",))


@pytest.mark.parametrize(
    "api",
    [
        "",  # the public GitHub API, as an empty `api` means
        "https://api.github.com",
        "https://API.GitHub.com/",
        "https://ghe.example.com",
        "https://ghe.example.com/",
        "https://ghe.example.com/api/v3",
        "https://GHE.example.com:443/api/v3/",
    ],
)
def test_the_public_api_and_the_listed_root_are_allowed(api: str) -> None:
    assert GHE.api_refusal(api) is None


@pytest.mark.parametrize(
    "api",
    [
        "https://ghe.example.com.evil.example",  # a longer host
        "https://ghe.example.com@evil.example",  # user part: the request goes to evil.example
        "https://evil.example/ghe.example.com",  # the allowed host as a path
        "https://evil.example/?u=https://ghe.example.com",  # ... as a query
        "https://ghe.example.com:8443",  # another port
        "http://ghe.example.com",  # plain HTTP: the token would cross the network in clear
        "https://ghe.example.com/other/api/v3",  # another root on the same host
        "ftp://ghe.example.com",
        "ghe.example.com",  # no scheme
        "https://[::1",  # not a URL
    ],
)
def test_lookalikes_of_the_listed_root_are_refused(api: str) -> None:
    refusal = GHE.api_refusal(api)
    assert refusal is not None
    assert repr(api) in refusal


def test_without_a_list_only_the_public_api_is_allowed() -> None:
    refusal = ForgePolicy().api_refusal("https://ghe.example.com")
    assert refusal == (
        "API URL 'https://ghe.example.com' is not allowed: the controller sends forge tokens "
        "only to the public GitHub API (https://api.github.com); an operator allows more with "
        "`headway serve --allowed-scm-providers`"
    )


def test_an_operator_url_that_cannot_be_a_root_is_refused_when_the_policy_is_made() -> None:
    with pytest.raises(ValueError, match=r"allowed SCM provider 'https://u:p@ghe\.example\.com'"):
        ForgePolicy(allowed_api_urls=("https://u:p@ghe.example.com",))


@pytest.mark.parametrize(
    ("labels", "strict", "refused"),
    [
        ({"argocd.argoproj.io/secret-type": "scm-creds"}, True, False),
        ({"argocd.argoproj.io/secret-type": "repository"}, True, True),
        ({}, True, True),
        ({}, False, False),
    ],
)
def test_token_secrets_need_the_scm_creds_label_in_strict_mode(
    labels: dict[str, str], strict: bool, refused: bool
) -> None:
    policy = ForgePolicy(token_ref_strict=strict)
    assert (policy.secret_refusal(labels) is not None) is refused


def test_the_judged_root_is_the_one_the_client_calls() -> None:
    assert github_api_root("https://ghe.example.com/") == "https://ghe.example.com/api/v3"
    assert github_api_root("") == "https://api.github.com"


@pytest.mark.parametrize(
    ("url", "followed"),
    [
        ("https://ghe.example.com/api/v3/repositories/7/pulls?page=2", True),
        ("https://GHE.example.com:443/other/path", True),
        ("https://ghe.example.com.evil.example/api/v3?page=2", False),
        ("https://ghe.example.com@evil.example/api/v3?page=2", False),
        ("https://user@ghe.example.com/api/v3?page=2", False),
        ("https://ghe.example.com:8443/api/v3?page=2", False),
        ("http://ghe.example.com/api/v3?page=2", False),
        ("https://ghe.example.com:99999/api/v3", False),
    ],
)
def test_a_next_page_is_followed_only_on_the_roots_own_origin(url: str, followed: bool) -> None:
    """The GitHub, GitLab and Gitea clients follow a `Link: rel="next"` with the token only
    when it reaches the root's scheme, host and port; its path and query may differ."""
    assert same_origin(url, "https://ghe.example.com/api/v3") is followed
