"""A real OCI registry on loopback for Helm chart tests: the distribution API's tag list,
manifests and blobs, behind the Bearer token flow registries use (ghcr.io, Docker Hub): a
request without a token gets 401 and a challenge naming the token service, which answers
anonymously or, when the registry has a user, only to HTTP basic auth.

    registry = OciRegistryServer()                 # or (username=..., password=...)
    registry.push(chart_archive("web", "1.0.0"))    # under `charts/web`, tag `1.0.0`
    registry.url                                    # oci://127.0.0.1:PORT/charts
    registry.stop()
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from headway.source.helm_oci import CHART_LAYER
from source.helm_repo_server import Archive

TOKEN = "registry-token-for-tests"
_PATH = re.compile(r"^/v2/(?P<repo>.+)/(?P<kind>tags/list|manifests/[^/]+|blobs/sha256:[0-9a-f]+)$")


class OciRegistryServer:
    """`requests` records (path, Authorization header) of every request."""

    def __init__(self, *, username: str = "", password: str = "") -> None:
        self.blobs: dict[str, bytes] = {}
        self.manifests: dict[tuple[str, str], bytes] = {}
        self.tags: dict[str, list[str]] = {}
        self.requests: list[tuple[str, str]] = []
        basic = "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                header = self.headers.get("Authorization", "")
                registry.requests.append((self.path, header))
                if self.path.startswith("/token"):
                    if username and header != basic:
                        self._answer(401, b"{}")
                        return
                    self._answer(200, json.dumps({"token": TOKEN}).encode())
                    return
                if self.path.startswith("/storage/"):  # where blobs are redirected to
                    body = registry.blobs.get(self.path.removeprefix("/storage/"))
                    self._answer(404, b"") if body is None else self._answer(200, body)
                    return
                match = _PATH.match(self.path)
                if match is None:
                    self._answer(404, b"")
                    return
                if header != f"Bearer {TOKEN}":
                    scope = f"repository:{match['repo']}:pull"
                    challenge = (f'Bearer realm="{registry.base}/token",'
                                 f'service="test-registry",scope="{scope}"')
                    self._answer(401, b"{}", {"WWW-Authenticate": challenge})
                    return
                self._serve(match["repo"], match["kind"])

            def _serve(self, repo: str, kind: str) -> None:
                if kind == "tags/list":
                    listing = {"name": repo, "tags": registry.tags.get(repo, [])}
                    self._answer(200, json.dumps(listing).encode())
                elif kind.startswith("manifests/"):
                    body = registry.manifests.get((repo, kind.removeprefix("manifests/")))
                    self._answer(404, b"") if body is None else self._answer(200, body)
                else:
                    digest = kind.removeprefix("blobs/sha256:")
                    self._answer(307, b"", {"Location": f"{registry.base}/storage/{digest}"})

            def _answer(
                self, code: int, body: bytes, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(code)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.host = f"127.0.0.1:{self._server.server_address[1]}"
        self.base = f"http://{self.host}"
        self.url = f"oci://{self.host}/charts"

    def push(self, archive: Archive, *, path: str = "charts", layer: str = CHART_LAYER) -> str:
        """Store the chart as a manifest with one chart layer; returns the layer's sha256."""
        digest = hashlib.sha256(archive.data).hexdigest()
        self.blobs[digest] = archive.data
        repo, tag = f"{path}/{archive.chart}", archive.version.replace("+", "_")
        manifest = {
            "schemaVersion": 2,
            "config": {"mediaType": "application/vnd.cncf.helm.config.v1+json",
                       "digest": "sha256:" + "0" * 64, "size": 2},
            "layers": [{"mediaType": layer, "digest": f"sha256:{digest}",
                        "size": len(archive.data)}],
        }
        self.manifests[(repo, tag)] = json.dumps(manifest).encode()
        self.tags.setdefault(repo, []).append(tag)
        return digest

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
