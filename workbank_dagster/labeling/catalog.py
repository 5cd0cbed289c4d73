"""What the judges hold, per benchmark partition, and nothing of a benchmark that left.

A removed benchmark file loses its Dagster partition (the sensor, `make run`), so no labeling run of
its own ever comes to delete its labels. `labeling/label_catalog` runs unpartitioned inside every run
(pool `warehouse`) after the partitions are labeled: it deletes, in one transaction, the rows of every
benchmark that no longer has a partition from the labeling tables, then writes one row per
(benchmark, labeler) of what is left. Labeling owns these tables, so labeling prunes them; the raw
rows leave in `raw/benchmark_catalog`, the sources' own step. Cached judgements and embeddings
(stores outside the warehouse) stay: they were paid for. It also drops
`labeling.embedded_label_inputs`, where the label input keys were kept before they moved into the
labels' materializations.
"""


import dagster as dg
import duckdb
import pandas as pd

from .. import warehouse
from ..common import table_metadata, warehouse_step
from ..partitions import benchmarks_partitions
from ..resources import WarehouseResource
from .assets import JUDGES, LABELING_SCHEMA, LEGACY_INPUTS_TABLE, judgements_table, labels_table

CATALOG_TABLE = "label_catalog"
CATALOG_COLUMNS = ["benchmark", "labeler", "n_prompts_judged", "n_prompts_labeled", "n_labels"]
# Every labeling table that holds rows per benchmark.
PER_BENCHMARK = tuple(table for judge in JUDGES for table in (labels_table(judge), judgements_table(judge)))


def prune_removed(con: duckdb.DuckDBPyConnection, current: list[str]) -> dict[str, int]:
    """Delete the rows of benchmarks not in `current` from every labeling table, atomically; rows
    deleted per table (tables that do not exist yet are skipped)."""
    with warehouse.transaction(con):
        con.execute(f"DROP TABLE IF EXISTS {LABELING_SCHEMA}.{LEGACY_INPUTS_TABLE}")
        counts = {f"{LABELING_SCHEMA}.{table}": warehouse.delete_rows_except(con, LABELING_SCHEMA, table, "benchmark", sorted(current)) for table in PER_BENCHMARK}
    return {name: n for name, n in counts.items() if n}


def judged_per_benchmark(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """benchmark, labeler, prompts judged, prompts labeled, labels: every judge's records as they stand."""
    parts = []
    for judge in JUDGES:
        if not warehouse.table_exists(con, LABELING_SCHEMA, judgements_table(judge)):
            continue
        labels = (
            f"SELECT benchmark, labeler, count(*) AS n FROM {LABELING_SCHEMA}.{labels_table(judge)} GROUP BY ALL"
            if warehouse.table_exists(con, LABELING_SCHEMA, labels_table(judge))
            else "SELECT NULL::VARCHAR AS benchmark, NULL::VARCHAR AS labeler, 0 AS n WHERE false"
        )
        parts.append(
            con.execute(
                f"""SELECT j.benchmark, j.labeler, count(*) AS n_prompts_judged,
                           count(*) FILTER (WHERE j.status = 'labeled') AS n_prompts_labeled,
                           coalesce(any_value(l.n), 0) AS n_labels
                    FROM {LABELING_SCHEMA}.{judgements_table(judge)} AS j
                    LEFT JOIN ({labels}) AS l USING (benchmark, labeler)
                    GROUP BY ALL"""
            ).df()
        )
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=CATALOG_COLUMNS)
    frame = frame[CATALOG_COLUMNS].sort_values(["benchmark", "labeler"], ignore_index=True)
    return frame.astype({"benchmark": "string", "labeler": "string", "n_prompts_judged": "Int64", "n_prompts_labeled": "Int64", "n_labels": "Int64"})


@dg.asset(
    key=[LABELING_SCHEMA, CATALOG_TABLE],
    deps=[dg.AssetKey([LABELING_SCHEMA, table]) for judge in JUDGES for table in (labels_table(judge), judgements_table(judge))],
    **warehouse_step("labeling", "team:labeling"),
    description="One row per (benchmark, labeler): prompts judged and labeled, labels; the labeling rows of every benchmark "
    "whose partition is gone are deleted first, in one transaction.",
)
def label_catalog(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    current = list(context.instance.get_dynamic_partitions(benchmarks_partitions.name))
    with warehouse_db.connect() as con:
        deleted = prune_removed(con, current)
        table = judged_per_benchmark(con)
        warehouse.replace_table(con, LABELING_SCHEMA, CATALOG_TABLE, table)
    if deleted:
        context.log.info(f"labels of benchmarks without a partition removed: {deleted}")
    return dg.MaterializeResult(metadata={**table_metadata(table), "rows_deleted": dg.MetadataValue.json(deleted)})
