"""From a pipeline's `spec.forge` to a working `Forge`: the repository's owner and name from
its clone URL, the token from the Secret the pipeline names. Anything missing is a reason (a
string), not an exception: the promotion shows it and commits nothing.

A pipeline is a file from Git, so its author chooses `apiURL` and `tokenSecret`: the
operator's forge policy (`headway.appset.forge_policy`, the `headway serve` flags the
ApplicationSet generators obey) decides whether the token may go there, before the Secret's
value is read."""

from __future__ import annotations

import base64
import binascii

import httpx2

from headway.appset.forge_policy import DISABLED, ForgePolicy
from headway.cluster.errors import NotFound
from headway.cluster.protocol import Cluster
from headway.model.promotion_pipeline import ForgeSettings
from headway.promotion.github import GitHubForge, github_repository

__all__ = ["forge_for", "secret_value"]


def secret_value(
    cluster: Cluster, *, namespace: str, name: str, key: str, policy: ForgePolicy | None = None
) -> str:
    """One key of a Secret (`stringData` wins over `data`, as the API server merges them);
    raises `KeyError` with a message naming the Secret and key, or saying why the forge
    `policy` refuses the Secret (before its value is read)."""
    try:
        secret = cluster.get("v1", "Secret", name, namespace)
    except NotFound:
        raise KeyError(f"Secret {namespace}/{name} not found") from None
    labels = (secret.get("metadata") or {}).get("labels") or {}
    refusal = None if policy is None else policy.secret_refusal(
        {str(k): str(v) for k, v in labels.items()}
    )
    if refusal is not None:
        raise KeyError(f"Secret {namespace}/{name} {refusal}")
    plain = secret.get("stringData") or {}
    if key in plain:
        return str(plain[key])
    encoded = (secret.get("data") or {}).get(key)
    if encoded is None:
        raise KeyError(f"Secret {namespace}/{name} has no key {key!r}")
    try:
        return base64.b64decode(str(encoded), validate=True).decode("utf-8").strip()
    except (binascii.Error, UnicodeDecodeError):
        raise KeyError(f"Secret {namespace}/{name} key {key!r} is not base64 text") from None


def forge_for(
    settings: ForgeSettings,
    *,
    cluster: Cluster,
    namespace: str,
    url: str,
    client: httpx2.Client,
    policy: ForgePolicy,
) -> GitHubForge | str:
    """The forge a pipeline's promotions go through, or why there is none."""
    repository = github_repository(url)
    if repository is None:
        return f"spec.forge.github needs a github.com repository URL, not {url!r}"
    refusal = policy.api_refusal(settings.github.api_url)
    if not policy.enabled or refusal is not None:
        return f"spec.forge.github.apiURL: {refusal or DISABLED}"
    secret = settings.github.token_secret
    try:
        token = secret_value(
            cluster, namespace=namespace, name=secret.name, key=secret.key, policy=policy
        )
    except KeyError as err:
        return f"spec.forge.github.tokenSecret: {err.args[0]}"
    owner, name = repository
    return GitHubForge(
        owner=owner,
        repository=name,
        client=client,
        token=token,
        api_url=settings.github.api_url,
    )
