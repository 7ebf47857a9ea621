"""Every input a render reads is part of what the controller keys it by: at an unchanged
commit, changing one input of an Application (its project, name, destination namespace, a
source field, a plugin's env or parameters, Helm values, a plugin's definition) renders it
again, and the objects are what a controller with empty caches renders. Each case reads the
rendered objects, so it fails if that input is dropped from the render cache's key, the
reader's fingerprint or the identity the reader keeps between commits."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app_harness import Remote, application, manifests

from headway.clock import VirtualClock
from headway.controllers.app.sources import DesiredState, SourceReader
from headway.model.application import parse_application
from headway.model.yamlload import Document
from headway.source.git import GitCache
from headway.source.plugins import Command, Discover, PluginCatalog, PluginConfig
from source.gitrepos import require_extra
from system_programs import require_program

Edit = Callable[[dict[str, Any]], None]

# A ConfigMap holding the build variables Jsonnet is given, and one plain extVar.
_JSONNET = """{
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'env' },
  data: { project: std.extVar('project'), app: std.extVar('app'), ns: std.extVar('ns'),
          flag: std.extVar('flag') },
}
"""
_JSONNET_VARS = [
    {"name": "project", "value": "$ARGOCD_APP_PROJECT_NAME"},
    {"name": "app", "value": "$ARGOCD_APP_NAME"},
    {"name": "ns", "value": "$ARGOCD_APP_NAMESPACE"},
    {"name": "flag", "value": "one"},
]
_CHART = {
    "charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    "charts/web/values.yaml": "flag: chart\n",
    "charts/web/templates/cm.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"
        "data:\n  flag: {{ .Values.flag | quote }}\n  release: {{ .Release.Name | quote }}\n"
        "  ns: {{ .Release.Namespace | quote }}\n"
    ),
}


class Readers:
    """Source readers over one remote, each with its own Git cache."""

    def __init__(self, tmp_path: Path, files: dict[str, str]) -> None:
        self.tmp_path = tmp_path
        self.remote = Remote(tmp_path / "remote.git")
        self.remote.commit(files, "initial")
        self.made = 0

    def reader(self, **options: Any) -> SourceReader:
        self.made += 1
        cache = GitCache(self.tmp_path / f"git-cache-{self.made}")
        return SourceReader(git=cache, clock=VirtualClock(), **options)

    def app(self, *, path: str, **source: Any) -> dict[str, Any]:
        raw = application("web", self.remote.url, path=path, project="team")
        raw["spec"]["source"].update(source)
        return raw


def _render(reader: SourceReader, raw: dict[str, Any]) -> DesiredState:
    parsed, _ = parse_application(Document(raw, "test", 0, 0))
    assert parsed is not None
    state = reader.desired(parsed, raw)
    assert not state.errors, state.errors
    return state


def _data(state: DesiredState) -> dict[str, Any]:
    [obj] = state.objects
    return dict(obj.get("data") or {})


def _edit_changes_the_render(
    readers: Readers, raw: dict[str, Any], edit: Edit, **options: Any
) -> dict[str, Any]:
    """Render `raw`, then, at the same commit, the app with `edit` applied: the objects
    change, and equal those of a new reader (empty caches) for the edited app. The data
    rendered after the edit."""
    reader = readers.reader(**options)
    before = _data(_render(reader, raw))
    assert _data(_render(reader, raw)) == before  # reused, at the same commit
    edited = copy.deepcopy(raw)
    edit(edited)
    after = _data(_render(reader, edited))
    assert after != before
    assert after == _data(_render(readers.reader(**options), edited))
    return after


def _set(*path: str, value: Any) -> Edit:
    def edit(raw: dict[str, Any]) -> None:
        node = raw
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "field", "expected"),
    [
        (_set("spec", "project", value="payments"), "project", "payments"),
        (_set("metadata", "name", value="web2"), "app", "web2"),
        (_set("spec", "destination", "namespace", value="shop"), "ns", "shop"),
        (
            _set(
                "spec",
                "source",
                "directory",
                "jsonnet",
                "extVars",
                value=[
                    *_JSONNET_VARS[:3],
                    {"name": "flag", "value": "two"},
                ],
            ),
            "flag",
            "two",
        ),
    ],
    ids=["project", "app-name", "destination-namespace", "ext-var"],
)
def test_a_jsonnet_build_variable_change_renders_again(
    tmp_path: Path, edit: Edit, field: str, expected: str
) -> None:
    """`$ARGOCD_APP_PROJECT_NAME` and the other build variables reach Jsonnet: moving the
    app to another project (before: the identity kept at unchanged commits was keyed without
    the project, so the old project's render stayed) or renaming it renders again."""
    require_extra("_gojsonnet", "jsonnet")
    readers = Readers(tmp_path, {"apps/web/env.jsonnet": _JSONNET})
    raw = readers.app(path="apps/web", directory={"jsonnet": {"extVars": _JSONNET_VARS}})
    assert _edit_changes_the_render(readers, raw, edit)[field] == expected


def test_a_directory_option_change_renders_again(tmp_path: Path) -> None:
    files = {
        "apps/web/cm.yaml": manifests(_config_map("top")),
        "apps/web/sub/cm.yaml": manifests(_config_map("nested")),
    }
    readers = Readers(tmp_path, files)
    raw = readers.app(path="apps/web", directory={"recurse": True, "exclude": "cm.yaml"})
    edit = _set("spec", "source", "directory", value={"recurse": False})
    assert _edit_changes_the_render(readers, raw, edit) == {"from": "top"}


def _printing_plugin(sh: str, *, name: str = "printer", prefix: str = "") -> PluginConfig:
    """A plugin printing a ConfigMap whose data are its env entries, parameters and
    build variables (`prefix` stands for a changed definition)."""
    template = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: out\ndata:\n"
        f"  flag: '{prefix}$ARGOCD_ENV_FLAG'\n  size: '$PARAM_SIZE'\n"
        "  project: '$ARGOCD_APP_PROJECT_NAME'\n"
    )
    return PluginConfig(
        name=name,
        version="",
        init=Command(),
        generate=Command((sh, "-c", f'printf "{template}"')),
        discover=Discover(),
        preserve_file_mode=False,
        file="test",
        spec={"generate": {"prefix": prefix}},
    )


def _plugin_source(flag: str = "one", size: str = "small") -> dict[str, Any]:
    return {
        "name": "printer",
        "env": [{"name": "FLAG", "value": flag}],
        "parameters": [{"name": "size", "string": size}],
    }


@pytest.mark.parametrize(
    ("edit", "field", "expected"),
    [
        (_set("spec", "source", "plugin", value=_plugin_source(flag="two")), "flag", "two"),
        (_set("spec", "source", "plugin", value=_plugin_source(size="big")), "size", "big"),
        (_set("spec", "project", value="payments"), "project", "payments"),
    ],
    ids=["env", "parameter", "project"],
)
def test_a_plugin_input_change_renders_again(
    tmp_path: Path, edit: Edit, field: str, expected: str
) -> None:
    sh = require_program("sh")
    readers = Readers(tmp_path, {"apps/web/README": "generated\n"})
    raw = readers.app(path="apps/web", plugin=_plugin_source())
    catalog = PluginCatalog((_printing_plugin(sh),))
    after = _edit_changes_the_render(readers, raw, edit, plugins=catalog)
    assert after[field] == expected


def test_a_changed_plugin_definition_renders_again_through_a_shared_render_cache(
    tmp_path: Path,
) -> None:
    """Two readers sharing one render cache, whose catalogs define the plugin differently
    (a restart with an edited plugin.yaml keeping the cache): each gets its own plugin's
    output, never the other's."""
    sh = require_program("sh")
    readers = Readers(tmp_path, {"apps/web/README": "generated\n"})
    raw = readers.app(path="apps/web", plugin=_plugin_source())
    first = readers.reader(plugins=PluginCatalog((_printing_plugin(sh),)))
    assert _data(_render(first, raw))["flag"] == "one"
    second = readers.reader(
        plugins=PluginCatalog((_printing_plugin(sh, prefix="v2-"),)),
        render_cache=first.render_cache,
    )
    assert _data(_render(second, raw))["flag"] == "v2-one"
    assert first.render_cache.misses == 2


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            _set("spec", "source", "helm", value={"valuesObject": {"flag": "object"}}),
            {"flag": "object", "release": "web", "ns": "demo"},
        ),
        (
            _set("spec", "source", "helm", value={"parameters": [{"name": "flag", "value": "p"}]}),
            {"flag": "p", "release": "web", "ns": "demo"},
        ),
        (
            _set("spec", "source", "helm", value={"values": "flag: inline\n"}),
            {"flag": "inline", "release": "web", "ns": "demo"},
        ),
        (
            _set("spec", "source", "helm", value={"releaseName": "shop"}),
            {"flag": "chart", "release": "shop", "ns": "demo"},
        ),
        (
            _set("metadata", "name", value="web2"),
            {"flag": "chart", "release": "web2", "ns": "demo"},
        ),
        (
            _set("spec", "destination", "namespace", value="shop"),
            {"flag": "chart", "release": "web", "ns": "shop"},
        ),
    ],
    ids=["valuesObject", "parameters", "values", "releaseName", "app-name", "namespace"],
)
def test_a_helm_input_change_renders_again(
    tmp_path: Path, edit: Edit, expected: dict[str, str]
) -> None:
    require_extra("helm_python", "helm")
    readers = Readers(tmp_path, dict(_CHART))
    raw = readers.app(path="charts/web")
    assert _edit_changes_the_render(readers, raw, edit) == expected


def _config_map(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "one"},
        "data": {"from": name},
    }
