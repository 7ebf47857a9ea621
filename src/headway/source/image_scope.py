"""Which files of which repository can pin an Application's workload image.

For every source of an Application: its `path` (searched recursively, which covers a plain
directory, a Kustomize overlay's `images:` and a chart's own `values.yaml`); the directories a
kustomization reaches through `resources`, `bases` and `components` (so `../base` is
searched); and each Helm `valueFiles` entry, resolved as Argo CD resolves it: relative to the
chart path, from the repository root with a leading `/`, or in another source's repository
with `$ref/...`. Reading kustomization files is done through a callback, so this module does no
Git I/O of its own.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import yaml

from headway.model import yamlload
from headway.source.image_history import PathScope
from headway.source.spec import ApplicationSource, spec_section

__all__ = ["RepoScope", "application_scopes"]

ReadFile = Callable[[str, str, str], str | None]
"""(repoURL, targetRevision, path) -> the file's text at that revision, or None."""

_KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_MAX_KUSTOMIZE_DEPTH = 8


@dataclass(frozen=True)
class RepoScope:
    """The files to search in one repository, on the revision the Application tracks."""

    repo_url: str
    target_revision: str
    scope: PathScope


@dataclass
class _Collected:
    directories: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def _clean(path: str) -> str:
    normal = posixpath.normpath(path.strip().lstrip("/")) if path.strip() else ""
    return "" if normal == "." else normal


def _kustomize_dirs(read: ReadFile, url: str, revision: str, start: str) -> list[str]:
    """`start` and every directory its kustomizations reach (inside the repository)."""
    found: list[str] = []
    pending = [(start, 0)]
    while pending:
        directory, depth = pending.pop()
        if directory in found or directory.startswith("..") or depth > _MAX_KUSTOMIZE_DEPTH:
            continue
        found.append(directory)
        for name in _KUSTOMIZATION_NAMES:
            text = read(url, revision, posixpath.join(directory, name) if directory else name)
            if text is not None:
                pending.extend((d, depth + 1) for d in _referenced_dirs(text, directory))
                break
    return found


def _referenced_dirs(text: str, directory: str) -> list[str]:
    try:
        data = yamlload.load_one(text)
    except yaml.YAMLError:
        return []
    if not isinstance(data, dict):
        return []
    entries: list[str] = []
    for key in ("resources", "bases", "components"):
        listed = data.get(key)
        if isinstance(listed, list):
            entries.extend(str(e) for e in listed if isinstance(e, str) and "://" not in e)
    # A resource that is a file lies in a directory already searched; keep directories only.
    return [
        _clean(posixpath.join(directory, e))
        for e in entries
        if not e.endswith((".yaml", ".yml", ".json"))
    ]


def _value_file(
    written: str, source: ApplicationSource, refs: dict[str, ApplicationSource]
) -> tuple[str, str, str] | None:
    """(repoURL, targetRevision, path) of one Helm value file, None when it names no ref."""
    url, revision = str(source.get("repoURL") or ""), str(source.get("targetRevision") or "")
    if written.startswith("$"):
        name, _, rest = written[1:].partition("/")
        ref = refs.get(name)
        if ref is None:
            return None
        return str(ref.get("repoURL") or ""), str(ref.get("targetRevision") or ""), _clean(rest)
    if written.startswith("/"):
        return url, revision, _clean(written)
    return url, revision, _clean(posixpath.join(str(source.get("path") or ""), written))


def application_scopes(sources: Sequence[ApplicationSource], read: ReadFile) -> list[RepoScope]:
    """Every (repository, revision) an Application's image can be pinned in, with its files."""
    refs = {str(s["ref"]): s for s in sources if s.get("ref")}
    collected: dict[tuple[str, str], _Collected] = {}

    def bucket(url: str, revision: str) -> _Collected:
        return collected.setdefault((url, revision), _Collected())

    for source in sources:
        url, revision = str(source.get("repoURL") or ""), str(source.get("targetRevision") or "")
        if not url or source.get("chart") or (source.get("ref") and not source.get("path")):
            continue  # a Helm-repository chart, or a values-only ref source
        path = _clean(str(source.get("path") or ""))
        bucket(url, revision).directories.extend(_kustomize_dirs(read, url, revision, path))
        for written in spec_section(source, "helm").get("valueFiles") or []:
            located = _value_file(str(written), source, refs)
            if located is not None:
                bucket(located[0], located[1]).files.append(located[2])
    return [
        RepoScope(
            url,
            revision,
            PathScope(tuple(dict.fromkeys(c.directories)), tuple(dict.fromkeys(c.files))),
        )
        for (url, revision), c in collected.items()
    ]
