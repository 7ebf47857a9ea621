"""Declarative field tables that drive both validation and the building of typed views.

Each manifest kind is described once, as `Schema` tables of `Field(name, shape, default)`.
`validate_object` walks a raw object against a table and reports every problem with its field
path; `build_view` turns an object that validated without errors into a frozen dataclass,
filling documented defaults from the same table. One table, so validation and the views can
never disagree about a field's name, type or default.

Purely computational: no I/O.
"""

from __future__ import annotations

import datetime
import difflib
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from headway.model import durations
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document, PathPart

__all__ = [
    "ANY",
    "BOOL",
    "INT",
    "INT_OR_PERCENT",
    "INT_OR_STRING",
    "NUMBER",
    "STR",
    "STRING_LIST",
    "STRING_MAP",
    "Check",
    "Duration",
    "Enum",
    "Field",
    "ListOf",
    "Obj",
    "Path",
    "Reporter",
    "Schema",
    "build_view",
    "describe",
    "set_fields",
    "snake_case",
    "validate_object",
]

Path = tuple[PathPart, ...]


class Reporter:
    """Collects diagnostics for one document, each located by its field path."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.diagnostics: list[Diagnostic] = []

    def error(self, path: Sequence[PathPart], message: str) -> None:
        self.diagnostics.append(self.document.diagnostic(path, message, Severity.ERROR))

    def warning(self, path: Sequence[PathPart], message: str) -> None:
        self.diagnostics.append(self.document.diagnostic(path, message, Severity.WARNING))

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)


def describe(value: object) -> str:
    """How a value reads in a message: `string "2 minutes"`, `integer 5`, `a list`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value:g}"
    if isinstance(value, str):
        return f'string "{value}"'
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, datetime.date):
        return f"date {value.isoformat()}"  # YAML reads an unquoted 2024-01-02 as a date
    return type(value).__name__


# ---- shapes -------------------------------------------------------------------------------


class Shape:
    """What a field's value must look like, and how it becomes part of a typed view."""

    def check(self, value: Any, path: Path, report: Reporter) -> None:
        raise NotImplementedError

    def convert(self, value: Any) -> Any:
        return value

    def absent(self) -> Any:
        """The view's value when the field is missing and has no default."""
        return None


@dataclass(frozen=True)
class Scalar(Shape):
    kind: str  # "string", "integer", "boolean", "number"
    minimum: int | None = None
    maximum: int | None = None

    def check(self, value: Any, path: Path, report: Reporter) -> None:
        if not _is_scalar(value, self.kind):
            unquoted = value is not None and not isinstance(value, Mapping | list)
            hint = " (quote it)" if self.kind == "string" and unquoted else ""
            report.error(path, f"expected {_article(self.kind)}, got {describe(value)}{hint}")
            return
        if self.minimum is not None and value < self.minimum:
            report.error(path, f"{value} is below the minimum {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            report.error(path, f"{value} is above the maximum {self.maximum}")


def _is_scalar(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, int | float) and not isinstance(value, bool)


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


@dataclass(frozen=True)
class IntOrString(Shape):
    """Kubernetes int-or-string; `percent` demands `N%` when it is a string."""

    percent: bool = False

    def check(self, value: Any, path: Path, report: Reporter) -> None:
        if isinstance(value, int) and not isinstance(value, bool):
            if self.percent and value < 0:
                report.error(path, f"{value} must not be negative")
            return
        if not isinstance(value, str):
            report.error(path, f"expected an integer or a string, got {describe(value)}")
        elif self.percent and not re.fullmatch(r"\d+%", value):
            report.error(path, f'"{value}" must be an integer or a percentage like "25%"')


_TEMPLATE = re.compile(r"\{\{.*\}\}")


@dataclass(frozen=True)
class Duration(Shape):
    """A duration. `bare_seconds` admits integers as seconds (see `durations`).

    With `as_seconds` the view holds float seconds; otherwise it keeps the text, which may be
    an analysis argument placeholder (`{{args.interval}}`) resolved only when a run starts.
    """

    bare_seconds: bool = False
    as_seconds: bool = True

    def check(self, value: Any, path: Path, report: Reporter) -> None:
        if not self.as_seconds and isinstance(value, str) and _TEMPLATE.search(value):
            return
        if not self.bare_seconds and not isinstance(value, str):
            report.error(path, f'expected a duration string such as "30s", got {describe(value)}')
            return
        try:
            durations.parse_duration(value, bare_seconds=self.bare_seconds)
        except durations.DurationError as err:
            report.error(path, str(err))

    def convert(self, value: Any) -> Any:
        if self.as_seconds:
            return durations.parse_duration(value, bare_seconds=self.bare_seconds)
        return value if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class Enum(Shape):
    values: tuple[str, ...]

    def check(self, value: Any, path: Path, report: Reporter) -> None:
        if value not in self.values:
            allowed = ", ".join(self.values)
            report.error(path, f"{describe(value)} is not one of: {allowed}")


@dataclass(frozen=True)
class AnyValue(Shape):
    """Free-form content Headway passes through (a pod template, Helm values, plugin config)."""

    mapping: bool = False

    def check(self, value: Any, path: Path, report: Reporter) -> None:
        if self.mapping and not isinstance(value, Mapping):
            report.error(path, f"expected a mapping, got {describe(value)}")

    def convert(self, value: Any) -> Any:
        return dict(value) if isinstance(value, Mapping) else value


@dataclass(frozen=True)
class StringMap(Shape):
    def check(self, value: Any, path: Path, report: Reporter) -> None:
        if not isinstance(value, Mapping):
            report.error(path, f"expected a mapping of strings, got {describe(value)}")
            return
        for key, item in value.items():
            if not isinstance(item, str):
                hint = "" if item is None or isinstance(item, Mapping | list) else " (quote it)"
                message = f"expected a string, got {describe(item)}{hint}"
                report.error((*path, str(key)), message)

    def convert(self, value: Any) -> Any:
        return dict(value)

    def absent(self) -> Any:
        return {}


@dataclass(frozen=True)
class ListOf(Shape):
    item: Shape

    def check(self, value: Any, path: Path, report: Reporter) -> None:
        if not isinstance(value, list):
            report.error(path, f"expected a list, got {describe(value)}")
            return
        for index, element in enumerate(value):
            if element is None:
                report.error((*path, index), "expected a value, got null")
            else:
                self.item.check(element, (*path, index), report)

    def convert(self, value: Any) -> Any:
        return tuple(self.item.convert(element) for element in value)

    def absent(self) -> Any:
        return ()


@dataclass(frozen=True)
class Obj(Shape):
    schema: Schema

    def check(self, value: Any, path: Path, report: Reporter) -> None:
        validate_object(self.schema, value, path, report)

    def convert(self, value: Any) -> Any:
        return build_view(self.schema, value)


STR = Scalar("string")
INT = Scalar("integer")
BOOL = Scalar("boolean")
NUMBER = Scalar("number")
INT_OR_STRING = IntOrString()
INT_OR_PERCENT = IntOrString(percent=True)
STRING_MAP = StringMap()
STRING_LIST = ListOf(STR)
ANY = AnyValue()

# ---- tables -------------------------------------------------------------------------------

Check = Callable[[Mapping[str, Any], Path, Reporter], None]


@functools.cache
def snake_case(name: str) -> str:
    """`jqPathExpressions` -> `jq_path_expressions`, `repoURL` -> `repo_url`."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def set_fields(view: object, names: Sequence[str]) -> tuple[str, ...]:
    """The JSON names among `names` (in that order) whose attribute on a built view is set.

    For views whose fields form a union (a metric's provider, a canary step, the traffic
    routers): which members the manifest chose.
    """
    return tuple(name for name in names if getattr(view, snake_case(name)) is not None)


@dataclass(frozen=True)
class Field:
    """One field of a table: its JSON name, shape, and the default Argo documents."""

    name: str
    shape: Shape
    required: bool = False
    default: Any = None
    attr: str = ""

    @property
    def attribute(self) -> str:
        return self.attr or snake_case(self.name)


@dataclass(frozen=True)
class Schema:
    """A mapping's fields; `view` is the dataclass built from it (None keeps the mapping)."""

    name: str
    fields: tuple[Field, ...]
    view: type | None = None
    checks: tuple[Check, ...] = ()
    open: bool = False  # True: unknown keys are allowed silently
    by_name: dict[str, Field] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {f.name: f for f in self.fields})


def validate_object(schema: Schema, value: Any, path: Path, report: Reporter) -> None:
    """Report every problem in `value` against `schema`; never raises."""
    if not isinstance(value, Mapping):
        report.error(path, f"expected a mapping ({schema.name}), got {describe(value)}")
        return
    if not schema.open:
        _report_unknown_keys(schema, value, path, report)
    for spec in schema.fields:
        item = value.get(spec.name)
        if item is None:
            if spec.required:
                report.error((*path, spec.name), "missing required field")
            continue
        spec.shape.check(item, (*path, spec.name), report)
    for check in schema.checks:
        check(value, path, report)


def _report_unknown_keys(
    schema: Schema, value: Mapping[str, Any], path: Path, report: Reporter
) -> None:
    for key in value:
        if key in schema.by_name:
            continue
        close = difflib.get_close_matches(str(key), list(schema.by_name), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        report.warning((*path, str(key)), f"unknown field{hint}; it is ignored")


def build_view(schema: Schema, value: Mapping[str, Any]) -> Any:
    """The typed view of a mapping that validated without errors."""
    if schema.view is None:
        return dict(value)
    kwargs: dict[str, Any] = {}
    for spec in schema.fields:
        item = value.get(spec.name)
        if item is None:
            item = spec.default
        kwargs[spec.attribute] = spec.shape.absent() if item is None else spec.shape.convert(item)
    return schema.view(**kwargs)
