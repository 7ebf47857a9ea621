"""Just enough Go to read test tables: tokens, and literal values built from them.

Upstream condition tests are Go code, not data. This reads the literal part of them — numbers,
strings, `true`/`false`/`nil`, composite literals (`[]float64{1, 2}`, `map[string]any{...}`,
`[]struct{...}{{...}}`, `v1alpha1.Metric{SuccessCondition: "..."}`), the conversions
`float64(x)`/`int64(x)`, `math.NaN()`/`math.Inf(n)`, and names bound earlier — and raises
`Unreadable` for anything else, so a case the runner cannot read is counted, never guessed.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "Cursor",
    "GoType",
    "Opaque",
    "Ref",
    "Token",
    "Unreadable",
    "block_end",
    "contains_opaque",
    "functions",
    "parse_lenient",
    "parse_value",
    "read_tokens",
    "resolve",
    "skip_element",
    "tokenize",
]

_TOKEN = re.compile(
    r"""(?P<skip>\s+|//[^\n]*|/\*.*?\*/)
      |(?P<raw>`[^`]*`)
      |(?P<string>"(?:[^"\\\n]|\\.)*")
      |(?P<rune>'(?:[^'\\\n]|\\.)+')
      |(?P<number>0[xX][0-9a-fA-F_]+|(?:[0-9][0-9_]*)?\.?[0-9][0-9_]*(?:[eE][+-]?[0-9]+)?)
      |(?P<name>[A-Za-z_][A-Za-z0-9_]*)
      |(?P<op>:=|\.\.\.|&&|\|\||==|!=|<=|>=|[-+*/%&|^!<>=(){}\[\],;:.])""",
    re.VERBOSE | re.DOTALL,
)
_FLOAT_TYPES = frozenset({"float64", "float32"})
_INT_TYPES = frozenset({"int", "int8", "int16", "int32", "int64", "uint", "uint32", "uint64"})


class Unreadable(Exception):
    """Go this reader does not understand; the message says what."""


@dataclass(frozen=True)
class Ref:
    """`&name`: a pointer to a variable, read when the case runs (Go's aliasing: assigning
    to the variable later changes what the pointer sees)."""

    name: str


@dataclass(frozen=True)
class Opaque:
    """A struct field whose value this reader could not read (`timePtr(...)`); kept so that
    the field counts as set, and refused wherever its value would matter."""

    reason: str


def resolve(value: Any, names: Mapping[str, Any], depth: int = 0) -> Any:
    """`value` with every `Ref` replaced by the variable's current value."""
    if depth > 50:
        raise Unreadable("pointers nest too deeply")
    if isinstance(value, Ref):
        if value.name not in names:
            raise Unreadable(f"unknown name {value.name}")
        return resolve(names[value.name], names, depth + 1)
    if isinstance(value, list):
        return [resolve(item, names, depth + 1) for item in value]
    if isinstance(value, dict):
        return {key: resolve(item, names, depth + 1) for key, item in value.items()}
    return value


def contains_opaque(value: Any) -> bool:
    if isinstance(value, Opaque):
        return True
    if isinstance(value, list):
        return any(contains_opaque(item) for item in value)
    if isinstance(value, dict):
        return any(contains_opaque(item) for item in value.values())
    return False


@dataclass(frozen=True)
class Token:
    kind: str  # raw, string, rune, number, name, op
    text: str


def tokenize(source: str) -> list[Token]:
    tokens: list[Token] = []
    position = 0
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None:
            raise Unreadable(f"unexpected character {source[position]!r}")
        kind = match.lastgroup or "skip"
        if kind != "skip":
            tokens.append(Token(kind, match.group()))
        position = match.end()
    return tokens


def read_tokens(path: Path) -> list[Token]:
    """The tokens of the Go file at `path`; `Unreadable` naming the file when it cannot be
    read or tokenized."""
    try:
        return tokenize(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, Unreadable) as err:
        raise Unreadable(f"{path}: {err}") from None


def block_end(tokens: list[Token], start: int) -> int:
    """The index just past the `}` closing the `{` at `start` (the end of the tokens when
    the braces never balance)."""
    depth = 0
    for index in range(start, len(tokens)):
        depth += {"{": 1, "}": -1}.get(tokens[index].text, 0)
        if depth == 0:
            return index + 1
    return len(tokens)


def functions(tokens: list[Token], *, prefix: str) -> Iterator[tuple[str, list[Token]]]:
    """Each top-level `func Name(...) {...}` whose name starts with `prefix`: its name and
    the tokens of its body (without the braces)."""
    index = 0
    while index < len(tokens) - 1:
        if tokens[index].text == "func" and tokens[index + 1].text.startswith(prefix):
            brace = next(i for i in range(index, len(tokens)) if tokens[i].text == "{")
            end = block_end(tokens, brace)
            yield tokens[index + 1].text, tokens[brace + 1 : end - 1]
            index = end
        else:
            index += 1


@dataclass(frozen=True)
class GoType:
    """A composite literal's type, as far as values need it."""

    kind: str  # "slice", "map", "struct", "named", "scalar"
    element: GoType | None = None
    fields: tuple[str, ...] = ()
    name: str = ""


class Cursor:
    """A position in a token list, with the small lookahead the readers need."""

    def __init__(self, tokens: list[Token], position: int = 0) -> None:
        self.tokens = tokens
        self.position = position

    def peek(self, ahead: int = 0) -> str:
        index = self.position + ahead
        return self.tokens[index].text if index < len(self.tokens) else ""

    def take(self) -> Token:
        if self.position >= len(self.tokens):
            raise Unreadable("unexpected end of the test")
        token = self.tokens[self.position]
        self.position += 1
        return token

    def expect(self, text: str) -> None:
        token = self.take()
        if token.text != text:
            raise Unreadable(f"expected {text!r}, found {token.text!r}")

    def qualified_name(self) -> str:
        parts = [self.take().text]
        while self.peek() == "." and self.peek(1)[:1].isalpha():
            self.take()
            parts.append(self.take().text)
        return ".".join(parts)


def parse_type(cursor: Cursor) -> GoType:
    if cursor.peek() == "[":
        cursor.expect("[")
        cursor.expect("]")
        return GoType("slice", parse_type(cursor))
    if cursor.peek() == "map":
        cursor.take()
        cursor.expect("[")
        parse_type(cursor)
        cursor.expect("]")
        return GoType("map", parse_type(cursor))
    if cursor.peek() == "*":
        cursor.take()
        return parse_type(cursor)
    if cursor.peek() == "struct":
        return _struct_type(cursor)
    if cursor.peek() == "interface":
        cursor.take()
        cursor.expect("{")
        cursor.expect("}")
        return GoType("scalar", name="any")
    name = cursor.qualified_name()
    kind = "scalar" if name in _FLOAT_TYPES | _INT_TYPES | {"any", "string", "bool"} else "named"
    return GoType(kind, name=name)


def _struct_type(cursor: Cursor) -> GoType:
    cursor.take()
    cursor.expect("{")
    fields: list[str] = []
    while cursor.peek() != "}":
        names = [cursor.take().text]
        while cursor.peek() == ",":
            cursor.take()
            names.append(cursor.take().text)
        parse_type(cursor)
        fields.extend(names)
        if cursor.peek() == ";":
            cursor.take()
    cursor.expect("}")
    return GoType("struct", fields=tuple(fields))


def _convert(value: Any, to: GoType | None) -> Any:
    """Untyped constants take the type of where they are put: `[]float64{1}` holds 1.0."""
    if to is None or to.kind != "scalar" or isinstance(value, bool):
        return value
    if to.name in _FLOAT_TYPES and isinstance(value, int | float):
        return float(value)
    if to.name in _INT_TYPES and isinstance(value, int | float):
        return int(value)
    return value


def parse_value(cursor: Cursor, names: Mapping[str, Any], to: GoType | None = None) -> Any:
    """One Go expression that is a literal value (see the module docstring)."""
    head = cursor.peek()
    token = cursor.tokens[cursor.position] if cursor.position < len(cursor.tokens) else None
    if token is None:
        raise Unreadable("unexpected end of the test")
    if token.kind in ("string", "raw", "number") or head == "-":
        return _convert(_scalar(cursor), to)
    if head == "&":
        cursor.take()
        following = cursor.peek(1)
        if cursor.peek()[:1].isalpha() and following not in ("{", "(", "."):
            return Ref(cursor.take().text)
        return parse_value(cursor, names, to)
    if head == "{":
        return _composite_body(cursor, to or GoType("scalar", name="any"), names)
    if head in ("[", "map", "struct"):
        literal_type = parse_type(cursor)
        return _composite_body(cursor, literal_type, names)
    if token.kind == "name":
        return _named(cursor, names, to)
    raise Unreadable(f"unexpected {head!r}")


def _scalar(cursor: Cursor) -> Any:
    sign = -1 if cursor.peek() == "-" else 1
    if sign < 0:
        cursor.take()
    token = cursor.take()
    if token.kind == "raw":
        return token.text[1:-1]
    if token.kind == "string":
        return ast.literal_eval(token.text)
    if token.kind != "number":
        raise Unreadable(f"expected a number after '-', found {token.text!r}")
    text = token.text.replace("_", "")
    number: int | float
    if text.lower().startswith("0x"):
        number = int(text, 16)
    elif any(c in text for c in ".eE"):
        number = float(text)
    else:
        number = int(text)
    return sign * number


def _named(cursor: Cursor, names: Mapping[str, Any], to: GoType | None) -> Any:
    name = cursor.qualified_name()
    if name in ("true", "false", "nil"):
        return {"true": True, "false": False, "nil": None}[name]
    if cursor.peek() == "(":
        return _call(cursor, name, names)
    if cursor.peek() == "{" and (name[:1].isupper() or "." in name):
        return _composite_body(cursor, GoType("named", name=name), names)
    root, _, path = name.partition(".")
    if root in names:
        value = names[root]
        for part in path.split(".") if path else []:
            if not isinstance(value, Mapping) or part not in value:
                raise Unreadable(f"{name}: no field {part}")
            value = value[part]
        return _convert(value, to)
    if name.startswith("v1alpha1.AnalysisPhase"):
        return name.removeprefix("v1alpha1.AnalysisPhase")
    raise Unreadable(f"unknown name {name}")


def _call(cursor: Cursor, function: str, names: Mapping[str, Any]) -> Any:
    cursor.expect("(")
    args: list[Any] = []
    while cursor.peek() != ")":
        args.append(parse_value(cursor, names))
        if cursor.peek() == ",":
            cursor.take()
    cursor.expect(")")
    if function in _FLOAT_TYPES and len(args) == 1:
        return float(args[0])
    if function in _INT_TYPES and len(args) == 1:
        return int(args[0])
    if function == "math.NaN" and not args:
        return math.nan
    if function == "math.Inf" and len(args) == 1:
        return -math.inf if args[0] < 0 else math.inf
    if function in ("intstrutil.FromInt", "intstr.FromInt", "ptr.To", "pointer.Int32"):
        return args[0]
    raise Unreadable(f"a call of {function}()")


def _composite_body(cursor: Cursor, literal_type: GoType, names: Mapping[str, Any]) -> Any:
    cursor.expect("{")
    positional: list[Any] = []
    keyed: dict[Any, Any] = {}
    element = literal_type.element if literal_type.kind in ("slice", "map") else None
    while cursor.peek() != "}":
        first = _element(cursor, names, element, keyed_struct=literal_type.kind != "map")
        if cursor.peek() == ":" and literal_type.kind == "named":
            cursor.take()
            keyed[first] = _field_value(cursor, names)
        elif cursor.peek() == ":":
            cursor.take()
            keyed[first] = parse_value(cursor, names, element)
        else:
            positional.append(first)
        if cursor.peek() == ",":
            cursor.take()
    cursor.expect("}")
    if literal_type.kind == "slice":
        return positional
    if literal_type.kind == "struct" and positional:
        return dict(zip(literal_type.fields, positional, strict=False))
    if keyed or literal_type.kind in ("map", "struct", "named"):
        return keyed
    return positional


def _field_value(cursor: Cursor, names: Mapping[str, Any]) -> Any:
    """A named struct's field: an `Opaque` stands in for a value that cannot be read."""
    start = cursor.position
    try:
        return parse_value(cursor, names)
    except Unreadable as err:
        cursor.position = start
        skip_element(cursor)
        return Opaque(str(err))


def _element(
    cursor: Cursor, names: Mapping[str, Any], element: GoType | None, *, keyed_struct: bool
) -> Any:
    """An element, or a struct field name when a `:` follows a bare name."""
    if keyed_struct and cursor.peek(1) == ":" and cursor.peek()[:1].isalpha():
        return cursor.take().text
    if element is not None and element.kind == "struct" and cursor.peek() == "{":
        return _composite_body(cursor, element, names)
    return parse_value(cursor, names, element)


def skip_element(cursor: Cursor) -> None:
    """Move past one element of a composite literal, to its `,` or closing `}`."""
    depth = 0
    while cursor.position < len(cursor.tokens):
        text = cursor.peek()
        if depth == 0 and text in (",", "}"):
            return
        depth += {"{": 1, "(": 1, "[": 1, "}": -1, ")": -1, "]": -1}.get(text, 0)
        cursor.take()


def parse_lenient(
    cursor: Cursor, names: Mapping[str, Any]
) -> tuple[list[Any] | dict[Any, Any], list[str]]:
    """A slice or map literal, element by element: what cannot be read is left out and
    reported (`key: problem` for a map), so one exotic row does not lose the whole table."""
    literal_type = parse_type(cursor)
    element = literal_type.element
    cursor.expect("{")
    items: list[Any] = []
    entries: dict[Any, Any] = {}
    problems: list[str] = []
    while cursor.peek() != "}":
        start = cursor.position
        key: Any = None
        try:
            if literal_type.kind == "map":
                key = parse_value(cursor, names)
                cursor.expect(":")
                entries[key] = parse_value(cursor, names, element)
            elif element is not None and element.kind == "struct":
                items.append(_composite_body(cursor, element, names))
            else:
                items.append(parse_value(cursor, names, element))
        except Unreadable as err:
            shown = " ".join(token.text for token in cursor.tokens[start : start + 8])
            problems.append(f"{key}: {err}" if key is not None else f"{shown} ...: {err}")
            cursor.position = start
            skip_element(cursor)
        if cursor.peek() == ",":
            cursor.take()
    cursor.expect("}")
    return (entries if literal_type.kind == "map" else items), problems
