"""The analysis step: one Dagster multi-asset that reads the marts, computes with the package's pure
functions after its connection is closed, and writes one `analysis.<table>` per asset it names;
kept, not computed, when its code and inputs are those its tables came from (`computed_or_kept`)."""

from collections.abc import Callable

import dagster as dg
import numpy as np
import pandas as pd

from .. import warehouse
from ..code_version import step_code_version, versioned_multi_asset
from ..common import asset_attributes
from ..fingerprint import INPUTS_METADATA, RECOMPUTED_METADATA, content_version, fingerprint, last_fingerprint
from ..resources import WarehouseResource
from .columns import TABLES, analysis_table_metadata

SCHEMA = "analysis"

TASK_FRAME_SQL = """
select d.task_id, d.onet_soc_code, d.family_code, d.task, d.task_type, d.importance, d.exposed,
       c.n_prompts, c.covered, o.wage_bill, o.employment, o.title as occupation_title, h.hours
from marts.dim_task as d
join marts.fct_task_coverage as c using (task_id)
join marts.dim_occupation as o using (onet_soc_code)
left join marts.fct_task_hours as h using (task_id, onet_soc_code)
order by d.task_id
"""


def key(*path: str) -> dg.AssetKey:
    return dg.AssetKey(list(path))


TASK_DEPS = [key("marts", "dim_task"), key("marts", "fct_task_coverage"), key("marts", "dim_occupation"), key("marts", "fct_task_hours")]


def _spec(name: str, deps) -> dg.AssetSpec:
    return dg.AssetSpec(key=[SCHEMA, name], deps=deps, description=TABLES[name], **asset_attributes("analysis", "team:analysis"))


def analysis_step(name: str, tables: list[str], deps):
    """An analysis step: one multi-asset that writes `analysis.<table>` for each of `tables`."""
    return versioned_multi_asset(specs=[_spec(table, deps) for table in tables], pool="warehouse", name=name)


def read_task_frame(warehouse_db: WarehouseResource) -> pd.DataFrame:
    with warehouse_db.connect() as con:
        return task_frame(con)


def computed_or_kept(
    context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, compute: Callable[..., dict[str, pd.DataFrame]], *inputs, **helpers
):
    """`compute(*inputs, **helpers)`'s tables, written in one short connection, then reported; or, when
    the step's code and inputs are those its tables were computed from, the tables kept and reported.

    Every analysis asset reads what it needs, closes its connection, computes (model fits, the
    bootstrap) and only then opens the warehouse again to write: no read-write connection is held
    while it computes. The model fits and the 200-replicate bootstrap are most of a warm run's
    analysis, so a step fingerprints its code and its `inputs` (the frames it read and the settings
    it uses; `helpers`, such as a logger, are not inputs): when the fingerprint is the one its
    tables' last materializations recorded and the tables are there, it keeps them (metadata
    `recomputed`: false)."""
    key = fingerprint(code=step_code_version(context), inputs=inputs)
    names = [asset_key.path[-1] for asset_key in context.assets_def.keys]
    tables = _kept(context, warehouse_db, names, key)
    recomputed = tables is None
    if recomputed:
        tables = compute(*inputs, **helpers)
        with warehouse_db.connect() as con:
            for name, frame in tables.items():
                warehouse.replace_table(con, SCHEMA, name, frame)
    for name, frame in tables.items():
        yield dg.MaterializeResult(
            asset_key=[SCHEMA, name],
            metadata={**analysis_table_metadata(name, frame), INPUTS_METADATA: key, RECOMPUTED_METADATA: recomputed},
            data_version=content_version(frame),
        )


def _kept(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, names: list[str], key: str) -> dict[str, pd.DataFrame] | None:
    """The step's tables as the warehouse holds them, if every one was last materialized from `key`."""
    for name in names:
        if last_fingerprint(context.instance, dg.AssetKey([SCHEMA, name]))[0] != key:
            return None
    with warehouse_db.connect() as con:
        if not all(warehouse.table_exists(con, SCHEMA, name) for name in names):
            return None
        return {name: con.execute(f"select * from {SCHEMA}.{warehouse.quote(name)}").df() for name in names}


def task_frame(con) -> pd.DataFrame:
    frame = con.execute(TASK_FRAME_SQL).df()
    frame["covered"] = frame["covered"].astype(bool)
    return frame


# What the regressions read of a task. The frames a step passes on are its fingerprint as well as its input
# (step.computed_or_kept), so a step given only these is kept by a refresh that moves prompt counts and no
# task's flag: at a million prompts, adding a benchmark of 1,000 prompts moved 10 to 100 tasks' counts and
# no task's flag at any threshold, and the three steps over the task table (about 5 s) and judge_ratios
# (1.6 s) fitted the same models again.
REGRESSION_COLUMNS = ["task_id", "onet_soc_code", "exposed", "importance", "wage_bill", "covered"]
THRESHOLD_COLUMNS = ["task_id", "onet_soc_code", "exposed", "importance", "wage_bill", "n_prompts"]


def regression_frame(tasks: pd.DataFrame) -> pd.DataFrame:
    """The columns of the task table that coverage_logit and importance_logit read."""
    return tasks[REGRESSION_COLUMNS]


def threshold_frame(tasks: pd.DataFrame, thresholds: tuple[int, ...]) -> pd.DataFrame:
    """The columns of the task table that threshold_ratios reads, each task's prompt count replaced by the
    largest of `thresholds` it reaches (0: none; thresholds are at least 1): every `n_prompts >= t` that
    threshold_ratios compares, t one of `thresholds`, comes out as with the count itself."""
    frame = tasks[THRESHOLD_COLUMNS]
    levels = np.array(sorted(set(thresholds)), dtype=np.int64)
    reached = np.searchsorted(levels, frame["n_prompts"].to_numpy(dtype=np.int64), side="right") - 1
    return frame.assign(n_prompts=np.where(reached >= 0, levels[np.maximum(reached, 0)], 0))
