"""Kubernetes quantities parse to exact decimals and compare by value."""

from __future__ import annotations

from decimal import Decimal

import pytest

from headway.model.quantities import (
    QuantityError,
    parse_quantity,
    quantities_equal,
    quantity_key,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Decimal("0.5")),
        ("1", Decimal(1)),
        ("1Gi", Decimal(1024**3)),
        ("1.5Ki", Decimal(1536)),
        ("1e3", Decimal(1000)),
        ("1E-2", Decimal("0.01")),
        ("2k", Decimal(2000)),
        ("128Mi", Decimal(128 * 1024**2)),
        ("100n", Decimal("0.0000001")),
        ("-1", Decimal(-1)),
        (".5", Decimal("0.5")),
        (2, Decimal(2)),
        (0.25, Decimal("0.25")),
    ],
)
def test_parse(text: object, value: Decimal) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["1GB", "abc", "1.2.3", "", "Gi", "1 Gi", True, None])
def test_rejects(text: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        ("1000m", "1", True),
        ("1Gi", "1024Mi", True),
        ("1G", "1Gi", False),
        ("1e3", "1k", True),
        (2, "2000m", True),
        ("0.1", "100m", True),
        ("nonsense", "nonsense", True),
        ("nonsense", "1", False),
    ],
)
def test_canonical_compare(left: object, right: object, equal: bool) -> None:
    assert quantities_equal(left, right) is equal


def test_key_is_equal_for_every_spelling() -> None:
    assert quantity_key("1000m") == quantity_key("1") == quantity_key("1e0")
    assert len({quantity_key("1000m"), quantity_key("1")}) == 1
