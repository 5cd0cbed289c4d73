"""Labeling assets of the judges: each judge's labels and judgements per benchmark (the embedded
judges' and the LLM judge's), written to the benchmarks' files (label_files.py)."""

import hashlib
import json
import time

import dagster as dg
import pandas as pd

from ..code_version import step_code_version, versioned_multi_asset
from ..common import PARTITIONS_POOL, table_metadata
from ..fingerprint import INPUTS_METADATA, RECOMPUTED_METADATA, content_version, recorded_per_partition
from ..partitions import benchmarks_partitions
from ..settings import PipelineSettings
from .chat_model import ChatModelResource
from .embeddings import EmbeddedPrompts, embed_prompts
from .judgement_cache import JudgementCache
from .label_files import (
    CANDIDATES_TABLE,
    JUDGES,
    LABELING_SCHEMA,
    drop_retired_labelers,
    judged_partitions,
    judgements_table,
    labels_table,
    partition_instructions,
    partition_prompts,
    read_partitions,
    write_candidates,
    write_partitions,
)
from .label_tables import label_rows
from .llm_batch import BatchOverSpendCap, BatchStillRunning
from .llm_judge import LLMJudge
from .llm_labels import llm_candidates, llm_items, llm_outcomes
from .matching import (
    LabelingRuntime,
    default_judge,
    default_judge_outputs,
    embedded_judge_v3,
    judge_v3_rows,
    retrieval_options,
    task_index_key,
)
from .occupation_knowledge import load_knowledge, prior_inputs_sha256
from .onet_tables import OnetTables


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


def _results(judge: str, labels: pd.DataFrame, judgements: pd.DataFrame, extra: dict, keys: list[str], written: tuple[pd.DataFrame, pd.DataFrame]):
    """The step's two materializations: the judgements, and the labels with `extra`. Whether the
    step worked (`recomputed`) is said on both: one step writes both tables. A run of one partition
    reports the data version of the rows it wrote (`written`: labels, judgements, every labeler's);
    Dagster keeps one per partition, so a run of several reports none."""
    counts = {k: int(v) for k, v in judgements["status"].value_counts().items()}
    n_prompts = len(judgements)
    both = {RECOMPUTED_METADATA: extra[RECOMPUTED_METADATA]} if RECOMPUTED_METADATA in extra else {}
    versions = (content_version(written[0]), content_version(written[1])) if len(keys) == 1 else (None, None)
    yield dg.MaterializeResult(
        asset_key=[LABELING_SCHEMA, judgements_table(judge)],
        metadata={**table_metadata(judgements), "status_counts": dg.MetadataValue.json(counts), **both},
        data_version=versions[1],
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
        data_version=versions[0],
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
        keys,
        (labels, judgements),  # the partition files hold every labeler's rows
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


class LLMLabelsConfig(dg.Config):
    mode: str = "sync"  # "sync": one request per prompt; "batch": the Batch API
    batch_poll_seconds: float = 30.0
    batch_max_wait_seconds: float = 600.0



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
    yield from _results("llm", labels, judgements, metadata, keys, (labels, judgements))



__all__ = ["embedded_judge_labels", "llm_judge_labels"]
