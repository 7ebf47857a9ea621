"""Helm charts in OCI registries: where a chart lives, its versions, its archive. Pure.

A chart source `{repoURL: oci://ghcr.io/org/charts, chart: web}` (or `ghcr.io/org/charts`
without a scheme, as Argo CD writes repositories with `enableOCI`) is the OCI repository
`org/charts/web` on `ghcr.io`, reached over HTTPS (plain HTTP for a loopback host, as
Docker treats local registries). Its tags are the chart's versions, with `_` standing for
semver's `+` (OCI tags cannot hold `+`, Helm's rule); the manifest of a tag names the
chart archive as the layer of media type `application/vnd.cncf.helm.chart.content.v1.tar+gzip`,
and that layer's digest is the archive's sha256.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from urllib.parse import quote, urlencode, urlsplit

from headway.source.helm_index import ChartVersion, HelmRepositoryError

__all__ = [
    "CHART_LAYER",
    "MANIFEST_TYPES",
    "BearerChallenge",
    "OciChart",
    "chart_layer_digest",
    "oci_chart",
    "parse_challenge",
    "parse_tags",
]

CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
MANIFEST_TYPES = "application/vnd.oci.image.manifest.v1+json"
_LOOPBACK = ("127.", "localhost", "[::1]")
_PARAM = re.compile(r'(\w+)="([^"]*)"')


@dataclass(frozen=True)
class OciChart:
    """Where one chart lives in a registry."""

    base: str  # https://host (or http://127.0.0.1:port)
    repository: str  # org/charts/web

    def tags_url(self) -> str:
        return f"{self.base}/v2/{self.repository}/tags/list"

    def manifest_url(self, version: str) -> str:
        return f"{self.base}/v2/{self.repository}/manifests/{quote(version.replace('+', '_'))}"

    def blob_url(self, digest: str) -> str:
        return f"{self.base}/v2/{self.repository}/blobs/sha256:{digest}"


def oci_chart(url: str, chart: str, *, plain_http: bool = False) -> OciChart:
    """`oci://host/org/charts` + `web` -> the registry base URL and `org/charts/web`.
    `plain_http` (the Secret's `insecureOCIForceHttp`) asks any host over HTTP; an
    `https://` or `http://` URL (a repository Secret with `enableOCI`) keeps its scheme."""
    text = url.strip()
    given, sep, rest = text.partition("://")
    given = given.lower() if sep else ""
    if given in ("http", "https"):
        text = rest
    elif given == "oci":
        text, given = rest, ""
    host, _, path = text.partition("/")
    if given not in ("", "http", "https") or not host or not chart.strip("/"):
        raise HelmRepositoryError(url, chart, "not an OCI repository URL (oci://host/path)")
    plain = plain_http or host.startswith(_LOOPBACK) or given == "http"
    scheme = "http" if plain else "https"
    repository = "/".join(p for p in (path.strip("/"), chart.strip("/")) if p)
    return OciChart(f"{scheme}://{host}", repository)


def parse_tags(data: bytes, *, url: str, chart: str) -> tuple[ChartVersion, ...]:
    """A `tags/list` answer as chart versions (`_` read back as `+`)."""
    try:
        tags = json.loads(data).get("tags") or []
    except (ValueError, AttributeError):
        raise HelmRepositoryError(url, chart, "the registry's tag list is not JSON") from None
    return tuple(ChartVersion(chart, str(t).replace("_", "+"), (), "") for t in tags)


def chart_layer_digest(data: bytes, *, url: str, chart: str, version: str) -> str:
    """The sha256 (hex) of the chart archive a manifest names."""
    try:
        layers = json.loads(data).get("layers") or []
    except (ValueError, AttributeError):
        reason = f"version {version}: the manifest is not JSON"
        raise HelmRepositoryError(url, chart, reason) from None
    for layer in layers:
        if isinstance(layer, dict) and layer.get("mediaType") == CHART_LAYER:
            digest = str(layer.get("digest") or "")
            if re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
                return digest.removeprefix("sha256:")
    reason = f"version {version}: the manifest has no Helm chart layer ({CHART_LAYER})"
    raise HelmRepositoryError(url, chart, reason)


@dataclass(frozen=True)
class BearerChallenge:
    realm: str
    service: str
    scope: str

    def token_url(self) -> str:
        query = {k: v for k, v in (("service", self.service), ("scope", self.scope)) if v}
        return f"{self.realm}?{urlencode(query)}" if query else self.realm


def parse_challenge(header: str) -> BearerChallenge | None:
    """A registry's `WWW-Authenticate: Bearer realm=...,service=...,scope=...`; None for
    any other scheme (Basic is answered with the credentials directly)."""
    scheme, _, rest = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    params = dict(_PARAM.findall(rest))
    realm = params.get("realm", "")
    if urlsplit(realm).scheme not in ("http", "https"):
        return None
    return BearerChallenge(realm, params.get("service", ""), params.get("scope", ""))
