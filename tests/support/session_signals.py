"""Ctrl-C's handler for a test session started without one (conftest.py's pytest_configure).

A shell starts a background job (`nohup make test &`, as CI is run) with SIGINT ignored, and Python
then installs no handler of its own. Dagster's in-process execution maps SIGTERM to whatever SIGINT's
handler is and leaves it so (dagster/_utils/interrupts.py, capture_interrupts), so after a worker's
first in-process run it ignored SIGTERM too, and so did every process it started after (an ignored
signal is inherited): the fetch tests' mirrors outlived their SIGTERM, 10 s each, in every CI run
(tests/pipeline/test_signals.py).
"""

from __future__ import annotations

import signal


def interrupt_handler_restored() -> bool:
    """Give SIGINT Python's own handler where this process ignores it; true if it did."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return False
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return True
