"""Progress of long steps (embedding, labeling, the bootstrap): done, total and the time left.

Two readers, two rates. The terminal gets a tqdm bar on stderr, redrawn in place at most twice a
second. The Dagster run log (and so the terminal of `make run`, which prints it) gets one line
every `every_s` seconds and a last one at the end: a ten-minute embedding writes about forty
events, not one per batch.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

LOG_EVERY_S = 15.0


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Progress:
    def __init__(
        self,
        what: str,
        total: int,
        *,
        log: Callable[[str], None] | None = None,
        every_s: float = LOG_EVERY_S,
        unit: str = "it",
        bar: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what, self.total, self.unit = what, total, unit
        self.done = 0
        self._log, self._every, self._clock = log, every_s, clock
        self._started = self._last = clock()
        self._bar = None
        if bar and total > 0:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=what, unit=unit, file=sys.stderr, mininterval=0.5, leave=False, dynamic_ncols=True)

    def line(self) -> str:
        elapsed = self._clock() - self._started
        share = self.done / self.total if self.total else 1.0
        left = elapsed / share - elapsed if share > 0 else float("nan")
        eta = _duration(left) if share > 0 and self.done < self.total else "0s"
        return f"{self.what}: {self.done:,} / {self.total:,} {self.unit} ({share:.0%}), {_duration(elapsed)} elapsed, about {eta} left"

    def update(self, n: int) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        now = self._clock()
        if self._log is not None and now - self._last >= self._every and self.done < self.total:
            self._last = now
            self._log(self.line())

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self._log is not None and self.total > 0:
            self._log(self.line().split(", about")[0] + ": done")

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def reporter(log: Callable[[str], None] | None, **options) -> Callable[..., Progress]:
    """A factory `(what, total, unit)` of Progress objects that all log to `log` (a Dagster context's `log.info`)."""
    return lambda what, total, unit="it": Progress(what, total, log=log, unit=unit, **options)
