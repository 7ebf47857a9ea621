"""`annotation` reads one prefixed annotation as `annotations_of(...).get(key)` would, without
copying every annotation (the rules ask for the sync wave of every object)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
import yaml

from headway.check.manifest import (
    WAVE_ANNOTATION,
    annotation,
    annotations_of,
    resource_sync_options,
    sync_wave,
)

WAVE = WAVE_ANNOTATION
SHAPES: list[Any] = [
    None,
    [],
    "text",
    {},
    {"metadata": None},
    {"metadata": []},
    {"metadata": {"annotations": None}},
    {"metadata": {"annotations": ["a", "b"]}},
    {"metadata": {"annotations": {}}},
    {"metadata": {"annotations": {WAVE: "2"}}},
    {"metadata": {"annotations": {WAVE: 3}}},
    {"metadata": {"annotations": {WAVE: None}}},
    {"metadata": {"annotations": {WAVE: ""}}},
    {"metadata": {"annotations": {WAVE: " -1 "}}},
    {"metadata": {"annotations": {WAVE: "one"}}},
    {"metadata": {"annotations": {WAVE: "1_0"}}},
    {"metadata": {"annotations": {WAVE: True}}},
    {"metadata": {"annotations": {WAVE: 1.5}}},
    {"metadata": {"annotations": {1: "x", False: "y", None: "z", 2.5: "w"}}},
    {"metadata": {"annotations": {datetime.date(2024, 1, 2): "d", "other/key": "v"}}},
]
# Every key YAML may read as something other than a string, as a document would hold it.
YAML_KEYS = yaml.safe_load("{1: a, 0x1f: b, 1.5: c, true: d, null: e, 2024-01-02: f, ~: g}")


@pytest.mark.parametrize("obj", [*SHAPES, {"metadata": {"annotations": YAML_KEYS}}])
@pytest.mark.parametrize("key", [WAVE, "argocd.argoproj.io/sync-options", "a/b"])
def test_one_annotation_reads_as_the_copied_annotations(obj: Any, key: str) -> None:
    assert annotation(obj, key) == annotations_of(obj).get(key)


@pytest.mark.parametrize("obj", SHAPES)
def test_the_wave_and_sync_options_read_as_before(obj: Any) -> None:
    """The readers built on it, against the way they read before (through the copy)."""
    assert sync_wave(obj) == _int_or_zero(annotations_of(obj).get(WAVE, "0").strip())
    options = annotations_of(obj).get("argocd.argoproj.io/sync-options", "")
    assert resource_sync_options(obj) == {p.strip() for p in options.split(",") if p.strip()}


def _int_or_zero(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0
