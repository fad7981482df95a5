"""How many threads numpy's BLAS may use for a product, for the two places that run many of
them: the read path's vector search (`store/vectors.py`) and the dream's neighbour search
(`dream/cluster.py`).

A matrix–vector product is bound by memory, not arithmetic, and OpenBLAS's worker threads start
late on a busy machine and spin after the call, taking the core the embedder and LanceDB need
next (at 10k rows on two busy cores: 17.6 ms with two threads, 0.6 ms with one). Only a large
product gains from a second core reading the other half of the matrix.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

# From this many multiply-adds a product runs on BLAS's own threads, below it on one: ~31k
# rows of 384 floats, ~16k of 768. Measured top-40 p50 on this project's two cores, one thread
# against BLAS's own, idle and with both cores busy in other processes: 20k rows 1.4 / 0.8 ms
# idle but 1.7 / 4.9 ms busy; 40k rows 3.5 / 2.0 ms idle and 15.3 / 8.0 ms busy; 100k rows
# 17.6 / 9.8 ms idle and 33.3 / 18.6 ms busy. The bound sits between 20k and 40k.
BLAS_THREADS_FROM = 12_000_000


def blas_threads(work: int) -> Any:
    """The BLAS threads for a product of `work` multiply-adds: one for a small product, whose
    start-up and spinning threads cost more than they save on a busy machine; BLAS's own for a
    large one, where a second core nearly halves the time, busy or not."""
    return one_blas_thread() if work < BLAS_THREADS_FROM else contextlib.nullcontext()


def one_blas_thread() -> Any:
    """A context in which numpy's BLAS runs on one thread (the dream's neighbour search runs
    many small products in threads of its own, which beats one multi-threaded BLAS)."""
    return _controller().limit(limits=1, user_api="blas")


@functools.cache
def _controller() -> Any:
    """threadpoolctl's scan of the loaded libraries, done once per process."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()
