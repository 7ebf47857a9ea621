"""`@view`: a typed view's frozen dataclass, made a dataclass when it is first used.

Python 3.11's `dataclasses` writes and `exec`s six methods per frozen class (`__init__`,
`__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`) and asks `inspect` for a
signature to document it: about half a millisecond a class, and the typed models declare
about seventy views, most of which a run never touches (the views of an Argo kind are made
by `schema.parse_view` without `__init__`; a run that reads one canary never needs the
blue-green, experiment or traffic-router classes' methods). `@view` declares the class as
`@dataclass(frozen=True)` would, and does that processing the first time anything asks the
class for what it would add: a call, a comparison, a hash, a `repr`, an assignment, or
`dataclasses.fields`/`is_dataclass`/`replace` (which read `__dataclass_fields__`). From then
on the class is exactly what `@dataclass(frozen=True)` makes of it.

How: until then the class's one base is `_Pending`, whose attributes of those names are
descriptors. The first lookup of any of them through a pending class (or one of its
instances) runs the standard `dataclasses.dataclass(frozen=True)` on the class in place,
under a lock, and answers with what it added. While that runs, a lookup from another thread
still reaches `_Pending` (the class's own dictionary fills one name at a time, `_Pending`
stays behind it) and waits for the lock, so no thread ever sees `object`'s `__eq__` or
`__hash__` on a view. `_Pending` stays the class's base afterwards (CPython will not give a
class `object` back as its base) but answers for nothing: the class has each name itself.

For mypy a `@view` class is a frozen dataclass (`dataclass_transform`). What `@view` accepts
is kept to what lets `declared_fields` name the fields without processing the class (the
schema needs them to decide how to build views): no base class, no `__slots__`, no
`__post_init__`, no `dataclasses.field(...)`, no `ClassVar` or `InitVar` annotation.
One difference remains until first use: a view without a docstring has `__doc__` None, where
`dataclasses` writes the signature there.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, TypeVar, dataclass_transform

__all__ = ["declared_fields", "declared_views", "is_pending", "view"]

_T = TypeVar("_T", bound=type)

# What `dataclasses.dataclass(frozen=True)` adds to a class: looking any of them up on a
# pending class makes it a dataclass first.
_ADDED = (
    "__init__",
    "__repr__",
    "__eq__",
    "__hash__",
    "__setattr__",
    "__delattr__",
    "__match_args__",
    "__dataclass_fields__",
    "__dataclass_params__",
)

# How a pending view is processed (a seam: tests pause it to hold a completion open).
_process = dataclasses.dataclass(frozen=True)
_lock = threading.RLock()
# Each pending class's field names, in declaration order.
_pending: dict[type, tuple[str, ...]] = {}
_declared: list[type] = []  # every view, in the order declared


class _Completes:
    """An attribute of `_Pending`: makes the class it was looked up through a dataclass,
    then answers with the attribute the dataclass now has."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: object, owner: type) -> Any:
        _complete(owner)
        if _provider(owner, self.name) is _Pending:  # `_Pending` itself, or asked while
            raise AttributeError(self.name)  # `dataclasses` is still processing `owner`
        return getattr(owner if instance is None else instance, self.name)


class _Pending:
    __slots__ = ()


for _name in _ADDED:
    setattr(_Pending, _name, _Completes(_name))


def _complete(cls: type) -> None:
    """Make each pending view among `cls` and its bases a dataclass (once)."""
    with _lock:
        for pending in [c for c in cls.__mro__ if c in _pending]:
            names = _pending.pop(pending)  # popped first: a lookup while processing is no call
            try:
                _process(pending)
            except BaseException:
                _pending[pending] = names
                raise


def _provider(cls: type, name: str) -> type | None:
    """The class whose own attribute `name` a lookup through `cls` finds."""
    return next((c for c in cls.__mro__ if name in vars(c)), None)


@dataclass_transform(frozen_default=True)
def view(cls: _T) -> _T:
    """Declare `cls` a frozen dataclass, processed by `dataclasses` on first use.

    The class is made again from its namespace with `_Pending` as its base (a class's base
    `object` cannot be replaced in place), under the same module, name and qualified name."""
    names = _field_names(cls)
    namespace = {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}
    made: _T = type(cls)(cls.__name__, (_Pending,), namespace)
    with _lock:
        _pending[made] = names
        _declared.append(made)
    return made


def _field_names(cls: type) -> tuple[str, ...]:
    """The fields `dataclasses` would find, after refusing what would make them differ."""
    where = f"@view {cls.__module__}.{cls.__qualname__}"
    if cls.__bases__ != (object,):
        raise TypeError(f"{where}: a view has no base class")
    own = vars(cls)
    for name, value in own.items():
        code = getattr(getattr(value, "fget", value), "__code__", None)
        if code is not None and "__class__" in code.co_freevars:
            raise TypeError(f"{where}: {name} uses super() or __class__")
    for refused in ("__slots__", "__post_init__", *_ADDED):
        if refused in own:
            raise TypeError(f"{where}: a view does not define {refused}")
    annotations: dict[str, Any] = own.get("__annotations__", {})
    for name, annotation in annotations.items():
        if isinstance(own.get(name), dataclasses.Field):
            raise TypeError(f"{where}: {name} uses dataclasses.field")
        if any(word in str(annotation) for word in ("ClassVar", "InitVar")):
            raise TypeError(f"{where}: {name} is not a plain field")
    return tuple(annotations)


def declared_fields(cls: type) -> tuple[str, ...] | None:
    """The field names of a view or dataclass in order, without processing a pending view;
    None for a class that is neither."""
    with _lock:
        names = _pending.get(cls)
    if names is not None:
        return names
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple(f.name for f in dataclasses.fields(cls))


def declared_views() -> tuple[type, ...]:
    """Every `@view` class imported so far, pending or not."""
    with _lock:
        return tuple(_declared)


def is_pending(cls: type) -> bool:
    """Whether `cls` is a view that nothing has used yet."""
    with _lock:
        return cls in _pending
