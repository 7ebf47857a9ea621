"""The oracle itself: the harness reads structured-merge-diff's answers right.

These pin behaviour Kubernetes documents for server-side apply, so a broken build, schema
or decoding of the oracle's output fails here before the differential test blames the store.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from cluster.ssa_oracle.oracle import BUILD_SCRIPT, Operation, run_oracle

WEB = {"spec": {"replicas": 2, "template": {"spec": {"containers": [
    {"name": "web", "image": "app:1"}]}}}}


def test_a_second_applier_of_a_different_value_conflicts_with_the_owner() -> None:
    steps = run_oracle([
        Operation("git", "Apply", WEB),
        Operation("ops", "Apply", {"spec": {"replicas": 3}}),
    ])
    assert steps[1].refused
    assert steps[1].conflicts == {(".spec.replicas", "git")}
    assert steps[1].content == steps[0].content


def test_force_moves_the_field_to_the_new_applier() -> None:
    steps = run_oracle([
        Operation("git", "Apply", WEB),
        Operation("ops", "Apply", {"spec": {"replicas": 3}}, force=True),
    ])
    owners = {(m, op): fields for m, op, fields in steps[1].owned}
    assert ("f:spec", "f:replicas") in owners[("ops", "Apply")]
    assert ("f:spec", "f:replicas") not in owners[("git", "Apply")]
    assert steps[1].content["spec"]["replicas"] == 3


def test_keyed_items_are_owned_by_key_and_identity_by_no_one() -> None:
    (step,) = run_oracle([Operation("git", "Apply", WEB)])
    ((manager, operation, fields),) = step.owned
    item = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"web"}')
    assert (manager, operation) == ("git", "Apply")
    assert {item, (*item, "f:image"), (*item, "f:name")} <= fields
    assert not any(f[:2] == ("f:metadata", "f:name") for f in fields)


def test_every_conflicting_field_of_one_manager_is_reported() -> None:
    # The library's own conflict list loses all but one path per shared buffer (v4.1.2);
    # the oracle recomputes it, so both fields are named.
    pod = {"spec": {"template": {"spec": {"nodeSelector": {"a": "1"},
                                          "tolerations": [{"key": "spot"}]}}}}
    change = {"spec": {"template": {"spec": {"nodeSelector": {"b": "1"}, "tolerations": []}}}}
    steps = run_oracle([Operation("git", "Apply", pod), Operation("ops", "Apply", change)])
    assert steps[1].conflicts == {
        (".spec.template.spec.nodeSelector", "git"), (".spec.template.spec.tolerations", "git")}


def test_a_missing_library_is_named_with_the_package_that_brings_it(tmp_path: Path) -> None:
    env = dict(os.environ, HEADWAY_SMD_LIBRARY=str(tmp_path / "absent"))
    checked = subprocess.run([BUILD_SCRIPT, "--check"], capture_output=True, text=True,
                             env=env, check=False)
    assert checked.returncode == 1
    assert "golang-k8s-sigs-structured-merge-diff-dev" in checked.stderr
    assert "scripts/install-system-packages" in checked.stderr
