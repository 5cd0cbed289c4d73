"""What Dagster calls stale or missing, asked in process: the same answer as the UI's `staleStatus`
(the webserver computes it with the same resolver), without a webserver or a second process.

`make run` asks it before the audits' run (runner.run_audits): the audits are a leaf of the graph,
so one question decides whether they have work to do. Dagster's staleness is not transitive (an
asset is stale when its own code version or a direct input's data version moved), which is why the
main run does not follow it yet (docs/pipeline.md, "Dagster's staleness").

Dagster 1.13 documents no Python API for this: the webserver's GraphQL `staleStatus` is public,
and `RunRequest(stale_assets_only=True)` resolves it for sensors and schedules only. The resolver
below is Dagster's own (`dagster._core.definitions.data_version.CachingStaleStatusResolver`, as
dagster/_scheduler/stale.py builds it); docs/layout.md names the import and what it waits for.
"""

from __future__ import annotations

from collections.abc import Iterable

import dagster as dg

# The data version of an observation reported without a run (`AssetObservation(tags=...)`): the tag
# under which Dagster records every data version (an ObserveResult's, a materialization's).
DATA_VERSION_TAG = "dagster/data_version"


def not_fresh(instance: dg.DagsterInstance, defs: dg.Definitions, key: dg.AssetKey, partitions: Iterable[str] | None = None) -> dict[str | None, str]:
    """The partitions of `key` (None: the asset, unpartitioned) Dagster calls stale or missing now,
    with the status (`STALE`, `MISSING`) and its first cause, as the UI shows them."""
    from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
    from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
    from dagster._time import get_current_datetime

    graph = defs.resolve_asset_graph()
    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None), instance=instance, asset_graph=graph)
    resolver = CachingStaleStatusResolver(instance=instance, asset_graph=graph, loading_context=view)
    found = {}
    for partition in [None] if partitions is None else list(partitions):
        status = resolver.get_status(key, partition)
        if status != StaleStatus.FRESH:
            causes = resolver.get_stale_causes(key, partition)
            found[partition] = f"{status.value}" + (f": {causes[0].reason}" if causes else "")
    return found


def report_data_versions(instance: dg.DagsterInstance, key: dg.AssetKey, versions: dict[str, str]) -> None:
    """Record an observation of each partition of the source asset `key` with its data version, as
    its observation step would, without a run (`DagsterInstance.report_runless_asset_event`)."""
    for partition, version in sorted(versions.items()):
        instance.report_runless_asset_event(dg.AssetObservation(key, partition=partition, tags={DATA_VERSION_TAG: version}))
