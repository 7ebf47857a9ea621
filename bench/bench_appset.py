"""ApplicationSet generation and decision: what one controller step costs per Application.

    .venv/bin/python bench/bench_appset.py

Generates 10, 100 and 1000 Applications from a list (goTemplate with Sprig calls, and
fasttemplate) and from a matrix of git directories and a list, then decides the writes
against the same number of live Applications (nothing to change: the steady state). The
yardstick is `json.dumps` of the generated Applications, which the store pays to write them.
"""

from __future__ import annotations

import json
from typing import Any

from _timing import per_call_us
from headway.appset.generate import generate
from headway.appset.inputs import StaticInputs
from headway.appset.plan import decide
from headway.kubetime import parse_time

REPO = "https://git.example/fleet.git"
NOW = parse_time("2026-01-02T03:04:05Z")


def _template(go: bool) -> dict[str, Any]:
    name = "{{.env}}-{{.team | normalize}}" if go else "{{env}}-{{team}}"
    namespace = "{{.team | lower | trunc 20}}" if go else "{{team}}"
    return {
        "metadata": {"name": name, "labels": {"team": "{{.team}}" if go else "{{team}}"}},
        "spec": {
            "project": "default",
            "source": {"repoURL": REPO, "targetRevision": "HEAD", "path": "apps/x"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace},
        },
    }


def _list_set(count: int, go: bool) -> dict[str, Any]:
    elements = [{"env": f"e{i % 10}", "team": f"Team_{i}"} for i in range(count)]
    spec: dict[str, Any] = {
        "generators": [{"list": {"elements": elements}}],
        "template": _template(go),
    }
    if go:
        spec.update(goTemplate=True, goTemplateOptions=["missingkey=error"])
    return {"metadata": {"name": "fleet", "namespace": "argocd", "uid": "u"}, "spec": spec}


def _matrix_set(count: int) -> tuple[dict[str, Any], StaticInputs]:
    directories = count // 10
    files = {f"apps/svc-{i}/k.yaml": b"" for i in range(directories)}
    matrix = {
        "matrix": {
            "generators": [
                {"git": {"repoURL": REPO, "directories": [{"path": "apps/*"}]}},
                {"list": {"elements": [{"env": f"e{i}"} for i in range(10)]}},
            ]
        }
    }
    template = _template(True)
    template["metadata"]["name"] = "{{.path.basename}}-{{.env}}"
    template["metadata"]["labels"] = {"team": "{{.path.basename}}"}
    template["spec"]["destination"]["namespace"] = "{{.path.basename}}"
    spec = {
        "goTemplate": True,
        "goTemplateOptions": ["missingkey=error"],
        "generators": [matrix],
        "template": template,
    }
    return {
        "metadata": {"name": "fleet", "namespace": "argocd", "uid": "u"},
        "spec": spec,
    }, StaticInputs(repositories={REPO: files})


def _live(appset: dict[str, Any], inputs: StaticInputs) -> list[dict[str, Any]]:
    generation = generate(appset, inputs)
    first = decide(appset, generation, [], invalid={}, now=NOW)
    return [{**c, "metadata": {**c["metadata"], "resourceVersion": "1"}} for c in first.creates]


def main() -> None:
    empty = StaticInputs()
    columns = f"{'generate µs/app':>15}  {'decide µs/app':>13}  {'json.dumps µs/app':>17}"
    print(f"{'apps':>5}  {'case':<16} {columns}")
    for count in (10, 100, 1000):
        cases = [
            ("list goTemplate", _list_set(count, True), empty),
            ("list fasttemplate", _list_set(count, False), empty),
            ("matrix git×list", *_matrix_set(count)),
        ]
        for label, appset, inputs in cases:
            generation = generate(appset, inputs)
            assert generation.error is None and len(generation.apps) == count, generation.error
            live = _live(appset, inputs)
            budget = 0.5 if count < 1000 else 2.0
            gen_us = per_call_us(lambda a=appset, i=inputs: generate(a, i), budget) / count
            dec_us = (
                per_call_us(
                    lambda a=appset, g=generation, lv=live: decide(a, g, lv, invalid={}, now=NOW),
                    budget,
                )
                / count
            )
            dump_us = (
                per_call_us(lambda g=generation: json.dumps([x.manifest for x in g.apps]), budget)
                / count
            )
            print(f"{count:>5}  {label:<16} {gen_us:>15.1f}  {dec_us:>13.1f}  {dump_us:>17.1f}")


if __name__ == "__main__":
    main()
