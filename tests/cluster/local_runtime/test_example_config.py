"""The shipped example runtime config loads and maps the demo image to the example app."""

from __future__ import annotations

import sys

from cluster.local_runtime.harness import APP
from headway.cluster.local.kubelet.images import load_runtime_config, resolve_launch


def test_example_config_runs_the_example_app() -> None:
    config = load_runtime_config(APP.parent / "headway-runtime.yaml")
    launch = resolve_launch(config, {"image": "headway-demo/checkout:v2"})
    assert launch.argv == (sys.executable, str(APP))
    assert ("VERSION", "v2") in launch.env
