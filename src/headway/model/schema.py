"""Declarative field tables that drive both validation and the building of typed views.

Each manifest kind is described once, as `Schema` tables of `Field(name, shape, default)`.
`parse_view` walks a raw object against a table once, reporting every problem with its field
path and building the frozen dataclass view with the documented defaults filled in from the
same table (the view is for callers to use only when no error was reported);
`validate_object` is that walk for its reports alone, and `build_view` builds the view of an
object already known to be valid. One table, so validation and the views can never disagree
about a field's name, type or default.

Purely computational: no I/O.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from headway.model import durations, views
from headway.model.schema_report import Check, Path, Reporter

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
    "parse_view",
    "set_fields",
    "snake_case",
    "validate_object",
]


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
    """What a field's value must look like, and how it becomes part of a typed view.

    `parse` does both in one walk: it reports what `check` reports and returns what
    `convert` returns, or anything at all where it reported an error (a view with an error
    anywhere is thrown away whole). A subclass that overrides `check` or `convert` but not
    `parse` gets this generic `parse`, so the two can never disagree.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        overrides = vars(cls)
        if "parse" not in overrides and ("check" in overrides or "convert" in overrides):
            cls.parse = Shape.parse  # type: ignore[method-assign]

    def check(self, value: Any, path: Path, report: Reporter) -> None:
        raise NotImplementedError

    def convert(self, value: Any) -> Any:
        return value

    def parse(self, value: Any, path: Path, report: Reporter) -> Any:
        errors = report.errors
        self.check(value, path, report)
        return self.convert(value) if report.errors == errors else None

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

    def parse(self, value: Any, path: Path, report: Reporter) -> Any:
        self.check(value, path, report)
        return value


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
        elif self.percent and not _PERCENT.fullmatch(value):
            report.error(path, f'"{value}" must be an integer or a percentage like "25%"')

    def parse(self, value: Any, path: Path, report: Reporter) -> Any:
        self.check(value, path, report)
        return value


_PERCENT = re.compile(r"\d+%")


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

    def parse(self, value: Any, path: Path, report: Reporter) -> Any:
        if not self.as_seconds:
            self.check(value, path, report)
            return value if isinstance(value, str) else str(value)
        if not self.bare_seconds and not isinstance(value, str):
            report.error(path, f'expected a duration string such as "30s", got {describe(value)}')
            return None
        try:  # parsed once: the seconds are the view's value
            return durations.parse_duration(value, bare_seconds=self.bare_seconds)
        except durations.DurationError as err:
            report.error(path, str(err))
            return None


@dataclass(frozen=True)
class Enum(Shape):
    values: tuple[str, ...]

    def check(self, value: Any, path: Path, report: Reporter) -> None:
        if value not in self.values:
            allowed = ", ".join(self.values)
            report.error(path, f"{describe(value)} is not one of: {allowed}")

    def parse(self, value: Any, path: Path, report: Reporter) -> Any:
        self.check(value, path, report)
        return value


@dataclass(frozen=True)
class AnyValue(Shape):
    """Free-form content Headway passes through (a pod template, Helm values, plugin config)."""

    mapping: bool = False

    def check(self, value: Any, path: Path, report: Reporter) -> None:
        if self.mapping and not isinstance(value, Mapping):
            report.error(path, f"expected a mapping, got {describe(value)}")

    def convert(self, value: Any) -> Any:
        return dict(value) if isinstance(value, Mapping) else value

    def parse(self, value: Any, path: Path, report: Reporter) -> Any:
        self.check(value, path, report)
        return self.convert(value)


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

    def parse(self, value: Any, path: Path, report: Reporter) -> Any:
        self.check(value, path, report)
        return dict(value) if isinstance(value, Mapping) else None

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

    def parse(self, value: Any, path: Path, report: Reporter) -> Any:
        if not isinstance(value, list):
            report.error(path, f"expected a list, got {describe(value)}")
            return None
        parse_item = self.item.parse
        parsed: list[Any] = []
        for index, element in enumerate(value):
            if element is None:
                report.error((*path, index), "expected a value, got null")
                parsed.append(None)
            else:
                parsed.append(parse_item(element, (*path, index), report))
        return tuple(parsed)

    def absent(self) -> Any:
        return ()


@dataclass(frozen=True)
class Obj(Shape):
    schema: Schema

    def check(self, value: Any, path: Path, report: Reporter) -> None:
        validate_object(self.schema, value, path, report)

    def convert(self, value: Any) -> Any:
        return build_view(self.schema, value)

    def parse(self, value: Any, path: Path, report: Reporter) -> Any:
        return parse_view(self.schema, value, path, report)


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
    # The plan as `parse_view` reads it, each field a plain tuple (faster than attributes).
    rows: tuple[_Row, ...] = field(init=False, repr=False, compare=False)
    # The view made from its fields by JSON name order (None where `view` is None).
    make_view: Callable[[dict[str, Any]], Any] | None = field(init=False, repr=False, compare=False)
    # What `parse_view` starts a view from before it reads the fields a mapping holds.
    start: _ViewStart = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {f.name: f for f in self.fields})
        object.__setattr__(self, "plan", tuple(_FieldPlan.of(f) for f in self.fields))
        object.__setattr__(self, "rows", tuple(spec.row() for spec in self.plan))
        object.__setattr__(self, "start", _ViewStart.of(self.plan, self.rows))
        attributes = [spec.attribute for spec in self.plan]
        view = self.view
        object.__setattr__(self, "make_view", view and _view_maker(view, attributes))


@dataclass(frozen=True)
class _ViewStart:
    """A table's view fields as they stand before any field of a mapping is read.

    `absent` holds every attribute in table order with the value of a missing field (None
    where each view makes its own, `fresh`); `rows` finds a field's row by JSON name, and
    `required` names the fields a mapping must hold."""

    absent: dict[str, Any]
    fresh: tuple[tuple[str, Callable[[], Any]], ...]
    rows: dict[str, _Row]
    required: tuple[str, ...]

    @classmethod
    def of(cls, plan: Sequence[_FieldPlan], rows: Sequence[_Row]) -> _ViewStart:
        return cls(
            {spec.attribute: spec.missing for spec in plan},
            tuple(
                (spec.attribute, spec.fresh_missing)
                for spec in plan
                if spec.fresh_missing is not None
            ),
            {row[0]: row for row in rows},
            tuple(spec.name for spec in plan if spec.required),
        )


def _view_maker(view: type, attributes: list[str]) -> Callable[[dict[str, Any]], Any]:
    """How `parse_view` makes a view from its fields (attribute -> value, in table order).

    A frozen dataclass's `__init__` sets each field through `object.__setattr__`, about ten
    times the cost of filling the instance's dictionary at once, and views are made by the
    ten thousand. Where `__init__` would do no more than that (the table's attributes are the
    dataclass's fields in the same order, all set by `__init__`, and nothing runs after it),
    the dictionary is filled directly; elsewhere `__init__` runs.
    """
    if not _filled_directly(view, attributes):
        return lambda values: view(**values)
    new = object.__new__

    def make(values: dict[str, Any]) -> Any:
        made: Any = new(view)
        made.__dict__.update(values)
        return made

    return make


def _filled_directly(view: type, attributes: list[str]) -> bool:
    """Whether `view`'s `__init__` would only set `attributes`, in that order.

    Asked of a `@view` not yet used without processing it (`views.declared_fields`): `@view`
    refuses what would make its `__init__` do more."""
    if views.is_pending(view):
        return list(views.declared_fields(view) or ()) == attributes
    fields = dataclasses.fields(view) if dataclasses.is_dataclass(view) else ()
    return (
        [f.name for f in fields] == attributes
        and all(f.init for f in fields)
        and not hasattr(view, "__post_init__")
        and "__slots__" not in vars(view)
    )


_Row = tuple[str, str, bool, type | None, bool, Any, Callable[[], Any] | None, Callable[..., Any]]


@dataclass(frozen=True)
class _FieldPlan:
    """A field as the validator and the view builder use it, worked out once per table.

    `taken_as_is` is the one Python type whose values need no check and go into the view
    unchanged (a plain string or boolean field; None: none), `free_form` marks a field that
    takes any value (a mapping is copied into the view), `missing` is the view's value when
    the field is absent, or `fresh_missing` makes one where a shared value could be changed
    by whoever holds a view. `convert` is None where the view keeps a value as it is.
    """

    name: str
    attribute: str
    required: bool
    default: Any
    shape: Shape
    taken_as_is: type | None
    free_form: bool
    missing: Any
    fresh_missing: Callable[[], Any] | None
    convert: Callable[[Any], Any] | None

    @classmethod
    def of(cls, spec: Field) -> _FieldPlan:
        shape = spec.shape
        converts = type(shape).convert is not Shape.convert
        convert = shape.convert if converts else None
        free_form = type(shape) is AnyValue and not shape.mapping
        missing, fresh = _missing(shape, spec.default, convert)
        return cls(
            spec.name,
            spec.attribute,
            spec.required,
            spec.default,
            shape,
            None if free_form else _taken_as_is(shape),
            free_form,
            missing,
            fresh,
            convert,
        )

    def row(self) -> _Row:
        return (
            self.name,
            self.attribute,
            self.required,
            self.taken_as_is,
            self.free_form,
            self.missing,
            self.fresh_missing,
            self.shape.parse,
        )


def _taken_as_is(shape: Shape) -> type | None:
    """The exact type whose every value passes `shape.check` without a report."""
    if type(shape) is Scalar and shape.minimum is None and shape.maximum is None:
        return {"string": str, "boolean": bool}.get(shape.kind)
    return None


def _missing(
    shape: Shape, default: Any, convert: Callable[[Any], Any] | None
) -> tuple[Any, Callable[[], Any] | None]:
    """The view's value for an absent field: one value every view shares where it cannot
    change (a number, a string, an empty tuple), else a function that makes a fresh one."""

    def fresh() -> Any:
        if default is None:
            return shape.absent()
        return default if convert is None else convert(default)

    value = fresh()
    if _unchangeable(value):
        return value, None
    return None, (dict if type(value) is dict and value == {} else fresh)  # dict: no detour


def _unchangeable(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float | str):
        return True
    return type(value) is tuple and all(_unchangeable(item) for item in value)


def validate_object(schema: Schema, value: Any, path: Path, report: Reporter) -> None:
    """Report every problem in `value` against `schema`; never raises."""
    parse_view(schema, value, path, report)


def parse_view(schema: Schema, value: Any, path: Path, report: Reporter) -> Any:
    """Report every problem in `value` against `schema`, as `validate_object` does, and
    return the view `build_view` would build; never raises. Where it reported an error the
    value returned is no view to use (its caller drops it)."""
    if type(value) is not dict and not isinstance(value, Mapping):  # dict: skips the ABC
        report.error(path, f"expected a mapping ({schema.name}), got {describe(value)}")
        return None
    if not schema.open and not value.keys() <= schema.by_name.keys():
        _report_unknown_keys(schema, value, path, report)
    fields = _present_fields(schema.start, value, path, report)
    if fields is None:
        fields = _table_fields(schema, value, path, report)
    if schema.checks:
        report.run_checks(schema.checks, value, path=path)
    make_view = schema.make_view
    return dict(value) if make_view is None else make_view(fields)


def _present_fields(
    start: _ViewStart, value: Mapping[str, Any], path: Path, report: Reporter
) -> dict[str, Any] | None:
    """The view's fields, reading only the fields `value` holds (a mapping sets a few of a
    table's many fields), in the mapping's order. None, with nothing reported, when a
    required field is missing or a field reported a problem: the reports must then come in
    table order (`_table_fields`), as the user reads them."""
    get = value.get
    for name in start.required:
        if get(name) is None:
            return None
    fields = start.absent.copy()  # every attribute, in table order: the view's field order
    for attribute, fresh in start.fresh:
        fields[attribute] = fresh()
    rows = start.rows
    mark = report.mark()
    for name, item in value.items():
        row = rows.get(name)
        if row is None or item is None:  # an unknown key (warned about), or an absent value
            continue
        _, attribute, _, taken_as_is, free_form, _, _, parse = row
        if type(item) is taken_as_is:
            fields[attribute] = item
        elif free_form:
            fields[attribute] = dict(item) if isinstance(item, Mapping) else item
        else:
            fields[attribute] = parse(item, (*path, name), report)
    if not report.said_since(mark):
        return fields
    report.rewind(mark)
    return None


def _table_fields(
    schema: Schema, value: Mapping[str, Any], path: Path, report: Reporter
) -> dict[str, Any]:
    """The view's fields, reading every field of the table in table order."""
    fields: dict[str, Any] = {}
    get = value.get
    for name, attribute, required, taken_as_is, free_form, missing, fresh, parse in schema.rows:
        item = get(name)
        if item is None:
            if required:
                report.error((*path, name), "missing required field")
            fields[attribute] = missing if fresh is None else fresh()
        elif type(item) is taken_as_is:
            fields[attribute] = item
        elif free_form:
            fields[attribute] = dict(item) if isinstance(item, Mapping) else item
        else:
            fields[attribute] = parse(item, (*path, name), report)
    return fields


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
            fresh = spec.fresh_missing
            kwargs[spec.attribute] = spec.missing if fresh is None else fresh()
        else:
            convert = spec.convert
            kwargs[spec.attribute] = item if convert is None else convert(item)
    make_view = schema.make_view
    assert make_view is not None  # set wherever `view` is
    return make_view(kwargs)
