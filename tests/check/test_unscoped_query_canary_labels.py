"""HW203 knows Argo Rollouts' ephemeral canary labels. codefresh-contrib's
argo-rollout-canary-sample-app (canary-with-metrics) gives its canary pods `role: canary`
through `canaryMetadata.labels` and queries `response_status{...,role="canary"}`; `headway
check` said the query measured "the whole service, not the canary's pods". The Rollout here
follows that shape in Headway's own words, on the HW203 fixture."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from check.conftest import FIXTURES, CheckDir

FOUND = FIXTURES / "HW203-unscoped-analysis-query" / "found"
CANARY_LABELS = """\
      canaryMetadata:
        labels: {track: canary}
      stableMetadata:
        labels: {track: stable}
"""


def _hw203(root: Path, check_dir: CheckDir, *, query_label: str, stable: str) -> list[str]:
    shutil.copytree(FOUND, root, dirs_exist_ok=True)
    rollout = root / "rollout.yaml"
    metadata = CANARY_LABELS.replace("{track: stable}", f"{{track: {stable}}}")
    rollout.write_text(rollout.read_text().replace("      steps:\n", metadata + "      steps:\n"))
    analysis = root / "analysis.yaml"
    analysis.write_text(analysis.read_text().replace('{app="checkout",', f"{{{query_label},"))
    return [f.message for f in check_dir(root) if f.rule == "HW203"]


@pytest.mark.parametrize("query_label", ['track="canary"', "track = 'canary'", 'track=~"canary"'])
def test_a_query_on_a_canary_only_label_is_scoped(
    tmp_path: Path, check_dir: CheckDir, query_label: str
) -> None:
    assert _hw203(tmp_path, check_dir, query_label=query_label, stable="stable") == []


@pytest.mark.parametrize(
    ("query_label", "stable"),
    [('track="stable"', "stable"), ('track="canary"', "canary"), ('backtrack="canary"', "x")],
)
def test_a_label_the_stable_pods_carry_too_is_not(
    tmp_path: Path, check_dir: CheckDir, query_label: str, stable: str
) -> None:
    [message] = _hw203(tmp_path, check_dir, query_label=query_label, stable=stable)
    assert "queries the whole service, not the canary's pods" in message
