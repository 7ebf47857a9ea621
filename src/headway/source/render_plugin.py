"""Config management plugins run as local processes, as Argo CD's sidecars run them.

For one source: the repository at the commit is written to a scratch directory (Argo CD streams
the whole repository to the sidecar, so a plugin may read `../` siblings), the plugin's `init`
then `generate` commands run in the app's directory there, and what `generate` prints on
stdout is the YAML or JSON stream of objects, read with Headway's own loader. Files are written
0644 (directories 0755) unless the plugin sets `preserveFileMode`, as Argo CD's tar stream does.

Environment (Argo CD's): the build environment (`ARGOCD_APP_NAME`, `ARGOCD_APP_NAMESPACE`,
`ARGOCD_APP_REVISION`, `ARGOCD_APP_SOURCE_PATH`, ... see `headway.source.build_env`),
`KUBE_VERSION` and `KUBE_API_VERSIONS`, `ARGOCD_ENV_<name>` for each `source.plugin.env` entry
(its value `$VAR`-expanded), and `ARGOCD_APP_PARAMETERS` (the parameters as JSON) with
`PARAM_<NAME>` / `PARAM_<NAME>_<KEY>` / `PARAM_<NAME>_<INDEX>` per parameter. Headway passes only
a few of its own variables (PATH, HOME, locale, TMPDIR), never its whole environment.

Both commands together get the catalog's timeout (Argo CD's default 90 s); then the process
group is stopped (TERM, then KILL). A failure keeps the command's stderr in the error.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from headway.child_process import dying_with_parent, start_error
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document, load_documents
from headway.source import plugin_selection
from headway.source.build_env import build_environment, envsubst
from headway.source.errors import RenderError
from headway.source.plugins import Command, PluginCatalog, PluginConfig
from headway.source.render import RenderRequest, RenderResult
from headway.source.tree import TreeReader

__all__ = ["PluginRenderer", "find_runner", "plugin_environment", "run_find_command"]

# Headway's own variables a plugin may see; everything else (tokens, keys) stays out.
_INHERITED = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "LOGNAME", "SHELL")
_STDERR_KEPT = 2000
_GRACE_SECONDS = 2.0


class PluginRenderer:
    name = "Plugin"

    def __init__(self, catalog: PluginCatalog) -> None:
        self._catalog = catalog

    def inputs(self, request: RenderRequest) -> tuple[str, ...]:
        """The commit (a plugin may read anything in the repository), the plugin's own
        config and the environment it is given: one render per revision and parameters."""
        plugin = self._plugin(request)
        config = json.dumps({"plugin": plugin.key, "spec": plugin.spec}, sort_keys=True)
        environment = json.dumps(plugin_environment(request), sort_keys=True)
        return (request.revision or request.tree.object_id(""), config, environment)

    def render(self, request: RenderRequest) -> RenderResult:
        plugin = self._plugin(request)
        deadline = time.monotonic() + self._catalog.timeout_seconds
        with tempfile.TemporaryDirectory(prefix="headway-plugin-") as scratch:
            app_dir = _write_repository(request.tree, Path(scratch), request.path, plugin)
            environment = {**_inherited(), **plugin_environment(request)}
            if plugin.init.command:
                _run(plugin, "init", plugin.init, cwd=app_dir, env=environment, deadline=deadline)
            output = _run(
                plugin, "generate", plugin.generate, cwd=app_dir, env=environment, deadline=deadline
            )
        documents, diagnostics = _objects(output, _output_name(plugin, request.path))
        return RenderResult(self.name, tuple(documents), tuple(diagnostics))

    def _plugin(self, request: RenderRequest) -> PluginConfig:
        spec = request.source.get("plugin")
        name = str(spec.get("name") or "") if isinstance(spec, Mapping) else ""
        return plugin_selection.select_plugin(
            self._catalog,
            name,
            tree=request.tree,
            path=request.path,
            run_find=find_runner(request),
        )


def find_runner(request: RenderRequest) -> plugin_selection.FindRunner:
    """Runs `discover.find.command` with the request's environment (as Argo CD gives it),
    once per plugin, tree, path and environment; a failing command matches nothing (Argo CD
    moves on to the next plugin)."""
    catalog = request.plugins
    environment = {**_inherited(), **plugin_environment(request)}
    fingerprint = json.dumps(environment, sort_keys=True)

    def run(plugin: PluginConfig, tree: TreeReader, path: str) -> str:
        key = (plugin.key, tree.description, path, fingerprint)
        if key not in catalog.find_results:
            try:
                output = run_find_command(
                    plugin, tree, path, timeout=catalog.timeout_seconds, env=environment
                )
            except RenderError:
                output = ""
            if len(catalog.find_results) > 4096:
                catalog.find_results.clear()
            catalog.find_results[key] = output
        return catalog.find_results[key]

    return run


def run_find_command(
    plugin: PluginConfig, tree: TreeReader, path: str, *, timeout: float, env: Mapping[str, str]
) -> str:
    """`discover.find.command` in the app directory of a scratch copy: what it prints."""
    deadline = time.monotonic() + timeout
    with tempfile.TemporaryDirectory(prefix="headway-plugin-find-") as scratch:
        app_dir = _write_repository(tree, Path(scratch), path, plugin)
        command = plugin.discover.find
        return _run(plugin, "discover", command, cwd=app_dir, env=env, deadline=deadline)


def plugin_environment(request: RenderRequest) -> dict[str, str]:
    """What Argo CD adds to a plugin's environment for `request` (module docstring)."""
    environment = build_environment(request)
    environment["KUBE_VERSION"] = ""
    environment["KUBE_API_VERSIONS"] = ""
    spec = request.source.get("plugin")
    spec = spec if isinstance(spec, Mapping) else {}
    for entry in spec.get("env") or ():
        if isinstance(entry, Mapping) and entry.get("name"):
            value = envsubst(str(entry.get("value") or ""), environment)
            environment[f"ARGOCD_ENV_{entry['name']}"] = value
    parameters = [p for p in spec.get("parameters") or () if isinstance(p, Mapping)]
    environment.update(_parameter_environment(parameters))
    return environment


def _parameter_environment(parameters: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """`ARGOCD_APP_PARAMETERS` (compact JSON, keys sorted, as Go marshals it) and `PARAM_*`."""
    as_json = json.dumps(
        list(parameters), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    for char, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e")):
        as_json = as_json.replace(char, escaped)
    environment = {"ARGOCD_APP_PARAMETERS": as_json}
    for parameter in parameters:
        base = f"PARAM_{_escaped(str(parameter.get('name') or ''))}"
        if parameter.get("string") is not None:
            environment[base] = str(parameter["string"])
        for key, value in (parameter.get("map") or {}).items():
            environment[f"{base}_{_escaped(str(key))}"] = str(value)
        for index, value in enumerate(parameter.get("array") or ()):
            environment[f"{base}_{index}"] = str(value)
    return environment


def _escaped(name: str) -> str:
    return re.sub(r"[^A-Z0-9_]", "_", name.upper())


def _inherited() -> dict[str, str]:
    return {name: os.environ[name] for name in _INHERITED if name in os.environ}


def _write_repository(tree: TreeReader, scratch: Path, path: str, plugin: PluginConfig) -> Path:
    """The repository under `scratch`, with file modes as Argo CD's stream leaves them."""
    tree.materialize(scratch)  # links that leave the repository are left out
    if not plugin.preserve_file_mode:
        for directory, _dirs, files in os.walk(scratch):
            os.chmod(directory, 0o755)
            for name in files:
                full = Path(directory, name)
                if not full.is_symlink():
                    full.chmod(0o644)
    app_dir = scratch / path if path else scratch
    if not app_dir.is_dir():
        raise RenderError(f"app path {path or '/'!r} does not exist in {tree.description}")
    return app_dir


def _run(
    plugin: PluginConfig,
    stage: str,
    command: Command,
    *,
    cwd: Path,
    env: Mapping[str, str],
    deadline: float,
) -> str:
    """Run one command; its stdout, or a `RenderError` naming the plugin, stage and stderr."""
    argv = command.argv
    shown = " ".join(argv)
    # Dies with Headway (no Python of ours between fork and exec, which can deadlock in a
    # threaded parent); a command that cannot exec is Python's OSError, not exit status 127.
    try:
        error = start_error(argv, env, str(cwd))
        if error is not None:
            raise error
        process = subprocess.Popen(
            dying_with_parent(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, stopped as a whole on timeout
        )
    except OSError as err:
        raise RenderError(
            f"plugin {plugin.key}: {stage} `{shown}` could not start: {err}"
        ) from None
    try:
        stdout, stderr = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        stderr = _stop(process)
        message = f"plugin {plugin.key}: {stage} `{shown}` did not finish in time (stopped)"
        raise RenderError(_with_stderr(message, stderr)) from None
    if process.returncode != 0:
        message = f"plugin {plugin.key}: {stage} `{shown}` exited with {process.returncode}"
        raise RenderError(_with_stderr(message, stderr))
    return stdout.decode("utf-8", errors="replace")


def _stop(process: subprocess.Popen[bytes]) -> bytes:
    """TERM the process group, then KILL it after a short grace; what it wrote to stderr."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            return process.communicate(timeout=_GRACE_SECONDS)[1]
        except subprocess.TimeoutExpired:
            continue
    return process.communicate()[1]


def _with_stderr(message: str, stderr: bytes) -> str:
    text = stderr.decode("utf-8", errors="replace").strip()
    if len(text) > _STDERR_KEPT:
        text = "..." + text[-_STDERR_KEPT:]
    return f"{message}: {text}" if text else message


def _output_name(plugin: PluginConfig, path: str) -> str:
    return f"plugin {plugin.key} output for {path or '/'}"


def _objects(output: str, name: str) -> tuple[list[Document], list[Diagnostic]]:
    """Every document of the stream must be a Kubernetes object; an empty stream is an error
    (Argo CD accepts it, and the app's objects would all be pruned)."""
    loaded = load_documents(output, name)
    diagnostics = list(loaded.diagnostics)
    objects: list[Document] = []
    for document in loaded.documents:
        obj = document.obj
        if isinstance(obj, dict) and obj.get("apiVersion") and obj.get("kind"):
            objects.append(document)
            continue
        message = (
            f"document {document.index + 1} is not a Kubernetes object "
            "(it needs apiVersion and kind)"
        )
        diagnostics.append(Diagnostic(name, document.line, "", "", "", Severity.ERROR, message))
    if not objects and not diagnostics:
        message = "the plugin printed no objects (refused: syncing it would prune everything)"
        diagnostics.append(Diagnostic(name, 1, "", "", "", Severity.ERROR, message))
    return objects, diagnostics
