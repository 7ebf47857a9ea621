"""Validation of ConfigMap and Secret payloads, as the API server decodes and validates them.

Purely computational; `objects.validate_object` calls it for core (`v1`) ConfigMaps and
Secrets. The API server reads ConfigMap `data` and Secret `stringData` as maps of strings,
and ConfigMap `binaryData` and Secret `data` as maps of bytes (base64 text in JSON/YAML);
any other value fails to decode, so the write is refused. Keys must be valid config keys,
and a ConfigMap key may not appear in both `data` and `binaryData`.

Stricter than the API server on one point (docs/compatibility.md): a null value is refused,
where Kubernetes silently stores an empty value.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from headway.cluster.errors import Invalid
from headway.model.schema import describe

__all__ = ["validate_config_data"]

_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+")
_MAX_KEY_LENGTH = 253
# (field, base64?) per kind: what each payload map holds.
_PAYLOADS: dict[str, tuple[tuple[str, bool], ...]] = {
    "ConfigMap": (("data", False), ("binaryData", True)),
    "Secret": (("data", True), ("stringData", False)),
}


def validate_config_data(obj: Mapping[str, Any], *, label: str) -> None:
    """Raise `Invalid` naming the object and field for a malformed ConfigMap/Secret payload."""
    if obj.get("apiVersion") != "v1" or obj.get("kind") not in _PAYLOADS:
        return
    keys: dict[str, str] = {}
    for field, encoded in _PAYLOADS[str(obj["kind"])]:
        values = obj.get(field)
        if values is None:
            continue
        if not isinstance(values, Mapping):
            raise Invalid(f"{label}: {field}: must be a mapping of strings, got {describe(values)}")
        for key, value in values.items():
            where = f"{label}: {field}[{key!r}]"
            _check_key(key, where)
            _check_value(value, where, encoded=encoded)
            if obj["kind"] == "ConfigMap" and key in keys:
                raise Invalid(f"{where}: the key is also in {keys[key]}; a key may be in only one")
            keys[key] = field


def _check_key(key: object, where: str) -> None:
    if not isinstance(key, str):
        raise Invalid(f"{where}: a key must be a string, got {describe(key)}")
    if len(key) > _MAX_KEY_LENGTH or not _CONFIG_KEY.fullmatch(key):
        raise Invalid(f"{where}: a key is 1-{_MAX_KEY_LENGTH} letters, digits, '-', '_' or '.'")
    if key in (".", "..") or key.startswith(".."):
        raise Invalid(f"{where}: a key may not be '.' or '..' or start with '..'")


def _check_value(value: object, where: str, *, encoded: bool) -> None:
    if not isinstance(value, str):
        wanted = "base64 text" if encoded else "a string"
        raise Invalid(f"{where}: value must be {wanted}, got {describe(value)}")
    if not encoded:
        return
    try:
        # As Go's standard base64 decoder: padding required, line breaks skipped.
        base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError) as err:
        raise Invalid(f"{where}: value is not valid base64 ({err})") from None
