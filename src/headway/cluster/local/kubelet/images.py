"""How a container's `image` becomes a local command: the runtime config's image map.

The runtime reads one YAML file (`headway-runtime.yaml`, see docs/local-runtime.md):

    images:
      headway-demo/checkout:          # an image repository (or an fnmatch pattern)
        command: ["{python}", "examples/app/server.py"]
        args: []
        workingDir: "{configDir}"     # relative paths are relative to the config's folder
        env: {GREETING: hello}
        versionFromTag: true          # also set VERSION to the tag
    backoff:
      initialSeconds: 10              # restart back-off: 10 s doubling ...
      maxSeconds: 300                 # ... to 5 min, as the kubelet
    router: embedded                  # the local mesh's data plane: embedded | haproxy

Placeholders in command, args, workingDir and env values: `{tag}`, `{repository}`,
`{image}`, `{python}` (the runtime's interpreter), `{configDir}` and `{port}` (the port the
container must listen on; also in its `PORT`), so a program that takes its listening port
as a flag runs unwrapped. Every process gets
`HEADWAY_IMAGE_TAG`. A container's own `command` replaces the map's command and args; its
`args` alone replace the map's args, as Kubernetes does with an image's ENTRYPOINT and CMD.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document, load_documents

__all__ = [
    "CONFIG_FILE_NAME",
    "BackoffConfig",
    "ImageEntry",
    "ImageNotMapped",
    "ImageRef",
    "LaunchSpec",
    "RuntimeConfig",
    "RuntimeConfigError",
    "load_runtime_config",
    "parse_image",
    "resolve_launch",
]

CONFIG_FILE_NAME = "headway-runtime.yaml"
ROUTERS = ("embedded", "haproxy")
_TOP_FIELDS = {"images", "backoff", "router"}


class RuntimeConfigError(Exception):
    """The runtime config is malformed; the message names file, line and field."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("\n".join(str(d) for d in diagnostics))
        self.diagnostics = diagnostics


class ImageNotMapped(Exception):
    """No entry of the image map matches the container's image."""


@dataclass(frozen=True)
class ImageRef:
    repository: str
    tag: str

    @property
    def image(self) -> str:
        return f"{self.repository}:{self.tag}"


def parse_image(image: str) -> ImageRef:
    """`reg:5000/team/app:v2@sha256:..` -> (`reg:5000/team/app`, `v2`); no tag is `latest`."""
    name = image.split("@", 1)[0]
    last_slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > last_slash:
        return ImageRef(name[:colon], name[colon + 1 :] or "latest")
    return ImageRef(name, "latest")


@dataclass(frozen=True)
class ImageEntry:
    pattern: str
    command: tuple[str, ...]
    args: tuple[str, ...] = ()
    working_dir: str = ""
    env: tuple[tuple[str, str], ...] = ()
    version_from_tag: bool = False


@dataclass(frozen=True)
class BackoffConfig:
    initial_seconds: float = 10.0
    max_seconds: float = 300.0


@dataclass(frozen=True)
class RuntimeConfig:
    images: tuple[ImageEntry, ...] = ()
    backoff: BackoffConfig = field(default_factory=BackoffConfig)
    config_dir: str = "."
    file: str = ""
    router: str = "embedded"  # the local mesh's data plane (docs/local-mesh.md)
    missing_file: str = ""  # the path looked at when no config file exists there

    def entry_for(self, repository: str) -> ImageEntry | None:
        exact = [e for e in self.images if e.pattern == repository]
        if exact:
            return exact[0]
        return next((e for e in self.images if fnmatch.fnmatchcase(repository, e.pattern)), None)


@dataclass(frozen=True)
class LaunchSpec:
    """What to execute for one container, before pod-level env is added."""

    argv: tuple[str, ...]
    working_dir: str
    env: tuple[tuple[str, str], ...]


def _expand(text: str, values: Mapping[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def resolve_launch(
    config: RuntimeConfig,
    container: Mapping[str, Any],
    *,
    port: int | None = None,
    declared_ports: Mapping[str, int] | None = None,
) -> LaunchSpec:
    """The argv, working dir and image env of a container; `ImageNotMapped` if unknown.
    `port` is the port the runtime gave the container (`{port}`; left as is without one),
    `declared_ports` the local port of each declared containerPort (`{port:metrics}`)."""
    ref = parse_image(str(container.get("image") or ""))
    entry = config.entry_for(ref.repository)
    own_command = [str(c) for c in container.get("command") or []]
    own_args = [str(a) for a in container.get("args") or []]
    if entry is None and not own_command:
        raise ImageNotMapped(_not_mapped_message(config, ref))
    values = {
        "tag": ref.tag,
        "repository": ref.repository,
        "image": ref.image,
        "python": sys.executable,
        "configDir": config.config_dir,
    }
    if port is not None:
        values["port"] = str(port)
    for key, local in (declared_ports or {}).items():
        values[f"port:{key}"] = str(local)
    base_command = list(entry.command) if entry else []
    base_args = list(entry.args) if entry else []
    command = own_command or base_command
    args = own_args if (own_args or own_command) else base_args
    argv = tuple(_expand(a, values) for a in [*command, *args])
    working = str(container.get("workingDir") or (entry.working_dir if entry else "") or "")
    working = _expand(working, values) or config.config_dir
    if not os.path.isabs(working):
        working = os.path.normpath(os.path.join(config.config_dir, working))
    env = [("HEADWAY_IMAGE_TAG", ref.tag)]
    if entry is not None:
        if entry.version_from_tag:
            env.append(("VERSION", ref.tag))
        env.extend((k, _expand(v, values)) for k, v in entry.env)
    return LaunchSpec(argv=argv, working_dir=working, env=tuple(env))


def _not_mapped_message(config: RuntimeConfig, ref: ImageRef) -> str:
    if config.missing_file:
        # Say which file was looked for: a config the user believes is read often is not.
        return (
            f'image "{ref.image}" is not in the runtime image map: there is no runtime config '
            f'at {config.missing_file}; create it with an entry for "{ref.repository}" '
            "(it is read as soon as it appears) or give the container a command"
        )
    where = config.file or CONFIG_FILE_NAME
    return (
        f'image "{ref.image}" is not in the runtime image map ({where}: images); '
        f'add an entry for "{ref.repository}" or give the container a command'
    )


def load_runtime_config(path: str | Path | None) -> RuntimeConfig:
    """Read the config file; a missing path or file gives the defaults (an empty map)."""
    if path is None or not Path(path).is_file():
        missing = str(Path(path).absolute()) if path is not None else ""
        return RuntimeConfig(config_dir=os.getcwd(), missing_file=missing)
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RuntimeConfigError(
            [Diagnostic(file, 1, "", "", "", Severity.ERROR, "not UTF-8 text")]
        ) from None
    result = load_documents(text, file)
    if result.diagnostics:
        raise RuntimeConfigError(result.diagnostics)
    config_dir = str(Path(path).resolve().parent)
    if not result.documents:
        return RuntimeConfig(config_dir=config_dir, file=file)
    doc = result.documents[0]
    problems: list[Diagnostic] = []
    raw = doc.obj if isinstance(doc.obj, dict) else {}
    if not isinstance(doc.obj, dict):
        problems.append(doc.diagnostic([], "the runtime config must be a mapping"))
    unknown = sorted(set(raw) - _TOP_FIELDS)
    problems.extend(doc.diagnostic([k], _unknown(k, _TOP_FIELDS)) for k in unknown)
    images = _parse_images(doc, raw.get("images"), problems)
    backoff = _parse_backoff(doc, raw.get("backoff"), problems)
    router = raw.get("router", "embedded")
    if router not in ROUTERS:
        problems.append(doc.diagnostic(["router"], f"must be one of {', '.join(ROUTERS)}"))
    if problems:
        raise RuntimeConfigError(problems)
    return RuntimeConfig(
        images=images, backoff=backoff, config_dir=config_dir, file=file, router=str(router)
    )


def _unknown(key: str, known: set[str]) -> str:
    close = difflib.get_close_matches(str(key), sorted(known), n=1)
    return f"unknown field (did you mean {close[0]}?)" if close else "unknown field"


def _string_list(
    doc: Document, path: list[str | int], value: Any, out: list[Diagnostic]
) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        out.append(doc.diagnostic(path, "must be a list of strings"))
        return ()
    return tuple(str(v) for v in value)


_ENTRY_FIELDS = {"command", "args", "workingDir", "env", "versionFromTag"}


def _parse_images(doc: Document, raw: Any, out: list[Diagnostic]) -> tuple[ImageEntry, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        out.append(doc.diagnostic(["images"], "must map image repositories to commands"))
        return ()
    entries: list[ImageEntry] = []
    for repo, spec in raw.items():
        path: list[str | int] = ["images", str(repo)]
        if not isinstance(spec, dict):
            out.append(doc.diagnostic(path, "must be a mapping with at least `command`"))
            continue
        out.extend(
            doc.diagnostic([*path, k], _unknown(k, _ENTRY_FIELDS))
            for k in sorted(set(spec) - _ENTRY_FIELDS)
        )
        command = _string_list(doc, [*path, "command"], spec.get("command"), out)
        if not command:
            out.append(doc.diagnostic([*path, "command"], "is required and must not be empty"))
        env = spec.get("env") or {}
        if not isinstance(env, dict):
            out.append(doc.diagnostic([*path, "env"], "must map names to values"))
            env = {}
        entries.append(
            ImageEntry(
                pattern=str(repo),
                command=command,
                args=_string_list(doc, [*path, "args"], spec.get("args"), out),
                working_dir=str(spec.get("workingDir") or ""),
                env=tuple((str(k), str(v)) for k, v in env.items()),
                version_from_tag=bool(spec.get("versionFromTag", False)),
            )
        )
    return tuple(entries)


def _parse_backoff(doc: Document, raw: Any, out: list[Diagnostic]) -> BackoffConfig:
    if raw is None:
        return BackoffConfig()
    if not isinstance(raw, dict):
        out.append(doc.diagnostic(["backoff"], "must be a mapping"))
        return BackoffConfig()
    values: dict[str, float] = {}
    for key in ("initialSeconds", "maxSeconds"):
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            out.append(doc.diagnostic(["backoff", key], "must be a positive number of seconds"))
            continue
        values[key] = float(value)
    out.extend(
        doc.diagnostic(["backoff", k], _unknown(k, {"initialSeconds", "maxSeconds"}))
        for k in sorted(set(raw) - {"initialSeconds", "maxSeconds"})
    )
    default = BackoffConfig()
    return BackoffConfig(
        initial_seconds=values.get("initialSeconds", default.initial_seconds),
        max_seconds=values.get("maxSeconds", default.max_seconds),
    )
