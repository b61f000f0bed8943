"""Progress lines for a log: what a long step is doing, every few seconds.

On a terminal a verb redraws one progress line in place; in a CI log that would be
minutes of silence followed by carriage returns. A :class:`Ticker` instead remembers the
latest ``(step, done, total)`` the library reported and, from a daemon thread, writes one
plain line every ``every_s`` seconds while the verb runs: ``build: rendering charts
340/1000, 41 s``. Nothing is written by a step shorter than ``every_s``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO


class Ticker:
    """A progress function (``ticker(step, done, total)``) that reports on a timer."""

    def __init__(self, verb: str, every_s: float, stream: TextIO,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.verb = verb
        self.every_s = every_s
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.step, self.done, self.total = "", 0, 0
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, step: str, done: int, total: int) -> None:
        self.step, self.done, self.total = step, done, total

    def line(self) -> str:
        """The progress line as of now: ``build: rendering charts 340/1000, 41 s``."""
        what = self.step + (f" {self.done}/{self.total}" if self.total else "")
        seconds = f"{self.clock() - self.started:.0f} s"
        return f"{self.verb}: {what}, {seconds}" if what else f"{self.verb}: {seconds}"

    def tick(self) -> None:
        self.stream.write(self.line() + "\n")
        self.stream.flush()

    def start(self) -> Ticker:
        def run() -> None:
            while not self._stopped.wait(self.every_s):
                try:
                    self.tick()
                except (OSError, ValueError):  # the stream went away: stop reporting
                    return

        self._thread = threading.Thread(target=run, name="roofgen-progress", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
