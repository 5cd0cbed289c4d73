"""Label one benchmark alone and beside others, in its own process, for tests/labeling/test_labels_beside_others.py.

    python tests/support/labels_beside_run.py SOURCE_DIR INDEX_CACHE OUT_DIR SUBJECT OTHER [OTHER ...]

Builds a task index over every sixth O*NET occupation (its task statements and titles, real
embeddings; the vectors cached in INDEX_CACHE) and the occupation prior over the same texts, then
labels SUBJECT's prompts twice with judge v3 and the default judge (v7, with each benchmark's instruction
from the repository's benchmarks/instructions.jsonl), exactly as the embedded judge's asset does
(`matching.judge_v3_rows`, `matching.default_judge_rows`):

- `alone`: SUBJECT's prompts only;
- `beside`: SUBJECT's prompts with the OTHERs', in the asset's order (benchmark, prompt_id);
- `renamed`: as `beside`, with SUBJECT under another slug (`RENAMED`, which sorts before every
  other), its instruction with it (data about the benchmark travels with it): a judge may use what a
  benchmark's prompts share and what its instruction says, never its name. Its rows are written back
  under SUBJECT's slug.

Each labeling embeds its prompts into an empty embedding store of its own, so what a prompt's
vector was batched with differs too. SUBJECT's label and judgement rows of each labeling are
written to OUT_DIR as `{alone|beside|renamed}_{v3|default}_{labels|judgements}.parquet`. The process's BLAS
kernel is whatever its environment selects (OPENBLAS_CORETYPE).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from workbank_dagster.labeling.embedder import Embedder
from workbank_dagster.labeling.embedding_store import EmbeddingStore
from workbank_dagster.labeling.embeddings import Embeddings, embed_prompts
from workbank_dagster.labeling.evidence import OccupationEvidence
from workbank_dagster.labeling.matching import build_task_index, default_judge_rows, judge_v3_rows
from workbank_dagster.labeling.prior import OccupationPrior, training_texts
from workbank_dagster.labeling.prompt_retrieval import OccupationKnowledge
from workbank_dagster.labeling.titles import TitleIndex, title_rows
from workbank_dagster.settings import PipelineSettings
from workbank_dagster.sources import onet
from workbank_dagster.sources.benchmarks import read_benchmark_prompts
from workbank_dagster.sources.instructions import read_instructions

RENAMED = "aaa-renamed"


def main(source_dir: Path, index_cache: Path, out: Path, subject: str, others: list[str]) -> None:
    embedder = Embedder()
    index_embeddings = Embeddings(EmbeddingStore(index_cache / "embeddings.sqlite"), embedder)
    tasks = onet.read_task_statements(source_dir / onet.TASK_STATEMENTS)
    occupations = onet.read_occupations(source_dir / onet.OCCUPATIONS)
    codes = sorted(set(tasks["onet_soc_code"]))[::6]
    tasks = tasks[tasks["onet_soc_code"].isin(codes)][["task_id", "onet_soc_code", "task"]]
    occupations = occupations[occupations["onet_soc_code"].isin(codes)][["onet_soc_code", "title", "description"]]
    index = build_task_index(tasks, occupations, index_embeddings)
    titles = title_rows(occupations, None, None)
    texts = training_texts(tasks, occupations, None, titles, None)
    codes = list(index.occupation_codes)
    prior = OccupationPrior.fit(index_embeddings.texts(texts["text"].tolist()), texts["onet_soc_code"].tolist(), codes, "test")
    knowledge = OccupationKnowledge(OccupationEvidence(codes, TitleIndex(titles, set(codes)), None), prior)
    settings = PipelineSettings.of().resolve()

    prompts = pd.concat([read_benchmark_prompts(source_dir / "benchmarks" / f"{slug}.jsonl") for slug in [subject, *others]])
    prompts = prompts.sort_values(["benchmark", "prompt_id"]).reset_index(drop=True)[["benchmark", "prompt_id", "prompt", "prompt_hash"]]
    out.mkdir(parents=True, exist_ok=True)
    renamed = prompts.assign(benchmark=prompts["benchmark"].replace(subject, RENAMED)).sort_values(["benchmark", "prompt_id"]).reset_index(drop=True)
    told = {slug: found.text for slug, found in read_instructions(settings.benchmark_instructions).items()}
    if subject not in told:
        raise SystemExit(f"{subject} has no instruction in {settings.benchmark_instructions}: the test would not read one")
    told_renamed = {(RENAMED if slug == subject else slug): text for slug, text in told.items()}
    for scenario, frame, slugs, instructions in (
        ("alone", prompts, [subject], told), ("beside", prompts, [subject, *others], told), ("renamed", renamed, [RENAMED, *others], told_renamed)
    ):
        embeddings = Embeddings(EmbeddingStore(out / f"{scenario}_embeddings.sqlite"), embedder)
        embedded = embed_prompts(frame[frame["benchmark"].isin(slugs)].reset_index(drop=True), embeddings, instructions)
        for judge, (labels, judgements) in (
            ("v3", judge_v3_rows(embedded, index, settings)),
            ("default", default_judge_rows(embedded, index, knowledge, settings)),
        ):
            for rows, what in ((labels, "labels"), (judgements, "judgements")):
                mine = rows[rows["benchmark"] == slugs[0]].reset_index(drop=True)
                mine["benchmark"] = mine["benchmark"].replace(RENAMED, subject)
                mine.to_parquet(out / f"{scenario}_{judge}_{what}.parquet")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4], sys.argv[5:])
