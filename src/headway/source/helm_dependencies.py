"""A chart's dependencies from Helm repositories, put into `charts/` of the render's copy
before Helm renders it, as Argo CD's repo server gets them with `helm dependency build`.

Which version: the one `Chart.lock` (`requirements.lock` for an `apiVersion: v1` chart)
records for the dependency, else the `version` of `Chart.yaml` (`requirements.yaml`), an
exact version or a range resolved against the repository's index. A dependency already in
`charts/` (a vendored archive or directory) is used as it is, never fetched; `file://`
dependencies are the renderer's own business. Charts come through `HelmCharts` (the
repository Secrets' credentials, the persistent chart cache: an exact version fetched once
renders offline afterwards). `condition`, `tags`, `alias` and `import-values` are Helm's to
apply once the chart is in place. A repository named by `helm repo add` name (`@stable`,
`alias:stable`) is refused by name: Headway reads repositories by URL only.
"""

from __future__ import annotations

import tarfile
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from headway.model import yamlload
from headway.source.chart_cache import CachedChart
from headway.source.errors import RenderError
from headway.source.helm_index import HelmRepositoryError

__all__ = ["ChartFetcher", "RemoteDependency", "remote_dependencies", "vendor_dependencies"]

ChartFetcher = Callable[[Mapping[str, Any]], CachedChart]
"""A chart source (`repoURL`, `chart`, `targetRevision`) -> the unpacked chart
(`HelmCharts.resolve`)."""


@dataclass(frozen=True)
class RemoteDependency:
    """One dependency a Helm repository serves: its chart name, repository and version."""

    name: str
    repository: str
    version: str


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        loaded = yamlload.load_one(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise RenderError(f"invalid YAML: {err}", path.name) from None
    return loaded if isinstance(loaded, dict) else {}


def _declared(chart_dir: Path) -> tuple[list[Any], dict[str, Any]]:
    """The dependency list and the lock, from Chart.yaml or (before apiVersion v2, or when
    Chart.yaml has none) requirements.yaml, as Helm's loader reads them."""
    chart = _read_yaml(chart_dir / "Chart.yaml")
    declared = chart.get("dependencies")
    if isinstance(declared, list) and declared:
        return declared, _read_yaml(chart_dir / "Chart.lock")
    requirements = _read_yaml(chart_dir / "requirements.yaml").get("dependencies")
    lock = _read_yaml(chart_dir / "requirements.lock")
    return (requirements if isinstance(requirements, list) else []), lock


def remote_dependencies(chart_dir: Path) -> list[RemoteDependency]:
    """The dependencies of the chart at `chart_dir` that come from a Helm repository, each at
    the lock's version when it records one."""
    declared, lock = _declared(chart_dir)
    locked = {
        (str(d.get("name")), str(d.get("repository"))): str(d.get("version"))
        for d in lock.get("dependencies") or []
        if isinstance(d, dict)
    }
    found: list[RemoteDependency] = []
    for index, raw in enumerate(declared):
        if not isinstance(raw, dict):
            raise RenderError(f"dependencies[{index}] is not a mapping", "Chart.yaml")
        name, repository = str(raw.get("name") or ""), str(raw.get("repository") or "")
        if not repository or repository.startswith("file://"):
            continue
        if repository.startswith(("@", "alias:")):
            raise RenderError(
                f"dependencies[{index}] ({name}): repository {repository!r} is a `helm repo add` "
                "name; Headway reads Helm repositories by URL only (https://... or oci://...)",
                "Chart.yaml",
            )
        version = locked.get((name, repository)) or str(raw.get("version") or "")
        if not version:
            message = f"dependencies[{index}] ({name}): no version (an exact one or a range)"
            raise RenderError(message, "Chart.yaml")
        found.append(RemoteDependency(name, repository, version))
    return found


def _vendored(charts: Path, name: str) -> bool:
    """A copy of chart `name` in `charts/`: a directory or an archive `name-<version>.tgz`."""
    if (charts / name / "Chart.yaml").is_file():
        return True
    prefix = f"{name}-"
    return any(
        p.name.startswith(prefix) and p.name[len(prefix) : len(prefix) + 1].isdigit()
        for p in charts.glob("*.tgz")
    )


def _pack(cached: CachedChart, archive: Path) -> None:
    """The unpacked chart as `helm package` lays it out, `<chart>/...` in a gzipped tar."""
    with tempfile.TemporaryDirectory(prefix="headway-dependency-") as tmp:
        unpacked = Path(tmp) / cached.ref.chart
        cached.tree.materialize(unpacked)  # a cached chart holds plain files only
        with tarfile.open(archive, "w:gz") as packed:
            packed.add(unpacked, arcname=cached.ref.chart)


def vendor_dependencies(chart_dir: Path, fetch: ChartFetcher) -> list[CachedChart]:
    """Put each remote dependency that `charts/` lacks into it, as the archive
    `charts/<name>-<version>.tgz` `helm dependency build` writes; the charts fetched."""
    charts = chart_dir / "charts"
    dependencies = remote_dependencies(chart_dir)
    vendored = {d.name for d in dependencies if _vendored(charts, d.name)}
    used: list[CachedChart] = []
    for dependency in dependencies:
        if dependency.name in vendored:
            continue
        source = {
            "repoURL": dependency.repository,
            "chart": dependency.name,
            "targetRevision": dependency.version,
        }
        try:
            cached = fetch(source)
        except HelmRepositoryError as err:
            raise RenderError(f"chart dependency {dependency.name}: {err}", "Chart.yaml") from None
        archive = charts / f"{dependency.name}-{cached.ref.version}.tgz"
        if not archive.exists():  # two aliases of one chart and version: one archive
            charts.mkdir(exist_ok=True)
            _pack(cached, archive)
        used.append(cached)
    return used
