"""`headway check` leaves alone what an Application's directory options leave out.

The gateway plugin's examples keep a `kind` cluster config beside the manifests and exclude it
(`directory.exclude`); Argo CD never reads such a file, so an error there is false and used to
block a pre-commit hook on a repository Argo CD syncs fine."""

from __future__ import annotations

import shutil
from pathlib import Path

from headway.check.findings import Finding
from headway.check.registry import run_checks
from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.source.tree import FilesystemTree

REPO = Path(__file__).parent / "fixtures" / "repos" / "directory-exclude"
SELF_URL = "https://github.com/example/fixtures.git"


def _findings(root: Path) -> list[Finding]:
    loader = RepositoryLoader(
        tree=FilesystemTree(root), self_urls=frozenset({normalize_url(SELF_URL)})
    )
    return run_checks(loader.load())


def _reported_files(root: Path) -> set[str]:
    return {f.file for f in _findings(root) if not f.file.startswith("apps/")}


def test_files_an_application_leaves_out_are_not_checked() -> None:
    """exclude (the kind config, drafts), not matched by include, below a path without
    recurse: none is validated (HW003) nor checked as a plain manifest (HW201)."""
    reported = _reported_files(REPO)
    for left_out in (
        "demo/kind-cluster.yaml",
        "demo/draft-web.yaml",
        "demo/draft-rollout.yaml",
        "inc/notes.yaml",
        "flat/old/legacy.yaml",
    ):
        assert left_out not in reported, left_out


def test_what_is_applied_or_unowned_is_still_checked() -> None:
    """A bad manifest the Application includes, a file one Application leaves out but another
    renders, a file under no Application's source: each keeps its error."""
    invalid = {f.file for f in _findings(REPO) if f.rule == "HW003"}
    assert {"demo/included-bad.yaml", "shared/taken.yaml", "loose/unowned.yaml"} <= invalid


def test_including_a_file_makes_it_checked_again(tmp_path: Path) -> None:
    """The same draft Rollout, once the exclude no longer names it, is found (HW201): what
    hides it is the Application's option, not the file."""
    root = tmp_path / "repo"
    shutil.copytree(REPO, root)
    app = root / "apps" / "kind-demo.yaml"
    app.write_text(app.read_text().replace("draft-*.yaml,", ""))
    findings = _findings(root)
    assert ("HW201", "demo/draft-rollout.yaml") in {(f.rule, f.file) for f in findings}
    assert ("HW003", "demo/draft-web.yaml") in {(f.rule, f.file) for f in findings}
    assert "demo/kind-cluster.yaml" not in {f.file for f in findings}


def test_a_failed_source_leaves_nothing_out() -> None:
    """`broken`'s exclude glob does not compile: its source is unresolved (HW002), and the
    kind config it meant to exclude is still reported rather than silently dropped."""
    findings = _findings(REPO)
    assert any(f.rule == "HW002" and f.file == "apps/broken.yaml" for f in findings)
    assert ("HW003", "broken/kind-cluster.yaml") in {(f.rule, f.file) for f in findings}


def test_a_yaml_syntax_error_in_a_left_out_file_is_still_reported() -> None:
    """Argo CD never reads the excluded file, but the check cannot tell whether the broken
    text held an Application it should render: the syntax error stays an error."""
    [error] = [f for f in _findings(REPO) if f.file == "demo/scratch.yaml"]
    assert error.rule == "HW003" and "YAML syntax error" in error.message


def test_without_applications_every_file_is_a_plain_manifest(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(REPO, root)
    shutil.rmtree(root / "apps")
    reported = _reported_files(root)
    assert {"demo/kind-cluster.yaml", "inc/notes.yaml", "flat/old/legacy.yaml"} <= reported
