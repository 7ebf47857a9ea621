"""Render cost from a Git tree, against the raw cost of loading the same YAML.

Builds a repository in a temporary directory with a ~200-file directory app, the Kustomize
overlay and the Helm chart used by tests/source, fetches it into a Headway Git cache, then for
each app measures (median of several runs):

  render   - a cold render from the Git tree (new cache each time)
  cached   - the same render answered by the RenderCache
  raw load - PyYAML CSafeLoader loading the same YAML text (the files for the directory app,
             the rendered output for Kustomize, Helm, Jsonnet and the plugin), measured in
             this run

The Jsonnet app builds the same 200 Deployments from one .jsonnet file and a library; the
plugin app is a config management plugin whose `generate` is `cat` of the 200 files (the
cost of running a plugin, not of any tool it would call).

and prints the ratios render/raw and cached/raw.

    .venv/bin/python bench/bench_render.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pygit2
import yaml

from headway.source.git import GitCache
from headway.source.plugins import load_plugins
from headway.source.render import RenderCache, RenderRequest, render
from headway.source.spec import ApplicationSource

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "source" / "fixtures"
DIRECTORY_FILES = 200

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-{i}
  labels: {{app: svc-{i}, team: shop}}
  annotations:
    argocd.argoproj.io/sync-wave: "1"
spec:
  replicas: 3
  selector:
    matchLabels: {{app: svc-{i}}}
  template:
    metadata:
      labels: {{app: svc-{i}}}
    spec:
      containers:
        - name: app
          image: registry.example.com/svc-{i}:1.{i}.0
          ports: [{{containerPort: 8080}}]
          env:
            - {{name: LOG_LEVEL, value: info}}
            - {{name: REGION, value: eu-west-1}}
          resources:
            requests: {{cpu: 100m, memory: 128Mi}}
            limits: {{memory: 256Mi}}
          readinessProbe:
            httpGet: {{path: /healthz, port: 8080}}
"""


JSONNET_APP = f"""local svc = import 'svc.libsonnet';
[svc(i) for i in std.range(0, {DIRECTORY_FILES - 1})]
"""
JSONNET_LIB = """function(i) {
  apiVersion: 'apps/v1', kind: 'Deployment',
  metadata: { name: 'svc-%d' % i, labels: { app: 'svc-%d' % i, team: 'shop' },
              annotations: { 'argocd.argoproj.io/sync-wave': '1' } },
  spec: { replicas: 3, selector: { matchLabels: { app: 'svc-%d' % i } },
    template: { metadata: { labels: { app: 'svc-%d' % i } }, spec: { containers: [{
      name: 'app', image: 'registry.example.com/svc-%d:1.%d.0' % [i, i],
      ports: [{ containerPort: 8080 }],
      env: [{ name: 'LOG_LEVEL', value: 'info' }, { name: 'REGION', value: 'eu-west-1' }],
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
      readinessProbe: { httpGet: { path: '/healthz', port: 8080 } } }] } } },
}
"""
PLUGIN = """apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata: {name: cat}
spec:
  generate:
    command: [sh, -c, 'for f in *.yaml; do cat "$f"; echo ---; done']
"""


def _files() -> dict[str, bytes]:
    files = {
        f"apps/fleet/svc-{i:03d}.yaml": DEPLOYMENT.format(i=i).encode()
        for i in range(DIRECTORY_FILES)
    }
    files["apps/jsonnet/main.jsonnet"] = JSONNET_APP.encode()
    files["apps/jsonnet/svc.libsonnet"] = JSONNET_LIB.encode()
    for prefix, root in (("apps/checkout", FIXTURES / "kustomize"),):
        for path in root.rglob("*"):
            if path.is_file():
                files[f"{prefix}/{path.relative_to(root).as_posix()}"] = path.read_bytes()
    root = FIXTURES / "helm" / "checkout"
    for path in root.rglob("*"):
        if path.is_file():
            files[f"charts/checkout/{path.relative_to(root).as_posix()}"] = path.read_bytes()
    return files


def _upstream(path: Path) -> str:
    repo = pygit2.init_repository(str(path), bare=True, initial_head="main")
    index = pygit2.Index()
    for name, data in _files().items():
        index.add(pygit2.IndexEntry(name, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    sig = pygit2.Signature("Bench", "bench@example.com")
    repo.create_commit("refs/heads/main", sig, sig, "bench", index.write_tree(repo), [])
    return path.as_uri()


def _median_ms(action: Callable[[], Any], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _raw_load(texts: list[str]) -> None:
    for text in texts:
        list(yaml.load_all(text, Loader=yaml.CSafeLoader))


def _measure(name: str, request: RenderRequest, raw_texts: list[str], runs: int) -> None:
    cold = _median_ms(lambda: RenderCache().render(request), runs)
    cache = RenderCache()
    cache.render(request)
    cached = _median_ms(lambda: cache.render(request), runs * 5)
    raw = _median_ms(lambda: _raw_load(raw_texts), runs)
    print(
        f"{name:<22} render {cold:8.2f} ms   cached {cached:7.3f} ms   raw load {raw:7.2f} ms"
        f"   render/raw {cold / raw:6.2f}x   cached/raw {cached / raw:6.3f}x"
    )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="headway-bench-") as tmp:
        url = _upstream(Path(tmp) / "upstream.git")
        repo = GitCache(Path(tmp) / "cache").repository(url)
        fetch_ms = _median_ms(repo.fetch, 1)
        tree = repo.tree("main")
        print(f"fetch (clone) of {len(tree.files())} files: {fetch_ms:.1f} ms")
        (Path(tmp) / "plugins" / "cat").mkdir(parents=True)
        (Path(tmp) / "plugins" / "cat" / "plugin.yaml").write_text(PLUGIN)
        plugins = load_plugins(Path(tmp) / "plugins")
        plugin_source: ApplicationSource = {"path": "apps/fleet", "plugin": {"name": "cat"}}
        apps: list[tuple[str, ApplicationSource, int]] = [
            (f"directory ({DIRECTORY_FILES} files)", {"path": "apps/fleet"}, 7),
            ("kustomize overlay", {"path": "apps/checkout/overlays/prod"}, 5),
            ("helm chart", {"path": "charts/checkout"}, 7),
            (f"jsonnet ({DIRECTORY_FILES} objects)", {"path": "apps/jsonnet"}, 7),
            ("plugin (cat, 200 files)", plugin_source, 5),
        ]
        revision = repo.resolve("main")
        for name, source, runs in apps:
            request = RenderRequest(
                source=source,
                tree=tree,
                app_name="bench",
                namespace="shop",
                revision=revision,
                plugins=plugins,
            )
            if name.startswith("directory"):
                texts = [tree.read(f).decode() for f in tree.files("apps/fleet")]
            else:
                rendered = render(request)
                texts = [yaml.safe_dump_all([d.obj for d in rendered.documents])]
            _measure(name, request, texts, runs)


if __name__ == "__main__":
    main()
