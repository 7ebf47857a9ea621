"""The forge calls of the pullRequest generator: a token from a Secret of the control
namespace, then GitHub's `GET /repos/{owner}/{repo}/pulls` (open ones, 100 a page, every page)
through `headway.github_rest`.

Every failure - a missing Secret or key, a refused call, a timeout, an answer that is not the
documented shape - is an `InputError` whose message names the generator and what failed, so
generation stops and no Application changes. The token is sent as a header and never appears
in a message.
A Secret the operator's forge policy refuses (`headway.appset.forge_policy`: not labelled
`argocd.argoproj.io/secret-type: scm-creds` under strict mode) is `ForgeRefused`, raised
before its value is looked at.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import httpx2

from headway.appset.forge_policy import ForgePolicy
from headway.appset.inputs import (
    ForgeRefused,
    InputError,
    OpenPullRequest,
    PullRequestQuery,
    SecretKeyRef,
)
from headway.cluster.errors import ClusterError
from headway.cluster.protocol import Cluster
from headway.github_rest import GitHubApi, GitHubApiError, enterprise_api_url
from headway.json_fields import integer_field, text_field

__all__ = ["list_pull_requests", "secret_token"]

USER_AGENT = "headway-applicationset"


def secret_token(
    cluster: Cluster,
    *,
    namespace: str,
    ref: SecretKeyRef | None,
    generator: str,
    policy: ForgePolicy | None,
    provider: str = "github",
) -> str:
    """The value under `ref` (empty without a reference: anonymous access, as in Argo CD);
    a Secret the forge `policy` refuses (not labelled for forge tokens) is `ForgeRefused`
    before its value is looked at. No policy: the operator named the Secret (plugin)."""
    if ref is None:
        return ""
    where = f"{generator} generator: Secret {namespace}/{ref.secret_name}"
    try:
        secret = cluster.get("v1", "Secret", ref.secret_name, namespace)
    except ClusterError as err:
        raise InputError(f"{where}: cannot be read: {err}") from None
    labels = (secret.get("metadata") or {}).get("labels") or {}
    refusal = None if policy is None else policy.secret_refusal(
        {str(k): str(v) for k, v in labels.items()}
    )
    if refusal is not None:
        message = f"Secret {namespace}/{ref.secret_name} {refusal}"
        raise ForgeRefused((provider, "tokenRef"), message)
    plain = secret.get("stringData") or {}
    if ref.key in plain:
        return str(plain[ref.key])
    encoded = (secret.get("data") or {}).get(ref.key)
    if encoded is None:
        raise InputError(f"{where} has no key {ref.key!r}")
    try:
        return base64.b64decode(str(encoded), validate=True).decode().strip()
    except (binascii.Error, UnicodeDecodeError):
        raise InputError(f"{where}: key {ref.key!r} is not base64 text") from None


def list_pull_requests(
    query: PullRequestQuery, *, token: str, client: httpx2.Client
) -> list[OpenPullRequest]:
    """The open pull requests of the repository (none when GitHub does not know it and the
    generator says `continueOnRepoNotFoundError`, as in Argo CD)."""
    api = GitHubApi(
        client=client, token=token, api_url=enterprise_api_url(query.api), user_agent=USER_AGENT
    )
    path = f"/repos/{query.owner}/{query.repo}/pulls"
    try:
        raw = api.pages(path, {"state": "open", "per_page": 100})
    except GitHubApiError as err:
        if err.status == 404 and query.continue_on_not_found:
            return []
        raise InputError(f"pullRequest generator: {err}") from None
    return [_pull_request(item, index, path) for index, item in enumerate(raw)]


def _pull_request(raw: Any, index: int, path: str) -> OpenPullRequest:
    """One listed pull request; an item without the documented fields is an error naming it."""
    try:
        head, base, user = raw["head"], raw["base"], raw["user"]
        labels = [str(label["name"]) for label in raw.get("labels") or []]
        return OpenPullRequest(
            number=integer_field(raw, "number"),
            title=str(raw.get("title") or ""),
            branch=text_field(head, "ref"),
            target_branch=text_field(base, "ref"),
            head_sha=text_field(head, "sha"),
            author=text_field(user, "login"),
            labels=tuple(labels),
        )
    except (KeyError, TypeError, ValueError) as err:
        message = f"pullRequest generator: GitHub GET {path}: item {index} is malformed ({err!r})"
        raise InputError(message) from None
