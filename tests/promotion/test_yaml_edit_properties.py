"""Properties of the round-trip edits on a real-looking values file: adding a key and removing
it again gives back the same bytes, and setting an existing scalar changes one line."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from headway.model.key_paths import KeyPath
from headway.promotion.yaml_edits import (
    YamlEditError,
    load_round_trip,
    remove_scalar,
    set_scalar,
)

VALUES = (Path(__file__).parent / "files" / "values-prod.yaml").read_text()
DATA = yaml.safe_load(VALUES)


def _paths(node: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every mapping (to add under) and every scalar (to set), by path."""
    found: list[tuple[str | int, ...]] = [path]
    if isinstance(node, dict):
        for key, child in node.items():
            found.extend(_paths(child, (*path, key)))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found.extend(_paths(child, (*path, index)))
    return found


def _at(path: tuple[str | int, ...]) -> Any:
    node = DATA
    for part in path:
        node = node[part]
    return node


def _flow(path: tuple[str | int, ...]) -> bool:
    node = load_round_trip(VALUES, "v")[0]
    for part in path:
        node = node[part]
    return bool(node.fa.flow_style())


# Block mappings only: flow mappings ({...}) are refused for additions, by design.
BLOCK_MAPPINGS = [p for p in _paths(DATA) if isinstance(_at(p), dict) and not _flow(p)]
SCALARS = [p for p in _paths(DATA) if not isinstance(_at(p), dict | list)]
NAMES = st.from_regex(r"[a-z][a-zA-Z0-9_]{0,10}", fullmatch=True)
VALUES_TEXT = st.text(max_size=20)


@settings(max_examples=25)
@given(st.sampled_from(BLOCK_MAPPINGS), st.lists(NAMES, min_size=1, max_size=3), VALUES_TEXT)
def test_adding_then_removing_a_key_gives_back_the_same_bytes(
    parent: tuple[str | int, ...], names: list[str], value: str
) -> None:
    if names[0] in _at(parent):
        return  # not a new key
    key = KeyPath((*parent, *names))
    added = set_scalar(VALUES, key, value, file="v")
    loaded: Any = yaml.safe_load(added)
    for part in key.parts:
        loaded = loaded[part]
    assert loaded == value
    assert remove_scalar(added, key, file="v") == VALUES


@settings(max_examples=25)
@given(st.sampled_from(SCALARS), VALUES_TEXT)
def test_setting_an_existing_scalar_changes_at_most_its_own_line(
    path: tuple[str | int, ...], value: str
) -> None:
    try:
        edited = set_scalar(VALUES, KeyPath(path), value, file="v")
    except YamlEditError:
        return  # refused (the file's form does not allow a one-line edit): nothing written
    changed = [
        line for line in difflib.ndiff(VALUES.splitlines(), edited.splitlines()) if line[:1] == "-"
    ]
    assert len(changed) <= 1
