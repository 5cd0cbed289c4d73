"""Labeling assets built from O*NET alone, before any benchmark: the task index (with the O*NET files
the partition runs read, and the task twins) and the occupation prior."""

import json
import time

import dagster as dg
import pandas as pd

from .. import warehouse
from ..code_version import versioned_asset
from ..common import warehouse_step
from ..fingerprint import INPUTS_METADATA, RECOMPUTED_METADATA, content_version, last_fingerprint
from ..resources import WarehouseResource
from ..settings import NEAR_IDENTICAL, PipelineSettings
from .label_files import LABELING_SCHEMA
from .matching import LabelingRuntime, task_index_key
from .occupation_knowledge import prior_cache_path, prior_path, prior_training_texts
from .onet_tables import OnetTables
from .prior import OccupationPrior, prior_key
from .retrieval import TaskIndex

TWINS_TABLE = "task_twins"


def onet_asset(name: str, tables: tuple[str, ...], kinds: tuple[str, ...], description: str):
    """A labeling asset built from O*NET's raw `tables` alone (its dependencies), a step of the
    warehouse pool; `kinds` are the storage kinds the UI shows beside python."""
    return versioned_asset(
        key=[LABELING_SCHEMA, name],
        deps=[dg.AssetKey(["raw", table]) for table in tables],
        **warehouse_step("labeling", "team:labeling", "python", *kinds),
        description=description,
    )


def write_task_twins(warehouse_db: WarehouseResource, index: TaskIndex, index_key: tuple) -> dict:
    """`labeling.task_twins`: the near-identical task statements of different occupations (cosine at
    least NEAR_IDENTICAL; analysis/near_duplicates.py), with the key of the index they came from. All
    pairs of 18,796 statements take seconds, so a table made from the same index is kept."""
    key = json.dumps([*map(str, index_key), NEAR_IDENTICAL])
    with warehouse_db.connect() as con:
        found = warehouse.query_if_exists(con, LABELING_SCHEMA, TWINS_TABLE, "SELECT any_value(index_key) AS k, count(*) AS n FROM {table}")
    if found is not None and found.at[0, "k"] == key:
        return {"pairs": int(found.at[0, "n"]), "computed": False}
    pairs = index.near_identical_pairs(NEAR_IDENTICAL).assign(index_key=key)
    if pairs.empty:  # a table needs a row to carry its key
        pairs = pd.DataFrame({"task_id": pd.array([], "int64"), "twin_task_id": pd.array([], "int64"), "cosine": [], "index_key": []})
    with warehouse_db.connect() as con:
        warehouse.replace_table(con, LABELING_SCHEMA, TWINS_TABLE, pairs)
    return {"pairs": len(pairs), "computed": True}


@onet_asset(
    "task_index",
    ("onet_task_statements", "onet_occupations", "onet_alternate_titles", "onet_reported_titles", "onet_technology_skills"),
    ("sqlite", "parquet"),
    "Every O*NET task statement and occupation title embedded with all-MiniLM-L6-v2 (cached in the "
    "embedding store, outside the warehouse): the corpus that candidate retrieval searches. Writes the O*NET tables "
    "the per-benchmark labeling reads (tasks, occupations, titles, technology) as files beside the partitions' "
    "(labeling/onet_tables.py), so a partition run never opens the warehouse.",
)
def task_index(
    context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, labeling_runtime: LabelingRuntime, pipeline_settings: PipelineSettings
) -> dg.MaterializeResult:
    started = time.perf_counter()
    settings = pipeline_settings.resolve()
    embeddings = labeling_runtime.embeddings(settings, context)
    onet = OnetTables.from_warehouse(warehouse_db)
    index = labeling_runtime.task_index(onet, embeddings)
    shared = onet.write(settings.partition_files)
    index_key = task_index_key(onet, embeddings)  # the O*NET texts and the model: what the index is made of
    twins = write_task_twins(warehouse_db, index, index_key)
    return dg.MaterializeResult(
        metadata={
            "files_written": dg.MetadataValue.json(shared),
            "task_twins": dg.MetadataValue.json(twins),
            "n_tasks": len(index.task_ids),
            "n_occupations": len(index.occupation_codes),
            "dimension": int(index.task_vectors.shape[1]),
            "model": embeddings.embedder.model_name,
            "embedded_now": embeddings.store.misses,
            "from_cache": embeddings.store.hits,
            "model_loaded": embeddings.embedder.loaded,
            "seconds": round(time.perf_counter() - started, 2),
        },
        data_version=content_version(index_key),
    )


@onet_asset(
    "occupation_prior",
    ("onet_task_statements", "onet_occupations", "onet_task_dwas", "onet_alternate_titles", "onet_reported_titles", "onet_technology_skills"),
    ("scikit-learn",),
    "The default judge's occupation (and family) prior: a linear discriminant analysis over the embeddings of O*NET's own "
    "texts (task statements, detailed work activities, titles, technology skills), each labelled with its occupation; "
    "never benchmark labels. Written to data/models/occupation_prior.npz; its data version is the fingerprint of its code, "
    "the embedding and the training texts (labeling/prior.py, prior_key).",
)
def occupation_prior(
    context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, labeling_runtime: LabelingRuntime, pipeline_settings: PipelineSettings
) -> dg.MaterializeResult:
    settings = pipeline_settings.resolve()
    started = time.perf_counter()
    texts = prior_training_texts(warehouse_db)
    path = prior_path(settings)
    embeddings = labeling_runtime.embeddings(settings, context)
    digest = prior_key(texts, embeddings.embedder.store_key)
    # The cache folder keeps every prior fitted, named by its training texts and the code that fits
    # it: a new data folder (a test, a second checkout) takes it from there instead of reading
    # ~99k vectors and fitting again; the same texts and code give the same weights.
    cached = prior_cache_path(settings, digest)
    refitted, from_cache = False, False
    # Unchanged when its last materialization recorded this key and the file it wrote is still that
    # prior (a deleted data folder, or a prior written over by another checkout, is fitted again).
    kept_here = last_fingerprint(context.instance, context.asset_key)[0] == digest and path.is_file() and OccupationPrior.key_of(path) == digest
    if not kept_here:
        kept = OccupationPrior.load(cached) if cached.is_file() else None
        if kept is not None and kept.inputs_sha256 == digest:
            kept.save(path)
            from_cache = True
        else:
            index = labeling_runtime.task_index(OnetTables.from_warehouse(warehouse_db), embeddings)
            vectors = embeddings.texts(texts["text"].tolist())
            fit_started = time.perf_counter()
            prior = OccupationPrior.fit(vectors, texts["onet_soc_code"].tolist(), list(index.occupation_codes), digest)
            prior.save(path)
            prior.save(cached)
            context.log.info(f"occupation prior fitted on {len(texts):,} O*NET texts in {time.perf_counter() - fit_started:.1f} s")
            refitted = True
    return dg.MaterializeResult(
        metadata={
            "path": str(path),
            "bytes": path.stat().st_size,
            "n_texts": len(texts),
            "texts_by_kind": dg.MetadataValue.json({k: int(v) for k, v in texts["kind"].value_counts().sort_index().items()}),
            "refitted": refitted,
            RECOMPUTED_METADATA: refitted or from_cache,
            "from_cache": dg.MetadataValue.path(str(cached)) if from_cache else False,
            "embedded_now": embeddings.store.misses,
            "model_loaded": embeddings.embedder.loaded,
            "seconds": round(time.perf_counter() - started, 2),
            INPUTS_METADATA: digest,
        },
        data_version=dg.DataVersion(digest),
    )


__all__ = ["task_index", "occupation_prior"]
