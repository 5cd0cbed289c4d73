"""A pool slot left claimed by a run that has ended is given back before the next CLI run; a slot
held by a run still in progress is not touched."""

from __future__ import annotations

import dagster as dg
import yaml

from workbank_dagster import runner


def test_slots_of_ended_runs_are_freed_and_live_ones_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    runner.dagster_home()
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
    assert runner.free_slots_of_ended_runs(instance) == 1
    assert dead.run_id not in {slot.run_id for slot in storage.get_concurrency_info("warehouse").claimed_slots}
    assert storage.claim_concurrency_slot("warehouse", live.run_id, "raw__soc_major_groups").is_claimed
    # A run in progress keeps what it holds.
    assert runner.free_slots_of_ended_runs(instance) == 0
    assert [slot.run_id for slot in storage.get_concurrency_info("warehouse").claimed_slots] == [live.run_id]
