"""`headway check`'s cache of parsed files never changes what the check says.

Differential: over examples/, every check fixture, the upstream examples, the field-line
fixtures and a generated repository, `check -o json` prints byte for byte the same with
`--no-cache`, with an empty cache (which the run fills) and with that cache warm. The cache
is really read (an entry planted under the right fingerprint changes the answer, so the
comparisons above could fail), an edited file is parsed again, and a corrupt or foreign
cache file is ignored and replaced.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from check.conftest import SELF_URL
from headway.check.config import CONFIG_FILES
from headway.cli import check_cache_files, check_parse_cache
from headway.cli.main import _register_all, app

REPO = Path(__file__).resolve().parents[2]
FIXTURE_STATES = ("found", "near_miss", "before", "after")

_register_all()
runner = CliRunner()


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


def _cache_files(home: Path) -> list[Path]:
    return sorted((home / "headway" / "check").glob("parses-*.marshal"))


def _check(root: Path, *options: str) -> str:
    result = runner.invoke(app, ["check", "-o", "json", *options, str(root)])
    return f"exit {result.exit_code}\n{result.output}"


APPLICATION = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: svc-{i}, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: "{url}", targetRevision: HEAD, path: services/svc-{i}}}
  destination: {{server: "https://kubernetes.default.svc", namespace: svc-{i}}}
"""
SERVICE = """# a comment first, so the object starts on line 2
apiVersion: v1
kind: Service
metadata: &meta
  name: svc-{i}
  labels: {labels}
spec:
  selector: {{app: svc-{i}}}
  ports: [{{port: 80, targetPort: 8080}}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  <<: *meta
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: svc-{i}}}}}
  template:
    metadata: {{labels: {{app: svc-{i}}}}}
    spec: {{containers: [{{name: app, image: "svc:{i}", ports: [{{containerPort: 8080}}]}}]}}
"""
ROLLOUT = """apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {{name: svc-{i}}}
spec:
  selector: {{matchLabels: {{app: svc-{i}}}}}
  template:
    metadata: {{labels: {{app: svc-{i}}}}}
    spec: {{containers: [{{name: app, image: "svc:{i}"}}]}}
  strategy:
    canary:
      steps: [{{setWeight: {weight}}}, {{pause: {{duration: 1m}}}}]
"""


def _generated(root: Path, apps: int = 12) -> Path:
    """Applications of plain directories: anchors and merge keys, a date (which the cache
    does not keep), several documents per file, files with equal bytes at several paths (a
    cache hit under another name), a YAML syntax error and a Rollout with an invalid step."""
    url = "https://github.com/example/generated.git"
    root.mkdir(parents=True)
    (root / "headway-check.yaml").write_text(f"selfURLs: [{url}]\n")
    (root / "apps").mkdir(parents=True)
    for i in range(apps):
        (root / "apps" / f"svc-{i}.yaml").write_text(APPLICATION.format(i=i, url=url))
        service = root / "services" / f"svc-{i}"
        service.mkdir(parents=True)
        dated = ", released: 2024-01-01" if i % 4 == 0 else ""  # a date is not cached
        labels = f"{{app: svc-{i}{dated}}}"
        (service / "service.yaml").write_text(SERVICE.format(i=i, labels=labels, replicas=2))
        (service / "rollout.yaml").write_text(ROLLOUT.format(i=i, weight=120 if i == 3 else 20))
        (service / "copy.yaml").write_text((root / "apps" / f"svc-{i % 2}.yaml").read_text())
    (root / "services" / "svc-5" / "broken.yaml").write_text("kind: Service\nmetadata: [\n")
    return root


def _corpus(tmp_path: Path) -> list[Path]:
    """Each directory the comparison checks (as bench/check_outputs.py picks them)."""
    corpus = tmp_path / "corpus"
    for source in ("examples", "tests/check/fixtures", "tests/examples"):
        shutil.copytree(REPO / source, corpus / source, ignore=shutil.ignore_patterns("*.py"))
    roots = [p for p in sorted((corpus / "examples").iterdir()) if p.is_dir()]
    for fixture in sorted((corpus / "tests/check/fixtures").iterdir()):
        if fixture.name == "repos":
            roots.extend(p for p in sorted(fixture.iterdir()) if p.is_dir())
        else:
            roots.extend(fixture / s for s in FIXTURE_STATES if (fixture / s).is_dir())
    roots.extend(p for p in sorted((corpus / "tests/examples").iterdir()) if p.is_dir())
    field_lines = corpus / "field-lines"
    shutil.copytree(REPO / "tests/model/fixtures/field-lines", field_lines)
    roots.append(field_lines)
    for root in roots:
        if not any((root / name).exists() for name in CONFIG_FILES):
            (root / "headway-check.yaml").write_text(f"selfURLs: [{SELF_URL}]\n")
    roots.append(_generated(corpus / "generated"))
    return roots


def test_cached_and_uncached_outputs_are_byte_identical(tmp_path: Path, cache_home: Path) -> None:
    roots = _corpus(tmp_path)
    assert len(roots) > 100
    for root in roots:
        uncached = _check(root, "--no-cache")
        assert _check(root) == uncached, f"cache empty: {root}"
        assert _check(root) == uncached, f"cache warm: {root}"
    assert len(_cache_files(cache_home)) == check_parse_cache.KEEP_FILES  # the oldest went


def test_no_cache_neither_reads_nor_writes(tmp_path: Path, cache_home: Path) -> None:
    root = _generated(tmp_path / "repo")
    _check(root, "--no-cache")
    assert _cache_files(cache_home) == []
    _check(root)
    assert len(_cache_files(cache_home)) == 1


def _entries(cache_file: Path) -> dict[str, bytes]:
    return check_parse_cache._read(cache_file)


def test_the_cache_keeps_clean_files_without_dates_and_is_read(tmp_path: Path) -> None:
    """Planting a different object under a file's hash changes the answer: the warm runs of
    the comparison above did read the cache."""
    root = _generated(tmp_path / "repo")
    before = _check(root)
    (cache_file,) = _cache_files(Path(os.environ["XDG_CACHE_HOME"]))
    entries = _entries(cache_file)
    rollout = (root / "services" / "svc-1" / "rollout.yaml").read_bytes()
    dated = (root / "services" / "svc-0" / "service.yaml").read_bytes()
    broken = (root / "services" / "svc-5" / "broken.yaml").read_bytes()
    assert hashlib.sha256(rollout).hexdigest() in entries
    assert hashlib.sha256(dated).hexdigest() not in entries  # a date: parsed each run
    assert hashlib.sha256(broken).hexdigest() not in entries  # a YAML error: parsed each run
    invalid = (root / "services" / "svc-3" / "rollout.yaml").read_bytes()
    entries[hashlib.sha256(rollout).hexdigest()] = entries[hashlib.sha256(invalid).hexdigest()]
    _write(cache_file, entries, check_parse_cache.fingerprint())
    for answers in cache_file.parent.glob("drills-*"):  # validation kept by the same hash
        answers.unlink()
    planted = _check(root)
    assert planted != before
    # What the check says when svc-1's file holds svc-3's bytes, read without the cache.
    (root / "services" / "svc-1" / "rollout.yaml").write_bytes(invalid)
    assert planted == _check(root, "--no-cache")


def _write(cache_file: Path, entries: dict[str, bytes], fingerprint: bytes) -> None:
    payload = marshal.dumps(entries)
    checksum = hashlib.sha256(payload).hexdigest().encode()
    cache_file.write_bytes(
        check_parse_cache._FORMAT + fingerprint + b"\n" + checksum + b"\n" + payload
    )


def test_a_foreign_cache_file_is_ignored(tmp_path: Path) -> None:
    """The same planted entry under another fingerprint (another Headway, Python, PyYAML or
    reader) is not read, and the run replaces the file with its own."""
    root = _generated(tmp_path / "repo")
    before = _check(root)
    (cache_file,) = _cache_files(Path(os.environ["XDG_CACHE_HOME"]))
    entries = _entries(cache_file)
    rollout = (root / "services" / "svc-1" / "rollout.yaml").read_bytes()
    invalid = (root / "services" / "svc-3" / "rollout.yaml").read_bytes()
    entries[hashlib.sha256(rollout).hexdigest()] = entries[hashlib.sha256(invalid).hexdigest()]
    _write(cache_file, entries, b"0" * 64)
    assert _check(root) == before
    assert _entries(cache_file)  # rewritten under this run's fingerprint


@pytest.mark.parametrize(
    "damage",
    [
        lambda content: content[: len(content) // 2],  # truncated
        lambda content: content[:-10] + b"\xff" * 10,  # payload changed
        lambda content: b"not a cache at all",
        lambda content: b"",
    ],
    ids=["truncated", "corrupt", "foreign", "empty"],
)
def test_a_damaged_cache_file_is_ignored_and_rebuilt(tmp_path: Path, damage: object) -> None:
    root = _generated(tmp_path / "repo")
    before = _check(root)
    (cache_file,) = _cache_files(Path(os.environ["XDG_CACHE_HOME"]))
    assert callable(damage)
    cache_file.write_bytes(damage(cache_file.read_bytes()))
    assert _check(root) == before
    assert _entries(cache_file)


def test_an_edited_file_is_parsed_again(tmp_path: Path) -> None:
    root = _generated(tmp_path / "repo")
    _check(root)  # fills the cache
    rollout = root / "services" / "svc-1" / "rollout.yaml"
    rollout.write_text(rollout.read_text().replace("setWeight: 20", "setWeight: 150"))
    edited = _check(root)
    assert edited == _check(root, "--no-cache")
    assert "150" in edited


def test_without_the_readers_source_nothing_is_cached(
    tmp_path: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installation whose reader modules have no readable source (a zip, a frozen build)
    cannot fingerprint a parse: the check parses everything and writes no cache."""
    root = _generated(tmp_path / "repo")
    uncached = _check(root, "--no-cache")
    monkeypatch.setattr(check_parse_cache.yamlfast, "__file__", str(tmp_path / "missing.py"))
    check_parse_cache.fingerprint.cache_clear()
    try:
        assert _check(root) == uncached
    finally:
        check_parse_cache.fingerprint.cache_clear()
    assert _cache_files(cache_home) == []


def _one_file_repo(root: Path, name: str) -> Path:
    root.mkdir(parents=True)
    (root / "cm.yaml").write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata: {{a: '1'}}\n"
    )
    return root


def test_the_least_recently_used_cache_file_goes_not_the_least_recently_written(
    tmp_path: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository checked again without a change (its cache file not rewritten) keeps its
    cache when another directory's cache file pushes the count over `KEEP_FILES`."""
    monkeypatch.setattr(check_parse_cache, "KEEP_FILES", 2)
    daily = _one_file_repo(tmp_path / "daily", "daily")
    once = _one_file_repo(tmp_path / "once", "once")
    _check(daily)
    (daily_cache,) = _cache_files(cache_home)
    _check(once)
    (once_cache,) = [f for f in _cache_files(cache_home) if f != daily_cache]
    os.utime(daily_cache, (1_000, 1_000))  # written first, long ago
    os.utime(once_cache, (2_000, 2_000))
    _check(daily)  # unchanged: nothing to write, but used
    _check(_one_file_repo(tmp_path / "third", "third"))
    assert daily_cache.exists()
    assert not once_cache.exists()


def test_a_cache_that_cannot_be_written_changes_nothing(
    tmp_path: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only or full cache directory (the write refused) leaves the check's answer as
    it is, and no cache file behind."""
    root = _generated(tmp_path / "repo")
    uncached = _check(root, "--no-cache")

    def refused(file: Path, content: bytes) -> None:
        raise PermissionError(13, "Permission denied", str(file))

    monkeypatch.setattr(check_cache_files, "write_atomically", refused)
    assert _check(root) == uncached
    assert _cache_files(cache_home) == []
