"""`MetricProvider.kind` is the first field `set_fields` finds, for every combination of set
fields (the shortcut stops at the first field set instead of listing them all)."""

from __future__ import annotations

import dataclasses
import itertools

from headway.model import schema as s
from headway.model.analysis_providers import PROVIDER_FIELDS, MetricProvider


def test_the_kind_is_the_first_set_field_for_every_combination() -> None:
    attributes = [s.snake_case(name) for name in PROVIDER_FIELDS]
    assert [f.name for f in dataclasses.fields(MetricProvider)] == attributes
    for chosen in itertools.product((False, True), repeat=len(attributes)):
        values = {
            name: ({"x": 1} if on else None) for name, on in zip(attributes, chosen, strict=True)
        }
        provider = MetricProvider(**values)  # type: ignore[arg-type]
        assert provider.kind == next(iter(s.set_fields(provider, PROVIDER_FIELDS)), "")
