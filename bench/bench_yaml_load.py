"""How much do line-aware loading and validation cost over plain PyYAML?

Generates ~2 MB of realistic multi-document YAML (Rollouts, AnalysisTemplates, Services,
Applications, ConfigMaps) and times, best of several rounds:

  baseline   yaml.load_all with CSafeLoader (objects only, no line numbers)
  yaml_rs    yaml_rs.loads, the Rust reader alone (YAML 1.2: not what Headway reads by itself)
  load       headway load_documents (objects; a field's line is found when first asked for):
             yaml_rs where it reads as PyYAML does (headway.model.yamlrust)
  load (PyYAML only)  the same with yaml_rs switched off (PyYAML's C parser's events)
  validate   load_documents + validate_documents (typed parse of every object)

Run: .venv/bin/python bench/bench_yaml_load.py
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import yaml

from headway.model import yamlrust
from headway.model.validate import validate_documents
from headway.model.yamlload import load_documents

TARGET_BYTES = 2_000_000
ROUNDS = 5

ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: svc-{i}
  namespace: team-{team}
  labels: {{app: svc-{i}, team: team-{team}}}
  annotations:
    argocd.argoproj.io/sync-wave: "1"
spec:
  replicas: {replicas}
  revisionHistoryLimit: 3
  selector:
    matchLabels: {{app: svc-{i}}}
  template:
    metadata:
      labels: {{app: svc-{i}}}
    spec:
      containers:
        - name: app
          image: headway-demo/svc-{i}:v{i}
          ports: [{{name: http, containerPort: 8080}}]
          env:
            - {{name: LOG_LEVEL, value: info}}
            - {{name: SERVICE_ID, value: "svc-{i}"}}
          resources:
            requests: {{cpu: 100m, memory: 128Mi}}
            limits: {{cpu: "1", memory: 512Mi}}
          readinessProbe:
            httpGet: {{path: /readyz, port: http}}
  strategy:
    canary:
      stableService: svc-{i}-stable
      canaryService: svc-{i}-canary
      trafficRouting:
        nginx: {{stableIngress: svc-{i}}}
      steps:
        - setWeight: 10
        - pause: {{duration: 2m}}
        - analysis:
            templates: [{{templateName: slo-{i}}}]
            args: [{{name: canary-hash, valueFrom: {{podTemplateHashValue: Latest}}}}]
        - setWeight: 50
        - pause: {{duration: 5m}}
        - setWeight: 100
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: slo-{i}
  namespace: team-{team}
spec:
  args: [{{name: canary-hash}}]
  metrics:
    - name: error-ratio
      interval: 30s
      count: 4
      failureLimit: 1
      successCondition: len(result) > 0 && result[0] < 0.02
      provider:
        prometheus:
          address: http://prometheus:9090
          query: |
            sum(rate(http_requests_total{{app="svc-{i}",
              rollouts_pod_template_hash="{{{{args.canary-hash}}}}",code=~"5.."}}[1m]))
            / sum(rate(http_requests_total{{app="svc-{i}",
              rollouts_pod_template_hash="{{{{args.canary-hash}}}}"}}[1m]))
---
apiVersion: v1
kind: Service
metadata:
  name: svc-{i}-stable
  namespace: team-{team}
spec:
  selector: {{app: svc-{i}}}
  ports: [{{name: http, port: 80, targetPort: http}}]
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: svc-{i}
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: team-{team}
  source:
    repoURL: https://git.example.com/infra.git
    targetRevision: HEAD
    path: apps/svc-{i}
  destination: {{server: "https://kubernetes.default.svc", namespace: team-{team}}}
  syncPolicy:
    automated: {{prune: true, selfHeal: true}}
    syncOptions: [ApplyOutOfSyncOnly=true]
    retry: {{limit: 5, backoff: {{duration: 10s, factor: 2, maxDuration: 3m}}}}
  ignoreDifferences:
    - {{group: argoproj.io, kind: Rollout, jsonPointers: [/spec/replicas]}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: svc-{i}-config
  namespace: team-{team}
data:
  settings.json: '{{"featureFlags": {{"a": true, "b": false}}, "timeoutMs": {i}}}'
  region: eu-west-1
---
"""


def generate(target: int = TARGET_BYTES) -> str:
    parts: list[str] = []
    size = i = 0
    while size < target:
        chunk = ROLLOUT.format(i=i, team=i % 7, replicas=2 + i % 5)
        parts.append(chunk)
        size += len(chunk)
        i += 1
    return "".join(parts)


def best_ms(actions: dict[str, Callable[[], Any]]) -> dict[str, float]:
    """Best time of each action over ROUNDS, interleaved so load changes hit all alike."""
    best = {name: float("inf") for name in actions}
    for _ in range(ROUNDS):
        for name, action in actions.items():
            start = time.perf_counter()
            action()
            best[name] = min(best[name], (time.perf_counter() - start) * 1000)
    return best


def _pyyaml_only(action: Callable[[], Any]) -> Any:
    yamlrust.use(False)
    try:
        return action()
    finally:
        yamlrust.use(True)


def main() -> None:
    text = generate()
    # Measured before any result is kept alive: objects kept across rounds slow every later
    # garbage collection, which would distort the ratios.
    from yaml_rs import loads

    times = best_ms(
        {
            "baseline": lambda: list(yaml.load_all(text, Loader=yaml.CSafeLoader)),
            "yaml_rs": lambda: loads(text),
            "load": lambda: load_documents(text, "bench.yaml"),
            "load_pyyaml": lambda: _pyyaml_only(lambda: load_documents(text, "bench.yaml")),
            "full": lambda: validate_documents(load_documents(text, "bench.yaml").documents),
        }
    )
    baseline, full = times["baseline"], times["full"]

    loaded = load_documents(text, "bench.yaml")
    assert not loaded.diagnostics, loaded.diagnostics[:3]
    problems = validate_documents(loaded.documents)
    assert not problems, [str(p) for p in problems[:3]]
    docs = len(loaded.documents)
    validate_only = best_ms({"validate": lambda: validate_documents(loaded.documents)})["validate"]

    print(f"input: {len(text) / 1e6:.2f} MB, {docs} documents; best of {ROUNDS} rounds")
    print(f"{'CSafeLoader load_all (baseline)':36s} {baseline:8.1f} ms   1.00x")
    for label, name in (("yaml_rs loads alone", "yaml_rs"), ("load_documents", "load")):
        print(f"{label:36s} {times[name]:8.1f} ms   {times[name] / baseline:.2f}x")
    pyyaml_only = times["load_pyyaml"]
    print(
        f"{'load_documents, PyYAML only':36s} {pyyaml_only:8.1f} ms   {pyyaml_only / baseline:.2f}x"
    )
    print(f"{'load_documents + validate':36s} {full:8.1f} ms   {full / baseline:.2f}x")
    per_doc = validate_only * 1000 / docs
    print(
        f"{'validate only (already loaded)':36s} {validate_only:8.1f} ms   "
        f"{validate_only / baseline:.2f}x  ({per_doc:.0f} µs/document)"
    )


if __name__ == "__main__":
    main()
