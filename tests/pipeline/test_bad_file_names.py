"""One rule for a benchmark or audit file whose name is not a valid slug (#41 item 5): every caller
that lists such files (the benchmark set, both sensors, the audit listing) stops with the same
clear error, naming the file and the slug rule, rather than one refusing, one warning and one
skipping it in silence."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pytest

from workbank_dagster.audits.assets import audit_files
from workbank_dagster.automation import audit_files_sensor, benchmark_file_hashes, benchmark_files_sensor
from workbank_dagster.common import SLUG_PATTERN
from workbank_dagster.settings import PipelineSettings, settings_at_load
from workbank_dagster.sources.benchmark_set import benchmark_set
from workbank_dagster.sources.validate import SourceFormatError

BAD = "Bad Name"


def _prompts(folder: Path, slug: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{slug}.jsonl").write_text(json.dumps({"benchmark": slug, "prompt_id": "1", "prompt": "Reconcile the ledger."}) + "\n")


def _sensor(sensor, settings: PipelineSettings):
    # A resource that holds other resources is opened as a context manager, as the daemon opens it.
    with dg.build_sensor_context(resources={"pipeline_settings": settings}, instance=dg.DagsterInstance.ephemeral()) as context:
        return sensor(context)


def _source_folder(tmp: Path) -> tuple[PipelineSettings, Path]:
    _prompts(tmp / "sources" / "benchmarks", "mine")
    (tmp / "sources" / "results").mkdir()
    _prompts(tmp / "sources" / "benchmarks", BAD)
    return PipelineSettings.of(source_dir=str(tmp / "sources"), data_dir=str(tmp / "data")), tmp / "sources" / "benchmarks" / f"{BAD}.jsonl"


def _own_prompts(tmp: Path) -> tuple[PipelineSettings, Path]:
    _prompts(tmp / "own", "mine")
    _prompts(tmp / "own", BAD)
    return PipelineSettings.of(benchmarks_dir=str(tmp / "own"), data_dir=str(tmp / "data")), tmp / "own" / f"{BAD}.jsonl"


def _own_results(tmp: Path) -> tuple[PipelineSettings, Path]:
    _prompts(tmp / "own", "mine")
    (tmp / "own" / f"{BAD}.csv").write_text("benchmark,model,prompt_id,score\nmine,m,1,1\n")  # a results file lost to its name
    return PipelineSettings.of(benchmarks_dir=str(tmp / "own"), data_dir=str(tmp / "data")), tmp / "own" / f"{BAD}.csv"


def _audit(tmp: Path) -> tuple[PipelineSettings, Path]:
    (tmp / "audits").mkdir()
    (tmp / "audits" / "mine.csv").write_text("task_id\n1\n")
    (tmp / "audits" / f"{BAD}.csv").write_text("task_id\n1\n")
    return PipelineSettings.of(audits_dir=str(tmp / "audits"), data_dir=str(tmp / "data")), tmp / "audits" / f"{BAD}.csv"


CALLERS: dict[str, tuple[Callable, Callable]] = {
    "benchmark_set, source folder": (_source_folder, lambda s: benchmark_set(s.resolve())),
    "benchmark_set, your own folder": (_own_prompts, lambda s: benchmark_set(s.resolve())),
    "benchmark_set, your own results": (_own_results, lambda s: benchmark_set(s.resolve())),
    "benchmark_file_hashes (make run)": (_source_folder, lambda s: benchmark_file_hashes(s.resolve())),
    "benchmark_files_sensor": (_own_prompts, lambda s: _sensor(benchmark_files_sensor, s)),
    "audit_files (make run)": (_audit, lambda s: audit_files(s.resolve().audits_dir)),
    "audit_files_sensor": (_audit, lambda s: _sensor(audit_files_sensor, s)),
}


@pytest.mark.parametrize("caller", list(CALLERS))
def test_a_bad_file_name_is_the_same_clear_error_from_every_caller(tmp_path, caller):
    make, call = CALLERS[caller]
    settings, bad = make(tmp_path)
    with pytest.raises(SourceFormatError) as raised:
        call(settings)
    assert str(bad) in str(raised.value) and SLUG_PATTERN.pattern in str(raised.value)


@pytest.mark.parametrize("caller", list(CALLERS))
def test_without_the_bad_name_every_caller_lists_the_good_file(tmp_path, caller):
    make, call = CALLERS[caller]
    settings, bad = make(tmp_path)
    bad.unlink()
    call(settings)  # no error


@pytest.mark.parametrize("make", [_own_prompts, _audit], ids=["a benchmark", "an audit"])
def test_make_run_stops_before_any_run_with_the_error(tmp_path, monkeypatch, capsys, make):
    """`cli run` lists both folders before it launches anything: a bad name is one `error:` line
    naming the file and the rule (exit 2), not a traceback, and not an error after the long run."""
    from workbank_dagster import cli, runner

    def launch(*args, **kwargs):
        raise AssertionError("a run was launched")

    monkeypatch.setattr(runner, "launch", launch)  # should the listing let the file through, no pipeline runs here
    settings, bad = make(tmp_path)
    monkeypatch.chdir(tmp_path)  # cli.main moves to the repository; the fixture moves back
    monkeypatch.delenv("WORKBANK_SOURCE_DIR", raising=False)  # the pinned sources: listed, nothing fetched
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    monkeypatch.setenv("WORKBANK_DATA_DIR", settings.paths.data_dir)
    for name in ("benchmarks_dir", "audits_dir"):
        monkeypatch.setenv(f"WORKBANK_{name.upper()}", getattr(settings.paths, name))
    settings_at_load.cache_clear()  # each CLI command is a process of its own, which reads the environment once
    try:
        assert cli.main(["run"]) == 2
    finally:
        settings_at_load.cache_clear()  # the next test reads its own environment
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"error: {bad}: ") and SLUG_PATTERN.pattern in error
