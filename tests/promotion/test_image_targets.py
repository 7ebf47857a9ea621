"""Promotion edits of real-looking target files change the tag's characters and nothing else."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
import yaml

from headway.model.promotion_pipeline import (
    Approval,
    Environment,
    Gate,
    HelmKey,
    Hotfix,
    ImageTarget,
    KustomizeImage,
    ManifestField,
)
from headway.promotion.image_targets import promotion_edit, read_image, set_image
from headway.promotion.yaml_edits import YamlEditError

FILES = Path(__file__).parent / "files"
REPO = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/payments-api"

HELM = ImageTarget("values-prod.yaml", HelmKey("image.tag"), None, None)
KUSTOMIZE = ImageTarget("kustomization.yaml", None, KustomizeImage("payments-api"), None)
MANIFEST = ImageTarget(
    "deployment.yaml",
    None,
    None,
    ManifestField("Deployment", "payments-api", "spec.template.spec.containers[name=api].image"),
)
HOTFIX = Hotfix("rollout.skipAnalysis", 'podAnnotations["headway.dev/nonce"]')


def environment(target: ImageTarget, hotfix: Hotfix | None = None) -> Environment:
    gate = Gate(Approval(False, (), 3600.0), ())
    return Environment("prod", "payments-api-prod", None, target, False, 600.0, gate, hotfix)


def changed_lines(old: str, new: str) -> list[tuple[str, str]]:
    """(removed, added) line pairs of a diff that only replaces lines one for one."""
    pairs = []
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        assert tag == "replace" and a2 - a1 == b2 - b1 == 1, (tag, old[a1:a2], new[b1:b2])
        pairs.append((old.splitlines()[a1], new.splitlines()[b1]))
    return pairs


def sha_like_tags(count: int) -> list[str]:
    """Git-SHA-like tags that YAML reads as strings when written plain (see the quoting test)."""
    tags: list[str] = []
    n = 1
    while len(tags) < count:
        tag = f"{(n * 2654435761) % 16**7:07x}"
        if not tag.isdigit() and "e" not in tag:
            tags.append(tag)
        n += 1
    return tags


def repository_of(target: ImageTarget) -> str:
    return "registry.example.com/payments-api" if target is MANIFEST else REPO


@pytest.mark.parametrize(
    "target", [HELM, KUSTOMIZE, MANIFEST], ids=["helm", "kustomize", "manifest"]
)
def test_a_hundred_promotions_change_only_the_tag(target: ImageTarget) -> None:
    repository = repository_of(target)
    original = (FILES / target.file).read_text()
    first = read_image(original, target, repository=repository, file="f")
    text, old_tag = original, first.rsplit(":", 1)[1]
    for tag in sha_like_tags(100):
        new = set_image(text, target, f"{repository}:{tag}", file=target.file)
        [(removed, added)] = changed_lines(text, new)
        assert added == removed.replace(old_tag, tag)
        text, old_tag = new, tag
    assert read_image(text, target, repository=repository, file="f") == f"{repository}:{old_tag}"
    assert set_image(text, target, first, file=target.file) == original


@pytest.mark.parametrize("tag", ["1234567", "1234e56", "1.10", "0x1f", "true", "null", "on"])
def test_a_tag_yaml_would_read_as_another_type_is_quoted(tag: str) -> None:
    text = (FILES / "kustomization.yaml").read_text()
    new = set_image(text, KUSTOMIZE, f"{REPO}:{tag}", file="kustomization.yaml")
    [(_, added)] = changed_lines(text, new)
    assert f'newTag: "{tag}"' in added
    for loaded in (yaml.safe_load(new), yaml.load(new, Loader=yaml.BaseLoader)):
        assert loaded["images"][0]["newTag"] == tag


def test_the_file_quoting_style_is_kept() -> None:
    text = (FILES / "values-prod.yaml").read_text()
    new = set_image(text, HELM, f"{REPO}:abc1234", file="values-prod.yaml")
    [(_, added)] = changed_lines(text, new)
    assert added == '  tag: "abc1234"   # git SHA of the build; immutable in ECR'


def test_a_hotfix_marks_and_the_next_promotion_clears_to_the_same_bytes() -> None:
    env = environment(HELM, HOTFIX)
    original = (FILES / "values-prod.yaml").read_text()
    fix = promotion_edit(
        original, env, image=f"{REPO}:fix0001", repository=REPO, file="v", nonce="n-42"
    )
    data = yaml.safe_load(fix.text)
    assert data["rollout"]["skipAnalysis"] is True
    assert data["podAnnotations"]["headway.dev/nonce"] == "n-42"
    assert fix.previous == f"{REPO}:3f9c2e1"
    normal = promotion_edit(fix.text, env, image=f"{REPO}:3f9c2e1", repository=REPO, file="v")
    assert normal.text == original


def test_hotfix_keys_under_missing_parents_are_added_and_removed_whole() -> None:
    hotfix = Hotfix("hotfix.analysis.skip", "hotfix.nonce")
    env = environment(KUSTOMIZE, hotfix)
    original = (FILES / "kustomization.yaml").read_text()
    fix = promotion_edit(original, env, image=f"{REPO}:abc", repository=REPO, file="k", nonce="7")
    added = fix.text.splitlines()[len(original.splitlines()) :]
    assert added == ["hotfix:", "  analysis:", "    skip: true", '  nonce: "7"']
    cleared = promotion_edit(fix.text, env, image=f"{REPO}:3f9c2e1", repository=REPO, file="k")
    assert cleared.text == original


def test_a_missing_image_key_is_an_error_naming_file_and_key() -> None:
    target = ImageTarget("values-prod.yaml", HelmKey("worker.image.tag"), None, None)
    text = (FILES / "values-prod.yaml").read_text()
    with pytest.raises(YamlEditError, match=r"values-prod.yaml: worker.image.tag is missing"):
        set_image(text, target, f"{REPO}:x", file="values-prod.yaml")


def test_a_value_written_across_lines_is_refused_not_mangled() -> None:
    text = "image:\n  tag:\n    abc\n    def\n"
    target = ImageTarget("v.yaml", HelmKey("image.tag"), None, None)
    with pytest.raises(YamlEditError, match="edit it by hand"):
        set_image(text, target, f"{REPO}:new", file="v.yaml")


def test_a_values_key_holding_the_whole_reference_gets_the_whole_reference() -> None:
    text = "# one string\nworker:\n  image: registry.local/worker:v1   # pinned\n"
    target = ImageTarget("v.yaml", HelmKey("worker.image", holds="image"), None, None)
    assert read_image(text, target, repository="ignored", file="v") == "registry.local/worker:v1"
    new = set_image(text, target, "registry.local/worker:v2", file="v")
    assert new == text.replace("worker:v1", "worker:v2")


def test_added_lines_follow_the_files_line_endings() -> None:
    text = "image:\r\n  tag: v1\r\n"
    env = environment(ImageTarget("v.yaml", HelmKey("image.tag"), None, None), HOTFIX)
    fix = promotion_edit(text, env, image=f"{REPO}:v2", repository=REPO, file="v", nonce="n")
    assert "\n" not in fix.text.replace("\r\n", "")
    back = promotion_edit(fix.text, env, image=f"{REPO}:v1", repository=REPO, file="v")
    assert back.text == text
