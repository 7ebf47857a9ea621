"""Repository paths outside an Application's source directory that its render reads (Helm
`file://` dependencies, Kustomize resources, bases and components climbing out with `..`).
Used by `headway check`/`diff` and by the source watcher to tell which apps a commit
touches."""

from __future__ import annotations

import yaml

from headway.check.manifest import as_dict, as_list
from headway.model import yamlload
from headway.source.errors import PathNotFound, SourceError
from headway.source.render import KUSTOMIZATION_FILES
from headway.source.tree import TreeReader, normalize_path

__all__ = ["library_paths"]


def library_paths(tree: TreeReader, path: str) -> list[str]:
    """Repository paths outside `path` that its render reads: Helm `file://` dependencies and
    Kustomize resources, bases (the deprecated field kustomize still builds) or components
    that climb out of the source directory."""
    found: list[str] = []
    candidates = [("Chart.yaml", "dependencies"), *((k, "resources") for k in KUSTOMIZATION_FILES)]
    present = _names_in(tree, path)
    for name, key in candidates:
        file = f"{path}/{name}" if path else name
        if (present is not None and name.casefold() not in present) or tree.kind(file) != "file":
            continue
        try:
            parsed = as_dict(yamlload.load_one(tree.read(file)))
        except (yaml.YAMLError, SourceError):
            continue
        # `bases`: deprecated, still built by kustomize (and so by Argo CD)
        bases = as_list(parsed.get("bases")) if key == "resources" else []
        entries = [*as_list(parsed.get(key)), *bases, *as_list(parsed.get("components"))]
        for entry in entries:
            target = as_dict(entry).get("repository") if key == "dependencies" else entry
            text = str(target or "")
            if key == "dependencies" and not text.startswith("file://"):
                continue
            relative = text.removeprefix("file://")
            if not relative.startswith(".."):
                continue
            try:
                found.append(normalize_path(f"{path}/{relative}"))
            except PathNotFound:
                continue
    return found


def _names_in(tree: TreeReader, path: str) -> set[str] | None:
    """The names in directory `path`, casefolded (a case-insensitive file system finds
    `chart.yaml` as `Chart.yaml`; `kind` then decides), so that the candidate files missing
    from it are not looked up one by one; none when `path` is no directory. None when the
    directory cannot be listed (each candidate is then asked for)."""
    if tree.kind(path) != "dir":
        return set()
    try:
        return {name.casefold() for name in tree.names(path)}
    except (SourceError, OSError):
        return None
