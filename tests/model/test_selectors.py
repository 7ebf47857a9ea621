"""Label selectors: the string form, the structured form, and matching, as tables."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headway.model.selectors import (
    Operator,
    Requirement,
    Selector,
    SelectorError,
    matches,
    parse_selector,
    selector_from_object,
    to_selector,
)

WEB = {"app": "web", "tier": "front", "env": "prod"}
API = {"app": "api", "tier": "back"}
BARE: dict[str, str] = {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ()),
        ("a=b", (Requirement("a", Operator.IN, ("b",)),)),
        ("a==b", (Requirement("a", Operator.IN, ("b",)),)),
        ("a!=b", (Requirement("a", Operator.NOT_IN, ("b",)),)),
        ("a=", (Requirement("a", Operator.IN, ("",)),)),
        ("a in (y,x)", (Requirement("a", Operator.IN, ("x", "y")),)),
        ("a notin ( x , y )", (Requirement("a", Operator.NOT_IN, ("x", "y")),)),
        ("!a", (Requirement("a", Operator.DOES_NOT_EXIST),)),
        ("a", (Requirement("a", Operator.EXISTS),)),
        (" a = b , !c ", (Requirement("a", Operator.IN, ("b",)),
                          Requirement("c", Operator.DOES_NOT_EXIST))),
        ("app.kubernetes.io/name=web",
         (Requirement("app.kubernetes.io/name", Operator.IN, ("web",)),)),
    ],
)
def test_parse(text: str, expected: tuple[Requirement, ...]) -> None:
    assert parse_selector(text).requirements == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a in (x", "character 8: the set of values is not closed"),
        ("a in ()", "needs at least one value"),
        ("a in x", "expected '(' to start the set of values"),
        ("a b", "character 3: expected '=', '!=', 'in' or 'notin' after 'a'"),
        ("a=b,", "a requirement must follow ','"),
        ("a=b c", "character 5: expected ',' between requirements"),
        ("!", "expected a label key after '!'"),
        ("=b", "character 1: expected a label key"),
        ("a=b=c", "expected ',' between requirements"),
        ("-a=b", "invalid label key '-a'"),
        ("a=-b", "invalid label value '-b'"),
        ("Bad/a=b", "bad prefix 'Bad'"),
        ("a in (x y)", "expected ',' or ')'"),
        ("a>1", "expected '=', '!=', 'in' or 'notin'"),
    ],
)
def test_parse_errors_say_where_and_why(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        parse_selector(text)
    assert message in str(caught.value)
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("app=web", WEB, True),
        ("app=web", API, False),
        ("app=web", BARE, False),
        ("app!=web", API, True),
        ("app!=web", BARE, True),  # NotIn also matches a missing key
        ("app!=web", WEB, False),
        ("tier in (front,back)", API, True),
        ("tier notin (front)", API, True),
        ("tier notin (front)", WEB, False),
        ("env", WEB, True),
        ("env", API, False),
        ("!env", API, True),
        ("!env", WEB, False),
        ("app=web,env=prod", WEB, True),
        ("app=web,env=dev", WEB, False),
        ("", BARE, True),
        ({"app": "web"}, WEB, True),
        ({"app": "web", "tier": "back"}, WEB, False),
        ({}, API, True),
        (None, API, True),
        ({"matchLabels": {"app": "api"}}, API, True),
        ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["back"]}]},
         API, True),
        ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["back"]}]},
         API, False),
        ({"matchExpressions": [{"key": "env", "operator": "Exists"}]}, WEB, True),
        ({"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}, WEB, False),
        ({"matchLabels": {"app": "web"},
          "matchExpressions": [{"key": "env", "operator": "In", "values": ["dev"]}]},
         WEB, False),
    ],
)
def test_matches(selector: object, labels: dict[str, str], expected: bool) -> None:
    assert matches(selector, labels) is expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"matchLabels": ["app"]}, "selector.matchLabels: must be a mapping"),
        ({"matchLabels": {"app": 1}}, "value must be a string"),
        ({"matchExpressions": {"key": "a"}}, "selector.matchExpressions: must be a list"),
        ({"matchExpressions": [{"operator": "Exists"}]}, "matchExpressions[0].key: required"),
        ({"matchExpressions": [{"key": "a", "operator": "Gt"}]},
         "matchExpressions[0].operator: 'Gt' is not one of In, NotIn, Exists, DoesNotExist"),
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "needs at least one value"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
         "takes no values"),
    ],
)
def test_structured_errors_name_the_field(obj: dict[str, object], message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        selector_from_object(obj)
    assert message in str(caught.value)


def test_label_named_match_labels_is_an_equality() -> None:
    assert to_selector({"matchLabels": "x"}).equalities() == {"matchLabels": "x"}


@pytest.mark.parametrize(
    "text", ["a=b", "a!=b", "!a", "a", "a in (x,y)", "a notin (x,y)", "a=b,c in (d,e),!f"]
)
def test_string_form_round_trips(text: str) -> None:
    assert str(parse_selector(text)) == text
    assert parse_selector(str(parse_selector(text))) == parse_selector(text)


def test_equalities_are_the_single_value_ins() -> None:
    selector = parse_selector("a=b,c in (d,e),f!=g,h")
    assert selector.equalities() == {"a": "b"}
    assert Selector().is_everything


_keys = st.sampled_from(["app", "tier", "app.kubernetes.io/name", "x-y_z"])
_values = st.sampled_from(["web", "api", "v1.2", "a_b"])
_requirements = st.one_of(
    st.builds(lambda k, v: Requirement(k, Operator.IN, (v,)), _keys, _values),
    st.builds(lambda k, v: Requirement(k, Operator.NOT_IN, (v,)), _keys, _values),
    st.builds(lambda k, vs: Requirement(k, Operator.IN, tuple(sorted(vs))), _keys,
              st.sets(_values, min_size=2, max_size=3)),
    st.builds(lambda k, vs: Requirement(k, Operator.NOT_IN, tuple(sorted(vs))), _keys,
              st.sets(_values, min_size=2, max_size=3)),
    st.builds(lambda k: Requirement(k, Operator.EXISTS), _keys),
    st.builds(lambda k: Requirement(k, Operator.DOES_NOT_EXIST), _keys),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_requirements, max_size=4),
       st.dictionaries(_keys, _values, max_size=4))
def test_printed_selectors_parse_back_and_match_alike(
    requirements: list[Requirement], labels: dict[str, str]
) -> None:
    selector = Selector(tuple(requirements))
    parsed = parse_selector(str(selector))
    assert parsed == selector
    assert parsed.matches(labels) == all(r.matches(labels) for r in requirements)
