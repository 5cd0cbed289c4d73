"""Labeling assets: the task index, each judge's labels per benchmark, and the judges' validation."""

import hashlib
import json
import time
from pathlib import Path

import dagster as dg
import pandas as pd

from .. import warehouse
from ..partitions import benchmarks_partitions
from ..resources import ChatModelResource, WarehouseResource
from ..settings import load_settings
from ..sources.assets import table_metadata
from .embedder import Embedder
from .embedding_store import EmbeddingStore
from .judgement_cache import JudgementCache
from .judges import EmbeddedJudge
from .labels import Embeddings, Retrieved, build_task_index, label_rows, retrieve
from .llm import BatchOverSpendCap, BatchStillRunning, Failure, Item, LLMJudge
from .retrieval import TaskIndex

LABELING_SCHEMA = "labeling"
JUDGES = {"embedded": "the embedded judge (no key, no network)", "llm": "the LLM judge (OpenAI API or compatible server)"}


def labels_table(judge: str) -> str:
    return f"{judge}_labels"


def judgements_table(judge: str) -> str:
    return f"{judge}_judgements"


def embeddings_service() -> Embeddings:
    settings = load_settings()
    store = EmbeddingStore(settings.cache_dir / "embeddings.sqlite")
    return Embeddings(store=store, embedder=Embedder(settings.embedding_model, batch_size=settings.embed_batch_size))


_INDEX_MEMO: dict[tuple, TaskIndex] = {}


def task_index_key(warehouse_db: WarehouseResource, embeddings: Embeddings) -> tuple:
    """What the task index is built from: the model and the content of the task and occupation tables."""
    tasks = warehouse_db.query("SELECT task_id, onet_soc_code, task FROM raw.onet_task_statements ORDER BY task_id")
    occupations = warehouse_db.query("SELECT onet_soc_code, title, description FROM raw.onet_occupations ORDER BY onet_soc_code")
    return (
        embeddings.embedder.model_name,
        int(pd.util.hash_pandas_object(tasks, index=False).sum()),
        int(pd.util.hash_pandas_object(occupations, index=False).sum()),
    ), tasks, occupations


def load_task_index(warehouse_db: WarehouseResource, embeddings: Embeddings) -> TaskIndex:
    """The task index, built once per process for a given content of the task and occupation tables
    (a run materializes several assets that search it)."""
    key, tasks, occupations = task_index_key(warehouse_db, embeddings)
    if key not in _INDEX_MEMO:
        _INDEX_MEMO.clear()
        _INDEX_MEMO[key] = build_task_index(tasks, occupations, embeddings)
    return _INDEX_MEMO[key]


def retrieval_options(settings) -> dict:
    return {
        "n_occupations": settings.n_candidate_occupations,
        "per_occupation": settings.candidates_per_occupation,
        "n_nearest": settings.candidates_nearest,
    }


def embedded_judge(settings) -> EmbeddedJudge:
    return EmbeddedJudge(n_occupations=settings.judge_occupations, min_similarity=settings.min_label_similarity)


def partition_prompts(warehouse_db: WarehouseResource, keys: list[str]) -> pd.DataFrame:
    return warehouse_db.query(
        f"SELECT benchmark, prompt_id, prompt, prompt_hash FROM raw.benchmark_prompts WHERE benchmark IN ({','.join('?' * len(keys))}) "
        "ORDER BY benchmark, prompt_id",
        keys,
    )


def write_partitions(warehouse_db: WarehouseResource, judge: str, labeler: str, keys: list[str], labels: pd.DataFrame, judgements: pd.DataFrame) -> None:
    """Replace this labeler's rows of each benchmark, one transaction per table and benchmark."""
    with warehouse_db.connect() as con:
        for key in keys:
            where = {"benchmark": key, "labeler": labeler}
            warehouse.replace_rows(con, LABELING_SCHEMA, labels_table(judge), labels[labels["benchmark"] == key], where)
            warehouse.replace_rows(con, LABELING_SCHEMA, judgements_table(judge), judgements[judgements["benchmark"] == key], where)


def _specs(judge: str) -> list[dg.AssetSpec]:
    common = {"group_name": "labeling", "kinds": {"python", "duckdb"}, "owners": ["team:labeling"]}
    return [
        dg.AssetSpec(
            key=[LABELING_SCHEMA, labels_table(judge)],
            deps=[dg.AssetKey(["raw", "benchmark_prompts"]), dg.AssetKey([LABELING_SCHEMA, "task_index"])],
            description=f"Prompt -> O*NET task labels of one benchmark by {JUDGES[judge]}: benchmark, prompt_id, "
            "task_id, rank, score, labeler, prompt_hash.",
            **common,
        ),
        dg.AssetSpec(
            key=[LABELING_SCHEMA, judgements_table(judge)],
            deps=[dg.AssetKey(["raw", "benchmark_prompts"])],
            description=f"One record per prompt for {JUDGES[judge]}: labeled, no_match, failed or unlabeled, with the "
            "reason (a prompt not in English, a request that failed) and the number of labels.",
            **common,
        ),
    ]


def _results(judge: str, labels: pd.DataFrame, judgements: pd.DataFrame, extra: dict):
    counts = {k: int(v) for k, v in judgements["status"].value_counts().items()}
    n_prompts = len(judgements)
    yield dg.MaterializeResult(
        asset_key=[LABELING_SCHEMA, judgements_table(judge)],
        metadata={**table_metadata(judgements), "status_counts": dg.MetadataValue.json(counts)},
    )
    yield dg.MaterializeResult(
        asset_key=[LABELING_SCHEMA, labels_table(judge)],
        metadata={
            **table_metadata(labels),
            "n_prompts": n_prompts,
            "labels_per_prompt": round(len(labels) / n_prompts, 3) if n_prompts else 0.0,
            "status_counts": dg.MetadataValue.json(counts),
            **extra,
        },
    )


@dg.asset(
    key=[LABELING_SCHEMA, "task_index"],
    deps=[dg.AssetKey(["raw", "onet_task_statements"]), dg.AssetKey(["raw", "onet_occupations"])],
    group_name="labeling",
    kinds={"python", "sqlite"},
    owners=["team:labeling"],
    pool="warehouse",
    description="Every O*NET task statement and occupation title embedded with all-MiniLM-L6-v2 (cached in the "
    "embedding store, outside the warehouse): the corpus that candidate retrieval searches.",
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
    specs=_specs("embedded"),
    partitions_def=benchmarks_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool="warehouse",
    name="embedded_judge_labels",
)
def embedded_judge_labels(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource):
    settings = load_settings()
    started = time.perf_counter()
    embeddings = embeddings_service()
    judge = embedded_judge(settings)
    keys = list(context.partition_keys)
    prompts = partition_prompts(warehouse_db, keys)
    # A benchmark whose prompts, task index, settings and labeling code are what its labels were
    # made from keeps its labels: retrieval over thousands of prompts is most of a warm run.
    inputs = embedded_inputs(settings, judge, task_index_key(warehouse_db, embeddings)[0], prompts, keys)
    stored = stored_inputs(warehouse_db, judge.labeler)
    stale = [key for key in keys if stored.get(key) != inputs[key]]
    if stale:
        index = load_task_index(warehouse_db, embeddings)
        retrieved = retrieve(prompts[prompts["benchmark"].isin(stale)].reset_index(drop=True), index, embeddings, **retrieval_options(settings))
        labels, judgements = label_rows(retrieved, judge.select(retrieved.candidates, index), judge.labeler)
        write_partitions(warehouse_db, "embedded", judge.labeler, stale, labels, judgements)
        write_inputs(warehouse_db, judge.labeler, {key: inputs[key] for key in stale})
    labels, judgements = read_partitions(warehouse_db, "embedded", judge.labeler, keys)
    yield from _results(
        "embedded",
        labels,
        judgements,
        {
            "labeler": judge.labeler,
            "selection_rule": dg.MetadataValue.json(judge.describe()),
            "benchmarks_relabeled": len(stale),
            "benchmarks_unchanged": len(keys) - len(stale),
            "chunks": embeddings.stats["chunks"],
            "embedded_now": embeddings.store.misses,
            "from_cache": embeddings.store.hits,
            "model_loaded": embeddings.embedder.loaded,
            "seconds": round(time.perf_counter() - started, 2),
        },
    )


INPUTS_TABLE = "embedded_label_inputs"
_LABELING_CODE = ("retrieval.py", "judges.py", "labels.py", "text.py", "embedder.py")


def embedded_inputs(settings, judge: EmbeddedJudge, index_key: tuple, prompts: pd.DataFrame, keys: list[str]) -> dict[str, str]:
    """Per benchmark, a SHA-256 of everything its embedded labels depend on."""
    here = Path(__file__).parent
    common = hashlib.sha256()
    common.update(json.dumps([judge.labeler, judge.describe(), retrieval_options(settings), list(map(str, index_key))], sort_keys=True, default=str).encode())
    for name in _LABELING_CODE:
        common.update((here / name).read_bytes())
    out = {}
    for key in keys:
        digest = common.copy()
        part = prompts[prompts["benchmark"] == key]
        digest.update("\x1f".join(f"{pid}\x1e{h}" for pid, h in zip(part["prompt_id"], part["prompt_hash"])).encode())
        out[key] = digest.hexdigest()
    return out


def stored_inputs(warehouse_db: WarehouseResource, labeler: str) -> dict[str, str]:
    with warehouse_db.connect() as con:
        if not warehouse.table_exists(con, LABELING_SCHEMA, INPUTS_TABLE):
            return {}
        rows = con.execute(f"SELECT benchmark, inputs_sha256 FROM {LABELING_SCHEMA}.{INPUTS_TABLE} WHERE labeler = ?", [labeler]).fetchall()
    return dict(rows)


def write_inputs(warehouse_db: WarehouseResource, labeler: str, inputs: dict[str, str]) -> None:
    """Recorded after the labels are written: a crash in between leaves an old key, so a re-label."""
    frame = pd.DataFrame({"benchmark": list(inputs), "labeler": labeler, "inputs_sha256": list(inputs.values())})
    with warehouse_db.connect() as con:
        warehouse.replace_rows(con, LABELING_SCHEMA, INPUTS_TABLE, frame, {"benchmark": list(inputs), "labeler": labeler})


def read_partitions(warehouse_db: WarehouseResource, judge: str, labeler: str, keys: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    marks = ",".join("?" * len(keys))
    with warehouse_db.connect() as con:
        labels = con.execute(
            f"SELECT * FROM {LABELING_SCHEMA}.{labels_table(judge)} WHERE labeler = ? AND benchmark IN ({marks}) ORDER BY benchmark, prompt_id, rank",
            [labeler, *keys],
        ).df()
        judgements = con.execute(
            f"SELECT * FROM {LABELING_SCHEMA}.{judgements_table(judge)} WHERE labeler = ? AND benchmark IN ({marks}) ORDER BY benchmark, prompt_id",
            [labeler, *keys],
        ).df()
    return labels, judgements


class LLMLabelsConfig(dg.Config):
    mode: str = "sync"  # "sync": one request per prompt; "batch": the Batch API
    batch_poll_seconds: float = 30.0
    batch_max_wait_seconds: float = 600.0


def llm_items(retrieved: Retrieved, index: TaskIndex) -> list[Item]:
    items = []
    for row, positions in zip(retrieved.prompts.itertuples(index=False), retrieved.candidates.task_positions):
        candidates = tuple(
            (int(index.task_ids[p]), str(index.tasks.at[int(p), "task"]), index.titles[int(index.task_occupation[p])]) for p in positions
        )
        items.append(Item(prompt_hash=row.prompt_hash, prompt=row.prompt, candidates=candidates))
    return items


def llm_outcomes(items: list[Item], results: dict) -> tuple[list[list[tuple[int, float]]], list[tuple[str, str]]]:
    """The judge's choices per prompt (score = 1/rank: the model gives an order, not a confidence)."""
    chosen, statuses = [], []
    for item in items:
        outcome = results.get(item.key, Failure("not judged", 0))
        if isinstance(outcome, Failure):
            chosen.append([])
            statuses.append(("failed", outcome.reason))
        else:
            chosen.append([(task_id, 1.0 / rank) for rank, task_id in enumerate(outcome.task_ids, start=1)])
            rejected = f"{len(outcome.rejected_ids)} id(s) outside the candidates dropped" if outcome.rejected_ids else ""
            statuses.append(("labeled", rejected) if outcome.task_ids else ("no_match", "the model chose none of the candidates"))
    return chosen, statuses


@dg.multi_asset(
    specs=_specs("llm"),
    partitions_def=benchmarks_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool="warehouse",
    name="llm_judge_labels",
)
def llm_judge_labels(context: dg.AssetExecutionContext, config: LLMLabelsConfig, warehouse_db: WarehouseResource, chat_model: ChatModelResource):
    """Labels by a chat model over the shared candidates. Every judgement is cached as it arrives; a run
    that stops (failure budget, spend cap) writes what was judged and then fails loudly."""
    settings = load_settings()
    embeddings = embeddings_service()
    index = load_task_index(warehouse_db, embeddings)
    keys = list(context.partition_keys)
    retrieved = retrieve(partition_prompts(warehouse_db, keys), index, embeddings, **retrieval_options(settings))
    items = llm_items(retrieved, index)
    judge = LLMJudge(chat_model.llm_settings(), JudgementCache(settings.judgement_cache_path), log=context.log.warning)
    if config.mode == "batch":
        try:
            report = judge.judge_by_batch(items, poll_s=config.batch_poll_seconds, max_wait_s=config.batch_max_wait_seconds)
        except BatchStillRunning as running:
            raise dg.Failure(description=str(running), metadata={"batch_id": running.batch_id}, allow_retries=True) from None
        except BatchOverSpendCap as over:
            raise dg.Failure(description=str(over)) from None
    elif config.mode == "sync":
        report = judge.judge(items)
    else:
        raise dg.Failure(description=f"unknown mode {config.mode!r}: expected 'sync' or 'batch'")
    chosen, statuses = llm_outcomes(items, report.results)
    labels, judgements = label_rows(retrieved, chosen, judge.labeler, statuses)
    write_partitions(warehouse_db, "llm", judge.labeler, keys, labels, judgements)
    metadata = {"labeler": judge.labeler, "mode": config.mode, **report.metadata()}
    if report.stopped:
        raise dg.Failure(description=f"LLM labeling stopped: {report.stopped}; what was judged is written and cached", metadata=metadata)
    yield from _results("llm", labels, judgements, metadata)


__all__ = ["task_index", "embedded_judge_labels", "llm_judge_labels"]
