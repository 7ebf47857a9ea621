"""The repository-Secret resolver against a table of Argo CD setups."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from headway.source.git import GitCredentials
from headway.source.repo_credentials import (
    RepoCredentialsError,
    build_index,
    normalize_repo_url,
    resolve_credentials,
)

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAfake\n-----END OPENSSH PRIVATE KEY-----\n"


def secret(name: str, kind: str, *, encode: bool = True, **fields: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": "argocd", "labels": {"argocd.argoproj.io/secret-type": kind}}
    if encode:
        data = {k: base64.b64encode(v.encode()).decode() for k, v in fields.items()}
        return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "data": data}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "stringData": dict(fields)}


SECRETS = [
    secret(
        "infra",
        "repository",
        url="https://git.example.com/org/infra.git",
        password="t-infra",
        username="bot",
    ),
    secret("org", "repo-creds", url="https://git.example.com/org", username="o", password="t-org"),
    secret(
        "team",
        "repo-creds",
        url="https://git.example.com/org/team-",
        password="t-team",
        encode=False,
    ),
    secret("host", "repo-creds", url="https://git.example.com", password="t-host"),
    secret("ssh", "repo-creds", url="git@git.example.com:org", sshPrivateKey=KEY),
    secret("url-only", "repository", url="https://git.example.com/org/public-ish"),
    secret(
        "lax", "repository", url="https://self-signed.local/app", insecure="true", password="t-lax"
    ),
    secret(
        "chart",
        "repo-creds",
        url="https://git.example.com/org/charts",
        type="helm",
        password="t-helm",
    ),
    secret("unrelated", "cluster", url="https://git.example.com/org/infra", password="nope"),
]


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("https://git.example.com/org/infra.git", "t-infra"),  # exact repository Secret
        ("https://git.example.com/org/infra", "t-infra"),  # .git normalized away
        ("https://GIT.example.com/org/infra/", "t-infra"),  # host case, trailing slash
        ("https://git.example.com/org/other", "t-org"),  # template prefix
        ("https://git.example.com/org/team-web", "t-team"),  # longest prefix wins
        ("https://git.example.com/elsewhere/x", "t-host"),  # shortest template still matches
        ("https://git.example.com/org/public-ish", "t-org"),  # url-only Secret borrows creds
        ("https://git.example.com/org/charts/x", "t-org"),  # a helm template is not for Git
        ("https://self-signed.local/app", "t-lax"),
        ("https://other.example.com/org/infra", None),  # nothing matches
    ],
)
def test_password_chosen_for_url(url: str, password: str | None) -> None:
    found = resolve_credentials(SECRETS, url)
    assert (found.password if found else None) == password


@pytest.mark.parametrize(
    "url",
    [
        "https://git.example.com.evil.example/org/app",  # the template's host, longer
        "https://git.example.com@evil.example/org/app",  # ... as a user part
        "https://git.example.com:8443/org/app",  # another port
        "http://git.example.com/org/app",  # plain HTTP
        "ssh://git@git.example.com.evil.example/org/app",  # the ssh template's host, longer
    ],
)
def test_a_template_lends_its_credentials_only_on_its_own_host(url: str) -> None:
    """Argo CD matches a `repo-creds` URL as a plain text prefix, so `https://git.example.com`
    covers `https://git.example.com.evil.example/...`: an Application's repoURL (from Git)
    would choose where the template's password goes."""
    found = resolve_credentials(SECRETS, url)
    assert found is None


def test_exact_match_carries_username_and_insecure() -> None:
    assert resolve_credentials(SECRETS, "https://git.example.com/org/infra") == GitCredentials(
        username="bot", password="t-infra"
    )
    lax = resolve_credentials(SECRETS, "https://self-signed.local/app")
    assert lax is not None and lax.insecure_skip_tls_verify


def test_path_case_is_kept() -> None:
    # Only scheme and host are case-insensitive: /Org/ is another repository.
    found = resolve_credentials(SECRETS, "https://git.example.com/Org/infra")
    assert found is not None and found.password == "t-host"


def test_ssh_key_from_template_for_scp_and_ssh_urls() -> None:
    for url in ("git@git.example.com:org/app.git", "ssh://git@git.example.com/org/app"):
        found = resolve_credentials(SECRETS, url)
        assert found is not None
        assert found.ssh_private_key_data == KEY
        assert found.password is None


def test_string_data_wins_over_data() -> None:
    both = secret("both", "repository", url="https://h/r", password="old")
    both["stringData"] = {"password": "new"}
    found = resolve_credentials([both], "https://h/r")
    assert found is not None and found.password == "new"


def test_project_scoped_repository_secret() -> None:
    scoped = secret("scoped", "repository", url="https://h/r", password="p-team", project="team")
    shared = secret("shared", "repository", url="https://h/r", password="p-all")
    index = build_index([scoped, shared])
    assert (index.for_url("https://h/r", "team") or GitCredentials()).password == "p-team"
    assert (index.for_url("https://h/r") or GitCredentials()).password == "p-all"
    assert build_index([scoped]).for_url("https://h/r") is None


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (
            {"data": {"url": base64.b64encode(b"https://h/r").decode(), "password": "%%%"}},
            "data.password",
        ),
        (
            {"stringData": {"url": "https://h/r", "password": "hunter2", "insecure": "yes"}},
            "insecure",
        ),
        ({"stringData": {"password": "hunter2"}}, "url"),
        (
            {
                "stringData": {
                    "url": "https://h/r",
                    "password": "hunter2",
                    "sshPrivateKey": "hunter2",
                }
            },
            "sshPrivateKey",
        ),
        ({"stringData": {"url": "https://h/r", "password": 42}}, "stringData.password"),
    ],
)
def test_malformed_secret_names_secret_and_field_not_the_value(
    bad: dict[str, Any], field: str
) -> None:
    broken = {
        "metadata": {
            "name": "broken",
            "namespace": "argocd",
            "labels": {"argocd.argoproj.io/secret-type": "repository"},
        },
        **bad,
    }
    with pytest.raises(RepoCredentialsError) as info:
        resolve_credentials([broken], "https://h/r")
    text = str(info.value)
    assert "argocd/broken" in text and repr(field) in text
    assert "hunter2" not in text and "%%%" not in text


def test_one_bad_secret_leaves_the_others_working() -> None:
    broken = secret("broken", "repository", url="https://h/r", insecure="maybe")
    index = build_index([broken, *SECRETS])
    assert [p.secret for p in index.problems] == ["argocd/broken"]
    assert (index.for_url("https://git.example.com/org/x") or GitCredentials()).password == "t-org"


def test_credentials_repr_hides_secrets() -> None:
    found = resolve_credentials(SECRETS, "https://git.example.com/org/infra")
    ssh = resolve_credentials(SECRETS, "git@git.example.com:org/x")
    assert "t-infra" not in repr(found) and "OPENSSH" not in repr(ssh)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://Git.Example.com/org/app.git/", "https://git.example.com/org/app"),
        ("git@host.example:org/app.git", "ssh://git@host.example/org/app"),
        ("HTTPS://host/org/app", "https://host/org/app"),
    ],
)
def test_normalized_urls_agree(a: str, b: str) -> None:
    assert normalize_repo_url(a) == normalize_repo_url(b)


def test_ssh_key_from_a_secret_is_offered_from_memory() -> None:
    from pygit2 import KeypairFromMemory
    from pygit2.enums import CredentialType

    from headway.source.git import _Callbacks

    creds = resolve_credentials(SECRETS, "git@git.example.com:org/app.git")
    allowed = CredentialType.SSH_KEY | CredentialType.SSH_MEMORY
    keypair = _Callbacks(creds).credentials("ssh://git@git.example.com/org/app", "git", allowed)
    assert isinstance(keypair, KeypairFromMemory)
    assert keypair.credential_tuple == ("git", None, KEY, "")


HELM_SECRETS = [
    *SECRETS,
    secret("charts", "repository", url="https://charts.example.com/stable", type="helm",
           username="reader", password="t-charts", insecure="true"),
    secret("git-twin", "repository", url="https://charts.example.com/stable", password="t-git"),
]


@pytest.mark.parametrize(
    ("url", "password", "insecure"),
    [
        ("https://charts.example.com/stable", "t-charts", True),  # `type: helm` repository
        ("https://CHARTS.example.com/stable/", "t-charts", True),  # normalized like Git URLs
        ("https://git.example.com/org/charts/x", "t-helm", False),  # a helm template's prefix
        ("https://git.example.com/org/infra.git", None, False),  # Git Secrets are not for charts
    ],
)
def test_chart_repositories_read_only_helm_secrets(
    url: str, password: str | None, insecure: bool
) -> None:
    found = build_index(HELM_SECRETS).for_url(url, repo_type="helm")
    assert (found.password if found else None) == password
    assert (found.insecure_skip_tls_verify if found else False) is insecure


def test_a_helm_secret_is_not_used_for_git() -> None:
    found = build_index(HELM_SECRETS).for_url("https://charts.example.com/stable")
    assert found is not None and found.password == "t-git"
