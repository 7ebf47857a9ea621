"""Which config management plugin renders a source: by name, or by discovery.

Argo CD's repo server (`DetectConfigManagementPlugin`, the sidecar's `matchRepository`):

- `source.plugin.name` set: the plugin whose key (`name-version`, or `name`) is exactly that.
  A plugin with no `discover` rules takes any app that names it; one with rules takes it only
  when the rules match (else "no plugin supporting the repository").
- no name (an empty `plugin: {}`, or no source type at all): the first plugin, in key order,
  whose rules match.
- rules, the first one set decides: `discover.fileName` is a glob in the app directory (`*`
  stays within one directory); `discover.find.glob` is a glob under it where `**` crosses
  directories; `discover.find.command` runs in the app directory and matches when it prints
  anything.

A command rule needs the files on disk: `run_find` is handed in by the plugin renderer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

from headway.source.errors import RenderError
from headway.source.plugins import PluginCatalog, PluginConfig
from headway.source.tree import TreeReader

__all__ = ["FindRunner", "discover_plugin", "select_plugin"]

# (plugin, tree, app path) -> the find command's output.
FindRunner = Callable[[PluginConfig, TreeReader, str], str]


def select_plugin(
    catalog: PluginCatalog, name: str, *, tree: TreeReader, path: str, run_find: FindRunner
) -> PluginConfig:
    """The plugin that renders the app at `path`; a `RenderError` saying why none does."""
    if not name:
        found = discover_plugin(catalog, tree=tree, path=path, run_find=run_find)
        if found is None:
            message = (
                f"source.plugin: no plugin's discover rules match {path or '/'} "
                f"({catalog.describe()}); name one in source.plugin.name"
            )
            raise RenderError(message)
        return found
    plugin = catalog.named(name)
    if plugin is None:
        versions = [p.key for p in catalog.plugins if p.name == name]
        hint = f"; a plugin with a version is named name-version: {versions[0]}" if versions else ""
        raise RenderError(f"source.plugin.name: no plugin {name!r} ({catalog.describe()}){hint}")
    if plugin.discover.enabled and not _matches(plugin, tree, path, run_find):
        message = (
            f"source.plugin.name: plugin {name!r} does not support {path or '/'}: its discover "
            f"rules ({_rule(plugin)}) match nothing there, and Argo CD refuses it likewise"
        )
        raise RenderError(message)
    return plugin


def discover_plugin(
    catalog: PluginCatalog, *, tree: TreeReader, path: str, run_find: FindRunner
) -> PluginConfig | None:
    """The first plugin, by key, whose discover rules match the app at `path`."""
    for plugin in catalog.discovering:
        if _matches(plugin, tree, path, run_find):
            return plugin
    return None


def _matches(plugin: PluginConfig, tree: TreeReader, path: str, run_find: FindRunner) -> bool:
    discover = plugin.discover
    if tree.kind(path) != "dir":
        return False
    prefix = f"{path}/" if path else ""
    if discover.file_name:
        pattern = PurePosixPath(discover.file_name)
        entries = _entries(tree, path, prefix)
        return any(
            len(PurePosixPath(e).parts) == len(pattern.parts)
            and PurePosixPath(e).match(str(pattern))
            for e in entries
        )
    if discover.glob:
        regex = _double_star(discover.glob)
        return any(regex.fullmatch(e) for e in _entries(tree, path, prefix))
    return run_find(plugin, tree, path).rstrip("\n") != ""


def _entries(tree: TreeReader, path: str, prefix: str) -> set[str]:
    """Files under the app directory and the directories holding them, relative to it."""
    entries: set[str] = set()
    for file in tree.files(path):
        relative = file[len(prefix) :]
        entries.add(relative)
        parts = relative.split("/")
        entries.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return entries


def _double_star(glob: str) -> re.Pattern[str]:
    """A glob where `**` spans directories and `*`, `?` stay within one (zglob's syntax)."""
    out: list[str] = []
    index = 0
    pattern = glob.removeprefix("./")
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out))


def _rule(plugin: PluginConfig) -> str:
    discover = plugin.discover
    if discover.file_name:
        return f"discover.fileName {discover.file_name!r}"
    if discover.glob:
        return f"discover.find.glob {discover.glob!r}"
    return f"discover.find.command {' '.join(discover.find.argv)!r}"
