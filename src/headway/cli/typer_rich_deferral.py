"""Typer's Rich help formatter, loaded without the Rich modules Headway's help never uses.

`typer.rich_utils` (Typer 0.27) imports `rich.markdown` (which brings markdown-it and
Pygments) and `rich.traceback` (which brings `rich.pretty` and attrs) at its top: about 40%
of what `headway --help` imports. Neither is used by Headway's help or usage errors: the
help is Rich markup (Typer's default mode), never Markdown, and Typer's pretty tracebacks
are off (`pretty_exceptions_enable=False` in `cli.main`).

`install()` adds an import hook for `typer.rich_utils` alone. While that module's own code
runs, `rich.markdown` and `rich.traceback` (if not imported yet) are stand-in modules whose
`Markdown` and `Traceback` are `Deferred` classes: calling one, or reading an attribute of
it, imports the real module and forwards. The stand-ins leave `sys.modules` as soon as
`typer.rich_utils` is loaded, so every other import of those modules gets the real one.
`tests/test_cli_help_unchanged.py` holds that help and errors read exactly as before.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, PathFinder, SourceFileLoader
from types import ModuleType
from typing import Any

FORMATTER = "typer.rich_utils"
# The names `typer.rich_utils` imports from each deferred module (a test reads its source
# and fails if Typer imports another one).
DEFERRED_NAMES: dict[str, tuple[str, ...]] = {
    "rich.markdown": ("Markdown",),
    "rich.traceback": ("Traceback",),
}


class Deferred(type):
    """The type of a stand-in class: it imports and forwards to the real one when used."""

    _real_module: str

    def real(cls) -> Any:
        return getattr(importlib.import_module(cls._real_module), cls.__name__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls.real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls.real(), name)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.real())


def stand_in_module(name: str) -> ModuleType:
    """A module holding a `Deferred` stand-in for each name Typer imports from `name`."""
    module = ModuleType(name, f"Stand-in for {name} while {FORMATTER} loads.")
    for attribute in DEFERRED_NAMES[name]:
        setattr(module, attribute, Deferred(attribute, (), {"_real_module": name}))
    return module


class _LoaderWithStandIns(SourceFileLoader):
    """Typer's own source loader, with the stand-ins in `sys.modules` while the code runs."""

    def exec_module(self, module: ModuleType) -> None:
        missing = [name for name in DEFERRED_NAMES if name not in sys.modules]
        sys.modules.update({name: stand_in_module(name) for name in missing})
        try:
            super().exec_module(module)
        finally:
            for name in missing:
                del sys.modules[name]


class _FormatterFinder:
    """A meta-path finder that answers for `typer.rich_utils` only."""

    @classmethod
    def find_spec(
        cls, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != FORMATTER:
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or type(spec.loader) is not SourceFileLoader or spec.origin is None:
            return spec  # not a plain source install: load it as Python would
        spec.loader = _LoaderWithStandIns(fullname, spec.origin)
        return spec


def install() -> None:
    """Load `typer.rich_utils` without its unused Rich modules, whenever Typer first needs it."""
    if FORMATTER not in sys.modules and _FormatterFinder not in sys.meta_path:
        sys.meta_path.insert(0, _FormatterFinder)
