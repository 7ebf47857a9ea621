"""lightkube (the client the Kubernetes backend will use) against the local API: its
errors parse into `Status` objects (it needs `Content-Type: application/json` exactly),
pages are followed, a watch resumes from a list's version, and 410 reaches it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from lightkube import Client, KubeConfig
from lightkube.core.exceptions import ApiError
from lightkube.generic_resource import create_namespaced_resource

from headway.cli.runtime import kubeconfig_text
from kubeapi.conftest import Api
from kubeapi.objects import configmap, deployment

Deploy = create_namespaced_resource("apps", "v1", "Deployment", "deployments")
ConfigMap = create_namespaced_resource("", "v1", "ConfigMap", "configmaps")


def _name(obj: Any) -> str:
    return str(obj.to_dict()["metadata"]["name"])


@pytest.fixture
def client(api: Api) -> Iterator[Client]:
    config = KubeConfig.from_dict(yaml.safe_load(kubeconfig_text(api.url)))
    yield Client(config=config, field_manager="lightkube-test")


def test_apply_conflicts_arrive_as_status_causes(client: Client) -> None:
    client.apply(Deploy.from_dict(deployment("web", replicas=1)))
    with pytest.raises(ApiError) as conflict:
        client.apply(Deploy.from_dict(deployment("web", replicas=3)), field_manager="other")
    status = conflict.value.status
    assert (status.code, status.reason) == (409, "Conflict")
    causes = status.to_dict()["details"]["causes"]
    assert [cause["field"] for cause in causes] == [".spec.replicas"]
    with pytest.raises(ApiError) as missing:
        client.get(ConfigMap, "nope", namespace="default")
    assert missing.value.status.message == 'configmaps "nope" not found'


def test_a_chunked_list_follows_every_page(client: Client) -> None:
    for n in range(5):
        client.create(ConfigMap.from_dict(configmap(f"cm{n}")))
    listed = client.list(ConfigMap, namespace="default", chunk_size=2)
    assert [_name(o) for o in listed] == [f"cm{n}" for n in range(5)]


def test_a_watch_resumes_from_a_list_version_and_410_reaches_it(
    client: Client, api: Api
) -> None:
    client.create(ConfigMap.from_dict(configmap("before")))
    listed = client.list(ConfigMap, namespace="default")
    names = [_name(o) for o in listed]  # a list is read lazily: read it first
    assert names == ["before"]
    version = listed.resourceVersion
    client.create(ConfigMap.from_dict(configmap("after")))
    events = client.watch(ConfigMap, namespace="default", resource_version=version,
                          server_timeout=1)
    kind, obj = next(iter(events))
    assert (kind, _name(obj)) == ("ADDED", "after")
    api.store.create(configmap("more"))
    api.store.compact(keep=0)
    stale = client.watch(ConfigMap, namespace="default", resource_version=version,
                         server_timeout=1)
    with pytest.raises(ApiError) as gone:
        next(iter(stale))
    assert gone.value.status.code == 410
