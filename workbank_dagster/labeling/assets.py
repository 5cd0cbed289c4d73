"""Labeling assets: the task index (task statements embedded once) and prompt → task labels per benchmark."""


import time

import dagster as dg

from .. import warehouse
from ..partitions import benchmarks_partitions
from ..resources import WarehouseResource
from ..settings import load_settings
from ..sources.assets import table_metadata
from .embedder import Embedder
from .embedding_store import EmbeddingStore
from .judges import EmbeddedJudge
from .labels import Embeddings, build_task_index, label_with_embedded_judge

LABELING_SCHEMA = "labeling"
LABELS_TABLE = "prompt_task_labels"
JUDGEMENTS_TABLE = "prompt_judgements"


def embeddings_service() -> Embeddings:
    settings = load_settings()
    store = EmbeddingStore(settings.cache_dir / "embeddings.sqlite")
    return Embeddings(store=store, embedder=Embedder(settings.embedding_model, batch_size=settings.embed_batch_size))


def load_task_index(warehouse_db: WarehouseResource, embeddings: Embeddings):
    tasks = warehouse_db.query("SELECT task_id, onet_soc_code, task FROM raw.onet_task_statements ORDER BY task_id")
    occupations = warehouse_db.query("SELECT onet_soc_code, title, description FROM raw.onet_occupations")
    return build_task_index(tasks, occupations, embeddings)


def retrieval_options(settings) -> dict:
    return {
        "n_occupations": settings.n_candidate_occupations,
        "per_occupation": settings.candidates_per_occupation,
        "n_nearest": settings.candidates_nearest,
    }


def embedded_judge(settings) -> EmbeddedJudge:
    return EmbeddedJudge(n_occupations=settings.judge_occupations, min_similarity=settings.min_label_similarity)


@dg.asset(
    key=[LABELING_SCHEMA, "task_index"],
    deps=[dg.AssetKey(["raw", "onet_task_statements"]), dg.AssetKey(["raw", "onet_occupations"])],
    group_name="labeling",
    kinds={"python", "sqlite"},
    owners=["team:labeling"],
    pool="warehouse",
    description="Every O*NET task statement and occupation title embedded with all-MiniLM-L6-v2 (cached in the embedding store, "
    "outside the warehouse): the corpus that candidate retrieval searches.",
)
def task_index(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    started = time.perf_counter()
    embeddings = embeddings_service()
    index = load_task_index(warehouse_db, embeddings)
    return dg.MaterializeResult(
        metadata={
            "n_tasks": len(index.task_ids),
            "n_occupations": len(index.occupation_codes),
            "dimension": int(index.task_vectors.shape[1]),
            "model": embeddings.embedder.model_name,
            "embedded_now": embeddings.store.misses,
            "from_cache": embeddings.store.hits,
            "model_loaded": embeddings.embedder.loaded,
            "seconds": round(time.perf_counter() - started, 2),
        }
    )


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            key=[LABELING_SCHEMA, LABELS_TABLE],
            deps=[dg.AssetKey(["raw", "benchmark_prompts"]), dg.AssetKey([LABELING_SCHEMA, "task_index"])],
            group_name="labeling",
            kinds={"python", "duckdb"},
            owners=["team:labeling"],
            description="Prompt -> O*NET task labels of one benchmark (benchmark, prompt_id, task_id, rank, score, "
            "labeler, prompt_hash). Every judge's labels live here side by side, keyed by labeler.",
        ),
        dg.AssetSpec(
            key=[LABELING_SCHEMA, JUDGEMENTS_TABLE],
            deps=[dg.AssetKey(["raw", "benchmark_prompts"])],
            group_name="labeling",
            kinds={"python", "duckdb"},
            owners=["team:labeling"],
            description="One record per (prompt, labeler): labeled, no_match, or unlabeled with the reason (e.g. a prompt "
            "not in English), and the number of labels.",
        ),
    ],
    partitions_def=benchmarks_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool="warehouse",
    name="prompt_task_labels",
)
def prompt_task_labels(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource):
    settings = load_settings()
    started = time.perf_counter()
    embeddings = embeddings_service()
    judge = embedded_judge(settings)
    index = load_task_index(warehouse_db, embeddings)
    keys = list(context.partition_keys)
    prompts = warehouse_db.query(
        f"SELECT benchmark, prompt_id, prompt, prompt_hash FROM raw.benchmark_prompts WHERE benchmark IN ({','.join('?' * len(keys))}) "
        "ORDER BY benchmark, prompt_id",
        keys,
    )
    labels, judgements = label_with_embedded_judge(prompts, index, embeddings, judge, **retrieval_options(settings))
    with warehouse_db.connect() as con:
        for key in keys:
            where = {"benchmark": key, "labeler": judge.labeler}
            warehouse.replace_rows(con, LABELING_SCHEMA, LABELS_TABLE, labels[labels["benchmark"] == key], where)
            warehouse.replace_rows(con, LABELING_SCHEMA, JUDGEMENTS_TABLE, judgements[judgements["benchmark"] == key], where)
    status_counts = judgements["status"].value_counts().to_dict()
    n_prompts = len(judgements)
    yield dg.MaterializeResult(
        asset_key=[LABELING_SCHEMA, JUDGEMENTS_TABLE],
        metadata={**table_metadata(judgements), "status_counts": dg.MetadataValue.json({k: int(v) for k, v in status_counts.items()})},
    )
    yield dg.MaterializeResult(
        asset_key=[LABELING_SCHEMA, LABELS_TABLE],
        metadata={
            **table_metadata(labels),
            "labeler": judge.labeler,
            "selection_rule": dg.MetadataValue.json(judge.describe()),
            "n_prompts": n_prompts,
            "labels_per_prompt": round(len(labels) / n_prompts, 3) if n_prompts else 0.0,
            "status_counts": dg.MetadataValue.json({k: int(v) for k, v in status_counts.items()}),
            "chunks": embeddings.stats["chunks"],
            "embedded_now": embeddings.store.misses,
            "from_cache": embeddings.store.hits,
            "model_loaded": embeddings.embedder.loaded,
            "seconds": round(time.perf_counter() - started, 2),
        }
    )
