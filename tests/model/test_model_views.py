"""`@view` (model/views.py): a typed view is the frozen dataclass `@dataclass(frozen=True)`
makes, processed the first time something uses it. Each case can fail: a view that differs
from the stock dataclass, a field list that differs before and after processing, a lookup
that sees `object`'s methods while another thread processes the class, a view processed at
import, or a declaration `@view` cannot name the fields of without processing it."""

from __future__ import annotations

import dataclasses
import importlib
import threading
from typing import Any, ClassVar

import pytest

from headway.model import views
from import_probe import run_python

# Every module declaring views: the kinds' models, and what they build their views from.
KIND_MODULES = (
    "headway.model.k8s",
    "headway.model.analysis",
    "headway.model.analysis_providers",
    "headway.model.application",
    "headway.model.application_sources",
    "headway.model.appproject",
    "headway.model.promotion_pipeline",
    "headway.model.rollout",
    "headway.model.rollout_steps",
    "headway.model.traffic_routing",
)


def _all_views() -> list[type]:
    for name in KIND_MODULES:
        importlib.import_module(name)
    return list(views.declared_views())


def _stock_dataclass(cls: type) -> type:
    """What `@dataclass(frozen=True)` makes of the class `@view` was given."""
    skip = {"__dict__", "__weakref__", *views._ADDED, "__doc__"}
    namespace = {k: v for k, v in vars(cls).items() if k not in skip}
    written = (cls.__doc__ or "").startswith(f"{cls.__name__}(")  # by dataclasses: none given
    namespace["__doc__"] = None if written else cls.__doc__
    stock: type = dataclasses.dataclass(frozen=True)(type(cls.__name__, (), namespace))
    return stock


def _sample(cls: type, tag: str) -> Any:
    """An instance with a distinct value per field, made as the schema makes views."""
    made: Any = object.__new__(cls)
    made.__dict__.update({f: f"{tag}-{f}" for f in views.declared_fields(cls) or ()})
    return made


def test_the_kind_modules_declare_their_views_with_view() -> None:
    declared = {f"{c.__module__}.{c.__qualname__}" for c in _all_views()}
    assert {"headway.model.rollout.Rollout", "headway.model.k8s.ObjectMeta"} <= declared
    assert len(declared) > 60


@pytest.mark.parametrize("cls", _all_views(), ids=lambda c: c.__qualname__)
def test_a_view_is_what_the_stock_frozen_dataclass_would_be(cls: type) -> None:
    stock = _stock_dataclass(cls)
    ours, theirs = _sample(cls, "a"), _sample(stock, "a")
    assert repr(ours) == repr(theirs)
    assert hash(ours) == hash(theirs)
    assert ours == _sample(cls, "a") and ours != _sample(cls, "b") and ours != theirs
    assert cls.__doc__ == stock.__doc__
    assert cls.__match_args__ == stock.__match_args__  # type: ignore[attr-defined]
    assert repr(cls.__dataclass_params__) == repr(stock.__dataclass_params__)  # type: ignore[attr-defined]
    assert [(f.name, f.type, f.default) for f in dataclasses.fields(cls)] == [
        (f.name, f.type, f.default) for f in dataclasses.fields(stock)
    ]
    first = views.declared_fields(cls)
    assert first is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(ours, first[0], "changed")
    assert dataclasses.replace(ours) == ours


def test_views_wait_for_first_use_and_name_the_same_fields_before_it() -> None:
    """In a fresh interpreter importing every kind's model: every view is pending (nothing
    at import processes one, not even the schema tables that make them), and the fields
    `declared_fields` names then are the fields `dataclasses` finds when processing."""
    probe = run_python(
        "import dataclasses, importlib, sys\n"
        "from headway.model import views\n"
        "for name in sys.argv[1:]:\n"
        "    importlib.import_module(name)\n"
        "declared = views.declared_views()\n"
        "report = {\n"
        "    'pending': [views.is_pending(c) for c in declared],\n"
        "    'before': [views.declared_fields(c) for c in declared],\n"
        "    'after': [tuple(f.name for f in dataclasses.fields(c)) for c in declared],\n"
        "}\n",
        *KIND_MODULES,
    )
    assert len(probe.report["pending"]) > 60
    assert all(probe.report["pending"])
    assert probe.report["before"] == probe.report["after"]


def test_a_view_made_without_init_completes_on_its_first_comparison() -> None:
    @views.view
    class Point:
        x: int
        y: int

    made = object.__new__(Point)
    made.__dict__.update(x=1, y=2)
    assert views.is_pending(Point)
    assert made == Point(1, 2)
    assert not views.is_pending(Point)
    match made:
        case Point(1, y):
            assert y == 2
        case _:
            pytest.fail("positional pattern did not match")


def test_a_processed_view_answers_nothing_from_its_pending_base() -> None:
    """`_Pending` stays the class's base after processing (CPython refuses to give a class
    `object` back as its base), so every name it answers for must be the class's own by
    then: none may still reach `_Pending`'s descriptors."""

    @views.view
    class Reading:
        value: float

    assert Reading(1.0) == Reading(1.0)
    assert Reading.__bases__ == (views._Pending,)
    assert [n for n in views._ADDED if views._provider(Reading, n) is not Reading] == []


def test_a_lookup_while_another_thread_processes_the_view_waits_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Thread A holds the processing open (the `_process` seam); thread B compares two equal
    views meanwhile. B must get the dataclass's answer (equal), never `object.__eq__`'s
    (identity, unequal), so it has to wait for A: B is seen reaching the lock A holds (the
    `_lock` seam), not given a moment and assumed to have used it."""

    @views.view
    class Pair:
        left: str
        right: str

    started, release, second_waits = threading.Event(), threading.Event(), threading.Event()
    stock_process, stock_lock = views._process, views._lock

    def held_open(cls: type) -> type:
        started.set()
        assert release.wait(10)
        return stock_process(cls)

    class _SeenLock:
        def __enter__(self) -> None:
            if threading.current_thread().name == "B":
                second_waits.set()
            stock_lock.acquire()

        def __exit__(self, *exc: object) -> None:
            stock_lock.release()

    monkeypatch.setattr(views, "_process", held_open)
    monkeypatch.setattr(views, "_lock", _SeenLock())
    one, other = _sample(Pair, "a"), _sample(Pair, "a")
    answers: list[bool] = []
    first = threading.Thread(target=lambda: answers.append(one == other))
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=lambda: answers.append(other == one), name="B")
    second.start()
    assert second_waits.wait(10)  # B is at the lock A holds, not answering from object.__eq__
    assert answers == []
    release.set()
    first.join(10)
    second.join(10)
    assert answers == [True, True]


class _Base:
    pass


def _declare(body: str) -> None:
    namespace: dict[str, Any] = {
        "views": views,
        "dataclasses": dataclasses,
        "ClassVar": ClassVar,
        "_Base": _Base,
    }
    exec(f"from __future__ import annotations\n{body}", namespace)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("@views.view\nclass V(_Base):\n    x: int\n", "no base class"),
        ("@views.view\nclass V:\n    x: int\n    def __post_init__(self): pass\n", "__post_init__"),
        ("@views.view\nclass V:\n    x: int = dataclasses.field(default=1)\n", "dataclasses.field"),
        ("@views.view\nclass V:\n    x: ClassVar[int] = 1\n", "not a plain field"),
        ("@views.view\nclass V:\n    x: int\n    def __eq__(self, o): return True\n", "__eq__"),
        (
            "@views.view\nclass V:\n    x: int\n    def f(self): return super().__repr__()\n",
            "super()",
        ),
    ],
)
def test_view_refuses_a_declaration_whose_fields_it_could_not_name(body: str, reason: str) -> None:
    with pytest.raises(TypeError, match=rf"@view .*V: .*{reason}"):
        _declare(body)


_CANARY_ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "web:1"}]}
  strategy: {canary: {steps: [{setWeight: 20}, {pause: {duration: 1m}}]}}
"""


def test_the_schema_builds_views_without_processing_them() -> None:
    """`schema.parse_view` fills a view's dictionary where `__init__` would do no more; it
    must find that out from `declared_fields`, not by processing the class: a fresh
    interpreter parses a canary Rollout and its strategy's classes stay pending."""
    probe = run_python(
        "import sys\n"
        "from headway.model import manifests, yamlload\n"
        "(document,) = yamlload.load_documents(sys.argv[1], 'r.yaml').documents\n"
        "view, diagnostics = manifests.parse_manifest(document)\n"
        "report = {'errors': [str(d) for d in diagnostics], 'steps': len(view.spec.strategy"
        ".canary.steps)}\n",
        _CANARY_ROLLOUT,
    )
    assert probe.report == {"errors": [], "steps": 2}
    assert {
        "headway.model.rollout.CanaryStrategy",
        "headway.model.rollout.RolloutSpec",
        "headway.model.rollout_steps.CanaryStep",
        "headway.model.rollout_steps.Pause",
        "headway.model.k8s.ObjectMeta",
    } <= probe.pending_views
