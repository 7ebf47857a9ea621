"""End to end: programs that cannot read `PORT` run unwrapped, told their port on the command
line (`{port}` in the image map, or `$(PORT)` in the Pod's own args), and are reached through
a Service whose `targetPort` names the declared `containerPort`.

The program is Python's own `http.server`, which takes its port only as an argument: a
third-party server that would otherwise need a wrapper script.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from headway.cluster.local.pod_facts import is_ready
from headway.cluster.protocol import Obj

from .harness import deployment, eventually, get_text, running_runtime, service, service_url

pytestmark = pytest.mark.slow


def static_site(name: str, image: str, *, args: list[str] | None = None) -> Obj:
    """Two pods declaring `containerPort: 8080` named http, probed on it by name."""
    body = deployment(name, image, replicas=2, probe=False)
    container = body["spec"]["template"]["spec"]["containers"][0]
    container["ports"] = [{"name": "http", "containerPort": 8080}]
    container["readinessProbe"] = {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 1}
    if args is not None:
        container["args"] = args
    return body


async def serves_through_service(tmp_path: Path, body: Obj) -> None:
    async with running_runtime(tmp_path) as runtime:
        config = tmp_path / "headway-runtime.yaml"  # written by the harness; re-read on change
        (tmp_path / "index.html").write_text("static page\n")
        config.write_text(
            config.read_text().replace(
                "images:\n",
                "images:\n"
                "  vendor/static-server:\n"
                f"    command: [{sys.executable!r}, '-m', 'http.server']\n"
                "    args: ['{port}', '--bind', '127.0.0.1']\n"
                f"    workingDir: {str(tmp_path)!r}\n",
            )
        )
        site = service("site")
        site["spec"]["ports"] = [{"port": 80, "targetPort": "http"}]
        runtime.cluster.apply(body, field_manager="test")
        runtime.cluster.apply(site, field_manager="test")

        def ready() -> list[Obj]:
            pods = runtime.cluster.list("v1", "Pod", namespace="default")
            return [p for p in pods if is_ready(p)]

        pods = await eventually(lambda: len(ready()) == 2 and ready(), what="2 ready pods")
        ports = {p["metadata"]["annotations"]["headway.dev/port"] for p in pods}
        assert len(ports) == 2 and "8080" not in ports  # each its own port, not the fixed one
        url = await eventually(lambda: service_url(runtime, "site"), what="service address")
        for _ in range(4):
            assert await get_text(url + "index.html") == (200, "static page\n")


async def test_port_placeholder_in_the_image_map(tmp_path: Path) -> None:
    await serves_through_service(tmp_path, static_site("site", "vendor/static-server:1"))


async def test_port_reference_in_the_pods_own_args(tmp_path: Path) -> None:
    # The Pod replaces the image's args, and names the port the Kubernetes way.
    body = static_site("site", "vendor/static-server:1", args=["$(PORT)", "--bind", "127.0.0.1"])
    await serves_through_service(tmp_path, body)
