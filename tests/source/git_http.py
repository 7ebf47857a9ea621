"""A real Git smart-HTTP server on loopback that wants HTTP basic auth.

Git's own `git http-backend` (a CGI program) serves the bare repositories under `root`; the
handler in front of it answers 401 unless the Authorization header carries the expected user
and password, and records every Authorization header it saw (like `_AuthServer` in
test_git.py, which refuses everything).
"""

from __future__ import annotations

import base64
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_BACKEND = "/usr/lib/git-core/git-http-backend"


class GitHttpServer:
    def __init__(self, root: Path, *, username: str, password: str) -> None:
        token = base64.b64encode(f"{username}:{password}".encode()).decode()
        self.seen: list[str] = []
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                header = self.headers.get("Authorization", "")
                seen.append(header)
                if header != f"Basic {token}":
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self._run_backend(username)

            do_GET = _serve  # noqa: N815 (http.server's naming)
            do_POST = _serve  # noqa: N815

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while size := int(self.rfile.readline().strip() or b"0", 16):
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                    self.rfile.readline()
                    return b"".join(chunks)
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _run_backend(self, user: str) -> None:
                path, _, query = self.path.partition("?")
                env = {
                    "GIT_PROJECT_ROOT": str(root),
                    "GIT_HTTP_EXPORT_ALL": "1",
                    "PATH_INFO": path,
                    "QUERY_STRING": query,
                    "REQUEST_METHOD": self.command,
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                    "REMOTE_USER": user,
                    "REMOTE_ADDR": "127.0.0.1",
                }
                body = self._body() if self.command == "POST" else b""
                env["CONTENT_LENGTH"] = str(len(body))
                out = subprocess.run(
                    [_BACKEND], input=body, env=env, capture_output=True, check=False, timeout=60
                ).stdout
                head, _, payload = out.partition(b"\r\n\r\n")
                headers = [line.split(":", 1) for line in head.decode().split("\r\n") if line]
                status = next((int(v.split()[0]) for k, v in headers if k == "Status"), 200)
                self.send_response(status)
                for key, value in headers:
                    if key != "Status":
                        self.send_header(key, value.strip())
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        """The URL of the bare repository `root/<name>`."""
        return f"{self.base}/{name}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
