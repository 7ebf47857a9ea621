"""Argo CD cluster Secrets: what a destination cluster is called, where it is, and how to
reach it. Purely computational: parsing a Secret, writing one, and the kubeconfig a client
connects with.

A cluster Secret lives in the control namespace (`argocd`) with the label
`argocd.argoproj.io/secret-type: cluster`. Its data (base64 in `data`, or plain in
`stringData`, which wins as in Kubernetes): `server` (required), `name` (default: the
server), `namespaces` (comma-separated: the cluster is namespace-scoped, and Headway
writes nowhere else), `clusterResources` (`"true"`: a namespace-scoped cluster may still
receive cluster-scoped kinds), `project`, and `config`, a JSON object with `bearerToken`,
`username`/`password`, `tlsClientConfig` {`insecure`, `caData`, `certData`, `keyData`,
`serverName`} (the `*Data` fields base64 PEM, as in Argo CD), `execProviderConfig`
{`command`, `args`, `env`, `apiVersion`, `installHint`}, and `shard` (the controller
replica that owns the cluster when serve runs sharded: controllers/sharding.py).

Errors name the Secret and the field, never a value: credentials must not reach logs or
conditions. The credential fields are left out of every `repr`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CLUSTER_SECRET_TYPE",
    "IN_CLUSTER_NAME",
    "IN_CLUSTER_SERVER",
    "SECRET_TYPE_LABEL",
    "ClusterCredentials",
    "ClusterSecret",
    "ClusterSecretError",
    "ExecProvider",
    "TLSClientConfig",
    "cluster_secret_manifest",
    "is_cluster_secret",
    "kubeconfig_for",
    "normalize_server",
    "parse_cluster_secret",
]

SECRET_TYPE_LABEL = "argocd.argoproj.io/secret-type"
CLUSTER_SECRET_TYPE = "cluster"
IN_CLUSTER_NAME = "in-cluster"
IN_CLUSTER_SERVER = "https://kubernetes.default.svc"
_TRUE = ("true", "1", "yes")


class ClusterSecretError(ValueError):
    """A cluster Secret that cannot be used; names the Secret and the field."""

    def __init__(self, secret: str, field_path: str, problem: str) -> None:
        super().__init__(f"cluster Secret {secret}: {field_path} {problem}")
        self.secret, self.field_path, self.problem = secret, field_path, problem


@dataclass(frozen=True)
class TLSClientConfig:
    insecure: bool = False
    server_name: str = ""
    ca_data: str = field(default="", repr=False)  # base64 PEM, as in a kubeconfig
    cert_data: str = field(default="", repr=False)
    key_data: str = field(default="", repr=False)


@dataclass(frozen=True)
class ExecProvider:
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    api_version: str = "client.authentication.k8s.io/v1beta1"
    install_hint: str = ""


@dataclass(frozen=True)
class ClusterCredentials:
    bearer_token: str = field(default="", repr=False)
    username: str = ""
    password: str = field(default="", repr=False)
    tls: TLSClientConfig = TLSClientConfig()
    exec_provider: ExecProvider | None = None


@dataclass(frozen=True)
class ClusterSecret:
    """One registered destination cluster."""

    secret_name: str
    name: str
    server: str
    namespaces: tuple[str, ...] = ()  # empty: every namespace
    cluster_resources: bool = False  # with namespaces: cluster-scoped kinds allowed too
    project: str = ""
    credentials: ClusterCredentials = field(default=ClusterCredentials(), repr=False)
    uid: str = ""  # the Secret's UID: the cluster's ID, which sharding hashes
    shard: int | None = None  # the controller shard the Secret assigns it to (data.shard)


def normalize_server(server: str) -> str:
    """Servers compare without a trailing slash."""
    return server.strip().rstrip("/")


def _metadata(secret: Mapping[str, Any]) -> Mapping[str, Any]:
    """The Secret's metadata, or an empty one when a hand-written file has a scalar there."""
    meta = secret.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def is_cluster_secret(secret: Mapping[str, Any]) -> bool:
    labels = _metadata(secret).get("labels") or {}
    return isinstance(labels, Mapping) and labels.get(SECRET_TYPE_LABEL) == CLUSTER_SECRET_TYPE


def parse_cluster_secret(secret: Mapping[str, Any]) -> ClusterSecret:
    """The destination a cluster Secret registers; `ClusterSecretError` when unusable."""
    secret_name = str(_metadata(secret).get("name") or "?")
    fields = _fields(secret, secret_name)
    server = normalize_server(fields.get("server", ""))
    if not server:
        raise ClusterSecretError(secret_name, "data.server", "is missing")
    if not server.startswith(("https://", "http://")):
        raise ClusterSecretError(secret_name, "data.server", "must be an http(s):// URL")
    namespaces = tuple(n.strip() for n in fields.get("namespaces", "").split(",") if n.strip())
    return ClusterSecret(
        secret_name=secret_name,
        name=fields.get("name", "").strip() or server,
        server=server,
        namespaces=namespaces,
        cluster_resources=fields.get("clusterResources", "").strip().lower() in _TRUE,
        project=fields.get("project", "").strip(),
        credentials=_credentials(secret_name, fields.get("config", "") or "{}"),
        uid=str(_metadata(secret).get("uid") or ""),
        shard=_shard(secret_name, fields.get("shard", "")),
    )


def _shard(secret_name: str, text: str) -> int | None:
    if not text.strip():
        return None
    if not text.strip().isdigit():
        raise ClusterSecretError(secret_name, "data.shard", "must be a whole number (0, 1, ...)")
    return int(text.strip())


def _fields(secret: Mapping[str, Any], secret_name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for section, encoded in (("data", True), ("stringData", False)):
        values = secret.get(section) or {}
        if not isinstance(values, Mapping):
            raise ClusterSecretError(secret_name, section, "must be a mapping of strings")
        for key, value in values.items():
            where = f"{section}.{key}"
            if not isinstance(value, str):
                raise ClusterSecretError(secret_name, where, "must be a string")
            out[str(key)] = _decoded(secret_name, where, value) if encoded else value
    return out


def _decoded(secret_name: str, where: str, value: str) -> str:
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise ClusterSecretError(secret_name, where, "is not valid base64 of UTF-8 text") from None


def _credentials(secret_name: str, text: str) -> ClusterCredentials:
    try:
        config = json.loads(text)
    except ValueError:
        raise ClusterSecretError(secret_name, "data.config", "is not JSON") from None
    if not isinstance(config, Mapping):
        raise ClusterSecretError(secret_name, "data.config", "must be a JSON object")
    if config.get("awsAuthConfig"):
        raise ClusterSecretError(
            secret_name, "data.config.awsAuthConfig",
            "is not supported: use execProviderConfig with `aws eks get-token`",
        )
    return ClusterCredentials(
        bearer_token=_text(secret_name, config, "bearerToken"),
        username=_text(secret_name, config, "username"),
        password=_text(secret_name, config, "password"),
        tls=_tls(secret_name, config.get("tlsClientConfig") or {}),
        exec_provider=_exec(secret_name, config.get("execProviderConfig")),
    )


def _text(secret_name: str, values: Mapping[str, Any], key: str, *,
          prefix: str = "data.config") -> str:
    value = values.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ClusterSecretError(secret_name, f"{prefix}.{key}", "must be a string")
    return value


def _tls(secret_name: str, tls: Any) -> TLSClientConfig:
    prefix = "data.config.tlsClientConfig"
    if not isinstance(tls, Mapping):
        raise ClusterSecretError(secret_name, prefix, "must be an object")
    insecure = tls.get("insecure", False)
    if not isinstance(insecure, bool):
        raise ClusterSecretError(secret_name, f"{prefix}.insecure", "must be true or false")
    for key in ("caData", "certData", "keyData"):
        if _text(secret_name, tls, key, prefix=prefix):
            _decoded(secret_name, f"{prefix}.{key}", str(tls[key]))
    return TLSClientConfig(
        insecure=insecure,
        server_name=_text(secret_name, tls, "serverName", prefix=prefix),
        ca_data=_text(secret_name, tls, "caData", prefix=prefix),
        cert_data=_text(secret_name, tls, "certData", prefix=prefix),
        key_data=_text(secret_name, tls, "keyData", prefix=prefix),
    )


def _exec(secret_name: str, raw: Any) -> ExecProvider | None:
    prefix = "data.config.execProviderConfig"
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or not isinstance(raw.get("command"), str):
        raise ClusterSecretError(secret_name, f"{prefix}.command", "must be a string")
    args, env = raw.get("args") or [], raw.get("env") or {}
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ClusterSecretError(secret_name, f"{prefix}.args", "must be a list of strings")
    if not isinstance(env, Mapping):
        raise ClusterSecretError(secret_name, f"{prefix}.env", "must be a map of strings")
    return ExecProvider(
        command=str(raw["command"]),
        args=tuple(args),
        env=tuple((str(k), str(v)) for k, v in env.items()),
        api_version=_text(secret_name, raw, "apiVersion", prefix=prefix)
        or ExecProvider.api_version,
        install_hint=_text(secret_name, raw, "installHint", prefix=prefix),
    )


def kubeconfig_for(cluster: ClusterSecret) -> dict[str, Any]:
    """A one-context kubeconfig (as a dict) that reaches `cluster` with its credentials."""
    creds, tls = cluster.credentials, cluster.credentials.tls
    server: dict[str, Any] = {"server": cluster.server}
    if tls.insecure:
        server["insecure-skip-tls-verify"] = True
    if tls.ca_data:
        server["certificate-authority-data"] = tls.ca_data
    if tls.server_name:
        server["tls-server-name"] = tls.server_name
    user: dict[str, Any] = {}
    for key, value in (("token", creds.bearer_token), ("username", creds.username),
                       ("password", creds.password), ("client-certificate-data", tls.cert_data),
                       ("client-key-data", tls.key_data)):
        if value:
            user[key] = value
    if creds.exec_provider is not None:
        user["exec"] = _kubeconfig_exec(creds.exec_provider)
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": cluster.name,
        "clusters": [{"name": cluster.name, "cluster": server}],
        "users": [{"name": cluster.name, "user": user}],
        "contexts": [{"name": cluster.name,
                      "context": {"cluster": cluster.name, "user": cluster.name}}],
    }


def _kubeconfig_exec(provider: ExecProvider) -> dict[str, Any]:
    out: dict[str, Any] = {"command": provider.command, "args": list(provider.args),
                           "apiVersion": provider.api_version}
    if provider.env:
        out["env"] = [{"name": k, "value": v} for k, v in provider.env]
    if provider.install_hint:
        out["installHint"] = provider.install_hint
    return out


def _config_json(credentials: ClusterCredentials) -> dict[str, Any]:
    tls = credentials.tls
    tls_out = {k: v for k, v in (("insecure", tls.insecure), ("serverName", tls.server_name),
                                 ("caData", tls.ca_data), ("certData", tls.cert_data),
                                 ("keyData", tls.key_data)) if v}
    config: dict[str, Any] = {"tlsClientConfig": tls_out}
    for key, value in (("bearerToken", credentials.bearer_token),
                       ("username", credentials.username), ("password", credentials.password)):
        if value:
            config[key] = value
    provider = credentials.exec_provider
    if provider is not None:
        config["execProviderConfig"] = {
            "command": provider.command, "args": list(provider.args),
            "env": dict(provider.env), "apiVersion": provider.api_version,
            **({"installHint": provider.install_hint} if provider.install_hint else {}),
        }
    return config


def cluster_secret_manifest(cluster: ClusterSecret, *, namespace: str = "argocd") -> dict[str, Any]:
    """The Secret that registers `cluster`, as `headway cluster add` writes it."""
    data = {"name": cluster.name, "server": cluster.server,
            "config": json.dumps(_config_json(cluster.credentials), sort_keys=True)}
    if cluster.namespaces:
        data["namespaces"] = ",".join(cluster.namespaces)
    if cluster.cluster_resources:
        data["clusterResources"] = "true"
    if cluster.project:
        data["project"] = cluster.project
    if cluster.shard is not None:
        data["shard"] = str(cluster.shard)
    return {
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": cluster.secret_name, "namespace": namespace,
                     "labels": {SECRET_TYPE_LABEL: CLUSTER_SECRET_TYPE}},
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }

