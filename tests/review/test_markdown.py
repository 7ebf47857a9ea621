"""The pull-request comment: its structure, its size bound, and no Secret value in it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from headway.cli.diff_load import load_review, parse_range
from headway.cli.diff_markdown import MARKER, render_markdown
from headway.cli.main import app as cli
from review.repo import GitopsRepo, application, config_map, deployment

SECRET_BEFORE = "hunter2-before-the-change"
SECRET_AFTER = "hunter2-after-the-change"
TOKEN = "ghp_notarealtokenbutlong"


def _secret(value: str) -> str:
    return (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n"
        f"stringData:\n  password: {value}\ndata:\n  raw: aHVudGVyMi1yYXctdmFsdWU=\n"
    )


@pytest.fixture
def repo(tmp_path: Path) -> GitopsRepo:
    repo = GitopsRepo(tmp_path)
    repo.commit(
        {
            "apps/web.yaml": application("web", path="web"),
            "apps/jobs.yaml": application("jobs", path="jobs"),
            "web/deploy.yaml": deployment("web", "shop/web:1.0"),
            "web/secret.yaml": _secret(SECRET_BEFORE),
            "jobs/cm.yaml": config_map("jobs", a="1"),
        }
    )
    repo.commit(
        {
            "web/deploy.yaml": deployment("web", "shop/web:2.0"),
            "web/secret.yaml": _secret(SECRET_AFTER).replace(
                "aHVudGVyMi1yYXctdmFsdWU=", "aHVudGVyMi1uZXctcmF3"
            ),
            "web/cm.yaml": config_map("web", url=f"https://bot:{TOKEN}@git.example.com/x"),
            "jobs/cm.yaml": config_map("jobs", a="2"),
        }
    )
    return repo


def _comment(repo: GitopsRepo, limit: int = 60_000) -> str:
    return render_markdown(load_review(repo.root, parse_range("HEAD~1..HEAD")), limit=limit)


def test_one_collapsed_section_per_app_with_a_diff_block_per_resource(repo: GitopsRepo) -> None:
    text = _comment(repo)
    assert text.startswith(MARKER)
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == ["argocd/jobs -> shop", "argocd/web -> shop"]
    sections = re.findall(r"<details><summary><b>(.*?)</b>(.*?)</summary>", text)
    assert [name for name, _ in sections] == ["argocd/jobs -&gt; shop", "argocd/web -&gt; shop"]
    assert text.count("<details>") == text.count("</details>") == 2
    web = text.split("<b>argocd/web -&gt; shop</b>", 1)[1]
    blocks = re.findall(r"^\*\*(added|changed|removed)\*\* `([^`]*)`", web, flags=re.M)
    assert blocks == [
        ("added", "/ConfigMap/shop/web"),
        ("changed", "/Secret/shop/db"),
        ("changed", "apps/Deployment/shop/web"),
    ]
    assert web.count("```diff") == 3
    assert "1. Sync wave 0:" in web


def test_secret_values_and_url_credentials_never_appear(repo: GitopsRepo) -> None:
    outputs = [_comment(repo)]
    for fmt in ("text", "json"):
        result = CliRunner().invoke(
            cli, ["diff", "HEAD~1..HEAD", "--repo", str(repo.root), "--format", fmt]
        )
        outputs.append(result.output)
    for text in outputs:
        assert "db" in text  # the Secret is reported...
        for secret in (SECRET_BEFORE, SECRET_AFTER, TOKEN, "aHVudGVyMi", "hunter2"):
            assert secret not in text  # ...its values are not, in clear or base64
        assert "password: +++" in text


def test_size_bound_leaves_diffs_out_with_a_note(repo: GitopsRepo) -> None:
    full = _comment(repo)
    limit = len(full) - 200
    text = _comment(repo, limit=limit)
    assert len(text) <= limit
    assert "diff left out (size limit)" in text
    assert "**Truncated**" in text
    assert text.count("<details>") == text.count("</details>")


def test_a_tiny_bound_keeps_the_table_and_drops_sections(repo: GitopsRepo) -> None:
    text = _comment(repo, limit=1_000)
    assert len(text) <= 1_000
    assert "| `argocd/web -> shop` |" in text
    assert "Application section(s) left out" in text
    assert text.count("<details>") == text.count("</details>")


def test_a_backtick_fence_in_content_cannot_close_the_block(tmp_path: Path) -> None:
    repo = GitopsRepo(tmp_path)
    repo.commit({"apps/a.yaml": application("a", path="a"), "a/cm.yaml": config_map("c", x="1")})
    repo.commit({"a/cm.yaml": config_map("c", x="```\n</details>")})
    text = _comment(repo)
    assert "````diff" in text
