"""Config management plugins: the admin's `plugin.yaml` files, read into a catalog.

Argo CD runs each plugin as a sidecar of the repo server whose `plugin.yaml` (kind
`ConfigManagementPlugin`) says how to generate manifests. Headway reads the same files from a
directory the operator gives (`--plugins-dir`, by default `<state>/plugins`), one plugin per
sub-directory: `<dir>/<any name>/plugin.yaml`. Plugin configs never come from the app's
repository, as in Argo CD, where only an admin can add a sidecar.

A plugin is addressed as Argo CD addresses its socket: `<metadata.name>-<spec.version>` when it
has a version, else `<metadata.name>`; an Application's `source.plugin.name` must be exactly
that. A bad file is an error naming the file, line and field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from headway.model.yamlload import Document, format_path, load_documents

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "Command",
    "Discover",
    "PluginCatalog",
    "PluginConfig",
    "PluginConfigError",
    "load_plugins",
    "parse_plugin",
]

PLUGIN_FILE = "plugin.yaml"
# Argo CD's default for a manifest generation (the repo server's exec timeout).
DEFAULT_TIMEOUT_SECONDS = 90.0


class PluginConfigError(Exception):
    """A `plugin.yaml` Headway cannot use; the message names the file, line and field."""


@dataclass(frozen=True)
class Command:
    """`command` then `args`, run as one argv (Argo CD appends args to the command)."""

    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()

    @property
    def argv(self) -> tuple[str, ...]:
        return (*self.command, *self.args)


@dataclass(frozen=True)
class Discover:
    """How a plugin claims an app with no plugin name: the first field set decides."""

    file_name: str = ""
    glob: str = ""
    find: Command = Command()

    @property
    def enabled(self) -> bool:
        return bool(self.file_name or self.glob or self.find.command)


@dataclass(frozen=True)
class PluginConfig:
    name: str
    version: str
    init: Command
    generate: Command
    discover: Discover
    preserve_file_mode: bool
    file: str  # where it was read, for messages
    # The spec as written (parameter announcements included): part of the render key.
    spec: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def key(self) -> str:
        """The name an Application uses: `name-version`, or `name` without a version."""
        return f"{self.name}-{self.version}" if self.version else self.name


@dataclass(frozen=True)
class PluginCatalog:
    """The plugins Headway may run, by key, and how long one command may take."""

    plugins: tuple[PluginConfig, ...] = ()
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    directory: str = ""
    # What each `discover.find.command` printed, by plugin, tree, path and environment: a
    # source with no type asks discovery on every render lookup, which must not spawn a
    # process each time (`headway.source.render_plugin.find_runner`).
    find_results: dict[tuple[str, str, str, str], str] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    def named(self, key: str) -> PluginConfig | None:
        return next((p for p in self.plugins if p.key == key), None)

    @property
    def discovering(self) -> tuple[PluginConfig, ...]:
        """Plugins that may claim an unnamed app, in Argo CD's order (by socket name)."""
        return tuple(p for p in self.plugins if p.discover.enabled)

    def describe(self) -> str:
        where = f" in {self.directory}" if self.directory else ""
        if not self.plugins:
            return f"no plugins are configured{where}; see --plugins-dir"
        return f"configured plugins{where}: {', '.join(p.key for p in self.plugins)}"


def load_plugins(
    directory: Path, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> PluginCatalog:
    """Every `<directory>/*/plugin.yaml`, sorted by key; a missing directory has none."""
    plugins: list[PluginConfig] = []
    if directory.is_dir():
        for path in sorted(directory.glob(f"*/{PLUGIN_FILE}")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as err:
                raise PluginConfigError(f"{path}: cannot be read: {err}") from None
            plugins.append(parse_plugin(text, str(path)))
    seen: dict[str, str] = {}
    for plugin in plugins:
        if plugin.key in seen:
            message = f"{plugin.file}: plugin {plugin.key!r} is also defined in {seen[plugin.key]}"
            raise PluginConfigError(message)
        seen[plugin.key] = plugin.file
    ordered = tuple(sorted(plugins, key=lambda p: p.key))
    return PluginCatalog(ordered, timeout_seconds, str(directory))


def parse_plugin(text: str, file: str) -> PluginConfig:
    """One `plugin.yaml`, checked as Argo CD checks it (a name, the kind, a generate command)."""
    loaded = load_documents(text, file)
    if loaded.diagnostics:
        raise PluginConfigError(str(loaded.diagnostics[0]))
    if len(loaded.documents) != 1 or not isinstance(loaded.documents[0].obj, dict):
        raise PluginConfigError(f"{file}:1: must hold one ConfigManagementPlugin object")
    document = loaded.documents[0]
    obj: dict[str, Any] = document.obj
    if obj.get("kind") != "ConfigManagementPlugin":
        _fail(document, ("kind",), f"must be ConfigManagementPlugin, not {obj.get('kind')!r}")
    name = _string(document, ("metadata", "name"))
    if not name:
        _fail(document, ("metadata", "name"), "must be set")
    spec = _mapping(document, ("spec",))
    generate = _command(document, ("spec", "generate"))
    if not generate.command:
        _fail(document, ("spec", "generate", "command"), "must name the program to run")
    return PluginConfig(
        name=name,
        version=_string(document, ("spec", "version")),
        init=_command(document, ("spec", "init")),
        generate=generate,
        discover=_discover(document),
        preserve_file_mode=_flag(document, ("spec", "preserveFileMode")),
        file=file,
        spec=spec,
    )


def _discover(document: Document) -> Discover:
    base = ("spec", "discover")
    return Discover(
        file_name=_string(document, (*base, "fileName")),
        glob=_string(document, (*base, "find", "glob")),
        find=_command(document, (*base, "find")),
    )


def _command(document: Document, path: tuple[str, ...]) -> Command:
    return Command(
        command=_strings(document, (*path, "command")), args=_strings(document, (*path, "args"))
    )


def _value(document: Document, path: Sequence[str]) -> Any:
    value: Any = document.obj
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _mapping(document: Document, path: tuple[str, ...]) -> dict[str, Any]:
    value = _value(document, path)
    if value is None:
        return {}
    if not isinstance(value, dict):
        _fail(document, path, "must be a mapping")
    return dict(value)


def _string(document: Document, path: tuple[str, ...]) -> str:
    value = _value(document, path)
    if value is None:
        return ""
    if not isinstance(value, str):
        _fail(document, path, "must be a string")
    return value


def _flag(document: Document, path: tuple[str, ...]) -> bool:
    value = _value(document, path)
    if value is not None and not isinstance(value, bool):
        _fail(document, path, "must be true or false")
    return bool(value)


def _strings(document: Document, path: tuple[str, ...]) -> tuple[str, ...]:
    value = _value(document, path)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        _fail(document, path, "must be a list of strings")
    return tuple(value)


def _fail(document: Document, path: Sequence[str], message: str) -> NoReturn:
    line = document.line_of(list(path))
    raise PluginConfigError(f"{document.file}:{line}: {format_path(list(path))}: {message}")
