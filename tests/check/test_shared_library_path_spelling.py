"""HW317 groups Applications by the directory they render, however its path is spelt:
codefresh-contrib/gitops-cert-level-2-examples writes `path: ./app-of-apps/manifests`, and an
Application writing `charts/service` beside one writing `./charts/service` rendered the same
directory for two destinations without a finding."""

from __future__ import annotations

import shutil
from pathlib import Path

from check.conftest import FIXTURES, CheckDir

FOUND = FIXTURES / "HW317-shared-library-all-environments" / "found"


def test_dot_slash_and_a_trailing_slash_name_the_same_directory(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    shutil.copytree(FOUND, tmp_path, dirs_exist_ok=True)
    dev = tmp_path / "apps/dev.yaml"
    dev.write_text(dev.read_text().replace("path: charts/service", "path: ./charts/service/"))
    [finding] = [f for f in check_dir(tmp_path) if f.rule == "HW317"]
    assert finding.message.startswith(
        "charts/service is rendered from head by checkout-dev, checkout-prod (2 destinations)"
    )
