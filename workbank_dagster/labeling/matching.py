"""Matching texts to O*NET tasks: the one public seam of `labeling` for other packages.

`match_texts` is what a package outside labeling calls (the user audit does, for its free-text
rows); `match_embedded` is the same rule over prompts already embedded, which judge v3's asset
calls. Both use judge v3's rule (the best occupations' tasks above a similarity floor) over the
task index.

`LabelingRuntime` is the Dagster resource that holds what they need for the length of a run: the
embedding store and model, and the task index (and the default judge's knowledge) built from O*NET's
tables (onet_tables.py), once per content of those tables. No process-global state: a run gets its
own, and a test or the CLI makes one with `LabelingRuntime()`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg
import pandas as pd
from pydantic import PrivateAttr

from ..common import text_sha256
from ..progress import reporter
from ..resources import WarehouseResource
from ..settings import Settings
from .embedder import Embedder
from .embedding_store import EmbeddingStore
from .embeddings import EmbeddedPrompts, Embeddings, embed_prompts
from .judges import EmbeddedJudgeV3, EmbeddedJudgeV7
from .label_tables import candidate_rows, judgement_rows, label_rows
from .onet_tables import OnetTables
from .prompt_retrieval import OccupationKnowledge, Retrieved, retrieve_embedded, retrieve_narrowed
from .retrieval import TaskIndex


def task_index_key(onet: OnetTables, embeddings: Embeddings) -> tuple:
    """What the task index is built from: the model and the content of the task and occupation tables."""
    return (
        embeddings.embedder.store_key,
        int(pd.util.hash_pandas_object(onet.tasks, index=False).sum()),
        int(pd.util.hash_pandas_object(onet.occupations, index=False).sum()),
    )


def build_task_index(tasks: pd.DataFrame, occupations: pd.DataFrame, embeddings: Embeddings) -> TaskIndex:
    """`tasks`: task_id, onet_soc_code, task; `occupations`: onet_soc_code, title, description."""
    tasks = tasks.sort_values("task_id").reset_index(drop=True)
    occupations = occupations[occupations["onet_soc_code"].isin(set(tasks["onet_soc_code"]))].sort_values("onet_soc_code").reset_index(drop=True)
    task_vectors = embeddings.texts(tasks["task"].tolist())
    title_vectors = embeddings.texts(occupations["title"].tolist())
    return TaskIndex(tasks, task_vectors, occupations, title_vectors)


class LabelingRuntime(dg.ConfigurableResource):
    """The embedder and the task index of a run (resource key `labeling_runtime`).

    Several assets of one run search the same task index (the judges, the prior, the user audit):
    it is built once, when first asked for, and held here for the next step, keyed by the content
    of the tables it is built from, so a changed table gives a new index."""

    _memo: dict[str, tuple[Any, Any]] = PrivateAttr(default_factory=dict)

    def embeddings(self, settings: Settings, context: dg.AssetExecutionContext | None = None) -> Embeddings:
        """The embedding store, with this call's own hit and miss counts, over the run's one model
        (loaded once, by the first step that embeds a text the store lacks); with a context,
        embedding reports its progress to the run log."""
        options = (settings.embedding_model, settings.embed_batch_size)
        return Embeddings(
            store=EmbeddingStore(settings.cache_dir / "embeddings.sqlite"),
            embedder=self.memoized("embedder", options, lambda: Embedder(*options)),
            progress=reporter(context.log.info) if context is not None else None,
        )

    def memoized(self, name: str, key, build):
        """`build()`, or what it returned last time for the same `key` (one entry per `name`)."""
        held = self._memo.get(name)
        if held is None or held[0] != key:
            self._memo[name] = (key, build())
        return self._memo[name][1]

    def task_index(self, onet: OnetTables, embeddings: Embeddings) -> TaskIndex:
        """The index of these O*NET tables (from the warehouse, or from the files a partition run reads)."""
        key = task_index_key(onet, embeddings)
        return self.memoized("task_index", key, lambda: build_task_index(onet.tasks, onet.occupations, embeddings))


def retrieval_options(settings) -> dict:
    return {
        "n_occupations": settings.n_candidate_occupations,
        "per_occupation": settings.candidates_per_occupation,
        "n_nearest": settings.candidates_nearest,
    }


def embedded_judge_v3(settings) -> EmbeddedJudgeV3:
    """Judge v3 (kept beside the default and selectable): its settings are the WORKBANK_JUDGE_* ones."""
    return EmbeddedJudgeV3(n_occupations=settings.judge_occupations, min_similarity=settings.min_label_similarity)


def default_judge() -> EmbeddedJudgeV7:
    """The default embedded judge (v7), with the parameters tuned on the `tune` halves (README,
    Validation; docs/labeling.md). The functions below are named for the default, not its version."""
    return EmbeddedJudgeV7()


def match_embedded(embedded: EmbeddedPrompts, index: TaskIndex, settings, progress=None) -> tuple[Retrieved, list[list[tuple[int, float]]]]:
    """Judge v3's candidates and chosen (task_id, score) pairs, best first, for prompts already embedded."""
    retrieved = retrieve_embedded(embedded, index, progress=progress, **retrieval_options(settings))
    return retrieved, embedded_judge_v3(settings).select(retrieved.candidates, index)


def retrieve_default(embedded: EmbeddedPrompts, index: TaskIndex, knowledge: OccupationKnowledge, settings, progress=None) -> Retrieved:
    """The default judge's candidates (family first, titles, technology, prior, benchmark context),
    which the LLM judge is sent too."""
    judge = default_judge()
    return retrieve_narrowed(embedded, index, knowledge, judge.narrowing, judge.evidence, progress=progress, **retrieval_options(settings))


def judge_v3_rows(embedded: EmbeddedPrompts, index: TaskIndex, settings, progress=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Judge v3's label rows and judgement records for whole benchmarks' embedded prompts."""
    retrieved, chosen = match_embedded(embedded, index, settings, progress=progress)
    return label_rows(retrieved, chosen, embedded_judge_v3(settings).labeler)


def default_judge_rows(
    embedded: EmbeddedPrompts, index: TaskIndex, knowledge: OccupationKnowledge, settings, progress=None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The default judge's label rows and judgement records for whole benchmarks' embedded prompts.

    A benchmark's rows are the same, to the bit, whatever other benchmarks are given with it
    (retrieval computes each benchmark in its own blocks, and a text's vector is its own)."""
    labels, judgements, _ = default_judge_outputs(embedded, index, knowledge, settings, progress=progress)
    return labels, judgements


def default_judge_outputs(
    embedded: EmbeddedPrompts, index: TaskIndex, knowledge: OccupationKnowledge, settings, progress=None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """`default_judge_rows`' label rows and judgement records, and the candidate rows they were chosen
    from (label_tables.candidate_rows), from one retrieval."""
    judge = default_judge()
    retrieved = retrieve_default(embedded, index, knowledge, settings, progress=progress)
    decided = judge.select(retrieved.candidates, index, retrieved.prompts["benchmark"].tolist(), retrieved.errands)
    labels, judgements = judgement_rows(retrieved, decided, judge.labeler)
    return labels, judgements, candidate_rows(retrieved, index, judge.labeler, judge.abstain_below, judge.min_similarity)


def match_texts(
    texts: Sequence[str], warehouse_db: WarehouseResource, runtime: LabelingRuntime, settings: Settings, *, source: str = "text"
) -> list[list[tuple[int, float]]]:
    """The O*NET tasks each text exercises, by judge v3's rule: (task_id, score) pairs, best first.

    An empty list where nothing clears the floor, or where the text is mostly CJK script (the
    model reads English only). `source` names the texts in the embedding store's bookkeeping."""
    if not len(texts):
        return []
    embeddings = runtime.embeddings(settings)
    index = runtime.task_index(OnetTables.from_warehouse(warehouse_db), embeddings)
    prompts = pd.DataFrame(
        {"benchmark": source, "prompt_id": [str(i) for i in range(len(texts))], "prompt": list(texts), "prompt_hash": [text_sha256(t) for t in texts]}
    )
    retrieved, chosen = match_embedded(embed_prompts(prompts, embeddings), index, settings)
    out: list[list[tuple[int, float]]] = [[] for _ in texts]
    for prompt_id, labels in zip(retrieved.prompts["prompt_id"], chosen):
        out[int(prompt_id)] = list(labels)
    return out
