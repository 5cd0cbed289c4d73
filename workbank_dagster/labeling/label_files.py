"""The labeling tables' names and their per-benchmark files: what the judges' steps read (the
prompts and instructions of their benchmarks) and write (each labeler's rows of each benchmark,
written whole; the default judge's candidates), and the rows they read back."""


import pandas as pd

from ..partition_files import PartitionFiles
from .label_tables import CANDIDATE_COLUMNS, JUDGEMENT_COLUMNS, LABEL_COLUMNS

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

