"""Loading pauses the cyclic GC and always restores the caller's setting."""

from __future__ import annotations

import gc

from headway.model.validate import validate_text
from headway.model.yamlload import load_documents, paused_gc


def test_gc_state_is_restored_after_load_and_validate() -> None:
    assert gc.isenabled()
    load_documents("a: [", "broken.yaml")  # even when the file is broken
    validate_text("kind: [", "broken.yaml")
    assert gc.isenabled()


def test_a_disabled_gc_stays_disabled() -> None:
    gc.disable()
    try:
        load_documents("apiVersion: v1\nkind: ConfigMap\n", "c.yaml")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_paused_inside_the_block() -> None:
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
