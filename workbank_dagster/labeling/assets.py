"""Labeling assets: the task index, each judge's labels per benchmark, and the judges' validation."""

import hashlib
import json
import time
from pathlib import Path

import dagster as dg
import pandas as pd

from .. import warehouse
from ..code_version import step_code_version, versioned_asset, versioned_multi_asset
from ..common import PARTITIONS_POOL, table_metadata, warehouse_step
from ..fingerprint import INPUTS_METADATA, RECOMPUTED_METADATA, last_fingerprint, recorded_per_partition
from ..partition_files import PartitionFiles
from ..partitions import benchmarks_partitions
from ..resources import WarehouseResource
from ..settings import NEAR_IDENTICAL, PipelineSettings, Settings
from .chat_model import ChatModelResource
from .embeddings import EmbeddedPrompts, Embeddings, embed_prompts
from .evidence import OccupationEvidence
from .judgement_cache import JudgementCache
from .label_tables import CANDIDATE_COLUMNS, JUDGEMENT_COLUMNS, LABEL_COLUMNS, label_rows
from .llm_batch import BatchOverSpendCap, BatchStillRunning
from .llm_judge import LLMJudge
from .llm_protocol import Failure, Item, OutOfCandidates
from .matching import (
    LabelingRuntime,
    default_judge,
    default_judge_outputs,
    embedded_judge_v3,
    judge_v3_rows,
    retrieval_options,
    retrieve_default,
    task_index_key,
)
from .onet_tables import OnetTables, title_frame
from .prior import OccupationPrior, prior_key, training_texts
from .prompt_retrieval import OccupationKnowledge, Retrieved
from .retrieval import TaskIndex
from .technology import TechnologyIndex
from .titles import TitleIndex

LABELING_SCHEMA = "labeling"
JUDGES = {"embedded": "the embedded judge (no key, no network)", "llm": "the LLM judge (OpenAI API or compatible server)"}


def labels_table(judge: str) -> str:
    return f"{judge}_labels"


def judgements_table(judge: str) -> str:
    return f"{judge}_judgements"


# The default judge's candidates per benchmark (label_tables.candidate_rows), written by the step that writes
# its labels and part of that asset (dbt's source points at labeling/embedded_labels): the
# label-uncertainty band re-draws labels from them.
CANDIDATES_TABLE = "embedded_candidates"


def write_candidates(files: PartitionFiles, keys: list[str], candidates: pd.DataFrame) -> None:
    """Each benchmark's candidate rows, its file written whole (only the default judge writes them)."""
    for key in keys:
        files.write(CANDIDATES_TABLE, key, candidates[candidates["benchmark"] == key][CANDIDATE_COLUMNS])


# --- the narrowing judges' (v4 to v6) knowledge: titles, technology, the O*NET prior ---------------------
PRIOR_FILE = "occupation_prior.npz"


def prior_path(settings) -> Path:
    return settings.data_dir / "models" / PRIOR_FILE


def prior_cache_path(settings, inputs_sha256: str) -> Path:
    """Where the cache folder keeps the prior fitted on these inputs by this code: its key
    (prior_key) covers both, so the cache is addressed by content, like the embedding store."""
    return settings.cache_dir / "priors" / f"{inputs_sha256}.npz"


def prior_training_texts(warehouse_db: WarehouseResource) -> pd.DataFrame:
    """The O*NET texts the prior learns from (prior.training_texts), read from raw.*."""
    tasks = warehouse_db.query("SELECT task_id, onet_soc_code, task FROM raw.onet_task_statements ORDER BY task_id")
    occupations = warehouse_db.query("SELECT onet_soc_code, title FROM raw.onet_occupations ORDER BY onet_soc_code")
    occupations = occupations[occupations["onet_soc_code"].isin(set(tasks["onet_soc_code"]))]
    return training_texts(
        tasks,
        occupations,
        warehouse_db.query_if_exists("raw", "onet_task_dwas", "SELECT onet_soc_code, dwa_title FROM {table}"),
        title_frame(warehouse_db),
        warehouse_db.query_if_exists("raw", "onet_technology_skills", "SELECT onet_soc_code, example FROM {table}"),
    )


def load_knowledge(onet: OnetTables, index: TaskIndex, runtime: LabelingRuntime, settings: Settings) -> OccupationKnowledge:
    """Titles, technology and the prior of the default judge, built once per run (in `runtime`) for given inputs."""
    titles, technology = onet.titles, onet.technology
    path = prior_path(settings)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the occupation prior is missing; materialize labeling/occupation_prior first")
    # Built again in this process when the titles, the technology or the prior's key change (the key
    # the prior's file carries, not its modification time).
    key = (
        tuple(index.occupation_codes),
        int(pd.util.hash_pandas_object(titles, index=False).sum()),
        int(pd.util.hash_pandas_object(technology, index=False).sum()) if technology is not None else 0,
        prior_inputs_sha256(settings),
    )

    def build() -> OccupationKnowledge:
        codes = list(index.occupation_codes)
        evidence = OccupationEvidence(
            codes, TitleIndex(titles, set(codes)), TechnologyIndex(technology, codes) if technology is not None else None
        )
        prior = OccupationPrior.load(path)
        if prior.codes != codes:
            raise ValueError(f"{path}: the prior was fitted on other occupations; materialize labeling/occupation_prior again")
        return OccupationKnowledge(evidence, prior)

    return runtime.memoized("knowledge", key, build)


PROMPT_COLUMNS = ["benchmark", "prompt_id", "prompt", "prompt_hash"]


def partition_prompts(files: PartitionFiles, keys: list[str]) -> pd.DataFrame:
    """The prompts of these benchmarks, from their files (raw/benchmark_prompts)."""
    found = files.query("benchmark_prompts", f"SELECT {', '.join(PROMPT_COLUMNS)} FROM {{table}} ORDER BY benchmark, prompt_id", keys)
    return found if found is not None else pd.DataFrame({c: pd.Series(dtype=object) for c in PROMPT_COLUMNS})


def partition_instructions(files: PartitionFiles, keys: list[str]) -> dict[str, str]:
    """benchmark → its instruction text (raw/benchmark_instructions), for the benchmarks of `keys` that have one."""
    found = files.query("benchmark_instructions", "SELECT benchmark, instruction FROM {table} ORDER BY benchmark", keys)
    return {} if found is None else dict(zip(found["benchmark"], found["instruction"]))


def write_partitions(files: PartitionFiles, judge: str, labeler: str, keys: list[str], labels: pd.DataFrame, judgements: pd.DataFrame) -> None:
    """Replace this labeler's rows of each benchmark in its files (the rows of other labelers stay),
    each file written whole and renamed into place."""
    for table, frame, columns in ((labels_table(judge), labels, LABEL_COLUMNS), (judgements_table(judge), judgements, JUDGEMENT_COLUMNS)):
        for key in keys:
            mine = frame[frame["benchmark"] == key][columns]
            path = files.path(table, key)
            if path.is_file():
                kept = pd.read_parquet(path)
                kept = kept[kept["labeler"] != labeler]
                if len(kept):
                    mine = pd.concat([kept.reindex(columns=columns).astype(mine.dtypes.to_dict()), mine], ignore_index=True)
            files.write(table, key, mine)


def drop_retired_labelers(files: PartitionFiles, judge: str, running: set[str], present: set[tuple[str, str]]) -> list[str]:
    """Take the rows of labelers this judge's asset no longer runs (v4 and v5, once a later version replaced them) out of
    the files of the benchmarks that have them (`present`: their (benchmark, labeler) pairs), so a
    run's tables hold only what its code makes; the labelers dropped."""
    dropped: set[str] = set()
    stale = sorted({key for key, labeler in present if labeler not in running})
    for table in (labels_table(judge), judgements_table(judge)):
        for key in stale:
            path = files.path(table, key)
            if not path.is_file():
                continue
            rows = pd.read_parquet(path)
            retired = ~rows["labeler"].isin(running)
            if retired.any():
                dropped |= set(rows.loc[retired, "labeler"])
                files.write(table, key, rows[~retired].reset_index(drop=True))
    return sorted(dropped)


def _specs(judge: str) -> list[dg.AssetSpec]:
    common = {"group_name": "labeling", "kinds": {"python", "parquet"}, "owners": ["team:labeling"]}
    return [
        dg.AssetSpec(
            key=[LABELING_SCHEMA, labels_table(judge)],
            deps=[
                dg.AssetKey(["raw", "benchmark_prompts"]),
                dg.AssetKey(["raw", "benchmark_instructions"]),
                dg.AssetKey([LABELING_SCHEMA, "task_index"]),  # with the O*NET files it writes
                dg.AssetKey([LABELING_SCHEMA, "occupation_prior"]),
            ],
            description=f"Prompt -> O*NET task labels of one benchmark by {JUDGES[judge]}: benchmark, prompt_id, "
            "task_id, rank, score, labeler, prompt_hash.",
            **common,
        ),
        dg.AssetSpec(
            key=[LABELING_SCHEMA, judgements_table(judge)],
            deps=[dg.AssetKey(["raw", "benchmark_prompts"]), dg.AssetKey(["raw", "benchmark_instructions"])],
            description=f"One record per prompt for {JUDGES[judge]}: labeled, abstained, no_match, out_of_candidates, failed or unlabeled, with "
            "the reason (low confidence, a prompt not in English, a request that failed), the number of labels and the "
            "judge's confidence (the default judge: the probability of its best occupation).",
            **common,
        ),
    ]


def _results(judge: str, labels: pd.DataFrame, judgements: pd.DataFrame, extra: dict):
    """The step's two materializations: the judgements, and the labels with `extra`. Whether the
    step worked (`recomputed`) is said on both: one step writes both tables."""
    counts = {k: int(v) for k, v in judgements["status"].value_counts().items()}
    n_prompts = len(judgements)
    both = {RECOMPUTED_METADATA: extra[RECOMPUTED_METADATA]} if RECOMPUTED_METADATA in extra else {}
    yield dg.MaterializeResult(
        asset_key=[LABELING_SCHEMA, judgements_table(judge)],
        metadata={**table_metadata(judgements), "status_counts": dg.MetadataValue.json(counts), **both},
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


TWINS_TABLE = "task_twins"


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


@versioned_asset(
    key=[LABELING_SCHEMA, "task_index"],
    deps=[
        dg.AssetKey(["raw", table])
        for table in ("onet_task_statements", "onet_occupations", "onet_alternate_titles", "onet_reported_titles", "onet_technology_skills")
    ],
    **warehouse_step("labeling", "team:labeling", "python", "sqlite", "parquet"),
    description="Every O*NET task statement and occupation title embedded with all-MiniLM-L6-v2 (cached in the "
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
    twins = write_task_twins(warehouse_db, index, task_index_key(onet, embeddings))
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
        }
    )


@versioned_asset(
    key=[LABELING_SCHEMA, "occupation_prior"],
    deps=[
        dg.AssetKey(["raw", table])
        for table in ("onet_task_statements", "onet_occupations", "onet_task_dwas", "onet_alternate_titles", "onet_reported_titles", "onet_technology_skills")
    ],
    **warehouse_step("labeling", "team:labeling", "python", "scikit-learn"),
    description="The default judge's occupation (and family) prior: a linear discriminant analysis over the embeddings of O*NET's own "
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


@versioned_multi_asset(
    specs=_specs("embedded"),
    partitions_def=benchmarks_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool=PARTITIONS_POOL,
    name="embedded_judge_labels",
)
def embedded_judge_labels(context: dg.AssetExecutionContext, labeling_runtime: LabelingRuntime, pipeline_settings: PipelineSettings):
    """Judges v6 (the default) and v3 over the same embeddings: each benchmark's labels by each."""
    settings = pipeline_settings.resolve()
    started = time.perf_counter()
    embeddings = labeling_runtime.embeddings(settings, context)
    v3, default = embedded_judge_v3(settings), default_judge()
    keys = list(context.partition_keys)
    files = settings.partition_files
    onet = OnetTables.from_files(files)
    prompts = partition_prompts(files, keys)
    instructions = partition_instructions(files, keys)
    # A benchmark whose prompts, instruction, task index, settings and labeling code are what its labels
    # were made from keeps its labels: retrieval over thousands of prompts is most of a warm run.
    index_key = task_index_key(onet, embeddings)
    prior_sha = prior_inputs_sha256(settings)
    code = step_code_version(context)
    inputs = {
        v3.labeler: embedded_inputs(code, settings, v3.labeler, v3.describe(), index_key, prompts, keys),
        default.labeler: embedded_inputs(code, settings, default.labeler, {**default.describe(), "prior": prior_sha}, index_key, prompts, keys, instructions),
    }
    recorded = recorded_inputs(context.instance, keys)
    present = judged_partitions(files, keys)
    stale = {
        labeler: [k for k in keys if recorded.get(k, {}).get(labeler) != inputs[labeler][k] or (k, labeler) not in present] for labeler in inputs
    }
    # Labels kept without their candidates (a file deleted) are made again with them.
    stale[default.labeler] = [k for k in keys if k in stale[default.labeler] or not files.path(CANDIDATES_TABLE, k).is_file()]
    relabel = sorted(set(stale[v3.labeler]) | set(stale[default.labeler]))
    if relabel:
        index = labeling_runtime.task_index(onet, embeddings)
        embedded = embed_prompts(prompts[prompts["benchmark"].isin(relabel)].reset_index(drop=True), embeddings, instructions)
        if stale[v3.labeler]:
            labels, judgements = judge_v3_rows(_subset(embedded, stale[v3.labeler]), index, settings, progress=embeddings.progress)
            write_partitions(files, "embedded", v3.labeler, stale[v3.labeler], labels, judgements)
        if stale[default.labeler]:
            knowledge = load_knowledge(onet, index, labeling_runtime, settings)
            labels, judgements, candidates = default_judge_outputs(
                _subset(embedded, stale[default.labeler]), index, knowledge, settings, progress=embeddings.progress
            )
            write_partitions(files, "embedded", default.labeler, stale[default.labeler], labels, judgements)
            write_candidates(files, stale[default.labeler], candidates)
    retired = drop_retired_labelers(files, "embedded", set(inputs), present)
    labels, judgements = read_partitions(files, "embedded", None, keys)
    per_labeler = {
        labeler: {
            "labels_per_prompt": round(float((labels["labeler"] == labeler).sum()) / max(int((judgements["labeler"] == labeler).sum()), 1), 3),
            "status_counts": {k: int(v) for k, v in judgements[judgements["labeler"] == labeler]["status"].value_counts().items()},
            RECOMPUTED_METADATA: stale[labeler],
        }
        for labeler in inputs
    }
    mine = judgements[judgements["labeler"] == default.labeler]
    yield from _results(
        "embedded",
        labels[labels["labeler"] == default.labeler],
        mine,
        {
            "labeler": default.labeler,
            "labelers": dg.MetadataValue.json(per_labeler),
            "selection_rule": dg.MetadataValue.json(default.describe()),
            "abstained": int((mine["status"] == "abstained").sum()),
            # What each benchmark's labels were made from, per labeler: the next run keeps the
            # labels of a benchmark whose key is unchanged (and whose rows are still there).
            INPUTS_METADATA: dg.MetadataValue.json({k: {labeler: inputs[labeler][k] for labeler in inputs} for k in keys}),
            RECOMPUTED_METADATA: dg.MetadataValue.json(relabel),  # the benchmarks labeled again; the others kept theirs
            "retired_labelers_dropped": dg.MetadataValue.json(retired),
            "chunks": embeddings.stats["chunks"],
            "embedded_now": embeddings.store.misses,
            "from_cache": embeddings.store.hits,
            "model_loaded": embeddings.embedder.loaded,
            "seconds": round(time.perf_counter() - started, 2),
        },
    )


def _subset(embedded: EmbeddedPrompts, keys: list[str]) -> EmbeddedPrompts:
    """The embedded prompts of some benchmarks only (whole benchmarks: the benchmark context needs them)."""
    keep = embedded.prompts["benchmark"].isin(keys).to_numpy()
    return EmbeddedPrompts(
        embedded.prompts[keep].reset_index(drop=True),
        embedded.vectors[keep],
        [c for c, k in zip(embedded.chunk_counts, keep) if k],
        [r for r, k in zip(embedded.roles, keep) if k],
        embedded.role_vectors[keep],
        embedded.has_role[keep],
        embedded.unreadable[embedded.unreadable["benchmark"].isin(keys)].reset_index(drop=True),
        embedded.instructions.subset(keys),
    )


def prior_inputs_sha256(settings) -> str:
    """The training-text hash the prior on disk was fitted on ('none' when there is none yet)."""
    path = prior_path(settings)
    return OccupationPrior.key_of(path) if path.is_file() else "none"


def embedded_inputs(
    code: str, settings, labeler: str, rule: dict, index_key: tuple, prompts: pd.DataFrame, keys: list[str], instructions: dict[str, str] | None = None
) -> dict[str, str]:
    """Per benchmark, a SHA-256 of everything its embedded labels depend on.

    A benchmark's labels by the default judge also depend on every other prompt of the same benchmark (the benchmark
    context), which its prompt list below covers, and on its instruction (given for that judge only; v3 does not read it)."""
    common = hashlib.sha256(code.encode())  # the step's code version (code_version.py)
    common.update(json.dumps([labeler, rule, retrieval_options(settings), list(map(str, index_key))], sort_keys=True, default=str).encode())
    out = {}
    for key in keys:
        digest = common.copy()
        part = prompts[prompts["benchmark"] == key]
        digest.update("\x1f".join(f"{pid}\x1e{h}" for pid, h in zip(part["prompt_id"], part["prompt_hash"])).encode())
        if instructions is not None and key in instructions:
            digest.update(f"\x1dinstruction\x1e{instructions[key]}".encode())
        out[key] = digest.hexdigest()
    return out


def recorded_inputs(instance: dg.DagsterInstance, keys: list[str]) -> dict[str, dict[str, str]]:
    """Per benchmark, {labeler: key} as its last materialization of the embedded labels recorded them
    (metadata `inputs_sha256`, where every cached step records its key: fingerprint.py). A run that
    fails records nothing, so its benchmarks are labeled again."""
    asset_key = dg.AssetKey([LABELING_SCHEMA, labels_table("embedded")])
    found = recorded_per_partition(instance, asset_key, INPUTS_METADATA, keys)
    return {key: dict(value) for key, value in found.items() if isinstance(value, dict)}


def judged_partitions(files: PartitionFiles, keys: list[str]) -> set[tuple[str, str]]:
    """(benchmark, labeler) pairs of these benchmarks with judgement rows in their files: a recorded
    key keeps labels only where they still are (a deleted partitions folder, a pruned benchmark)."""
    found = files.query(judgements_table("embedded"), "SELECT DISTINCT benchmark, labeler FROM {table}", keys)
    return set() if found is None else set(zip(found["benchmark"], found["labeler"]))


def read_partitions(files: PartitionFiles, judge: str, labeler: str | None, keys: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of these benchmarks, of one labeler (or of every labeler of this judge: None)."""
    who, params = ("WHERE labeler = ? ", [labeler]) if labeler is not None else ("", [])
    labels = files.query(labels_table(judge), f"SELECT * FROM {{table}} {who}ORDER BY labeler, benchmark, prompt_id, rank", keys, params)
    judgements = files.query(judgements_table(judge), f"SELECT * FROM {{table}} {who}ORDER BY labeler, benchmark, prompt_id", keys, params)
    return (
        labels if labels is not None else pd.DataFrame(columns=LABEL_COLUMNS),
        judgements if judgements is not None else pd.DataFrame(columns=JUDGEMENT_COLUMNS),
    )


class LLMLabelsConfig(dg.Config):
    mode: str = "sync"  # "sync": one request per prompt; "batch": the Batch API
    batch_poll_seconds: float = 30.0
    batch_max_wait_seconds: float = 600.0


def llm_candidates(
    onet: OnetTables, index: TaskIndex, embeddings: Embeddings, prompts: pd.DataFrame, settings, runtime: LabelingRuntime, instructions: dict[str, str] | None = None
) -> Retrieved:
    """The LLM judge's candidates: the default judge's retrieval (family first, titles, technology, prior,
    benchmark context and instruction), so the chat model chooses among the better candidates too."""
    return retrieve_default(embed_prompts(prompts, embeddings, instructions), index, load_knowledge(onet, index, runtime, settings), settings)


def llm_items(retrieved: Retrieved, index: TaskIndex, instructions: dict[str, str] | None = None) -> list[Item]:
    """One request per readable prompt: its text, its benchmark's instruction (if any) and its candidates."""
    items = []
    for row, positions in zip(retrieved.prompts.itertuples(index=False), retrieved.candidates.task_positions):
        candidates = tuple(
            (int(index.task_ids[p]), str(index.tasks.at[int(p), "task"]), index.titles[int(index.task_occupation[p])]) for p in positions
        )
        items.append(Item(prompt_hash=row.prompt_hash, prompt=row.prompt, candidates=candidates, instruction=(instructions or {}).get(row.benchmark)))
    return items


def llm_outcomes(items: list[Item], results: dict) -> tuple[list[list[tuple[int, float]]], list[tuple[str, str]]]:
    """The judge's choices per prompt (score = 1/rank: the model gives an order, not a confidence).

    Statuses: `labeled` (with the count of IDs outside the candidates that were dropped, if any),
    `no_match` (the model chose none), `out_of_candidates` (every ID it answered was outside the
    candidates, in sync mode twice: not a choice of none, and not cached) and `failed`."""
    chosen, statuses = [], []
    for item in items:
        outcome = results.get(item.key, Failure("not judged", 0))
        if isinstance(outcome, Failure):
            chosen.append([])
            statuses.append(("failed", outcome.reason))
        elif isinstance(outcome, OutOfCandidates):
            chosen.append([])
            statuses.append(("out_of_candidates", outcome.reason))
        else:
            chosen.append([(task_id, 1.0 / rank) for rank, task_id in enumerate(outcome.task_ids, start=1)])
            rejected = f"{len(outcome.rejected_ids)} id(s) outside the candidates dropped" if outcome.rejected_ids else ""
            if outcome.task_ids:
                statuses.append(("labeled", rejected))
            else:  # an earlier answer all outside the candidates, then none chosen: both said
                statuses.append(("no_match", "; ".join(filter(None, ["the model chose none of the candidates", rejected]))))
    return chosen, statuses


# A burst of rate limits or server errors longer than the client's retries fails the step; it is run
# again after 2, 4, 8 s (± jitter). A retry is free and safe: every judgement is cached as it
# arrives, and a batch is found again by its tag before one is created. What no retry mends (a spent
# failure budget or spend cap, an unknown mode) fails with allow_retries=False: a retry would pay again.
LLM_RETRY_POLICY = dg.RetryPolicy(max_retries=3, delay=2.0, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS)


@versioned_multi_asset(
    specs=_specs("llm"),
    partitions_def=benchmarks_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool=PARTITIONS_POOL,
    name="llm_judge_labels",
    retry_policy=LLM_RETRY_POLICY,
)
def llm_judge_labels(
    context: dg.AssetExecutionContext,
    config: LLMLabelsConfig,
    chat_model: ChatModelResource,
    labeling_runtime: LabelingRuntime,
    pipeline_settings: PipelineSettings,
):
    """Labels by a chat model over the shared candidates. Every judgement is cached as it arrives; a run
    that stops (failure budget, spend cap) writes what was judged and then fails loudly."""
    settings = pipeline_settings.resolve()
    embeddings = labeling_runtime.embeddings(settings, context)
    files = settings.partition_files
    onet = OnetTables.from_files(files)
    index = labeling_runtime.task_index(onet, embeddings)
    keys = list(context.partition_keys)
    instructions = partition_instructions(files, keys)
    retrieved = llm_candidates(onet, index, embeddings, partition_prompts(files, keys), settings, labeling_runtime, instructions)
    items = llm_items(retrieved, index, instructions)
    judge = LLMJudge(chat_model.llm_settings(), JudgementCache(settings.judgement_cache_path), api_key=chat_model.api_key, log=context.log.warning)
    if config.mode == "batch":
        try:
            report = judge.judge_by_batch(items, poll_s=config.batch_poll_seconds, max_wait_s=config.batch_max_wait_seconds)
        except BatchStillRunning as running:
            raise dg.Failure(description=str(running), metadata={"batch_id": running.batch_id}, allow_retries=True) from None
        except BatchOverSpendCap as over:
            raise dg.Failure(description=str(over), allow_retries=False) from None
    elif config.mode == "sync":
        report = judge.judge(items)
    else:
        raise dg.Failure(description=f"unknown mode {config.mode!r}: expected 'sync' or 'batch'", allow_retries=False)
    chosen, statuses = llm_outcomes(items, report.results)
    labels, judgements = label_rows(retrieved, chosen, judge.labeler, statuses)
    write_partitions(files, "llm", judge.labeler, keys, labels, judgements)
    metadata = {"labeler": judge.labeler, "mode": config.mode, **report.metadata()}
    if report.stopped:
        raise dg.Failure(description=f"LLM labeling stopped: {report.stopped}; what was judged is written and cached", metadata=metadata, allow_retries=False)
    yield from _results("llm", labels, judgements, metadata)


__all__ = ["task_index", "occupation_prior", "embedded_judge_labels", "llm_judge_labels"]
