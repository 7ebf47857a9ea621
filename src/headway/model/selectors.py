"""Kubernetes label selectors: parsing, validation and matching. Purely computational.

Three spellings lead to one `Selector`:

* a plain mapping of equalities (`{"app": "web"}`, a Service's `spec.selector`);
* the structured `LabelSelector` shape (`matchLabels` plus `matchExpressions` with the
  operators `In`, `NotIn`, `Exists`, `DoesNotExist`), as in a Deployment's `spec.selector`;
* the string form of `kubectl -l` (`a=b,c!=d,e in (x,y),f notin (z),!g,h`).

A selector is a conjunction of requirements. As in Kubernetes, `NotIn` and `!=` also match
objects that do not carry the key at all, and the empty selector matches everything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NoReturn

__all__ = [
    "Operator",
    "Requirement",
    "Selector",
    "SelectorError",
    "SelectorLike",
    "matches",
    "parse_selector",
    "selector_from_labels",
    "selector_from_object",
    "to_selector",
]

_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_MAX_NAME = 63
_MAX_PREFIX = 253


class SelectorError(ValueError):
    """A selector that cannot be parsed or is not valid; the message says where and why."""


class Operator(StrEnum):
    IN = "In"
    NOT_IN = "NotIn"
    EXISTS = "Exists"
    DOES_NOT_EXIST = "DoesNotExist"


@dataclass(frozen=True)
class Requirement:
    """One condition on one label key."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator is Operator.EXISTS:
            return present
        if self.operator is Operator.DOES_NOT_EXIST:
            return not present
        if self.operator is Operator.IN:
            return present and labels[self.key] in self.values
        return not present or labels[self.key] not in self.values

    def __str__(self) -> str:
        if self.operator is Operator.EXISTS:
            return self.key
        if self.operator is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        if len(self.values) == 1:
            sign = "=" if self.operator is Operator.IN else "!="
            return f"{self.key}{sign}{self.values[0]}"
        word = "in" if self.operator is Operator.IN else "notin"
        return f"{self.key} {word} ({','.join(self.values)})"


@dataclass(frozen=True)
class Selector:
    """A conjunction of requirements; no requirements means "everything"."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        present = labels or {}
        return all(r.matches(present) for r in self.requirements)

    @property
    def is_everything(self) -> bool:
        return not self.requirements

    def equalities(self) -> dict[str, str]:
        """The `key=value` requirements, which a store can use as an index."""
        return {
            r.key: r.values[0]
            for r in self.requirements
            if r.operator is Operator.IN and len(r.values) == 1
        }

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


SelectorLike = Selector | Mapping[str, Any] | str | None
"""Anything `to_selector` accepts."""


def validate_key(key: str, where: str) -> None:
    """Raise `SelectorError` unless `key` is a valid label key (`[prefix/]name`)."""
    prefix, slash, name = key.rpartition("/")
    if slash and (len(prefix) > _MAX_PREFIX or not _DNS_SUBDOMAIN.match(prefix)):
        raise SelectorError(f"{where}: invalid label key {key!r}: bad prefix {prefix!r}")
    if len(name) > _MAX_NAME or not _NAME.match(name):
        raise SelectorError(
            f"{where}: invalid label key {key!r}: a name is at most 63 characters, "
            "alphanumeric with '-', '_' or '.' inside"
        )


def validate_value(value: str, where: str) -> None:
    """Raise `SelectorError` unless `value` is a valid label value (may be empty)."""
    if value and (len(value) > _MAX_NAME or not _NAME.match(value)):
        raise SelectorError(
            f"{where}: invalid label value {value!r}: at most 63 characters, "
            "alphanumeric with '-', '_' or '.' inside"
        )


def make_requirement(
    key: str, operator: Operator, values: tuple[str, ...], *, where: str
) -> Requirement:
    """A validated requirement; `where` names the place for error messages."""
    validate_key(key, where)
    if operator in (Operator.IN, Operator.NOT_IN) and not values:
        raise SelectorError(f"{where}: operator {operator} needs at least one value")
    if operator in (Operator.EXISTS, Operator.DOES_NOT_EXIST) and values:
        raise SelectorError(f"{where}: operator {operator} takes no values")
    for value in values:
        validate_value(value, where)
    return Requirement(key, operator, tuple(sorted(set(values))))


def selector_from_labels(labels: Mapping[str, str]) -> Selector:
    """The selector `k1=v1,k2=v2,...` of a plain mapping (a Service's `spec.selector`)."""
    reqs = []
    for key, value in sorted(labels.items()):
        if not isinstance(value, str):
            raise SelectorError(f"selector[{key!r}]: value must be a string, got {value!r}")
        reqs.append(make_requirement(key, Operator.IN, (value,), where=f"selector[{key!r}]"))
    return Selector(tuple(reqs))


def selector_from_object(obj: Mapping[str, Any], *, path: str = "selector") -> Selector:
    """The selector of a structured `LabelSelector` (`matchLabels`, `matchExpressions`)."""
    match_labels = obj.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        raise SelectorError(f"{path}.matchLabels: must be a mapping of label to value")
    reqs = list(selector_from_labels(match_labels).requirements)
    expressions = obj.get("matchExpressions") or []
    if not isinstance(expressions, list):
        raise SelectorError(f"{path}.matchExpressions: must be a list")
    for index, expr in enumerate(expressions):
        reqs.append(_expression(expr, where=f"{path}.matchExpressions[{index}]"))
    return Selector(tuple(reqs))


def _expression(expr: Any, *, where: str) -> Requirement:
    if not isinstance(expr, Mapping):
        raise SelectorError(f"{where}: must be a mapping with key, operator and values")
    key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
    if not isinstance(key, str) or not key:
        raise SelectorError(f"{where}.key: required string")
    try:
        operator = Operator(str(op))
    except ValueError:
        names = ", ".join(o.value for o in Operator)
        raise SelectorError(f"{where}.operator: {op!r} is not one of {names}") from None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise SelectorError(f"{where}.values: must be a list of strings")
    return make_requirement(key, operator, tuple(values), where=where)


def parse_selector(text: str) -> Selector:
    """Parse the string form (`a=b,c!=d,e in (x,y),!f,g`); errors name the position."""
    return _StringSelectorParser(text).parse()


_TOKEN = re.compile(r"\s*(?:(?P<op>==|!=|=|!|,|\(|\)|<|>)|(?P<word>[^\s!=,()<>]+))")


class _StringSelectorParser:
    """A small recursive-descent parser over the tokens of the string form."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._tokens = self._tokenize(text)
        self._pos = 0

    def _tokenize(self, text: str) -> list[tuple[str, int]]:
        tokens, index = [], 0
        while index < len(text):
            if text[index:].strip() == "":
                break
            found = _TOKEN.match(text, index)
            if found is None:  # pragma: no cover - every character is an op or a word
                self._fail(index, "unexpected character")
            token = found.group("op") or found.group("word")
            tokens.append((token, found.start("op" if found.group("op") else "word")))
            index = found.end()
        return tokens

    def _fail(self, offset: int, message: str) -> NoReturn:
        raise SelectorError(
            f"label selector {self._text!r}, at character {offset + 1}: {message}"
        )

    def _peek(self) -> str | None:
        return self._tokens[self._pos][0] if self._pos < len(self._tokens) else None

    def _offset(self) -> int:
        return self._tokens[self._pos][1] if self._pos < len(self._tokens) else len(self._text)

    def _take(self) -> str:
        token = self._peek()
        if token is None:
            self._fail(self._offset(), "unexpected end of selector")
        self._pos += 1
        return token

    def parse(self) -> Selector:
        reqs: list[Requirement] = []
        while self._peek() is not None:
            reqs.append(self._requirement())
            if self._peek() is not None:
                start = self._offset()
                if self._take() != ",":
                    self._fail(start, "expected ',' between requirements")
                if self._peek() is None:
                    self._fail(self._offset(), "a requirement must follow ','")
        return Selector(tuple(reqs))

    def _requirement(self) -> Requirement:
        start = self._offset()
        where = f"label selector {self._text!r}, at character {start + 1}"
        if self._peek() == "!":
            self._take()
            key = self._word("a label key after '!'")
            return make_requirement(key, Operator.DOES_NOT_EXIST, (), where=where)
        key = self._word("a label key")
        token = self._peek()
        if token is None or token == ",":
            return make_requirement(key, Operator.EXISTS, (), where=where)
        if token in ("=", "==", "!="):
            self._take()
            value = self._peek()
            value = "" if value in (None, ",") else self._word("a label value")
            op = Operator.NOT_IN if token == "!=" else Operator.IN
            return make_requirement(key, op, (value,), where=where)
        if token in ("in", "notin"):
            self._take()
            op = Operator.IN if token == "in" else Operator.NOT_IN
            return make_requirement(key, op, self._value_set(), where=where)
        self._fail(self._offset(), f"expected '=', '!=', 'in' or 'notin' after {key!r}")

    def _word(self, what: str) -> str:
        start = self._offset()
        token = self._peek()
        if token is None or token[0] in _OPERATOR_CHARS:
            self._fail(start, f"expected {what}")
        return self._take()

    def _value_set(self) -> tuple[str, ...]:
        if self._peek() != "(":
            self._fail(self._offset(), "expected '(' to start the set of values")
        self._take()
        values: list[str] = []
        expect_value = True
        while True:
            token = self._peek()
            if token is None:
                self._fail(self._offset(), "the set of values is not closed with ')'")
            if expect_value and token == ")" and not values:
                self._take()
                return ()
            if expect_value:
                values.append("" if token in (",", ")") else self._word("a value"))
                expect_value = False
                continue
            start = self._offset()
            token = self._take()
            if token == ")":
                return tuple(values)
            if token != ",":
                self._fail(start, "expected ',' or ')' in the set of values")
            expect_value = True


_OPERATOR_CHARS = frozenset("=!,()<>")


def to_selector(selector: SelectorLike) -> Selector:
    """Any accepted spelling as a `Selector`; None is the selector that matches everything."""
    if selector is None:
        return Selector()
    if isinstance(selector, Selector):
        return selector
    if isinstance(selector, str):
        return parse_selector(selector)
    if _is_structured(selector):
        return selector_from_object(selector)
    return selector_from_labels(selector)


def _is_structured(selector: Mapping[str, Any]) -> bool:
    # A label named "matchLabels" would have a string value; the structured form never does.
    return any(
        key in ("matchLabels", "matchExpressions") and not isinstance(value, str)
        for key, value in selector.items()
    )


def matches(selector: SelectorLike, labels: Mapping[str, str] | None) -> bool:
    """Whether `labels` satisfy `selector` (in any accepted spelling)."""
    return to_selector(selector).matches(labels)
