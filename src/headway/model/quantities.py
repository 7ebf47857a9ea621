"""Kubernetes resource quantities (`500m`, `1Gi`, `1e3`) as exact decimals.

The API server rewrites quantities into a canonical form (`1000m` becomes `1`, `1024Mi`
becomes `1Gi`), so a diff that compares the strings reports changes nobody made. Parsing both
sides to a `Decimal` and comparing the numbers is what the diff engine needs.

Grammar (from the Kubernetes `resource.Quantity` type): an optional sign, a decimal number,
then either a binary suffix (`Ki Mi Gi Ti Pi Ei`), a decimal suffix (`n u m k M G T P E`, or
none), or a decimal exponent (`e3`, `E-2`).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = ["QuantityError", "parse_quantity", "quantities_equal", "quantity_key"]

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:\d+\.?\d*|\.\d+))"
    r"(?:(?P<exponent>[eE][+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)"
)


class QuantityError(ValueError):
    """A value that is not a Kubernetes quantity."""


def parse_quantity(value: object) -> Decimal:
    """The exact value of a quantity: `"500m"` -> `Decimal("0.5")`, `"1Ki"` -> `1024`.

    Integers and floats (YAML `cpu: 2`) are accepted as plain numbers.
    """
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    if not isinstance(value, str):
        raise QuantityError(f"{value!r} is not a quantity")
    match = _QUANTITY.fullmatch(value.strip())
    if match is None:
        raise QuantityError(f'"{value}" is not a quantity (e.g. "500m", "1Gi", "2")')
    try:
        number = Decimal(match["number"])
    except InvalidOperation as err:  # pragma: no cover - the regex admits only decimals
        raise QuantityError(f'"{value}" is not a quantity') from err
    if match["exponent"]:
        return number.scaleb(int(match["exponent"][1:]))
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * (Decimal(1024) ** _BINARY[suffix])
    return number.scaleb(_DECIMAL[suffix])


def quantity_key(value: object) -> Decimal:
    """A comparison key equal for every spelling of the same amount (`1` and `1000m`)."""
    return parse_quantity(value).normalize()


def quantities_equal(left: object, right: object) -> bool:
    """Whether two quantities denote the same amount; unparsable values compare as text."""
    try:
        return parse_quantity(left) == parse_quantity(right)
    except QuantityError:
        return str(left) == str(right)
