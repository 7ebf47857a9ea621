"""The latency histogram's bucket bounds, shared by the data plane's metrics and the drill.

A module of its own so that the drill (which `headway check` runs) reads the bounds without
importing the data plane's server side and asyncio with it.
"""

from __future__ import annotations

__all__ = ["DEFAULT_BUCKETS"]

# Upper bounds in seconds; HTTP-shaped, from 5 ms to 10 s (+Inf is implicit).
DEFAULT_BUCKETS: tuple[float, ...] = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
