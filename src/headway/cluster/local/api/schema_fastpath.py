"""A schema compiled to nested Python checks that answer one question fast: is this object
certainly valid?

Most writes are valid (the runtime's controllers write most of them), and a general JSON
Schema validator walks a Pod in about a millisecond. The compiled check knows only the
keywords Kubernetes' schemas use for types and fields (`type`, `properties`,
`additionalProperties`, `items`, `enum`, `oneOf`/`anyOf`, `$ref`); any other keyword makes
it answer "not sure", and so does any failure. "Not sure" sends the object to the full
validator, which finds and words the problems: the fast path can only skip work, never
accept what the full validator would refuse. Purely computational.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Check", "compile_check"]

Check = Callable[[Any], bool]
# Keywords that do not constrain a value the way the store checks it: annotations, the
# schema's own identity, Kubernetes' extensions, and `required`, which the store does not
# check (an apply body may leave required fields to another manager); `format` is only an
# annotation for the full validator too.
_INERT = frozenset({
    "description", "$schema", "$id", "title", "default", "example", "format", "required",
    "nullable", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string",
})
_HANDLED = frozenset({
    "type", "properties", "additionalProperties", "items", "enum", "oneOf", "anyOf", "$ref",
})
_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def _unsure(_value: Any) -> bool:
    return False


def _always(_value: Any) -> bool:
    return True


def compile_check(schema: Any, definitions: Mapping[str, Any]) -> Check:
    """`schema` as a check; `$ref`s name entries of `definitions` by their last segment."""
    return _Compiler(definitions).compile(schema)


class _Compiler:
    def __init__(self, definitions: Mapping[str, Any]) -> None:
        self._definitions = definitions
        self._compiled: dict[str, Check] = {}

    def compile(self, schema: Any) -> Check:
        if schema is True or schema == {}:
            return _always
        if not isinstance(schema, dict):
            return _unsure
        if any(k not in _HANDLED and k not in _INERT and not k.startswith("x-") for k in schema):
            return _unsure
        checks = [c for c in (self._type(schema), self._enum(schema), self._ref(schema),
                              self._alternatives(schema), self._fields(schema),
                              self._items(schema)) if c is not None]
        if not checks:
            return _always
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:
            first, second = checks
            return lambda v: first(v) and second(v)
        return lambda v: all(check(v) for check in checks)

    def _type(self, schema: Mapping[str, Any]) -> Check | None:
        declared = schema.get("type")
        if declared is None:
            return None
        names = [declared] if isinstance(declared, str) else list(declared)
        if any(n not in _TYPES for n in names):
            return _unsure
        tests = [_TYPES[n] for n in names]
        return tests[0] if len(tests) == 1 else lambda v: any(t(v) for t in tests)

    def _enum(self, schema: Mapping[str, Any]) -> Check | None:
        if "enum" not in schema:
            return None
        allowed = list(schema["enum"])
        # `True == 1` in Python: compare the type too, as JSON does.
        return lambda v: any(v == a and type(v) is type(a) for a in allowed)

    def _ref(self, schema: Mapping[str, Any]) -> Check | None:
        ref = schema.get("$ref")
        if ref is None:
            return None
        name = str(ref).rsplit("/", 1)[-1]
        if name not in self._definitions:
            return _unsure
        if name not in self._compiled:
            self._compiled[name] = _unsure  # reserved while compiling: schemas may recurse
            self._compiled[name] = self.compile(self._definitions[name])
        table = self._compiled

        def follow(v: Any) -> bool:  # looked up per call: the entry may still be compiling
            return table[name](v)

        return follow

    def _alternatives(self, schema: Mapping[str, Any]) -> Check | None:
        if "oneOf" in schema:  # exactly one must match
            options = [self.compile(s) for s in schema["oneOf"]]
            return lambda v: sum(1 for o in options if o(v)) == 1
        if "anyOf" in schema:
            options = [self.compile(s) for s in schema["anyOf"]]
            return lambda v: any(o(v) for o in options)
        return None

    def _fields(self, schema: Mapping[str, Any]) -> Check | None:
        if "properties" not in schema and "additionalProperties" not in schema:
            return None
        declared = {k: self.compile(s) for k, s in (schema.get("properties") or {}).items()}
        extra = schema.get("additionalProperties", True)
        others = None if extra is False else self.compile(extra)

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True  # `type` says whether a mapping was due
            for key, value in v.items():
                field = declared.get(key, others)
                if field is None or not field(value):
                    return False
            return True

        return check

    def _items(self, schema: Mapping[str, Any]) -> Check | None:
        if "items" not in schema:
            return None
        item = self.compile(schema["items"])
        return lambda v: not isinstance(v, list) or all(item(i) for i in v)
