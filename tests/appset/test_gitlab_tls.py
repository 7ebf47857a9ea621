"""A self-hosted GitLab with its own certificate authority: the generator trusts what its
`caRef` ConfigMap holds (besides the system's authorities), or skips the check with
`insecure: true`, as Argo CD's GitLab clients do; without either the call fails as a
condition. The fake GitLab serves HTTPS with a certificate made for this test."""

from __future__ import annotations

import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from gitlab_server import FakeGitLab, fake_gitlab
from test_gitlab_scm_provider import DEFAULT_APPS, KEY, TOKEN, token_secret
from test_gitlab_scm_provider import _appset as scm_appset

from e2e_sync.e2e_helpers import API, default_project
from headway.appset.forge_policy import ForgePolicy
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.appset.controller import ApplicationSetController
from headway.source.git import GitCache


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (PEM files)."""
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"]
    names = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        [*command, *names, "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert, key


class World:
    def __init__(self, tmp_path: Path, store: LocalCluster, server: FakeGitLab) -> None:
        self.store, self.server = store, server
        self.http = httpx2.Client(timeout=2.0)
        self.controller = ApplicationSetController(
            cluster=store,
            clock=VirtualClock(),
            git=GitCache(tmp_path / "git-cache"),
            namespace="argocd",
            poll_seconds=180.0,
            http=self.http,
            forge_policy=ForgePolicy(allowed_api_urls=(server.url,)),
        )
        for manifest in (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
            default_project(),
            token_secret(TOKEN),
        ):
            store.apply(manifest, field_manager="t")

    def apply(self, **gitlab: Any) -> None:
        appset = scm_appset(self.server.url, gitlab=gitlab)
        self.store.apply(appset, field_manager="t", force=True)
        self.controller.step(KEY)

    def apps(self) -> list[str]:
        return sorted(
            a["metadata"]["name"] for a in self.store.list(API, "Application", namespace="argocd")
        )

    def error(self) -> str:
        status = self.store.get(API, "ApplicationSet", "group-apps", "argocd").get("status")
        conditions = {c["type"]: c for c in (status or {}).get("conditions") or []}
        return str(conditions["ErrorOccurred"]["message"])

    def config_map(self, name: str, data: dict[str, str]) -> None:
        meta = {"name": name, "namespace": "argocd"}
        manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}
        self.store.apply(manifest, field_manager="t", force=True)


@pytest.fixture
def world(tmp_path: Path, certificate: tuple[Path, Path]) -> Iterator[World]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    with (
        fake_gitlab(FakeGitLab(), tls=context) as server,
        LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store,
    ):
        world = World(tmp_path, store, server)
        yield world
        world.http.close()


def test_an_unknown_authority_is_a_condition(world: World) -> None:
    world.apply()
    assert world.apps() == []
    assert world.error().startswith("scmProvider generator: GitLab GET /groups/example-group/")
    assert "CERTIFICATE_VERIFY_FAILED" in world.error()


def test_the_ca_ref_configmap_is_trusted(world: World, certificate: tuple[Path, Path]) -> None:
    world.config_map("gitlab-ca", {"ca.crt": certificate[0].read_text()})
    world.apply(caRef={"configMapName": "gitlab-ca", "key": "ca.crt"})
    assert world.apps() == DEFAULT_APPS


def test_insecure_skips_the_check(world: World) -> None:
    world.apply(insecure=True)
    assert world.apps() == DEFAULT_APPS


def test_a_ca_ref_that_holds_no_certificate_is_a_condition(world: World) -> None:
    world.config_map("gitlab-ca", {"ca.crt": "not a certificate"})
    world.apply(caRef={"configMapName": "gitlab-ca", "key": "ca.crt"})
    assert world.error().startswith(
        "scmProvider generator: caRef: ConfigMap argocd/gitlab-ca: no PEM certificate could be read"
    )
    world.apply(caRef={"configMapName": "gitlab-ca", "key": "other"})
    assert world.error() == (
        "scmProvider generator: caRef: ConfigMap argocd/gitlab-ca has no key 'other'"
    )
    world.apply(caRef={"configMapName": "missing", "key": "ca.crt"})
    assert world.error().startswith("scmProvider generator: caRef: ConfigMap argocd/missing")
    assert world.server.requests == []
    assert world.apps() == []
