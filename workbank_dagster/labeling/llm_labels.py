"""The LLM judge within labeling: its candidates (the default judge's retrieval), one request (Item)
per readable prompt, and its outcomes read back as label choices and statuses."""


import pandas as pd

from .embeddings import Embeddings, embed_prompts
from .llm_protocol import Failure, Item, OutOfCandidates
from .matching import LabelingRuntime, retrieve_default
from .occupation_knowledge import load_knowledge
from .onet_tables import OnetTables
from .prompt_retrieval import Retrieved
from .retrieval import TaskIndex


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
