"""The edits a promotion makes to an environment's target file, per target kind.

* Helm values: the key (`image.tag`) holds the tag.
* Kustomize: the `images:` entry whose `name` is given; its `newTag` holds the tag.
* A plain manifest: the field (`spec.template.spec.containers[name=api].image`) of the
  document with the given kind and name holds the whole reference, `repository:tag`.

A hotfix also sets the environment's skip-analysis flag to `true` and writes a nonce (a new
value forces a new pod template, so the same image can be redeployed); the next normal
promotion removes both, so the flag never outlives the hotfix that needed it.

Every edit goes through `yaml_edits`, so the rest of the file stays byte-for-byte. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from headway.model.key_paths import parse_key_path
from headway.model.promotion_pipeline import Environment, Hotfix, ImageTarget
from headway.promotion.yaml_edits import (
    YamlEditError,
    load_round_trip,
    locate,
    remove_scalar,
    set_scalar,
)
from headway.source.image_edits import split_image

__all__ = [
    "TargetEdit",
    "clear_hotfix",
    "mark_hotfix",
    "promotion_edit",
    "read_image",
    "set_image",
    "target_document",
]


@dataclass(frozen=True)
class TargetEdit:
    """A target file's new text, and the image it pinned before and pins now."""

    text: str
    previous: str
    image: str

    @property
    def changed(self) -> bool:
        return self.previous != self.image


def target_document(text: str, target: ImageTarget, *, file: str) -> int:
    """Which YAML document of the file holds the target's key."""
    if target.manifest is None:
        return 0  # a values file or a kustomization is one document
    documents = load_round_trip(text, file)
    wanted = (target.manifest.kind, target.manifest.name)
    for index, document in enumerate(documents):
        meta = document.get("metadata") if isinstance(document, Mapping) else None
        name = meta.get("name") if isinstance(meta, Mapping) else None
        if isinstance(document, Mapping) and (document.get("kind"), name) == wanted:
            return index
    raise YamlEditError(f"{file}: no {wanted[0]} named {wanted[1]!r}")


def read_image(text: str, target: ImageTarget, *, repository: str, file: str) -> str:
    """The image the target pins now (`repository:tag`; a manifest field as written)."""
    index = target_document(text, target, file=file)
    found = locate(load_round_trip(text, file)[index], target.key)
    if found is None or isinstance(found.value, Mapping | list) or found.value is None:
        raise YamlEditError(f"{file}: {target.key} is missing or not a scalar")
    value = str(found.value)
    return value if target.writes_whole_image else f"{repository}:{value}"


def set_image(text: str, target: ImageTarget, image: str, *, file: str) -> str:
    """`text` with the target's key pinning `image` (`repository:tag`)."""
    value = image if target.writes_whole_image else split_image(image).tag
    if not value:
        raise YamlEditError(f"{file}: {image!r} has no tag to write into {target.key}")
    index = target_document(text, target, file=file)
    return set_scalar(text, target.key, value, document=index, file=file, add_missing=False)


def mark_hotfix(text: str, hotfix: Hotfix, *, nonce: str, document: int, file: str) -> str:
    """Set the skip-analysis flag and write `nonce` (added where absent)."""
    flagged = set_scalar(
        text, parse_key_path(hotfix.skip_analysis_key), True, document=document, file=file
    )
    return set_scalar(
        flagged, parse_key_path(hotfix.nonce_key), nonce, document=document, file=file
    )


def clear_hotfix(text: str, hotfix: Hotfix, *, document: int, file: str) -> str:
    """Remove the skip-analysis flag and the nonce (nothing changes when neither is there)."""
    cleared = remove_scalar(
        text, parse_key_path(hotfix.skip_analysis_key), document=document, file=file
    )
    return remove_scalar(cleared, parse_key_path(hotfix.nonce_key), document=document, file=file)


def promotion_edit(
    text: str, env: Environment, *, image: str, repository: str, file: str, nonce: str = ""
) -> TargetEdit:
    """The whole edit of one promotion: pin `image`; with a `nonce`, mark a hotfix; without,
    clear any hotfix marks a previous promotion left."""
    target = env.target
    previous = read_image(text, target, repository=repository, file=file)
    edited = set_image(text, target, image, file=file)
    if env.hotfix is not None:
        index = target_document(edited, target, file=file)
        if nonce:
            edited = mark_hotfix(edited, env.hotfix, nonce=nonce, document=index, file=file)
        else:
            edited = clear_hotfix(edited, env.hotfix, document=index, file=file)
    elif nonce:
        raise YamlEditError(f"{file}: environment {env.name} declares no hotfix keys")
    return TargetEdit(edited, previous, image)
