"""`validate` on generated manifests of every modelled kind: a view or an error, never a
traceback. The documents come from the model's own field tables (see `shapes`)."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz.shapes import SPECS, argo_manifest
from headway.model.diagnostics import Severity
from headway.model.manifests import parse_manifest
from headway.model.validate import validate_text
from headway.model.yamlload import Document


def _parsed(obj: dict[str, Any]) -> None:
    view, diagnostics = parse_manifest(Document(obj, "m.yaml", 0, 1))
    if view is None:
        assert any(d.severity is Severity.ERROR for d in diagnostics), diagnostics
    for diagnostic in diagnostics:
        assert diagnostic.message and "Traceback" not in diagnostic.message


@settings(max_examples=60)
@given(kind=st.sampled_from(sorted(SPECS)), data=st.data())
def test_each_kind_parses_to_a_view_or_an_error(kind: str, data: st.DataObject) -> None:
    _parsed(data.draw(argo_manifest(kind)))


@settings(max_examples=60)
@given(manifests=st.lists(argo_manifest(), min_size=1, max_size=3))
def test_validate_reads_the_yaml_of_generated_manifests(manifests: list[dict[str, Any]]) -> None:
    text = yaml.safe_dump_all(manifests, sort_keys=False)
    report = validate_text(text, "m.yaml")
    assert report.objects == len(manifests)
