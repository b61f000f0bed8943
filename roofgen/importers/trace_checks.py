"""What a trace's figures must be before a case is made of them, checked against the
trace's own entries, so that a problem is reported as the input's (the file, the
kernel and the field), not as a case that does not check.

Shared by ``import nsys`` and ``import torch-trace`` (:mod:`roofgen.importers.trace_case`
runs it): launch shapes within what CUDA allows (grid x up to 2**31 - 1, y and z up
to 65,535; a block at most 1,024 x 1,024 x 64 and 1,024 threads; no size below 1),
no run of negative time, steps that last, and GPU-busy time within the steps' span.
An entry whose every run lasted 0 (shorter than the trace's resolution: old traces
count whole microseconds) has no time a case can hold: it is left out, with a note.
"""

from __future__ import annotations

import math
from typing import Any

from roofgen.importers import ImportFailure

__all__ = ["BLOCK_LIMITS", "GRID_LIMITS", "MAX_THREADS", "check_trace", "timed"]

#: CUDA's launch bounds, x, y, z (the importers' one home for them).
GRID_LIMITS = (2**31 - 1, 65535, 65535)
BLOCK_LIMITS = (1024, 1024, 64)
MAX_THREADS = 1024  # in a block, all three sizes multiplied


def _where(trace: Any) -> str:
    return ", ".join(trace.files)


def _shape_problem(dims: tuple[Any, ...], limits: tuple[int, ...], what: str) -> str | None:
    if not 1 <= len(dims) <= 3:
        return f"{what} {list(dims)} has {len(dims)} dimensions: CUDA's have 1 to 3"
    for axis, (size, limit) in enumerate(zip(dims, limits, strict=False)):
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= limit:
            return (
                f"{what} {list(dims)}: its {'xyz'[axis]} size is {size!r}, and CUDA's is "
                f"1 to {limit:,}"
            )
    threads = math.prod(dims)
    if what == "block" and threads > MAX_THREADS:
        return f"block {list(dims)}: {threads:,} threads, and CUDA's at most {MAX_THREADS:,}"
    return None


def check_trace(trace: Any) -> None:
    """Raise ImportFailure for the first entry or step figure a case cannot hold."""
    for entry in trace.kernels:
        problem = None
        if entry.grid is not None:
            problem = _shape_problem(tuple(entry.grid), GRID_LIMITS, "grid")
        if problem is None and entry.block is not None:
            problem = _shape_problem(tuple(entry.block), BLOCK_LIMITS, "block")
        if problem is None and (entry.count < 1 or entry.min_ns < 0 or entry.total_ns < 0):
            problem = "a run of negative time (it ends before it starts)"
        if problem is not None:
            name = entry.name if len(entry.name) <= 80 else entry.name[:77] + "..."
            raise ImportFailure(f"{_where(trace)}: kernel {name!r}: {problem}")
    steps = trace.steps
    if steps.count < 1 or steps.span_ns <= 0:
        raise ImportFailure(
            f"{_where(trace)}: the steps imported last {steps.span_ns} ns in all: nothing "
            "ran for a time a case can hold"
        )
    if steps.busy_ns > steps.span_ns:
        raise ImportFailure(
            f"{_where(trace)}: the kernels ran {steps.busy_ns:,} ns within steps that last "
            f"{steps.span_ns:,} ns: kernels start before the steps that launched them (the "
            "trace's clocks disagree)"
        )


def timed(trace: Any) -> list[Any]:
    """The entries with a time (more than 0 ns in all); the others are noted."""
    kept = [entry for entry in trace.kernels if entry.total_ns > 0]
    left = len(trace.kernels) - len(kept)
    if left:
        trace.notes.append(
            f"{left} entr{'y' if left == 1 else 'ies'} whose every run lasted 0 (shorter than "
            "the trace's resolution): left out"
        )
    if not kept:
        raise ImportFailure(f"{_where(trace)}: no kernel in the steps imported ran for any time")
    return kept
