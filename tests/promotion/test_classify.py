"""Classification by diff: only allowed automation keys may skip the gate; a hand edit never
rides along in the same file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from headway.model.key_paths import KeyPath, parse_key_path
from headway.promotion.classify import ChangeKind, classify_change
from headway.promotion.yaml_edits import remove_scalar, set_scalar

FILES = Path(__file__).parent / "files"
VALUES = (FILES / "values-prod.yaml").read_text()
KUSTOMIZATION = (FILES / "kustomization.yaml").read_text()
MANIFESTS = (FILES / "deployment.yaml").read_text()

TAG = parse_key_path("image.tag")
SKIP = parse_key_path("rollout.skipAnalysis")
NONCE = parse_key_path('podAnnotations["headway.dev/nonce"]')
AUTOMATION = (TAG, SKIP, NONCE)


def classify(old: str, new: str, exempt: tuple[KeyPath, ...] = AUTOMATION, **kw: Any) -> Any:
    return classify_change(
        old, new, automation_keys=AUTOMATION, exempt_keys=exempt, skip_flags=(SKIP,),
        file="values-prod.yaml", **kw,
    )  # fmt: skip


def bump(text: str, tag: str = "abc1234") -> str:
    return set_scalar(text, TAG, tag, file="v")


def test_nothing_changed() -> None:
    assert classify(VALUES, VALUES).kind is ChangeKind.NONE


def test_an_image_bump_alone_is_exempt() -> None:
    result = classify(VALUES, bump(VALUES))
    assert result.kind is ChangeKind.EXEMPT and result.reason == ""
    assert [change.key for change in result.changes] == ["image.tag"]


def test_an_image_bump_is_held_where_the_environment_exempts_nothing() -> None:
    result = classify(VALUES, bump(VALUES), exempt=())
    assert result.kind is ChangeKind.CONFIG
    assert result.reason.startswith("values-prod.yaml:6: image.tag: changed; not a key")


def test_a_hand_edit_in_the_same_file_never_rides_along() -> None:
    edited = set_scalar(bump(VALUES), parse_key_path("env[0].value"), "https://evil:8545", file="v")
    result = classify(VALUES, edited)
    assert result.kind is ChangeKind.CONFIG
    assert "values-prod.yaml:11: env[0].value: changed" in result.reason


def test_a_comment_edited_on_the_tag_line_is_held() -> None:
    edited = bump(VALUES).replace("# git SHA of the build", "# reviewed by nobody")
    result = classify(VALUES, edited)
    assert result.kind is ChangeKind.CONFIG
    assert "values-prod.yaml:6: image.tag: changed beside the allowed key" in result.reason


def test_turning_the_skip_flag_on_is_never_exempt() -> None:
    marked = set_scalar(set_scalar(VALUES, SKIP, True, file="v"), NONCE, "n1", file="v")
    result = classify(VALUES, marked)
    assert result.kind is ChangeKind.CONFIG
    assert "rollout.skipAnalysis: turns the analysis-skip flag on" in result.reason


def test_taking_the_skip_flag_off_may_be_exempt_and_only_when_listed() -> None:
    marked = set_scalar(set_scalar(VALUES, SKIP, True, file="v"), NONCE, "n1", file="v")
    cleared = remove_scalar(remove_scalar(marked, SKIP, file="v"), NONCE, file="v")
    assert cleared == VALUES
    assert classify(marked, bump(cleared)).kind is ChangeKind.EXEMPT
    held = classify(marked, bump(cleared), exempt=(TAG, NONCE))
    assert held.kind is ChangeKind.CONFIG and "rollout.skipAnalysis: removed" in held.reason


def test_an_exempt_key_must_also_be_one_the_automation_writes() -> None:
    edited = set_scalar(VALUES, parse_key_path("replicaCount"), "30", file="v")
    result = classify(VALUES, edited, exempt=(*AUTOMATION, parse_key_path("replicaCount")))
    assert result.kind is ChangeKind.CONFIG


def test_kustomize_new_tag_is_exempt_but_not_new_name_nor_another_entry() -> None:
    tag = parse_key_path("images[name=payments-api].newTag")

    def kinds(new: str) -> ChangeKind:
        return classify_change(
            KUSTOMIZATION, new, automation_keys=(tag,), exempt_keys=(tag,), file="k"
        ).kind

    assert kinds(set_scalar(KUSTOMIZATION, tag, "abc", file="k")) is ChangeKind.EXEMPT
    other = parse_key_path("images[name=sidecar].newTag")
    assert kinds(set_scalar(KUSTOMIZATION, other, "abc", file="k")) is ChangeKind.CONFIG
    name = parse_key_path("images[name=payments-api].newName")
    assert kinds(set_scalar(KUSTOMIZATION, name, "evil.io/x", file="k")) is ChangeKind.CONFIG


def test_a_manifest_field_is_allowed_only_in_its_document() -> None:
    field = parse_key_path("spec.template.spec.containers[name=api].image")

    def kinds(new: str) -> ChangeKind:
        return classify_change(
            MANIFESTS, new, automation_keys=(field,), exempt_keys=(field,), document=1, file="d"
        ).kind

    bumped = set_scalar(
        MANIFESTS, field, "registry.example.com/payments-api:b", document=1, file="d"
    )
    assert kinds(bumped) is ChangeKind.EXEMPT
    port = parse_key_path("spec.ports[0].port")
    assert kinds(set_scalar(bumped, port, "81", document=0, file="d")) is ChangeKind.CONFIG


def test_text_that_is_not_yaml_is_a_config_change() -> None:
    result = classify(VALUES, VALUES + "\n  : : [\n")
    assert result.kind is ChangeKind.CONFIG and "not valid YAML" in result.reason


# ---- properties ---------------------------------------------------------------------------

TAGS = st.text(alphabet="abcdef0123456789-._", min_size=1, max_size=20).filter(
    lambda t: t[0] not in "-._"
)


@settings(max_examples=30)
@given(st.lists(TAGS, min_size=1, max_size=5))
@example(["0b_", "0x_"])  # PyYAML's int() of these raised ValueError (found by this test)
def test_any_sequence_of_image_bumps_is_exempt(tags: list[str]) -> None:
    text = VALUES
    for tag in tags:
        new = bump(text, tag)
        assert classify(text, new).exempt
        text = new


def _leaf_paths(node: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    if isinstance(node, dict):
        return [p for key, child in node.items() for p in _leaf_paths(child, (*path, key))]
    if isinstance(node, list):
        return [p for index, child in enumerate(node) for p in _leaf_paths(child, (*path, index))]
    return [path]


HAND_EDITABLE = [p for p in _leaf_paths(yaml.safe_load(VALUES)) if p != ("image", "tag")]


@settings(max_examples=30)
@given(st.sampled_from(HAND_EDITABLE), st.text(min_size=1, max_size=12), st.booleans())
def test_any_hand_edit_of_another_key_is_held(
    path: tuple[str | int, ...], value: str, with_bump: bool
) -> None:
    key = KeyPath(path)
    edited = set_scalar(VALUES, key, value, file="v")
    if edited == VALUES:
        return  # the value was already that
    new = bump(edited) if with_bump else edited
    result = classify(VALUES, new)
    assert result.kind is ChangeKind.CONFIG
    # The key, or the mapping written on the same line (`limits: {cpu: "1", memory: ...}`).
    named = [str(KeyPath(path[:n])) for n in range(1, len(path) + 1)]
    assert any(f": {name}: " in result.reason for name in named), result.reason


@settings(max_examples=30)
@given(st.integers(min_value=0, max_value=VALUES.count("\n")), st.text(max_size=30))
def test_any_inserted_line_is_held(line: int, text: str) -> None:
    lines = bump(VALUES).splitlines(keepends=True)
    lines.insert(line, text.replace("\r", "").replace("\n", "") + "\n")
    assert classify(VALUES, "".join(lines)).kind is ChangeKind.CONFIG


@pytest.mark.parametrize("count", [3])
def test_the_reason_lists_a_few_and_counts_the_rest(count: int) -> None:
    edited = VALUES
    for index, key in enumerate(
        ["replicaCount", "image.pullPolicy", "env[0].value", "env[1].value"]
    ):
        edited = set_scalar(edited, parse_key_path(key), f"x{index}", file="v")
    reason = classify(VALUES, edited).reason
    assert reason.count("values-prod.yaml:") == count and reason.endswith("(and 1 more)")
