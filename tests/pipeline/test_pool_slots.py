"""A pool slot left claimed by a run that has ended, or by a run whose process was killed outright,
is given back before (and while) the CLI launches a run; a slot held by a live run is not touched,
and a step that waits for it says at INFO which run holds it (workbank_dagster/pools.py)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
import yaml
from conftest import ARTIFACTS, copy_small_run
from fake_openai import FakeOpenAI
from partition_tables import partition_tables

from workbank_dagster import dagster_instance, pools
from workbank_dagster.settings import REPO_ROOT


def test_slots_of_ended_runs_are_freed_and_live_ones_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    dagster_instance.dagster_home()
    config = yaml.safe_load((tmp_path / "home" / "dagster.yaml").read_text())
    assert config["run_monitoring"]["free_slots_after_run_end_seconds"] > 0  # the daemon's side of it
    instance = dg.DagsterInstance.get()
    storage = instance.event_log_storage
    storage.set_concurrency_slots("warehouse", 1)
    dead = instance.add_run(dg.DagsterRun(job_name="all_assets", run_id="dead0000-run", status=dg.DagsterRunStatus.FAILURE))
    live = instance.add_run(dg.DagsterRun(job_name="all_assets", run_id="live0000-run", status=dg.DagsterRunStatus.STARTED))
    assert storage.claim_concurrency_slot("warehouse", dead.run_id, "dbt_models").is_claimed
    # The one slot is taken by a run that failed: a new step would wait for it indefinitely.
    assert not storage.claim_concurrency_slot("warehouse", live.run_id, "raw__soc_major_groups").is_claimed
    assert pools.free_slots_of_ended_runs(instance) == 1
    assert dead.run_id not in {slot.run_id for slot in storage.get_concurrency_info("warehouse").claimed_slots}
    assert storage.claim_concurrency_slot("warehouse", live.run_id, "raw__soc_major_groups").is_claimed
    # A run in progress keeps what it holds.
    assert pools.free_slots_of_ended_runs(instance) == 0
    assert [slot.run_id for slot in storage.get_concurrency_info("warehouse").claimed_slots] == [live.run_id]


# --- a run killed outright while it holds the slot ------------------------------------------------

HOLDER = REPO_ROOT / "tests" / "support" / "slot_holder.py"


def holder_run_id(text: str) -> str | None:
    """The run id the slot holder printed, or None yet. Its line shares the file with Dagster's log
    on stderr, and a log line can land between the id and its newline: read the id by its form."""
    held = re.search(r"holding ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", text)
    return held.group(1) if held else None


def test_the_holder_s_run_id_is_read_when_a_log_line_lands_inside_its_line():
    """As a clean-clone CI wrote it: the STEP_START line between the id and the print's newline."""
    text = ("holding 5a45f003-dfd3-4a1a-a751-ee3b107de7c72026-12-04 04:33:52 +0000 - dagster - DEBUG - __ephemeral_asset_job__ - "
            '5a45f003-dfd3-4a1a-a751-ee3b107de7c7 - 17925 - test__slot_holder - STEP_START - Started execution of step "test__slot_holder".\n\n')
    assert holder_run_id(text) == "5a45f003-dfd3-4a1a-a751-ee3b107de7c7"
    assert holder_run_id("2026-12-04 04:33:52 +0000 - dagster - DEBUG - RUN_START\n") is None


def _start_holder(home, log):
    """A real run (tests/support/slot_holder.py) that holds the `warehouse` slot; its run id."""
    process = subprocess.Popen([sys.executable, str(HOLDER)], env={**os.environ, "DAGSTER_HOME": str(home)},
                               stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        held = holder_run_id(log.read_text())
        if held:
            return process, held
        assert process.poll() is None, log.read_text()[-3000:]
        time.sleep(0.2)
    raise AssertionError("the holder never took the slot: " + log.read_text()[-3000:])


def _kill(process) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def test_a_run_killed_holding_the_slot_is_marked_failed_and_freed_and_a_live_one_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    dagster_instance.dagster_home()
    process, held_by = _start_holder(tmp_path / "home", tmp_path / "holder.log")
    instance = dg.DagsterInstance.get()
    storage = instance.event_log_storage
    try:
        # Alive, it keeps its slot; a step of another launch waits, and is told who holds the slot.
        assert pools.dead_runs(instance, [held_by]) == [] and pools.free_slots_of_ended_runs(instance) == 0
        waiting = instance.add_run(dg.DagsterRun(job_name="llm_labeling", run_id="wait0000-run", status=dg.DagsterRunStatus.STARTED,
                                                 tags={"workbank/launch": "launch-1"}))
        assert not storage.claim_concurrency_slot("warehouse", waiting.run_id, "labeling__llm_judge_labels").is_claimed
        said = pools.PoolWatch("launch-1", instance).check()
        assert said == [f"step labeling__llm_judge_labels of run {waiting.run_id} waits for pool 'warehouse' (1 slot(s)), "
                        f"held by run {held_by} (job __ephemeral_asset_job__, STARTED, step test__slot_holder)"]
        assert pools.PoolWatch("launch-2", instance).check() == []  # not this launch's step
    finally:
        _kill(process)
    # Killed, its run still says STARTED and holds the slot: it is found dead, marked failed, freed.
    assert instance.get_run_by_id(held_by).status == dg.DagsterRunStatus.STARTED
    assert [run.run_id for run, _ in pools.dead_runs(instance, [held_by])] == [held_by]
    assert pools.free_slots_of_ended_runs(instance) == 1
    assert instance.get_run_by_id(held_by).status == dg.DagsterRunStatus.FAILURE
    assert storage.claim_concurrency_slot("warehouse", waiting.run_id, "labeling__llm_judge_labels").is_claimed


def test_a_pid_reused_by_a_later_process_is_not_the_run_s():
    me = os.getpid()
    assert pools.process_alive(me, time.time())
    assert not pools.process_alive(me, pools.process_start_time(me) - 60)  # the run started before this process
    assert pools.process_start_time(me) <= time.time()


def test_the_llm_labeling_command_tells_who_holds_the_slot_and_completes_once_the_holder_is_killed(tmp_path, small_base_run, session_cache):
    """The operator's case: a run holds the `warehouse` slot; `cli label-llm` labels (its step is in
    pool `partitions`: it never waits for the warehouse), then waits at its first warehouse step and
    says at INFO which run holds the slot; that run is killed outright; the command frees its slot
    and completes."""
    sources, env = copy_small_run(small_base_run, tmp_path, session_cache)
    home = Path(env["DAGSTER_HOME"])
    process, held_by = _start_holder(home, tmp_path / "holder.log")
    with FakeOpenAI() as server:
        env = {**os.environ, **env, "WORKBANK_LLM_BASE_URL": server.base_url, "WORKBANK_LLM_MODEL": "fake-model",
               "WORKBANK_LLM_API_KEY_ENV": "TEST_LLM_KEY", "TEST_LLM_KEY": "sk-test", "WORKBANK_JUDGEMENT_CACHE": str(tmp_path / "judgements.sqlite")}
        log = tmp_path / "label_llm.log"
        command = subprocess.Popen([sys.executable, "-m", "workbank_dagster.cli", "label-llm", "cybench"], cwd=REPO_ROOT, env=env,
                                   stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 300
            waiting = f"waits for pool 'warehouse' (1 slot(s)), held by run {held_by}"
            while waiting not in log.read_text():
                assert command.poll() is None and time.monotonic() < deadline, log.read_text()[-4000:]
                time.sleep(0.5)
            assert re.search(r" - workbank - INFO - step \S+ of run \S+ " + re.escape(waiting), log.read_text())
            assert "step llm_judge_labels of run" not in log.read_text()  # the labels never waited for the warehouse
            assert server.counts["chat"] == 39  # cybench's prompts were judged while the warehouse was held
            _kill(process)
            assert command.wait(timeout=900) == 0, log.read_text()[-5000:]
        finally:
            if command.poll() is None:
                _kill(command)
            if process.poll() is None:
                _kill(process)
        (ARTIFACTS / "label_llm_after_kill.log").write_text(log.read_text())
        assert server.counts["chat"] == 39  # cybench's prompts, each judged once
    text = log.read_text()
    assert f"run {held_by} (__ephemeral_asset_job__) was killed holding a pool slot" in text and "succeeded" in text
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        assert instance.get_run_by_id(held_by).status == dg.DagsterRunStatus.FAILURE
    finally:
        instance.dispose()
    with partition_tables(tmp_path / "data" / "partitions") as con:  # the LLM judge's files (partition_files.py)
        assert con.execute("select count(distinct prompt_id) from labeling.llm_judgements where benchmark = 'cybench'").fetchone() == (39,)


def test_opening_the_instance_gives_each_pool_its_slots(tmp_path, monkeypatch):
    """dagster.yaml sets one limit for every pool; the CLI gives `partitions` the setting
    partition_workers (backfills side by side) and keeps `warehouse` at one (DuckDB's one writer).
    It is the instance's setting, not a run's: no run config carries it, so the launchpad cannot
    offer a value that would do nothing there."""
    from workbank_dagster.definitions import defs
    from workbank_dagster.settings import FIELDS, InstanceSettings

    assert "partition_workers" not in FIELDS
    assert all("partition_workers" not in type(resource).model_fields for resource in defs.resources.values() if hasattr(type(resource), "model_fields"))
    with pytest.raises(ValueError, match="WORKBANK_PARTITION_WORKERS"):
        InstanceSettings.from_env({"WORKBANK_PARTITION_WORKERS": "0"})
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WORKBANK_PARTITION_WORKERS", "3")
    instance = dagster_instance.open_instance()
    try:
        storage = instance.event_log_storage
        assert {pool: storage.get_concurrency_info(pool).slot_count for pool in ("partitions", "warehouse")} == {"partitions": 3, "warehouse": 1}
    finally:
        instance.dispose()
    monkeypatch.setenv("WORKBANK_PARTITION_WORKERS", "1")
    instance = dagster_instance.open_instance()  # a later command with another setting sets it again
    try:
        assert instance.event_log_storage.get_concurrency_info("partitions").slot_count == 1
    finally:
        instance.dispose()
