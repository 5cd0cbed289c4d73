"""When each step of a run ran, from a Dagster instance's event log (the concurrency and scaleout tests)."""

from __future__ import annotations

import dagster as dg


def step_intervals(instance: dg.DagsterInstance, run_ids) -> list[tuple[float, float, str, str]]:
    """(start, end, run, step) of every step of these runs that ended (STEP_START to SUCCESS or FAILURE), sorted."""
    intervals = []
    for run_id in run_ids:
        started: dict[str, float] = {}
        for record in instance.all_logs(run_id):
            event = record.dagster_event
            if event is None or event.step_key is None:
                continue
            if event.event_type == dg.DagsterEventType.STEP_START:
                started[event.step_key] = record.timestamp
            elif event.event_type in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE) and event.step_key in started:
                intervals.append((started.pop(event.step_key), record.timestamp, run_id, event.step_key))
    return sorted(intervals)
