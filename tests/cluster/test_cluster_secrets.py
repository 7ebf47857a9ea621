"""Argo CD cluster Secrets: parsing, writing, and the kubeconfig a client is built from."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from headway.cluster.cluster_secrets import (
    ClusterCredentials,
    ClusterSecret,
    ClusterSecretError,
    ExecProvider,
    TLSClientConfig,
    cluster_secret_manifest,
    is_cluster_secret,
    kubeconfig_for,
    parse_cluster_secret,
)

TOKEN = "s3cr3t-token-value"
CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode()


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def secret(**data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "prod", "namespace": "argocd",
                     "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "data": {k: _b64(v) for k, v in data.items()},
    }


def test_an_argo_cd_cluster_secret_registers_its_server_name_and_credentials() -> None:
    config = {"bearerToken": TOKEN, "tlsClientConfig": {"insecure": False, "caData": CA}}
    parsed = parse_cluster_secret(secret(
        name="prod", server="https://prod.example.com:6443/", namespaces="shop, web",
        config=json.dumps(config),
    ))
    assert (parsed.name, parsed.server, parsed.namespaces) == (
        "prod", "https://prod.example.com:6443", ("shop", "web"))
    assert parsed.credentials.bearer_token == TOKEN
    assert parsed.credentials.tls.ca_data == CA
    assert TOKEN not in repr(parsed) and CA not in repr(parsed)


def test_string_data_wins_over_data_and_the_name_defaults_to_the_server() -> None:
    raw = secret(server="https://old.example.com")
    raw["stringData"] = {"server": "https://new.example.com", "config": "{}"}
    parsed = parse_cluster_secret(raw)
    assert (parsed.name, parsed.server) == ("https://new.example.com", "https://new.example.com")


@pytest.mark.parametrize(("data", "field"), [
    ({}, "data.server is missing"),
    ({"server": "prod.example.com"}, "data.server must be an http(s):// URL"),
    ({"server": "https://x", "config": "{not json " + TOKEN}, "data.config is not JSON"),
    ({"server": "https://x", "config": json.dumps({"bearerToken": 5})},
     "data.config.bearerToken must be a string"),
    ({"server": "https://x",
      "config": json.dumps({"tlsClientConfig": {"caData": TOKEN + "!"}})},
     "data.config.tlsClientConfig.caData is not valid base64"),
    ({"server": "https://x", "config": json.dumps({"awsAuthConfig": {"clusterName": "c"}})},
     "data.config.awsAuthConfig is not supported"),
])
def test_a_malformed_secret_is_named_with_its_field_and_never_its_values(
    data: dict[str, str], field: str
) -> None:
    with pytest.raises(ClusterSecretError) as caught:
        parse_cluster_secret(secret(**data))
    assert str(caught.value).startswith(f"cluster Secret prod: {field}")
    assert TOKEN not in str(caught.value)


def test_the_written_secret_reads_back_as_the_same_cluster() -> None:
    cluster = ClusterSecret(
        secret_name="cluster-prod", name="prod", server="https://prod.example.com",
        namespaces=("shop",), cluster_resources=True,
        credentials=ClusterCredentials(
            bearer_token=TOKEN, tls=TLSClientConfig(insecure=True, ca_data=CA),
            exec_provider=ExecProvider(command="aws", args=("eks", "get-token"),
                                       env=(("AWS_PROFILE", "prod"),)),
        ),
    )
    manifest = cluster_secret_manifest(cluster)
    assert manifest["metadata"]["labels"] == {"argocd.argoproj.io/secret-type": "cluster"}
    assert TOKEN not in json.dumps(manifest)  # base64 in data, as Kubernetes keeps Secrets
    assert parse_cluster_secret(manifest) == cluster


def test_the_kubeconfig_carries_token_ca_and_exec_plugin_as_kubectl_names_them() -> None:
    cluster = ClusterSecret(
        secret_name="s", name="prod", server="https://prod.example.com",
        credentials=ClusterCredentials(
            bearer_token=TOKEN, tls=TLSClientConfig(ca_data=CA),
            exec_provider=ExecProvider(command="aws", args=("eks", "get-token")),
        ),
    )
    config = kubeconfig_for(cluster)
    (entry,) = config["clusters"]
    (user,) = config["users"]
    assert entry["cluster"] == {"server": "https://prod.example.com",
                                "certificate-authority-data": CA}
    assert user["user"]["token"] == TOKEN
    assert user["user"]["exec"]["command"] == "aws"
    assert config["current-context"] == "prod"


@pytest.mark.parametrize("metadata", [True, "x", 3, ["labels"]])
def test_a_secret_whose_metadata_is_not_a_mapping_is_not_a_cluster_and_says_so(
    metadata: object,
) -> None:
    # Found by tests/fuzz (headway check on a generated repository): before, `.get` on a
    # bool raised AttributeError and the check printed a traceback.
    secret = {"kind": "Secret", "metadata": metadata, "stringData": {"server": "https://x"}}
    assert not is_cluster_secret(secret)
    with pytest.raises(ClusterSecretError):
        parse_cluster_secret({**secret, "stringData": {}})


def test_the_secrets_uid_and_shard_are_what_sharding_reads() -> None:
    raw = secret(server="https://prod.example.com", shard=" 2 ")
    raw["metadata"]["uid"] = "4a3c-uid"
    parsed = parse_cluster_secret(raw)
    assert (parsed.uid, parsed.shard) == ("4a3c-uid", 2)
    assert parse_cluster_secret(secret(server="https://prod.example.com")).shard is None
    with pytest.raises(ClusterSecretError, match=r"Secret prod: data.shard must be a whole"):
        parse_cluster_secret(secret(server="https://prod.example.com", shard="first"))
