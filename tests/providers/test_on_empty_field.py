"""`onEmpty` is a metric field `headway validate` knows: its three values, and a typo rejected."""

from __future__ import annotations

from headway.model.analysis import parse_analysis_template
from headway.model.yamlload import load_documents

TEMPLATE = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: t}
spec:
  metrics:
  - name: m
    onEmpty: %s
    provider: {prometheus: {address: "http://p:9090", query: up}}
"""


def test_on_empty_values_are_read_and_a_typo_names_the_field() -> None:
    for value in ("Failed", "Inconclusive", "Evaluate"):
        (document,) = load_documents(TEMPLATE % value, "t.yaml").documents
        template, diagnostics = parse_analysis_template(document)
        assert template is not None and not diagnostics
        assert template.spec.metrics[0].on_empty == value
    (document,) = load_documents(TEMPLATE % "Skip", "t.yaml").documents
    template, diagnostics = parse_analysis_template(document)
    assert template is None
    assert [str(d) for d in diagnostics] == [
        't.yaml:7: AnalysisTemplate/t: spec.metrics[0].onEmpty: string "Skip" is not one of: '
        "Failed, Inconclusive, Evaluate"
    ]
