"""`headway check` in a new process (a pre-commit hook) imports what the repository needs:
the ApplicationSet generators, with the Git cache and the HTTP client their inputs bring, load
only when the repository holds an ApplicationSet; the drill's numerics only when there is a
Rollout to drill, and then without the HTTP client nor the Prometheus text parser (the drill
sends no request and scrapes nothing); Rich only for text output (JSON and SARIF are printed
without it).
Structural, not timed: each case runs in a fresh interpreter and reads `sys.modules` after the
command (see also tests/test_cli_startup_imports.py)."""

from __future__ import annotations

from pathlib import Path

from import_probe import run_headway

GENERATORS = ("headway.appset.generate", "headway.controllers.appset.inputs", "headway.source.git")
DRILL = ("headway.drill.summary", "numpy")
RICH = ("rich.console", "rich.markup")
HTTP = ("httpx2",)
# The Prometheus text parser (with http.server and email): only a scrape reads it.
SCRAPER = ("prometheus_client", "http.server")
# Renderers of source types other than a plain directory, and `--transition`'s Git reading.
OTHER_RENDERERS = (
    "headway.source.render_helm",
    "headway.source.render_kustomize",
    "headway.source.render_plugin",
    "headway.cli.check_transition",
)
# The event loop: only sleeping needs it (the clock), and only the data plane's server side
# (the drill reads the latency buckets without it).
EVENT_LOOP = ("asyncio",)

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "registry.example.com/web:1.0.0"}]
"""

APPLICATION_SET = """apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: shops, namespace: argocd}
spec:
  generators:
    - list: {elements: [{name: eu}, {name: us}]}
  template:
    metadata: {name: "shop-{{name}}"}
    spec:
      project: default
      source: {repoURL: "https://github.com/example/shops.git", path: shop, targetRevision: HEAD}
      destination: {server: "https://kubernetes.default.svc", namespace: "shop-{{name}}"}
"""

ROLLOUT = """apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "registry.example.com/web:1.0.0"}]
  strategy:
    canary:
      canaryService: web-canary
      stableService: web
      steps:
        - setWeight: 25
        - analysis: {templates: [{templateName: web-errors}]}
        - setWeight: 50
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: web-errors, namespace: shop}
spec:
  metrics:
    - name: errors
      interval: 1m
      count: 3
      successCondition: len(result) > 0 && result[0] < 0.02
      provider:
        prometheus:
          address: http://prometheus:9090
          query: >-
            sum(rate(http_requests_total{app="web",code=~"5.."}[1m]))
            / sum(rate(http_requests_total{app="web"}[1m]))
"""


def _check_modules(
    repo: Path, output: str = "json", env: dict[str, str] | None = None
) -> list[str]:
    """A first run: its own empty caches (a kept drill answer would skip the drill)."""
    cache = repo.parent / f"{repo.name}-cache"
    env = {"XDG_CACHE_HOME": str(cache), **(env or {})}
    run = run_headway("check", "-o", output, str(repo), env=env)
    assert run.code in (0, 1), run.output  # clean, or findings
    assert "headway.check.registry" in run.modules  # the rules ran
    return sorted(run.modules)


def _repo(root: Path, **files: str) -> Path:
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def test_plain_manifests_load_neither_the_generators_nor_the_drill(tmp_path: Path) -> None:
    modules = _check_modules(_repo(tmp_path, **{"web.yaml": DEPLOYMENT}))
    assert [m for m in GENERATORS + DRILL + RICH if m in modules] == []


def test_text_output_to_a_pipe_loads_no_rich(tmp_path: Path) -> None:
    """A pre-commit hook or CI log gets the plain lines Rich would print there
    (`cli/text_lines.py`), without importing Rich; a terminal still gets Rich's colours."""
    repo = _repo(tmp_path, **{"web.yaml": DEPLOYMENT})
    assert [m for m in RICH if m in _check_modules(repo, "text", {"FORCE_COLOR": ""})] == []
    coloured = _check_modules(repo, "text", {"FORCE_COLOR": "1"})
    assert [m for m in RICH if m not in coloured] == []


def test_an_application_set_loads_the_generators(tmp_path: Path) -> None:
    repo = _repo(tmp_path, **{"web.yaml": DEPLOYMENT, "shops.yaml": APPLICATION_SET})
    modules = _check_modules(repo)
    assert [m for m in GENERATORS if m not in modules] == []


def test_a_rollout_is_drilled_without_the_http_client(tmp_path: Path) -> None:
    modules = _check_modules(_repo(tmp_path, **{"web.yaml": ROLLOUT}))
    assert [m for m in DRILL if m not in modules] == []  # the drill ran
    assert [m for m in HTTP + SCRAPER if m in modules] == []


def test_a_rollout_without_analysis_is_not_drilled(tmp_path: Path) -> None:
    """No analysis step, nothing to drill: the numerics stay out (the rule still ran)."""
    no_analysis = ROLLOUT.split("---", maxsplit=1)[0].replace(
        "        - analysis: {templates: [{templateName: web-errors}]}\n", ""
    )
    modules = _check_modules(_repo(tmp_path, **{"web.yaml": no_analysis}))
    assert "headway.check.drill_gates" in modules
    assert [m for m in DRILL if m in modules] == []


def test_a_repository_of_directories_loads_no_other_renderer_nor_the_event_loop(
    tmp_path: Path,
) -> None:
    """An Application of a plain directory, drilled: only the directory renderer loads, and
    neither the drill nor the clock brings asyncio."""
    application = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  project: default
  source: {repoURL: "https://github.com/example/fixtures.git", path: web}
  destination: {server: "https://kubernetes.default.svc", namespace: shop}
"""
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "rollout.yaml").write_text(ROLLOUT)
    (tmp_path / "headway-check.yaml").write_text(
        "selfURLs: [https://github.com/example/fixtures.git]\n"
    )
    modules = _check_modules(_repo(tmp_path, **{"app.yaml": application}))
    assert "headway.source.render_directory" in modules  # the Application rendered
    assert [m for m in DRILL if m not in modules] == []  # and its Rollout was drilled
    assert [m for m in OTHER_RENDERERS + EVENT_LOOP if m in modules] == []
