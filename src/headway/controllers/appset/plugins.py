"""The plugin generator's call: a ConfigMap of the control namespace names the service
(`baseUrl`, `token`, optional `requestTimeout` in seconds), the token is read from a Secret,
and `POST {baseUrl}/api/v1/getparams.execute` with `{"applicationSetName", "input":
{"parameters"}}` answers `{"output": {"parameters": [...]}}` (Argo CD's plugin protocol).

`token` is `$key` (a key of the `argocd-secret` Secret) or `$secret:key`. As Argo CD documents,
a Secret named by `$secret:key` must be labelled `app.kubernetes.io/part-of: argocd`: the
label is how an operator says a Secret is Argo CD's to read, so an ApplicationSet's plugin
ConfigMap cannot hand any Secret of the namespace to a plugin service. One without the label
is refused before its value is read. Every failure is an `InputError` naming the generator,
the ConfigMap and what failed; the token is sent as a bearer header and scrubbed from
anything the service answers before it reaches a message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx2

from headway.appset.inputs import InputError, PluginQuery, SecretKeyRef
from headway.cluster.errors import ClusterError
from headway.cluster.protocol import Cluster
from headway.controllers.appset.scm import secret_token

__all__ = ["DEFAULT_TIMEOUT", "PART_OF_LABEL", "plugin_parameters", "unlabelled_secret_refusal"]

DEFAULT_TIMEOUT = 30.0  # seconds, Argo CD's plugin client default
ARGOCD_SECRET = "argocd-secret"
PART_OF_LABEL = "app.kubernetes.io/part-of"
PATH = "/api/v1/getparams.execute"


def plugin_parameters(
    query: PluginQuery, *, cluster: Cluster, namespace: str, client: httpx2.Client
) -> list[Mapping[str, Any]]:
    where = f"plugin generator (ConfigMap {namespace}/{query.config_map})"
    config = _config(cluster, namespace, query.config_map, where)
    # The ConfigMap names both the service and the Secret, and it lives in the control
    # namespace the operator keeps: no forge policy applies (the set names only the ConfigMap).
    ref = _token_ref(config["token"], where)
    _require_part_of_label(cluster, namespace, ref, where)
    token = secret_token(cluster, namespace=namespace, ref=ref, generator="plugin", policy=None)
    body = {
        "applicationSetName": query.appset_name,
        "input": {"parameters": json.loads(query.input_json)},
    }
    url = f"{config['baseUrl'].rstrip('/')}{PATH}"
    try:
        response = client.post(
            url,
            json=body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=_timeout(config, where),
        )
    except httpx2.HTTPError as err:
        raise InputError(f"{where}: POST {url}: {type(err).__name__}: {err}") from None
    if response.status_code >= 300:
        answer = response.text[:200].replace(token, "***") if token else response.text[:200]
        raise InputError(f"{where}: POST {url}: HTTP {response.status_code}: {answer}")
    return _parameters(response, where)


def _config(cluster: Cluster, namespace: str, name: str, where: str) -> dict[str, str]:
    try:
        found = cluster.get("v1", "ConfigMap", name, namespace)
    except ClusterError as err:
        raise InputError(f"{where}: cannot be read: {err}") from None
    data = {str(k): str(v) for k, v in (found.get("data") or {}).items()}
    for key in ("baseUrl", "token"):
        if not data.get(key):
            raise InputError(f"{where}: data.{key} is missing")
    return data


def _token_ref(text: str, where: str) -> SecretKeyRef:
    """`$key` -> argocd-secret's `key`; `$secret:key` -> that Secret's `key`."""
    if not text.startswith("$") or len(text) < 2:
        raise InputError(f"{where}: data.token must reference a Secret key as $key or $secret:key")
    name, _, key = text[1:].partition(":")
    return SecretKeyRef(name, key) if key else SecretKeyRef(ARGOCD_SECRET, name)


def unlabelled_secret_refusal(ref: SecretKeyRef, labels: Mapping[str, str]) -> str | None:
    """Why the token Secret may not be read (None: it may). `argocd-secret`, which `$key`
    names, is Argo CD's own and always may."""
    if ref.secret_name == ARGOCD_SECRET or labels.get(PART_OF_LABEL) == "argocd":
        return None
    return (
        f"data.token: Secret {ref.secret_name} is not labelled {PART_OF_LABEL}: argocd, which "
        "a Secret named by $secret:key must be (as in Argo CD); its value was not read"
    )


def _require_part_of_label(cluster: Cluster, namespace: str, ref: SecretKeyRef, where: str) -> None:
    if ref.secret_name == ARGOCD_SECRET:
        return
    try:
        secret = cluster.get("v1", "Secret", ref.secret_name, namespace)
    except ClusterError as err:
        reason = f"Secret {namespace}/{ref.secret_name}: cannot be read: {err}"
        raise InputError(f"{where}: {reason}") from None
    labels = (secret.get("metadata") or {}).get("labels") or {}
    refusal = unlabelled_secret_refusal(ref, {str(k): str(v) for k, v in labels.items()})
    if refusal is not None:
        raise InputError(f"{where}: {refusal}")


def _timeout(config: Mapping[str, str], where: str) -> float:
    text = config.get("requestTimeout")
    if text is None:
        return DEFAULT_TIMEOUT
    try:
        seconds = int(text)
    except ValueError:
        raise InputError(f"{where}: data.requestTimeout is not whole seconds: {text!r}") from None
    return float(seconds) if seconds > 0 else DEFAULT_TIMEOUT


def _parameters(response: httpx2.Response, where: str) -> list[Mapping[str, Any]]:
    try:
        answer = response.json()
    except ValueError:
        raise InputError(f"{where}: the answer is not JSON") from None
    output = answer.get("output") if isinstance(answer, Mapping) else None
    found = output.get("parameters") if isinstance(output, Mapping) else None
    if not isinstance(found, list):
        raise InputError(f"{where}: the answer has no output.parameters list")
    for index, item in enumerate(found):
        if not isinstance(item, Mapping):
            raise InputError(f"{where}: output.parameters[{index}] is not a mapping")
    return list(found)
