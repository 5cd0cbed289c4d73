"""Shared fixtures. Tests read the real data in ../shared/data (WORKBANK_SOURCE_DIR overrides): the
full-data run as `make run` reads it (the pinned sources, with that folder as their local copy), the
other tests a reduced copy of it, read as given.

Embedding the real data takes minutes on 2 cores, so the whole pipeline runs once per session
(`pipeline_run`), with an embedding cache that every other test that embeds shares.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workbank_dagster.settings import REPO_ROOT, default_source_dir

# The tests mirror the packages (tests/sources, tests/labeling, …, tests/e2e); what they share (the
# OpenAI-compatible server, the browser driver, the run helpers) is in tests/support.
sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

import session_signals  # noqa: E402  (tests/support, put on the path above)
import shared_guard  # noqa: E402

SHARED_FILES = pytest.StashKey[dict]()
SOURCE_DIR = Path(os.environ["WORKBANK_SOURCE_DIR"]).resolve() if os.environ.get("WORKBANK_SOURCE_DIR") else default_source_dir()
ARTIFACTS = REPO_ROOT / "test-artifacts"


E2E_FILE = "e2e/test_e2e.py"
# The order the two workers take files in (`--dist loadfile --no-loadscope-reorder`): the full-data
# run first, then files that need no embedding (they keep the second worker busy while the first
# builds the O*NET base), then the files that run whole pipelines, the slowest first (from
# `--durations`), then the rest as collected. pytest-xdist's default order is by test count, which
# left the few-test scenario files to the end, where one worker ran them while the other idled.
SLOW_FIRST = (
    E2E_FILE,
    "sources/test_sources.py",
    "analysis/test_analysis_units.py",
    "scenarios/test_removal.py",
    "scenarios/test_concurrency.py",
    "scenarios/test_scaleout.py",
    "pipeline/test_pool_slots.py",
    "scenarios/test_idempotency.py",
    "pipeline/test_assets.py",
    "transform/test_guards.py",
)


def pytest_configure(config) -> None:
    """The dbt manifest, parsed before any test module imports the definitions (they read it and
    never parse it: transform.project.prepared_manifest); each xdist worker finds it parsed, or
    waits on the parse lock. And Ctrl-C's handler, where the session started without one
    (session_signals.py)."""
    from workbank_dagster.transform.project import ensure_manifest

    session_signals.interrupt_handler_restored()
    ensure_manifest()


def pytest_sessionstart(session) -> None:
    """Logs and screenshots go to test-artifacts/, whichever test (and worker) writes first. The
    session (the controller, under xdist) records the shared data folder's files, to check at its end
    that no test wrote into it (shared_guard)."""
    ARTIFACTS.mkdir(exist_ok=True)
    if not hasattr(session.config, "workerinput") and SOURCE_DIR is not None and SOURCE_DIR.is_dir():
        session.config.stash[SHARED_FILES] = shared_guard.snapshot(SOURCE_DIR)


def pytest_sessionfinish(session, exitstatus) -> None:
    """The session fails if any file of the shared data folder was added, removed or modified."""
    before = session.config.stash.get(SHARED_FILES, None)
    if before is None:
        return
    changed = shared_guard.changes(before, SOURCE_DIR)
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = f"the tests changed the shared data folder {SOURCE_DIR}, which they must only read:\n  " + "\n  ".join(changed)
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(message, red=True, bold=True)
        else:
            print(message, file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# The fixtures that run the whole pipeline (`make run`'s command, in a subprocess): a test that
# uses one is end to end.
WHOLE_PIPELINE_FIXTURES = ("pipeline_run", "small_base_run")


def pytest_collection_modifyitems(items) -> None:
    """Every test that runs the whole pipeline is `e2e`, whether or not it says so: the full-data
    run (`pipeline_run`) and the scenarios that start from the small run (`small_base_run`: removal,
    concurrency, idempotency, a killed slot holder, the labeler guard). Then `-m "not e2e"` starts no
    `make run` at all, and embeds only the reduced sources' O*NET texts.

    The tests that read the full-data run live in one file: the suite's workers take whole files
    (`--dist loadfile`), so one worker makes the run, once (pytest-xdist's `loadgroup` does not group
    under pytest 9: its marks are not applied)."""
    elsewhere = []
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if any(name in fixtures for name in WHOLE_PIPELINE_FIXTURES):
            item.add_marker(pytest.mark.e2e)
        if "pipeline_run" in fixtures:
            if not item.path.as_posix().endswith("tests/" + E2E_FILE):
                elsewhere.append(item.nodeid)
    if elsewhere:
        raise pytest.UsageError(f"tests that read the full-data run belong in tests/{E2E_FILE} (one worker runs them): {elsewhere}")
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}

    def file_rank(item) -> int:
        relative = item.path.as_posix().split("/tests/", 1)[-1]
        return rank.get(relative, len(SLOW_FIRST))

    items.sort(key=file_rank)  # stable: within a rank, files and tests keep their collected order


@pytest.fixture(scope="session")
def source_dir() -> Path:
    """The shared data folder, whole: the tests of the source files and the full-data run read it."""
    if SOURCE_DIR is None or not SOURCE_DIR.is_dir():
        pytest.fail("the shared data folder (../shared/data) is missing; set WORKBANK_SOURCE_DIR")
    return SOURCE_DIR


@pytest.fixture(scope="session")
def reduced_source_dir(tmp_path_factory, source_dir) -> Path:
    """The shared data with O*NET cut to a few dozen real occupations (tests/support/reduced_sources.py),
    built once per session: what every test that labels or runs the pipeline reads, but for the
    full-data run, so that no other test embeds the ~59k O*NET texts of all 923 occupations."""
    from filelock import FileLock
    from reduced_sources import build_reduced_sources

    root = session_root(tmp_path_factory)
    target = root / "reduced_sources"
    with FileLock(str(root / "reduced_sources.lock")):
        if not (root / "reduced_sources.built").exists():
            shutil.rmtree(target, ignore_errors=True)
            build_reduced_sources(source_dir, REPO_ROOT / "audits", target)
            (root / "reduced_sources.built").touch()
    return target


def session_root(tmp_path_factory) -> Path:
    """The session's temporary folder, which every pytest-xdist worker shares (each worker has a
    folder of its own below it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _cache_dir(tmp_path_factory) -> Path:
    configured = os.environ.get("WORKBANK_TEST_CACHE_DIR")
    cache = Path(configured) if configured else session_root(tmp_path_factory) / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    return cache


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory, onet_base) -> Path:
    """One embedding cache for the whole test session, every worker's (CI: embed once), holding the
    O*NET texts every labeling embeds (`onet_base` put them there) before any test uses it: two
    workers never embed the same ~59k texts at once. The store is SQLite in WAL mode,
    content-addressed: workers may write it at once."""
    return _cache_dir(tmp_path_factory)


@pytest.fixture(scope="session")
def onet_base(tmp_path_factory, reduced_source_dir) -> Path:
    """A data folder with the O*NET raw tables, the task index and the occupation prior of the
    reduced sources, built once per session (by the first worker that asks, the others wait for it):
    what every labeling test needs, and their O*NET texts embedded into the session cache once."""
    from filelock import FileLock

    root = session_root(tmp_path_factory)
    base = root / "onet_base"
    with FileLock(str(root / "onet_base.lock")):
        if not (base / "built").exists():
            _build_onet_base(base, reduced_source_dir, _cache_dir(tmp_path_factory))
            (base / "built").touch()
    return base / "data"


def _build_onet_base(base: Path, source_dir: Path, session_cache: Path) -> None:
    import dagster as dg

    from workbank_dagster.labeling.matching import LabelingRuntime
    from workbank_dagster.labeling.onet_assets import occupation_prior, task_index
    from workbank_dagster.resources import Warehouse
    from workbank_dagster.settings import PipelineSettings
    from workbank_dagster.sources.assets import file_assets, raw_assets

    shutil.rmtree(base, ignore_errors=True)
    data = base / "data"
    settings = PipelineSettings.of(data_dir=str(data), source_dir=str(source_dir), cache_dir=str(session_cache))
    resources = {"warehouse_db": Warehouse(data / "warehouse.duckdb"), "labeling_runtime": LabelingRuntime(), "pipeline_settings": settings}
    # The O*NET tables that the task index, the prior and judge v4's knowledge read.
    tables = ("onet_task_statements", "onet_occupations", "onet_alternate_titles", "onet_reported_titles", "onet_technology_skills", "onet_task_dwas")
    instance = dg.DagsterInstance.ephemeral()
    needed = [dg.AssetKey([p, t]) for p in ("raw", "files") for t in tables]
    assert dg.materialize([*file_assets, *raw_assets], instance=instance, resources=resources, selection=needed).success
    assert dg.materialize([task_index, occupation_prior], instance=instance, resources=resources).success


@pytest.fixture()
def workbank_env(tmp_path, monkeypatch, reduced_source_dir, session_cache) -> Path:
    """A fresh data dir (DuckDB, outputs) per test, the reduced real sources, the shared embedding cache."""
    data_dir = tmp_path / "data"
    monkeypatch.setenv("WORKBANK_DATA_DIR", str(data_dir))
    monkeypatch.setenv("WORKBANK_SOURCE_DIR", str(reduced_source_dir))
    monkeypatch.setenv("WORKBANK_CACHE_DIR", str(session_cache))
    # Embeddings are shared by the session; paid judgements are not (each test starts with none).
    monkeypatch.setenv("WORKBANK_JUDGEMENT_CACHE", str(tmp_path / "judgements.sqlite"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    (tmp_path / "dagster_home").mkdir()
    return data_dir


def small_source_dir(tmp_path: Path, source_dir: Path, benchmarks: tuple[str, ...] = ("cybench", "finance-agent", "paperbench")) -> Path:
    """A copy of the sources (usually the reduced ones) with only a few small benchmarks (links for
    the reference files)."""
    target = tmp_path / "sources"
    for child in source_dir.iterdir():
        if child.name in ("benchmarks", "results"):
            continue
        (target / child.name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(child, target / child.name)
    (target / "benchmarks").mkdir(parents=True)
    (target / "results").mkdir(parents=True)
    for slug in benchmarks:
        shutil.copy(source_dir / "benchmarks" / f"{slug}.jsonl", target / "benchmarks" / f"{slug}.jsonl")
        result = source_dir / "results" / f"{slug}.csv"
        if result.exists():
            shutil.copy(result, target / "results" / f"{slug}.csv")
    return target


SMALL = ("cybench", "finance-agent", "paperbench")


@pytest.fixture(scope="session")
def small_base_run(tmp_path_factory, reduced_source_dir, session_cache) -> Path:
    """`make run`'s command on the three small benchmarks (SMALL) over the reduced sources, once per
    session (the first worker that asks makes it, the others wait): the scenario tests start from a
    copy of it (`copy_small_run`, about a second) instead of running from an empty data folder."""
    from filelock import FileLock

    root = session_root(tmp_path_factory)
    base = root / "small_base"
    with FileLock(str(root / "small_base.lock")):
        if not (base / "built").exists():
            shutil.rmtree(base, ignore_errors=True)
            sources = small_source_dir(base, reduced_source_dir, SMALL)
            completed = run_pipeline(run_env(base, sources, session_cache))
            (ARTIFACTS / "small_base_run.log").write_text(completed.stdout + "\n" + completed.stderr)
            assert completed.returncode == 0, completed.stderr[-5000:]
            (base / "built").touch()
    return base


def copy_small_run(base: Path, target: Path, session_cache: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the small base run in `target` (data folder, Dagster home, sources), and the
    environment that runs it again there (`run_pipeline`)."""
    for part in ("sources", "data", "dagster_home"):
        shutil.copytree(base / part, target / part, symlinks=True)
    return target / "sources", run_env(target, target / "sources", session_cache)


def run_env(root: Path, sources: Path, session_cache: Path) -> dict[str, str]:
    """`make run`'s environment for a run in `root` (data/, dagster_home/) over `sources`."""
    return {
        "WORKBANK_DATA_DIR": str(root / "data"),
        "WORKBANK_SOURCE_DIR": str(sources),
        "WORKBANK_CACHE_DIR": str(session_cache),
        "DAGSTER_HOME": str(root / "dagster_home"),
    }


def run_pipeline(env: dict[str, str], timeout: int = 3600, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`make run`'s command in a subprocess, so each run has its own environment and instance (from
    `cwd`, the repository by default: a copy runs its own package)."""
    return subprocess.run(
        [sys.executable, "-m", "workbank_dagster.cli", "run"],
        cwd=cwd or REPO_ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def pipeline_run(tmp_path_factory, source_dir, session_cache) -> dict:
    """The whole pipeline on the real data, once per session, read as `make run` reads it: with no
    source folder set, the pinned sources (the repository's committed benchmarks, every other file
    by its SHA-256 from the shared folder, which is the local copy), unless WORKBANK_SOURCE_DIR names
    another folder for the session, which is then read as given."""
    root = tmp_path_factory.mktemp("e2e")
    env = {
        "WORKBANK_DATA_DIR": str(root / "data"),
        "WORKBANK_SOURCE_DIR": "" if source_dir == default_source_dir() else str(source_dir),
        "WORKBANK_CACHE_DIR": str(session_cache),
        "DAGSTER_HOME": str(root / "dagster_home"),
    }
    completed = run_pipeline(env)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "e2e_run.log").write_text(completed.stdout + "\n" + completed.stderr)
    assert completed.returncode == 0, completed.stderr[-5000:]
    headline = json.loads((root / "data" / "outputs" / "headline.json").read_text())
    return {"root": root, "env": env, "headline": headline, "duckdb": root / "data" / "warehouse.duckdb", "stdout": completed.stdout, "stderr": completed.stderr}


@pytest.fixture()
def package_copy(tmp_path, monkeypatch):
    """A copy of the package's source that code_reach.py reads instead of the original: edit a
    file of it (`edit(relative path, old, new)`) and ask for a version again."""
    import shutil

    from workbank_dagster import code_reach, code_version

    root = tmp_path / "workbank_dagster"
    shutil.copytree(code_reach.PACKAGE_DIR, root, ignore=shutil.ignore_patterns("__pycache__", "*.onnx", "templates"))
    monkeypatch.setattr(code_reach, "PACKAGE_DIR", root)
    code_version.clear_cache()

    def edit(relative: str, old: str, new: str) -> None:
        path = root / relative
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{relative}: {old!r} found {text.count(old)} times"
        path.write_text(text.replace(old, new), encoding="utf-8")
        code_version.clear_cache()

    yield edit
    code_version.clear_cache()
