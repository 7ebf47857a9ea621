"""The Sprig functions ApplicationSet templates may call, on top of Go's built-ins. Pure.

Argo CD gives ApplicationSet templates all of Sprig but `env`, `expandenv` and
`getHostByName`, plus `normalize`, `slugify`, `toYaml`, `fromYaml` and `fromYamlArray`.
Headway implements the subset that real sets use (docs/applicationset.md lists it); any other
function is a template error naming it, which stops generation like every template error.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from headway.appset.paths import sanitize_name, slugify
from headway.model.yamlload import load_one
from headway.notify.gotemplate import NO_VALUE, TemplateError, TemplateFunction, text_of, truth

__all__ = ["SPRIG_FUNCTIONS"]


def _fixed(count: int, fn: Callable[..., Any]) -> TemplateFunction:
    def checked(ev: Any, args: list[Any]) -> Any:
        if len(args) != count:
            raise ev.fail(f"wrong number of arguments: want {count}, got {len(args)}")
        return fn(*args)

    return checked


def _text(fn: Callable[[str], Any]) -> TemplateFunction:
    return _fixed(1, lambda value: fn(text_of(value)))


def _required(ev: Any, args: list[Any]) -> Any:
    if len(args) != 2:
        raise ev.fail("required needs a message and a value")
    if not truth(args[1]) and args[1] != 0:
        raise ev.fail(text_of(args[0]))
    return args[1]


def _coalesce(ev: Any, args: list[Any]) -> Any:
    return next((a for a in args if truth(a)), None)


def _dict(ev: Any, args: list[Any]) -> dict[str, Any]:
    if len(args) % 2:
        raise ev.fail("dict needs pairs of key and value")
    return {text_of(args[i]): args[i + 1] for i in range(0, len(args), 2)}


def _get(mapping: Any, key: Any) -> Any:
    return mapping.get(text_of(key), "") if isinstance(mapping, Mapping) else ""


def _dig(ev: Any, args: list[Any]) -> Any:
    """`dig "a" "b" DEFAULT MAP`: MAP.a.b, or DEFAULT when a key is missing on the way (Sprig
    reads the last argument as the map and the one before as the default)."""
    if len(args) < 3:
        raise ev.fail("dig needs at least one key, a default and a map")
    *keys, default, value = args
    for key in keys:
        if not isinstance(value, Mapping):
            raise ev.fail(f"dig: {text_of(key)!r} is looked up in something that is not a map")
        if text_of(key) not in value:
            return default
        value = value[text_of(key)]
    return value


def _trunc(length: Any, text: Any) -> str:
    value, count = text_of(text), int(length)
    return value[:count] if count >= 0 else value[count:]


def _indent(width: Any, text: Any) -> str:
    pad = " " * int(width)
    return pad + text_of(text).replace("\n", "\n" + pad)


def _to_yaml(value: Any) -> str:
    plain = None if value is NO_VALUE else value
    return yaml.safe_dump(plain, default_flow_style=False, sort_keys=True).rstrip("\n")


def _from_yaml(text: Any) -> Any:
    try:
        loaded = load_one(text_of(text))
    except yaml.YAMLError as err:
        raise TemplateError(f"fromYaml: {err}") from None
    return loaded if isinstance(loaded, dict) else {}


def _from_yaml_array(text: Any) -> Any:
    try:
        loaded = load_one(text_of(text))
    except yaml.YAMLError as err:
        raise TemplateError(f"fromYamlArray: {err}") from None
    return loaded if isinstance(loaded, list) else []


def _b64dec(text: str) -> str:
    return base64.b64decode(text).decode("utf-8", errors="replace")


SPRIG_FUNCTIONS: Mapping[str, TemplateFunction] = {
    "normalize": _text(sanitize_name),
    "slugify": lambda ev, a: slugify(text_of(a[-1]), int(a[0]) if len(a) > 1 else 50),
    "toYaml": _fixed(1, _to_yaml),
    "fromYaml": _fixed(1, _from_yaml),
    "fromYamlArray": _fixed(1, _from_yaml_array),
    "fromJson": _fixed(1, lambda t: json.loads(text_of(t))),
    "toString": _text(str),
    "toPrettyJson": _fixed(1, lambda v: json.dumps(v, indent=2, default=str)),
    "title": _text(lambda t: " ".join(w[:1].upper() + w[1:] for w in t.split(" "))),
    "squote": _text(lambda t: f"'{t}'"),
    "replace": _fixed(3, lambda old, new, t: text_of(t).replace(text_of(old), text_of(new))),
    "trimPrefix": _fixed(2, lambda p, t: text_of(t).removeprefix(text_of(p))),
    "trimSuffix": _fixed(2, lambda p, t: text_of(t).removesuffix(text_of(p))),
    "trunc": _fixed(2, _trunc),
    "indent": _fixed(2, _indent),
    "nindent": _fixed(2, lambda w, t: "\n" + _indent(w, t)),
    "splitList": _fixed(2, lambda sep, t: text_of(t).split(text_of(sep))),
    "join": _fixed(2, lambda sep, items: text_of(sep).join(text_of(i) for i in items or [])),
    "list": lambda ev, a: list(a),
    "dict": _dict,
    "get": _fixed(2, _get),
    "dig": _dig,
    "hasKey": _fixed(2, lambda m, k: isinstance(m, Mapping) and text_of(k) in m),
    "empty": _fixed(1, lambda v: not truth(v)),
    "coalesce": _coalesce,
    "ternary": _fixed(3, lambda yes, no, test: yes if truth(test) else no),
    "required": _required,
    "cat": lambda ev, a: " ".join(text_of(x) for x in a if x is not None),
    "int": _fixed(1, lambda v: int(float(text_of(v) or 0))),
    "b64enc": _text(lambda t: base64.b64encode(t.encode()).decode()),
    "b64dec": _text(_b64dec),
    "sha256sum": _text(lambda t: hashlib.sha256(t.encode()).hexdigest()),
}
