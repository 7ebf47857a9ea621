"""Cost of `headway check` per Application, against only loading the same YAML.

Generates a repository of 1,000 Applications in a temporary directory, each a plain directory
source holding a Rollout (canary with an analysis step), two Services, an AnalysisTemplate and
an HPA, then measures in this run (median of several runs):

  yaml load - PyYAML CSafeLoader over every file of the repository (the floor: no rules)
  load      - Headway's loader: discover Applications, render their directories, index
  check     - load plus every rule (what `headway check` does, without printing)

and prints the time per Application and the ratio check / yaml load.

    .venv/bin/python bench/bench_check.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from headway.check.registry import run_checks
from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.source.tree import FilesystemTree

APPS = 1000
RUNS = 2
URL = "https://github.com/example/bench.git"

APPLICATION = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: svc-{i}
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: workloads
  source: {{repoURL: "{url}", targetRevision: HEAD, path: services/svc-{i}}}
  destination: {{name: prod, namespace: svc-{i}}}
  syncPolicy:
    automated: {{prune: true, selfHeal: true}}
    retry: {{limit: 5, backoff: {{duration: 10s, factor: 2, maxDuration: 3m}}}}
"""

ROLLOUT = """apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: svc-{i}
  annotations: {{argocd.argoproj.io/sync-wave: "1"}}
spec:
  selector: {{matchLabels: {{app: svc-{i}}}}}
  template:
    metadata: {{labels: {{app: svc-{i}}}}}
    spec:
      containers:
        - name: app
          image: registry.example.com/svc-{i}:1.{i}.0
          ports: [{{containerPort: 8080}}]
          env:
            - {{name: LOG_LEVEL, value: info}}
            - {{name: DATABASE_URL, value: "postgres://db/svc-{i}"}}
  strategy:
    canary:
      canaryService: svc-{i}-canary
      stableService: svc-{i}
      steps:
        - setWeight: 25
        - pause: {{duration: 2m}}
        - analysis:
            templates: [{{templateName: svc-{i}-slo}}]
            args: [{{name: hash, valueFrom: {{podTemplateHashValue: Latest}}}}]
        - setWeight: 50
        - pause: {{duration: 5m}}
"""

SERVICES = """apiVersion: v1
kind: Service
metadata: {{name: svc-{i}}}
spec:
  selector: {{app: svc-{i}}}
  ports: [{{port: 80, targetPort: 8080}}]
---
apiVersion: v1
kind: Service
metadata: {{name: svc-{i}-canary}}
spec:
  selector: {{app: svc-{i}}}
  ports: [{{port: 80, targetPort: 8080}}]
"""

ANALYSIS = """apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {{name: svc-{i}-slo}}
spec:
  args: [{{name: hash}}]
  metrics:
    - name: error-rate
      interval: 1m
      count: 5
      failureLimit: 1
      successCondition: len(result) > 0 && result[0] < 0.02
      provider:
        prometheus:
          address: http://prometheus:9090
          query: >-
            sum(rate(http_requests_total{{app="svc-{i}",rollouts_pod_template_hash="{{{{args.hash}}}}",code=~"5.."}}[2m]))
            / sum(rate(http_requests_total{{app="svc-{i}",
            rollouts_pod_template_hash="{{{{args.hash}}}}"}}[2m]))
"""

HPA = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: svc-{i}
  annotations: {{argocd.argoproj.io/sync-wave: "2"}}
spec:
  scaleTargetRef: {{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: svc-{i}}}
  minReplicas: 4
  maxReplicas: 12
"""


def generate(root: Path) -> None:
    (root / "apps").mkdir()
    for i in range(APPS):
        (root / "apps" / f"svc-{i}.yaml").write_text(APPLICATION.format(i=i, url=URL))
        service = root / "services" / f"svc-{i}"
        service.mkdir(parents=True)
        for name, text in (
            ("rollout.yaml", ROLLOUT),
            ("services.yaml", SERVICES),
            ("analysis.yaml", ANALYSIS),
            ("hpa.yaml", HPA),
        ):
            (service / name).write_text(text.format(i=i))


def yaml_load_only(root: Path) -> int:
    count = 0
    for path in sorted(root.rglob("*.yaml")):
        count += sum(1 for _ in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader))
    return count


def loader(root: Path) -> RepositoryLoader:
    return RepositoryLoader(tree=FilesystemTree(root), self_urls=frozenset({normalize_url(URL)}))


def load_only(root: Path) -> int:
    return len(loader(root).load().all_objects)


def full_check(root: Path) -> int:
    return len(run_checks(loader(root).load()))


def median_seconds(fn: Callable[[Path], int], root: Path) -> tuple[float, int]:
    times, result = [], 0
    for _ in range(RUNS):
        start = time.perf_counter()
        result = fn(root)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="headway-bench-check-") as tmp:
        root = Path(tmp)
        generate(root)
        baseline, documents = median_seconds(yaml_load_only, root)
        loading, objects = median_seconds(load_only, root)
        checking, findings = median_seconds(full_check, root)
    print(f"{APPS} Applications, {documents} YAML documents, {objects} rendered objects")
    print(f"findings: {findings} (expected 0: the generated repository is clean)")
    for label, seconds in (("yaml load", baseline), ("load", loading), ("check", checking)):
        per_app = seconds / APPS * 1e3
        print(f"{label:>9}: {seconds:7.3f} s  {per_app:6.3f} ms/app  x{seconds / baseline:5.2f}")


if __name__ == "__main__":
    main()
