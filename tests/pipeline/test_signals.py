"""A process the tests start ends on SIGTERM, however the test session was started.

Started in the background by a shell (as CI runs `make test`), a process ignores SIGINT; Dagster's
in-process execution maps SIGTERM to SIGINT's handler and leaves it so, and an ignored signal is
inherited, so the test workers started children that ignored SIGTERM (tests/support/session_signals.py).
The first test runs pytest on one small test in a session started ignoring SIGINT, with and without
the hook this suite's conftest.py runs; the second launches a run as the CLI does (runner.launch,
which puts SIGTERM back) from a process started the same way, then stops it by SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

SUPPORT = Path(__file__).resolve().parents[1] / "support"

# An in-process Dagster run, then a child stopped by SIGTERM.
CHILD_TEST = textwrap.dedent(
    """
    import signal, subprocess, sys, time
    import dagster as dg

    @dg.asset
    def one():
        return 1

    def test_a_child_started_after_an_in_process_run_ends_on_sigterm():
        assert dg.materialize([one]).success
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        time.sleep(0.5)
        child.terminate()
        assert child.wait(timeout=5) == -signal.SIGTERM
    """
)
HOOK = (
    f"import sys\nsys.path.insert(0, {str(SUPPORT)!r})\nimport session_signals\n\n\n"
    "def pytest_configure(config):\n    session_signals.interrupt_handler_restored()\n"
)


def _session_ignoring_sigint(folder: Path, hook: bool) -> subprocess.CompletedProcess:
    folder.mkdir()
    (folder / "test_child.py").write_text(CHILD_TEST)
    if hook:
        (folder / "conftest.py").write_text(HOOK)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as a shell starts a background job
    )


def test_a_session_started_ignoring_sigint_starts_children_that_end_on_sigterm(tmp_path):
    with_hook = _session_ignoring_sigint(tmp_path / "with_hook", hook=True)
    assert with_hook.returncode == 0, with_hook.stdout[-3000:] + with_hook.stderr[-2000:]
    # The control: without the hook, the child ignores SIGTERM and the wait times out.
    without = _session_ignoring_sigint(tmp_path / "without", hook=False)
    assert without.returncode == 1 and "TimeoutExpired" in without.stdout, without.stdout[-3000:]


# A job of one asset, launched as the CLI launches every run (runner.launch), by a process started
# ignoring SIGINT (a background `make run`); then a `kill` of that process must still end it.
LAUNCHER = textwrap.dedent(
    """
    import sys, time
    import dagster as dg
    from workbank_dagster import runner

    @dg.asset
    def one():
        return 1

    def get_job():
        return dg.Definitions(assets=[one], jobs=[dg.define_asset_job("one_job")]).resolve_job_def("one_job")

    if __name__ == "__main__":
        sys.modules["launcher"] = sys.modules["__main__"]
        with dg.DagsterInstance.local_temp(sys.argv[1]) as instance:
            assert runner.launch(get_job, instance, {}).success
        print("launched", flush=True)
        time.sleep(60)
    """
)


def test_a_cli_run_started_ignoring_sigint_still_ends_on_sigterm_after_its_run(tmp_path):
    """Dagster's in-process execution leaves SIGTERM as SIGINT's handler; runner.launch puts it back."""
    (tmp_path / "launcher.py").write_text(LAUNCHER)
    (tmp_path / "home").mkdir()
    process = subprocess.Popen(
        [sys.executable, str(tmp_path / "launcher.py"), str(tmp_path / "home")],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}:{Path(__file__).resolve().parents[2]}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        line = process.stdout.readline()
        assert line.strip() == "launched", line + process.stderr.read()[-3000:]
        process.terminate()
        assert process.wait(timeout=5) == -signal.SIGTERM
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
