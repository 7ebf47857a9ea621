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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from headway.model import durations
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document, PathPart, format_path

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values

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
        # Where a value does not have its declared shape (not what cross-field checks find).
        self.misshapen: list[Path] = []
        self._checks_running = 0

    def error(self, path: Sequence[PathPart], message: str) -> None:
        self.diagnostics.append(self.document.diagnostic(path, message, Severity.ERROR))
        if not self._checks_running:
            self.misshapen.append(tuple(path))

    def warning(self, path: Sequence[PathPart], message: str) -> None:
        self.diagnostics.append(self.document.diagnostic(path, message, Severity.WARNING))

    def run_checks(self, checks: Sequence[Check], value: Any, *, path: Path) -> None:
        """Run cross-field checks on the mapping at `path`, which may hold misshapen fields.

        The checks see the mapping without those fields, so they can rely on each field's
        declared shape. What they then say about a removed field is dropped (its shape error
        was reported), and so is all a check says once it asked for a removed field: it
        reasoned from a picture the user has still to fix.
        """
        misshapen = [p for p in self.misshapen if p[: len(path)] == path]
        asked: list[str] = []
        shaped = _without(value, [p[len(path) :] for p in misshapen], asked)
        self._checks_running += 1
        try:
            for check in checks:
                found_before, asked[:] = len(self.diagnostics), []
                check(shaped, path, self)
                self._drop_misleading(found_before, misshapen, bool(asked))
        finally:
            self._checks_running -= 1

    def _drop_misleading(self, start: int, misshapen: Sequence[Path], asked: bool) -> None:
        if asked:
            del self.diagnostics[start:]
            return
        fields = [format_path(bad) for bad in misshapen]
        self.diagnostics[start:] = [
            diagnostic
            for diagnostic in self.diagnostics[start:]
            if not any(_inside(diagnostic.field, field) for field in fields)
        ]

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
    plan: tuple[_FieldPlan, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {f.name: f for f in self.fields})
        object.__setattr__(self, "plan", tuple(_FieldPlan.of(f) for f in self.fields))


@dataclass(frozen=True)
class _FieldPlan:
    """A field as the validator and the view builder use it, worked out once per table:
    `always_fine` is the one Python type whose values need no shape check (None: check),
    `convert` is None where the view keeps the value as it is."""

    name: str
    attribute: str
    required: bool
    default: Any
    shape: Shape
    always_fine: type | None
    convert: Callable[[Any], Any] | None

    @classmethod
    def of(cls, spec: Field) -> _FieldPlan:
        shape = spec.shape
        converts = type(shape).convert is not Shape.convert
        return cls(
            spec.name,
            spec.attribute,
            spec.required,
            spec.default,
            shape,
            _always_fine(shape),
            shape.convert if converts else None,
        )


def _always_fine(shape: Shape) -> type | None:
    """The exact type whose every value passes `shape.check` without a report."""
    if type(shape) is AnyValue and not shape.mapping:
        return object
    if type(shape) is Scalar and shape.minimum is None and shape.maximum is None:
        return {"string": str, "boolean": bool}.get(shape.kind)
    return None


def validate_object(schema: Schema, value: Any, path: Path, report: Reporter) -> None:
    """Report every problem in `value` against `schema`; never raises."""
    if not isinstance(value, Mapping):
        report.error(path, f"expected a mapping ({schema.name}), got {describe(value)}")
        return
    if not schema.open:
        _report_unknown_keys(schema, value, path, report)
    for spec in schema.plan:
        item = value.get(spec.name)
        if item is None:
            if spec.required:
                report.error((*path, spec.name), "missing required field")
            continue
        fine = spec.always_fine
        if fine is object or type(item) is fine:
            continue
        spec.shape.check(item, (*path, spec.name), report)
    if schema.checks:
        report.run_checks(schema.checks, value, path=path)


class _Shaped(dict[str, Any]):
    """A mapping whose misshapen fields were removed; notes when a check asks for one."""

    def __init__(self, items: dict[str, Any], removed: set[str], asked: list[str]) -> None:
        super().__init__(items)
        self._removed, self._asked = removed, asked

    def _note(self, key: object) -> None:
        if key in self._removed:
            self._asked.append(str(key))

    def _note_all(self) -> None:  # looking at every field looks at the removed ones too
        self._asked.extend(self._removed)

    def get(self, key: str, default: Any = None) -> Any:
        self._note(key)
        return super().get(key, default)

    def __iter__(self) -> Iterator[str]:
        self._note_all()
        return super().__iter__()

    def keys(self) -> dict_keys[str, Any]:
        self._note_all()
        return super().keys()

    def values(self) -> dict_values[str, Any]:
        self._note_all()
        return super().values()

    def items(self) -> dict_items[str, Any]:
        self._note_all()
        return super().items()

    def __getitem__(self, key: str) -> Any:
        self._note(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._note(key)
        return super().__contains__(key)


def _without(value: Any, paths: Sequence[Path], asked: list[str]) -> Any:
    """`value` without the mapping key holding each path (a path into a list removes the
    whole list: removing one element would shift the indices the checks report)."""
    if not paths:
        return value
    removals: dict[PathPart, Any] = {}
    for relative in paths:
        parts = list(relative)
        while parts and not isinstance(parts[-1], str):
            parts.pop()
        node = removals
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if child is True:
                break
            node = child
        else:
            if parts:
                node[parts[-1]] = True
    return _pruned(value, removals, asked)


def _pruned(value: Any, removals: dict[PathPart, Any], asked: list[str]) -> Any:
    if isinstance(value, Mapping):
        removed = {str(key) for key, sub in removals.items() if sub is True}
        kept = {
            key: _pruned(item, removals[key], asked) if _descend(removals, key) else item
            for key, item in value.items()
            if key not in removed
        }
        return _Shaped(kept, removed, asked)
    if isinstance(value, list):
        return [
            _pruned(item, removals[i], asked) if _descend(removals, i) else item
            for i, item in enumerate(value)
        ]
    return value


def _descend(removals: dict[PathPart, Any], part: PathPart) -> bool:
    return isinstance(removals.get(part), dict)


def _inside(path: str, field: str) -> bool:
    """Whether the dotted `path` is `field` or inside it."""
    return path == field or path.startswith((f"{field}.", f"{field}[", f'{field}["'))


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
    for spec in schema.plan:
        item = value.get(spec.name)
        if item is None:
            item = spec.default
        if item is None:
            kwargs[spec.attribute] = spec.shape.absent()
        else:
            convert = spec.convert
            kwargs[spec.attribute] = item if convert is None else convert(item)
    return schema.view(**kwargs)
