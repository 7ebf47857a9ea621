"""A real Helm chart repository on loopback for tests: a threaded `http.server` serving an
`index.yaml` and chart archives built here with `tarfile`, optionally behind basic auth.

    server = ChartRepoServer()                      # or ChartRepoServer(username=..., password=...)
    server.publish(chart_archive("web", "1.0.0"))   # adds the archive and rewrites index.yaml
    server.url                                      # http://127.0.0.1:PORT/charts
    server.stop()

`ChartRepoServer(tls=True)` serves HTTPS with the certificate of `tls/server.pem` (127.0.0.1
and localhost, signed by the test CA `tls/ca.pem`); `client_certificate=True` also demands
a client certificate signed by that CA (`tls/client.pem`, `tls/client.key`). The files were
made once with openssl and are valid until 2126.
"""

from __future__ import annotations

import base64
import hashlib
import io
import ssl
import tarfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

TLS_FILES = Path(__file__).parent / "tls"


def tls_text(name: str) -> str:
    """A PEM file of the test PKI: ca.pem, server.pem, client.pem, client.key."""
    return (TLS_FILES / name).read_text(encoding="utf-8")


CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-conf
data:
  release: {{ .Values.release | quote }}
  chartVersion: {{ .Chart.Version | quote }}
  region: {{ .Values.region | quote }}
"""


@dataclass(frozen=True)
class Archive:
    chart: str
    version: str
    data: bytes


def chart_archive(
    chart: str,
    version: str,
    *,
    values: dict[str, Any] | None = None,
    templates: dict[str, str] | None = None,
    extra: dict[str, bytes] | None = None,
) -> Archive:
    """A packaged chart as `helm package` lays it out: `<chart>/Chart.yaml`, values, templates."""
    files = {
        f"{chart}/Chart.yaml": yaml.safe_dump(
            {"apiVersion": "v2", "name": chart, "version": version, "type": "application"}
        ).encode(),
        f"{chart}/values.yaml": yaml.safe_dump(
            values or {"release": version, "region": "eu-west-1"}
        ).encode(),
    }
    for name, text in (templates or {"configmap.yaml": CONFIGMAP}).items():
        files[f"{chart}/templates/{name}"] = text.encode()
    files.update(extra or {})
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return Archive(chart, version, buffer.getvalue())


class ChartRepoServer:
    """Serves `files` (path under /charts -> bytes); `requests` records (path, auth header)."""

    def __init__(
        self,
        *,
        username: str = "",
        password: str = "",
        tls: bool = False,
        client_certificate: bool = False,
    ) -> None:
        self.files: dict[str, bytes] = {}
        self.entries: dict[str, list[dict[str, Any]]] = {}
        self.requests: list[tuple[str, str]] = []
        token = base64.b64encode(f"{username}:{password}".encode()).decode()
        wanted = f"Basic {token}" if username else ""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                header = self.headers.get("Authorization", "")
                server.requests.append((self.path, header))
                if wanted and header != wanted:
                    self._answer(401, b"", {"WWW-Authenticate": 'Basic realm="charts"'})
                    return
                body = server.files.get(self.path.removeprefix("/charts/"))
                self._answer(404, b"not found") if body is None else self._answer(200, body)

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
        if tls:
            self._server.socket = _tls_context(client_certificate).wrap_socket(
                self._server.socket, server_side=True
            )
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}/charts"

    def publish(
        self, archive: Archive, *, url: str = "", digest: str | None = None, path: str = ""
    ) -> None:
        """Serve `archive` at `path` (default `<chart>-<version>.tgz`) and list it in the
        index under `url` (default: that path, relative) with its sha256 (or `digest`)."""
        name = path or f"{archive.chart}-{archive.version}.tgz"
        self.files[name] = archive.data
        entry: dict[str, Any] = {
            "apiVersion": "v2",
            "name": archive.chart,
            "version": archive.version,
            "urls": [url or name],
        }
        sha = hashlib.sha256(archive.data).hexdigest() if digest is None else digest
        if sha:
            entry["digest"] = sha
        self.entries.setdefault(archive.chart, []).insert(0, entry)
        index = {"apiVersion": "v1", "entries": self.entries}
        self.files["index.yaml"] = yaml.safe_dump(index).encode()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def _tls_context(client_certificate: bool) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(TLS_FILES / "server.pem", TLS_FILES / "server.key")
    if client_certificate:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(TLS_FILES / "ca.pem")
    return context
