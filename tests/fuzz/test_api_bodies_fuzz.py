"""Request bodies of the local runtime's Kubernetes API: decoded, or a 400 BadRequest; an
alias bomb or a deeply nested body never stalls or crashes the server."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz.shapes import JSON
from fuzz.test_yaml_aliases import LAUGHS
from headway.cluster.local.api.kubeapi.bodies import decode
from headway.cluster.local.api.kubeapi.status import ApiError

CONTENT_TYPES = ["application/json", "application/apply-patch+yaml", "application/yaml"]


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (LAUGHS.encode(), "application/apply-patch+yaml"),
        (b"spec: &s {a: *s}\n", "application/apply-patch+yaml"),
        (b"[" * 100_000, "application/json"),
        (b"[" + b"9" * 5000 + b"]", "application/json"),
    ],
)
def test_hostile_bodies_are_bad_requests(body: bytes, content_type: str) -> None:
    with pytest.raises(ApiError) as raised:
        decode(body, content_type)
    assert raised.value.code == 400


@settings(max_examples=200)
@given(
    body=st.binary(max_size=40) | st.builds(lambda v: json.dumps(v).encode(), JSON),
    content_type=st.sampled_from(CONTENT_TYPES),
)
def test_any_body_decodes_or_is_a_bad_request(body: bytes, content_type: str) -> None:
    try:
        decode(body, content_type)
    except ApiError as err:
        assert err.code == 400
