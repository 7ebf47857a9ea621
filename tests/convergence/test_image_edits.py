"""Finding and rewriting one image reference: only the value's characters change."""

from __future__ import annotations

import difflib

import pytest

from headway.source.image_edits import (
    ImageEditError,
    SiteKind,
    find_image_sites,
    replace_site_values,
    split_image,
)

MANIFEST = """\
# the web workload
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: registry.local:5000/shop/web:v3   # bumped by CI
      - {name: proxy, image: "envoy:1.29"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web}
data:
  image: not-an-image-field
"""

HELM_VALUES = """\
replicaCount: 4
image:
    repository: shop/web
    tag: "v3"     # the release
    pullPolicy: IfNotPresent
worker:
    image:
        repository: shop/worker
        tag: v3
"""

KUSTOMIZATION = """\
resources:
  - ../../base
images:
  - name: shop/web
    newTag: v3
  - name: shop/worker
    newName: registry.local/shop/worker
    newTag: v3
"""


def changed_lines(before: str, after: str) -> list[str]:
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_split_image_keeps_registry_port_and_digest() -> None:
    name = split_image("registry.local:5000/shop/web:v3@sha256:abc")
    assert (name.repository, name.tag, name.digest) == (
        "registry.local:5000/shop/web",
        "v3",
        "sha256:abc",
    )
    assert split_image("registry.local:5000/shop/web").tag == ""


def test_plain_manifest_edit_is_one_line_and_keeps_the_comment() -> None:
    [site] = find_image_sites(MANIFEST, "registry.local:5000/shop/web:v3", file="web.yaml")
    assert site.kind is SiteKind.IMAGE_STRING
    assert site.path == ("spec", "template", "spec", "containers", 0, "image")
    assert site.line == 10
    after = replace_site_values(MANIFEST, [(site, "registry.local:5000/shop/web:v2")])
    assert changed_lines(MANIFEST, after) == [
        "-        image: registry.local:5000/shop/web:v3   # bumped by CI",
        "+        image: registry.local:5000/shop/web:v2   # bumped by CI",
    ]


def test_flow_style_and_quoted_values_keep_their_style() -> None:
    [site] = find_image_sites(MANIFEST, "envoy:1.29")
    after = replace_site_values(MANIFEST, [(site, "envoy:1.28")])
    assert changed_lines(MANIFEST, after) == [
        '-      - {name: proxy, image: "envoy:1.29"}',
        '+      - {name: proxy, image: "envoy:1.28"}',
    ]


def test_helm_values_tag_edit_is_one_line_with_four_space_indent() -> None:
    sites = find_image_sites(HELM_VALUES, "docker.io/shop/web:v3")
    assert [(s.kind, s.path) for s in sites] == [(SiteKind.HELM_TAG, ("image", "tag"))]
    after = replace_site_values(HELM_VALUES, [(sites[0], "v2")])
    assert changed_lines(HELM_VALUES, after) == [
        '-    tag: "v3"     # the release',
        '+    tag: "v2"     # the release',
    ]


def test_nested_helm_image_is_found_by_its_repository() -> None:
    sites = find_image_sites(HELM_VALUES, "shop/worker:v3")
    assert [s.path for s in sites] == [("worker", "image", "tag")]


def test_kustomize_images_entry_matches_name_or_new_name() -> None:
    web = find_image_sites(KUSTOMIZATION, "shop/web:v3")
    worker = find_image_sites(KUSTOMIZATION, "registry.local/shop/worker:v3")
    assert [(s.kind, s.path) for s in web] == [(SiteKind.KUSTOMIZE_TAG, ("images", 0, "newTag"))]
    assert [s.path for s in worker] == [("images", 1, "newTag")]
    after = replace_site_values(KUSTOMIZATION, [(web[0], "v2")])
    assert changed_lines(KUSTOMIZATION, after) == ["-    newTag: v3", "+    newTag: v2"]


def test_another_tag_or_repository_is_not_a_site() -> None:
    assert find_image_sites(HELM_VALUES, "shop/web:v4") == []
    assert find_image_sites(HELM_VALUES, "other/web:v3") == []
    assert find_image_sites(MANIFEST, "shop/web:v3") == []  # another registry


def test_invalid_yaml_names_the_file_and_line() -> None:
    with pytest.raises(ImageEditError, match=r"values\.yaml:3: not valid YAML"):
        find_image_sites("image:\n  tag: [v3\n", "x:v3", file="values.yaml")


def test_a_block_scalar_value_is_refused_not_mangled() -> None:
    text = "image: >-\n  shop/web:v3\n"
    [site] = find_image_sites(text, "shop/web:v3")
    with pytest.raises(ImageEditError, match="not written on one line"):
        replace_site_values(text, [(site, "shop/web:v2")])
