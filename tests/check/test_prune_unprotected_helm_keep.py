"""HW319 says what a prune deletes on, and that Helm's `keep` is no protection from it.
argo-helm's argo-rollouts chart puts `helm.sh/resource-policy: keep` on its CRDs, which Argo CD
reads only when the Application is deleted; the finding spoke of "deleting or moving its file
in Git", which a chart from a Helm repository has none of."""

from __future__ import annotations

import shutil
from pathlib import Path

from check.conftest import FIXTURES, CheckDir

FOUND = FIXTURES / "HW319-prune-unprotected-state" / "found"


def _hw319(root: Path, check_dir: CheckDir) -> list[str]:
    return [f.message for f in check_dir(root) if f.rule == "HW319"]


def test_the_finding_names_any_commit_that_stops_rendering_it(check_dir: CheckDir) -> None:
    [message] = _hw319(FOUND, check_dir)
    assert (
        "has no Prune=false: a commit that stops rendering it (its file deleted or moved, a "
        "value or chart version that drops it) deletes it in the cluster"
    ) in message
    assert "resource-policy" not in message


def test_helm_keep_is_said_to_be_no_protection_from_prune(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    shutil.copytree(FOUND, tmp_path, dirs_exist_ok=True)
    manifests = tmp_path / "checkout/manifests.yaml"
    text = manifests.read_text()
    manifests.write_text(
        text.replace(
            "kind: PersistentVolumeClaim\nmetadata:\n",
            "kind: PersistentVolumeClaim\nmetadata:\n"
            "  annotations: {helm.sh/resource-policy: keep}\n",
        )
    )
    [message] = _hw319(tmp_path, check_dir)
    assert message.endswith(
        "(its helm.sh/resource-policy: keep protects it only when the Application is deleted, "
        "not from prune)"
    )
