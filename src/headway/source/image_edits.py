"""Find and rewrite one image reference in YAML text, touching only the characters of its value.

Three ways a repository pins a workload's image are recognised, in any YAML file:

* a plain manifest (or a Helm values file) with `image: repo:tag`;
* a Kustomize `images:` entry, `{name, newName?, newTag}`: the tag is `newTag`;
* Helm values with `image: {repository: repo, tag: tag}` (any parent key, so
  `worker.image.tag` is found too).

The text is parsed with ruamel.yaml's round-trip loader only to learn where each value sits
(line and column); the edit then replaces that value's characters in place. Comments, quoting
style, indentation and every other line stay byte-for-byte as they were, so the diff is one line
per reference (re-dumping the document would need the file's indentation detected first and can
still reflow long lines). Pure functions: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from io import StringIO
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

__all__ = [
    "ImageEditError",
    "ImageName",
    "ImageSite",
    "SiteKind",
    "find_image_sites",
    "replace_site_values",
    "split_image",
]


class ImageEditError(ValueError):
    """A file that cannot be searched or edited; the message names the file and line."""


@dataclass(frozen=True, order=True)
class ImageName:
    """An image reference split into repository and tag (`digest` kept with its algorithm)."""

    repository: str
    tag: str = ""
    digest: str = ""

    def __str__(self) -> str:
        text = self.repository
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text


def split_image(image: str) -> ImageName:
    """`registry:5000/team/app:v3@sha256:...` -> repository, tag, digest (tag may be empty)."""
    rest, _, digest = image.strip().partition("@")
    slash = rest.rfind("/")
    colon = rest.rfind(":")
    if colon > slash:
        return ImageName(rest[:colon], rest[colon + 1 :], digest)
    return ImageName(rest, "", digest)


def repository_matches(written: str, wanted: str) -> bool:
    """Does a repository as written in values (`app`, `team/app`) name `wanted`?

    Values files often leave the registry (or the whole path) to the chart template, so a
    written repository that is a trailing path of the wanted one matches."""
    written = written.strip()
    return bool(written) and (written == wanted or wanted.endswith("/" + written))


class SiteKind(StrEnum):
    IMAGE_STRING = "image"  # image: repo:tag
    KUSTOMIZE_TAG = "kustomize-newTag"  # images: [{name, newTag}]
    HELM_TAG = "helm-tag"  # image: {repository, tag}


@dataclass(frozen=True)
class ImageSite:
    """Where one image reference's value is written: document, YAML path, line and column."""

    kind: SiteKind
    document: int
    path: tuple[str | int, ...]
    line: int  # 0-based
    column: int  # 0-based, at the value's first character (a quote when quoted)
    value: str  # the scalar as loaded: a whole image for IMAGE_STRING, else the tag

    @property
    def location(self) -> tuple[int, tuple[str | int, ...]]:
        return (self.document, self.path)

    def describe(self, file: str) -> str:
        dotted = ".".join(str(p) for p in self.path)
        return f"{file}:{self.line + 1}: {dotted}"


def _load_documents(text: str, file: str) -> list[Any]:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    try:
        return list(yaml.load_all(StringIO(text)))
    except YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{file}:{mark.line + 1}" if mark is not None else file
        raise ImageEditError(f"{where}: not valid YAML: {getattr(err, 'problem', err)}") from None


def _walk(node: Any, path: tuple[str | int, ...]) -> Iterator[tuple[Any, tuple[str | int, ...]]]:
    yield node, path
    if isinstance(node, CommentedMap):
        for key, child in node.items():
            yield from _walk(child, (*path, str(key)))
    elif isinstance(node, CommentedSeq):
        for index, child in enumerate(node):
            yield from _walk(child, (*path, index))


def _value_site(
    kind: SiteKind, owner: CommentedMap, key: str, doc: int, path: tuple[str | int, ...]
) -> ImageSite | None:
    value = owner.get(key)
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return None
    line, column = owner.lc.value(key)
    return ImageSite(kind, doc, (*path, key), line, column, str(value))


def _sites_in_map(
    node: CommentedMap, wanted: ImageName, doc: int, path: tuple[str | int, ...]
) -> Iterator[ImageSite]:
    image = node.get("image")
    if isinstance(image, str) and split_image(image) == wanted:
        site = _value_site(SiteKind.IMAGE_STRING, node, "image", doc, path)
        if site is not None:
            yield site
    if "newTag" in node and isinstance(node.get("name"), str):
        written = node.get("newName") or node["name"]
        if repository_matches(str(written), wanted.repository):
            site = _value_site(SiteKind.KUSTOMIZE_TAG, node, "newTag", doc, path)
            if site is not None and site.value == wanted.tag:
                yield site
    repository = node.get("repository")
    helm_like = isinstance(repository, str) and repository_matches(repository, wanted.repository)
    if helm_like and "tag" in node:
        site = _value_site(SiteKind.HELM_TAG, node, "tag", doc, path)
        if site is not None and site.value == wanted.tag:
            yield site


def find_image_sites(text: str, image: str, *, file: str = "<text>") -> list[ImageSite]:
    """Every place in `text` (all YAML documents) that pins `image` (repo:tag)."""
    wanted = split_image(image)
    sites: list[ImageSite] = []
    for doc_index, document in enumerate(_load_documents(text, file)):
        for node, path in _walk(document, ()):
            if isinstance(node, CommentedMap):
                sites.extend(_sites_in_map(node, wanted, doc_index, path))
    return sites


def sites_by_location(
    text: str, *, file: str = "<text>"
) -> dict[tuple[int, tuple[str | int, ...]], Any]:
    """Every scalar of `text` by (document, path): to read what a site held in another version."""
    found: dict[tuple[int, tuple[str | int, ...]], Any] = {}
    for doc_index, document in enumerate(_load_documents(text, file)):
        for node, path in _walk(document, ()):
            if not isinstance(node, CommentedMap | CommentedSeq):
                found[(doc_index, path)] = node
    return found


def _replace_on_line(line: str, site: ImageSite, new_value: str, file: str) -> str:
    start = site.column
    segment = line[start:]
    if segment[:1] in ("'", '"'):
        quote = segment[0]
        end = segment.find(quote, 1)
        if end < 0 or segment[1:end] != site.value:
            raise ImageEditError(f"{site.describe(file)}: a multi-line or escaped value")
        return line[:start] + quote + new_value + quote + segment[end + 1 :]
    if not segment.startswith(site.value):
        raise ImageEditError(f"{site.describe(file)}: the value is not written on one line")
    tail = segment[len(site.value) :]
    if tail and tail[0] not in " \t,}]#\r\n":
        raise ImageEditError(f"{site.describe(file)}: the value is not written on one line")
    return line[:start] + new_value + tail


def replace_site_values(
    text: str, edits: Sequence[tuple[ImageSite, str]], *, file: str = "<text>"
) -> str:
    """`text` with each site's value replaced by its new value; nothing else changes."""
    lines = text.splitlines(keepends=True)
    for site, new_value in sorted(edits, key=lambda e: (e[0].line, -e[0].column)):
        if site.line >= len(lines):
            raise ImageEditError(f"{site.describe(file)}: past the end of the file")
        lines[site.line] = _replace_on_line(lines[site.line], site, new_value, file)
    return "".join(lines)
