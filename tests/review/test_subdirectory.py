"""`headway diff --repo DIR` where DIR is a directory inside the clone (a monorepo): paths,
changed files and Application sources are relative to it, as for `headway check`."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from headway.cli.main import app as cli
from review.repo import GitopsRepo, application, config_map


def test_a_directory_inside_the_clone_is_the_repository_root(tmp_path: Path) -> None:
    repo = GitopsRepo(tmp_path)
    repo.commit(
        {
            "gitops/apps/web.yaml": application("web", path="web"),
            "gitops/web/cm.yaml": config_map("web", level="info"),
            "service/src/main.py": "print('v1')\n",
        }
    )
    repo.commit(
        {"gitops/web/cm.yaml": config_map("web", level="debug"), "service/src/main.py": "v2\n"}
    )
    result = CliRunner().invoke(
        cli, ["diff", "HEAD~1..HEAD", "--repo", str(tmp_path / "gitops"), "-o", "json"]
    )
    assert result.exit_code == 1, result.output
    document = json.loads(result.output)
    assert document["changedFiles"] == ["web/cm.yaml"]
    [web] = document["apps"]
    assert web["reasons"] == ["it renders differently", "it reads web/cm.yaml, which changed"]
