"""`argocd.argoproj.io/compare-options` items are read exactly as Argo CD matches them.

Before: the whole annotation was named as unread; `IgnoreExtraneous` did nothing, and a
typo (`IgnoreExtraneous=true`, which Argo CD does not match either) passed validation.
"""

from __future__ import annotations

import pytest

from headway.model.argocd_annotations import COMPARE_OPTIONS_ANNOTATION, ignores_extraneous
from headway.model.diagnostics import Severity
from headway.model.validate import validate_text

OBJECT = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: generated
  annotations:
    argocd.argoproj.io/compare-options: {value}
data: {{a: b}}
"""


@pytest.mark.parametrize(
    "value",
    ["IgnoreExtraneous", "ServerSideDiff=false", "IncludeMutationWebhook=true",
     "IgnoreExtraneous, IncludeMutationWebhook=false"],
)  # fmt: skip
def test_items_headway_reads_or_already_does_validate_cleanly(value: str) -> None:
    assert validate_text(OBJECT.format(value=value), "cm.yaml").diagnostics == []


@pytest.mark.parametrize("item", ["IgnoreExtraneous=true", "IgnoreExtranous", "ServerSideDiff"])
def test_an_item_argo_cd_would_not_match_is_an_error(item: str) -> None:
    report = validate_text(OBJECT.format(value=f"IgnoreExtraneous,{item}"), "cm.yaml")
    (diagnostic,) = report.diagnostics
    assert (diagnostic.line, diagnostic.severity) == (6, Severity.ERROR)
    assert diagnostic.message.startswith(f'"{item}" is not one of: IgnoreExtraneous, ')


@pytest.mark.parametrize(
    ("value", "ignored"),
    [("IgnoreExtraneous", True), (" Prune=false , IgnoreExtraneous ", True),
     ("IgnoreExtraneous=true", False), ("ignoreextraneous", False), ("", False)],
)  # fmt: skip
def test_ignore_extraneous_is_the_exact_item(value: str, ignored: bool) -> None:
    assert ignores_extraneous({"annotations": {COMPARE_OPTIONS_ANNOTATION: value}}) is ignored
