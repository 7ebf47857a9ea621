"""Where the API server is and who we are to it, from a kubeconfig or a Pod's service
account, through lightkube's configuration loader (tokens, client certificates, exec
plugins such as `aws eks get-token`, the in-cluster CA and rotating token)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx2
from lightkube.config import client_adapter
from lightkube.config.kubeconfig import DEFAULT_KUBECONFIG, KubeConfig, SingleConfig
from lightkube.core.exceptions import ConfigError

from headway.cluster import errors
from headway.cluster.cluster_secrets import ClusterSecret, kubeconfig_for

__all__ = ["destination_config", "http_client", "load_config"]

IN_CLUSTER = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def load_config(kubeconfig: Path | None, context: str | None, *,
                in_cluster: bool = False) -> SingleConfig:
    """The connection settings: `kubeconfig` (and its `context`, else its current one);
    `in_cluster`: the Pod's service account; neither: `$KUBECONFIG` or `~/.kube/config`.
    A clear `ClusterError` when none can be read."""
    try:
        if kubeconfig is not None:
            loaded = KubeConfig.from_file(kubeconfig)
        elif in_cluster:
            if "KUBERNETES_SERVICE_HOST" not in os.environ:
                raise errors.ClusterError("--in-cluster: not running in a Kubernetes Pod "
                                          "(KUBERNETES_SERVICE_HOST is not set)")
            loaded = KubeConfig.from_service_account(IN_CLUSTER)
        else:
            loaded = KubeConfig.from_file(os.environ.get("KUBECONFIG", DEFAULT_KUBECONFIG))
        config = loaded.get(context)
    except ConfigError as error:
        where = f"kubeconfig {kubeconfig}" if kubeconfig else "the Kubernetes configuration"
        raise errors.ClusterError(f"cannot use {where}: {error}") from error
    except (OSError, ValueError, KeyError) as error:
        raise errors.ClusterError(f"cannot read kubeconfig {kubeconfig}: {error}") from error
    if config is None or config.user is None:
        if config is not None:
            raise errors.ClusterError(f"context {config.context_name!r} names no user")
        raise errors.ClusterError(f"kubeconfig {kubeconfig} has no context {context!r}")
    return config


def destination_config(cluster: ClusterSecret) -> SingleConfig:
    """The connection settings of a cluster Secret's destination. A clear `ClusterError`
    naming the cluster (never a credential) when they cannot be used."""
    if cluster.credentials.tls.server_name:
        raise errors.ClusterError(
            f"cluster {cluster.name} ({cluster.server}): tlsClientConfig.serverName is not "
            "supported by Headway's Kubernetes client; put the certificate's name in `server`"
        )
    try:
        config = KubeConfig.from_dict(kubeconfig_for(cluster)).get()
    except (ConfigError, ValueError, KeyError, TypeError) as error:
        raise errors.ClusterError(
            f"cluster {cluster.name} ({cluster.server}): its config cannot be used "
            f"({type(error).__name__})"
        ) from None
    assert config is not None
    return config


def http_client(config: SingleConfig, *, timeout: float = 30.0) -> httpx2.Client:
    """An HTTP client to the configured server, authenticating as configured. Its pool has
    no connection limit: each watched kind keeps a stream open on a connection of its own
    (streams.py), and a cluster may serve more kinds than httpx's default 100 connections,
    past which every other request would wait for a free one."""
    params = client_adapter.ConnectionParams(timeout=httpx2.Timeout(timeout))
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=20)
    return httpx2.Client(**params.httpx_params(config), limits=limits)
