"""Value many states in chunks sized from their encoded input, within the limits of a solve.

A policy step values every successor of a state; a Childsnack state with 150 objects has
tens of thousands of them, and valuing them in one call needed 13-20 GB (about 0.5-1.3 KB of
working memory per element of the encoded input, 8-18 us per element on this machine;
``benchmarks/memory_limits.py``). :class:`ChunkedEvaluator` therefore encodes a chunk of states,
measures its encoded size (the number of elements of its input arrays), and runs it only if
its working memory fits the solve's memory headroom and its expected time the chunk's time
target; the limits are checked before every chunk. The time and memory a chunk costs per
element are measured as the search goes, starting from cautious priors.

Any value function works: one with ``prepare(inputs) -> feed`` and ``run(feed) -> values``
(:class:`~up_gnnplan.runtime.value_function.OnnxValueFunction`, the training code's torch
value function) is chunked by encoded size; a plain callable by a fixed number of states.
"""

from __future__ import annotations

import time

import numpy as np

from up_gnnplan.limits import MB, Limits, MemoryLimitReached, TimeLimitReached, resident_mb

# Priors until the first chunks are measured: above what was measured for the shipped R-GNN
# models (8-18 us and 0.5-1.3 KB per element), so the first chunk is never the one too large.
PRIOR_SECONDS_PER_ELEMENT = 25e-6
PRIOR_BYTES_PER_ELEMENT = 2048
# A chunk gets at most this share of the time limit (so a limit holds within 5%), never less
# than MIN_CHUNK_SECONDS, never more than MAX_CHUNK_SECONDS; without a limit, NO_LIMIT_CHUNK_SECONDS.
CHUNK_TIME_SHARE = 0.03
MIN_CHUNK_SECONDS = 0.05
MAX_CHUNK_SECONDS = 1.0
NO_LIMIT_CHUNK_SECONDS = 0.5
# A chunk's working memory gets at most this share of the memory left under the limit, and never
# more than MAX_CHUNK_MB (larger calls are no faster per state).
CHUNK_MEMORY_SHARE = 0.5
MAX_CHUNK_MB = 1024
# Value functions without ``prepare``/``run`` are called on this many states at a time.
PLAIN_CHUNK_STATES = 256


def feed_elements(feed: dict) -> int:
    """Return the number of elements of an encoded input (its size in the sense of this module)."""
    return int(sum(np.size(array) for array in feed.values()))


class ChunkedEvaluator:
    """Value states in chunks under ``limits`` (see the module docstring).

    Args:
        value_fn: the value function.
        limits: the solve's limits; default: none.
        bytes_per_element: prior working memory per encoded element (the value function's
            ``bytes_per_element`` when it has one).
    """

    def __init__(self, value_fn, limits: Limits | None = None, bytes_per_element: float | None = None):
        self.value_fn = value_fn
        self.limits = limits or Limits(None, 0)
        self.chunked = hasattr(value_fn, "prepare") and hasattr(value_fn, "run")
        self.bytes_per_element = float(bytes_per_element or getattr(value_fn, "bytes_per_element", None)
                                       or PRIOR_BYTES_PER_ELEMENT)
        self.seconds_per_element = PRIOR_SECONDS_PER_ELEMENT
        self.measured = False
        self.elements_per_state = None  # of the last chunk
        self.calls = 0
        self.largest_chunk = 0  # states
        seconds = self.limits.deadline.seconds
        self.chunk_seconds = (NO_LIMIT_CHUNK_SECONDS if seconds is None else
                              min(MAX_CHUNK_SECONDS, max(MIN_CHUNK_SECONDS, CHUNK_TIME_SHARE * seconds)))
        # How far past the deadline a chunk may be predicted to end before it is not started.
        self.slack = 0.0 if seconds is None else max(0.5, 0.05 * seconds) / 2

    # -- sizing ------------------------------------------------------------------------------

    def memory_budget_mb(self) -> float:
        """Return the working memory one chunk may use now."""
        headroom = self.limits.headroom_mb()
        return MAX_CHUNK_MB if headroom is None else min(MAX_CHUNK_MB, CHUNK_MEMORY_SHARE * headroom)

    def element_budget(self) -> int:
        """Return the largest encoded size a chunk may have now (time target and memory budget)."""
        by_time = self.chunk_seconds / self.seconds_per_element
        by_memory = self.memory_budget_mb() * MB / self.bytes_per_element
        return max(1, int(min(by_time, by_memory)))

    def _states_per_chunk(self, budget: int) -> int:
        if self.elements_per_state is None:
            return 1  # the first chunk of a search is one state: it measures a state's size
        return max(1, int(budget // self.elements_per_state))

    # -- evaluation --------------------------------------------------------------------------

    def __call__(self, states, convert=None, what: str | None = None) -> np.ndarray:
        """Return the value of every state of ``states`` (converted by ``convert`` chunk by chunk).

        ``what`` names the work in the messages of the limits (default: ``N states``).
        """
        convert = convert or (lambda chunk: chunk)
        what = what or f"{len(states)} states"
        if not self.chunked:
            return self._plain(states, convert, what)
        values = np.empty(len(states), dtype=np.float64)
        start = 0
        while start < len(states):
            budget = self.element_budget()
            count = min(len(states) - start, self._states_per_chunk(budget))
            feed, elements = self._prepare(states[start:start + count], convert)
            while elements > budget and count > 1:  # states larger than the last ones: halve the chunk
                count = max(1, count // 2)
                feed, elements = self._prepare(states[start:start + count], convert)
            self._check_before(count, elements, what)
            values[start:start + count] = self._run(feed, elements)
            self.largest_chunk = max(self.largest_chunk, count)
            start += count
        return values

    def _prepare(self, chunk, convert):
        feed = self.value_fn.prepare(convert(chunk))
        elements = feed_elements(feed)
        self.elements_per_state = elements / len(chunk)
        return feed, elements

    def _check_before(self, count: int, elements: int, work: str) -> None:
        """Raise a limit error if the chunk must not be run (see the module docstring)."""
        what = f"while valuing {work} ({count} in this chunk, {elements:,} input elements)"
        self.limits.check(what)
        needed_mb = elements * self.bytes_per_element / MB
        headroom = self.limits.headroom_mb()
        if headroom is not None and count == 1 and needed_mb > headroom:
            raise MemoryLimitReached(
                f"memory limit of {self.limits.memory_mb} MB reached: one state encodes to {elements:,} input "
                f"elements, about {needed_mb:.0f} MB to value, more than the {headroom:.0f} MB left")
        remaining = self.limits.deadline.remaining()
        expected = elements * self.seconds_per_element
        if self.measured and remaining is not None and expected > remaining + self.slack:
            raise TimeLimitReached(
                f"time limit of {self.limits.deadline.said} s reached {what}: the chunk needs about "
                f"{expected:.2f} s, {remaining:.2f} s are left")

    def _run(self, feed, elements: int) -> np.ndarray:
        before = resident_mb()
        started = time.perf_counter()
        values = np.asarray(self.value_fn.run(feed), dtype=np.float64).reshape(-1)
        seconds = time.perf_counter() - started
        self.calls += 1
        rate = seconds / max(elements, 1)
        # Cautious: a slower chunk raises the estimate at once, a faster one lowers it halfway.
        self.seconds_per_element = rate if (not self.measured or rate > self.seconds_per_element) else (
            0.5 * (self.seconds_per_element + rate))
        self.measured = True
        grown = resident_mb() - before
        if grown * MB > 0.5 * elements * self.bytes_per_element and grown > 64:
            # The call took more memory than estimated (another architecture): raise the estimate.
            self.bytes_per_element = max(self.bytes_per_element, 2 * grown * MB / elements)
        self.limits.check_memory(f"after valuing {elements:,} input elements")
        return values

    def _plain(self, states, convert, what: str) -> np.ndarray:
        values = []
        for start in range(0, len(states), PLAIN_CHUNK_STATES):
            chunk = states[start:start + PLAIN_CHUNK_STATES]
            self.limits.check(f"while valuing {what}")
            values.append(np.asarray(self.value_fn(convert(chunk)), dtype=np.float64).reshape(-1))
            self.calls += 1
        return np.concatenate(values) if values else np.zeros(0)
