"""Access to real system programs from tests (also importable from a directory's own
conftest, where `from conftest import ...` would find that conftest itself)."""

from __future__ import annotations

import os
import shutil

import pytest

__all__ = ["require_program"]


def require_program(name: str) -> str:
    """The path of a system program the test needs.

    Under scripts/test (HEADWAY_REQUIRE_SYSTEM_PACKAGES=1) a missing program fails the test,
    so CI can never go green by skipping; elsewhere the test is skipped with a hint.
    """
    sbin = f"/usr/sbin/{name}"
    path = shutil.which(name) or (sbin if os.path.exists(sbin) else None)
    if path:
        return path
    message = f"{name} is not installed; run scripts/install-system-packages"
    if os.environ.get("HEADWAY_REQUIRE_SYSTEM_PACKAGES") == "1":
        pytest.fail(message)
    pytest.skip(message)
