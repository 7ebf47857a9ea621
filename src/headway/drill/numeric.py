"""numpy, for the drill's simulated traffic, loaded without OpenBLAS's thread pool.

numpy's wheels bring OpenBLAS, which starts one thread per core when numpy loads, and those
threads spin for a while waiting for matrix work. The drill does none (Poisson and binomial
draws, cumulative sums), so on a 2-core machine `headway check`'s first run spent about a
tenth of a second of CPU on the spinning thread, and on a laptop of 16 cores it would be
fifteen threads (bench/bench_check.py, docs/performance.md). numpy is loaded here with
`OPENBLAS_NUM_THREADS=1` unless the environment sets it; the variable is taken out again
afterwards, so a process Headway starts later (the local runtime's apps) does not inherit it.
Where numpy was loaded before this module, nothing changes.
"""

from __future__ import annotations

import os

__all__ = ["np"]

_THREADS = "OPENBLAS_NUM_THREADS"

_ours = _THREADS not in os.environ
if _ours:
    os.environ[_THREADS] = "1"
try:
    import numpy as np
finally:
    if _ours:
        os.environ.pop(_THREADS, None)
