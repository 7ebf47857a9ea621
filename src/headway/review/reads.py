"""Which repository paths an Application reads, and which changed files touch it. Purely
computational.

An Application reads, from each source in this repository: its `path` (everything under it),
its Helm value files (`$ref/...` ones from the referenced source's repository root), and the
library paths its render climbs out to (Helm `file://` dependencies, Kustomize `../base`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from headway.check.manifest import app_sources, as_dict, as_list

__all__ = ["InRepository", "read_paths", "touching"]

InRepository = Callable[[str], bool]  # is this repoURL the repository being diffed?


def _join(base: str, relative: str) -> str:
    parts: list[str] = []
    for part in f"{base}/{relative}".split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def read_paths(app: Any, *, library: Sequence[str], in_repository: InRepository) -> tuple[str, ...]:
    """Repository paths (directories or files) the Application's render reads; "" is the
    whole repository."""
    sources = app_sources(app)
    refs = {str(s["ref"]): s for s in sources if s.get("ref")}
    paths: list[str] = []
    for source in sources:
        local = in_repository(str(source.get("repoURL") or ""))
        base = str(source.get("path") or "")
        if local and (source.get("path") is not None or not source.get("ref")):
            paths.append(_join("", base))
        paths.extend(_value_files(source, refs, base=base, in_repository=in_repository))
    paths.extend(library)
    return tuple(dict.fromkeys(paths))


def _value_files(
    source: Mapping[str, Any],
    refs: Mapping[str, Mapping[str, Any]],
    *,
    base: str,
    in_repository: InRepository,
) -> Iterable[str]:
    for entry in as_list(as_dict(source.get("helm")).get("valueFiles")):
        text = str(entry)
        if text.startswith("$"):
            name, _, rest = text[1:].partition("/")
            ref = refs.get(name)
            if ref is not None and in_repository(str(ref.get("repoURL") or "")):
                yield _join("", rest)
        elif in_repository(str(source.get("repoURL") or "")):
            yield _join("", text) if text.startswith("/") else _join(base, text)


def touching(changed: Iterable[str], reads: Sequence[str]) -> tuple[str, ...]:
    """The changed files inside any of `reads`."""
    found = []
    for file in changed:
        for path in reads:
            if path in ("", file) or file.startswith(f"{path}/"):
                found.append(file)
                break
    return tuple(found)
