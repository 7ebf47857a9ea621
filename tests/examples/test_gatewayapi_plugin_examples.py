"""The Gateway API router plugin's examples (argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi
`examples/` at 96c63fd, release 0.15.0), as a newcomer would try them: each fixture directory
under `gatewayapi_plugin/` follows one upstream example (its files' headers say which) and must
validate with no error and pass `headway check` with no error.

docs/examples.md, "The Gateway API plugin's examples", lists every example tried.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.cli.check import run_check
from headway.model.diagnostics import Severity
from headway.source.manifest_files import check_paths

HERE = Path(__file__).resolve().parent / "gatewayapi_plugin"
REFUSED = Path(__file__).resolve().parent / "gatewayapi_plugin_refused"
PASSING = sorted(p.name for p in HERE.iterdir() if p.is_dir() and not p.name.startswith("_"))


@pytest.mark.parametrize("example", PASSING)
def test_each_gateway_plugin_example_validates(example: str) -> None:
    report = check_paths([HERE / example])
    assert [d for d in report.diagnostics if d.severity is Severity.ERROR] == []
    assert report.objects >= 1


@pytest.mark.parametrize("example", PASSING)
def test_each_gateway_plugin_example_passes_check(example: str) -> None:
    findings, _apps = run_check(HERE / example)
    assert [f for f in findings if f.severity is Severity.ERROR] == []


def test_a_kind_cluster_config_is_named_for_what_it_is() -> None:
    """The examples' `kind-cluster.yaml` (apiVersion kind.x-k8s.io/v1alpha4) is no Kubernetes
    object. It stays an error (applying it fails), but the error says what the file is and
    what to do, where it said only `metadata.name: missing required field`."""
    report = check_paths([REFUSED / "kind-cluster.yaml"])
    [error] = [str(d) for d in report.diagnostics if d.severity is Severity.ERROR]
    assert error.endswith(
        "kind-cluster.yaml:6: Cluster/<unnamed>: apiVersion: kind.x-k8s.io/v1alpha4 is a "
        "configuration file of the `kind` tool (`kind create cluster --config FILE`), not a "
        "Kubernetes object: no API server serves it, so applying it fails; move it out of "
        "the directory an Application syncs, or leave it out with `directory.exclude` (Argo CD "
        "never applies a file the Application excludes, and `headway check` does not check it)"
    ), error
    assert "missing required field" not in error


@pytest.mark.parametrize(("kind", "line"), [("grpc", 21), ("tcp", 21)])
def test_grpc_and_tcp_routes_are_refused_by_name_at_their_line(kind: str, line: int) -> None:
    """The grpcroute/tcproute examples: Headway writes HTTPRoute weights only, so a Rollout
    routed through a GRPCRoute or TCPRoute is refused at the field (before: accepted, and
    the runtime failed at the first weight with "set httpRoute or httpRoutes")."""
    report = check_paths([REFUSED / f"{kind}route-rollout.yaml"])
    [error] = [str(d) for d in report.diagnostics if d.severity is Severity.ERROR]
    route_kind = {"grpc": "GRPCRoute", "tcp": "TCPRoute"}[kind]
    assert f"{kind}route-rollout.yaml:{line}: Rollout/rollouts-demo-{kind}: " in error
    assert f'plugins["argoproj-labs/gatewayAPI"].{kind}Route: routing through a {route_kind} ' \
        "is not supported by Headway yet" in error
