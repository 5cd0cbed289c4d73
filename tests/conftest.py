"""Shared fixtures. Tests read the real data in ../shared/data (WORKBANK_SOURCE_DIR overrides).

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

SOURCE_DIR = Path(os.environ["WORKBANK_SOURCE_DIR"]).resolve() if os.environ.get("WORKBANK_SOURCE_DIR") else default_source_dir()
ARTIFACTS = REPO_ROOT / "test-artifacts"


@pytest.fixture(scope="session")
def source_dir() -> Path:
    if SOURCE_DIR is None or not SOURCE_DIR.is_dir():
        pytest.fail("the shared data folder (../shared/data) is missing; set WORKBANK_SOURCE_DIR")
    return SOURCE_DIR


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    """One embedding cache for the whole test session (CI: embed once)."""
    configured = os.environ.get("WORKBANK_TEST_CACHE_DIR")
    if configured:
        Path(configured).mkdir(parents=True, exist_ok=True)
        return Path(configured)
    return tmp_path_factory.mktemp("cache")


@pytest.fixture()
def workbank_env(tmp_path, monkeypatch, source_dir, session_cache) -> Path:
    """A fresh data dir (DuckDB, outputs) per test, the real sources, the shared embedding cache."""
    data_dir = tmp_path / "data"
    monkeypatch.setenv("WORKBANK_DATA_DIR", str(data_dir))
    monkeypatch.setenv("WORKBANK_SOURCE_DIR", str(source_dir))
    monkeypatch.setenv("WORKBANK_CACHE_DIR", str(session_cache))
    # Embeddings are shared by the session; paid judgements are not (each test starts with none).
    monkeypatch.setenv("WORKBANK_JUDGEMENT_CACHE", str(tmp_path / "judgements.sqlite"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    (tmp_path / "dagster_home").mkdir()
    return data_dir


def small_source_dir(tmp_path: Path, source_dir: Path, benchmarks: tuple[str, ...] = ("cybench", "finance-agent", "paperbench")) -> Path:
    """A copy of the sources with only a few small benchmarks (links for the big reference files)."""
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


def run_pipeline(env: dict[str, str], timeout: int = 3600) -> subprocess.CompletedProcess:
    """`make run`'s command in a subprocess, so each run has its own environment and instance."""
    return subprocess.run(
        [sys.executable, "-m", "workbank_dagster.cli", "run"],
        cwd=REPO_ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def pipeline_run(tmp_path_factory, source_dir, session_cache) -> dict:
    """The whole pipeline on the real data, once per session."""
    root = tmp_path_factory.mktemp("e2e")
    env = {
        "WORKBANK_DATA_DIR": str(root / "data"),
        "WORKBANK_SOURCE_DIR": str(source_dir),
        "WORKBANK_CACHE_DIR": str(session_cache),
        "DAGSTER_HOME": str(root / "dagster_home"),
    }
    completed = run_pipeline(env)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "e2e_run.log").write_text(completed.stdout + "\n" + completed.stderr)
    assert completed.returncode == 0, completed.stderr[-5000:]
    headline = json.loads((root / "data" / "outputs" / "headline.json").read_text())
    return {"root": root, "env": env, "headline": headline, "duckdb": root / "data" / "warehouse.duckdb", "stdout": completed.stdout, "stderr": completed.stderr}
