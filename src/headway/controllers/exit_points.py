"""A test hook for kill trials: end the process at a named point, as a SIGKILL would there.

`HEADWAY_TEST_EXIT_AT=hook-created headway serve ...` exits (status 137, no cleanup, no
flush) the first time the named point is reached. The windows it opens are the ones a kill
at a random moment rarely hits: after a write that the persisted state does not record yet.
Unset, it costs one dictionary lookup.
"""

from __future__ import annotations

import os

__all__ = ["ENV", "reached"]

ENV = "HEADWAY_TEST_EXIT_AT"


def reached(point: str) -> None:
    """Exit at once when `HEADWAY_TEST_EXIT_AT` names `point` (comma-separated names)."""
    named = os.environ.get(ENV)
    if named and point in named.split(","):
        os._exit(137)
