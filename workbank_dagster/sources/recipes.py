"""The converters of the benchmark recipes: upstream files in, our JSONL or CSV out, as bytes.

Each converter is named in `benchmarks/catalog.csv` (column `converter`) and takes the recipe's
upstream files (`{upstream path: bytes}`, in the recipe's order; a wheel's listed member for a
PyPI recipe) and the benchmark's slug. What it writes is checked against the catalog's SHA-256
(fetch.py), so a converter that drifts from the rules below cannot go unnoticed.

The rules are those the benchmark files were made with (every benchmark folder's SOURCES.md, and
docs/method.md §3):

- a prompt is the source's own text; where it is assembled from several fields, they are joined in
  the order given, with a newline between them;
- every run of whitespace (newlines included) becomes one space, the text is cut at 6,000
  characters and stripped;
- at most 1,500 prompts per benchmark, the first after sorting by `prompt_id` (the source's id, a
  number sorted as a number);
- one JSON object per line, `{"benchmark", "prompt_id", "prompt"}`, UTF-8 (not escaped), each line
  ending in a newline;
- results are CSV as Python's `csv` module writes it (lines end in CRLF), sorted by model, then
  prompt_id.

Each converter was checked against the real upstream files at the pinned revision: it reproduces,
byte for byte, the file the shared data folder holds (docs/pipeline.md, "Where the sources come
from").
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Mapping

MAX_CHARS = 6000
MAX_PROMPTS = 1500
RESULT_COLUMNS = ["benchmark", "model", "prompt_id", "score", "source_run", "date"]


def normalized(text: str) -> str:
    """Whitespace collapsed to single spaces, cut at 6,000 characters, stripped."""
    return " ".join(str(text).split())[:MAX_CHARS].strip()


def prompts_jsonl(slug: str, rows: Iterable[tuple[object, str]]) -> bytes:
    """Our JSONL of `(prompt_id, text)` rows: normalized, sorted by id, the first 1,500."""
    rows = sorted(rows, key=lambda row: row[0])
    ids = [row[0] for row in rows]
    if len(set(ids)) != len(ids):
        duplicated = next(i for i in ids if ids.count(i) > 1)
        raise ValueError(f"prompt_id {duplicated!r} appears more than once upstream")
    lines = (
        json.dumps({"benchmark": slug, "prompt_id": str(prompt_id), "prompt": normalized(text)}, ensure_ascii=False) + "\n"
        for prompt_id, text in rows[:MAX_PROMPTS]
    )
    return "".join(lines).encode("utf-8")


def results_csv(rows: Iterable[list], extra: tuple[str, ...] = ()) -> bytes:
    """Results rows (RESULT_COLUMNS, then `extra`) as CSV, sorted by model and prompt_id."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*RESULT_COLUMNS, *extra])
    for row in sorted(rows, key=lambda row: (row[1], row[2])):
        writer.writerow(row)
    return out.getvalue().encode("utf-8")


def _only(files: Mapping[str, bytes]) -> bytes:
    if len(files) != 1:
        raise ValueError(f"expected one upstream file, got {len(files)}")
    return next(iter(files.values()))


def _json_lines(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def gdpval_tasks(files: Mapping[str, bytes], slug: str) -> bytes:
    """data/tasks.parquet (the Hugging Face train split): prompt_id `task_id`, prompt `prompt`."""
    import pandas as pd

    frame = pd.read_parquet(io.BytesIO(_only(files)), columns=["task_id", "prompt"])
    return prompts_jsonl(slug, zip(frame["task_id"], frame["prompt"]))


def financebench_questions(files: Mapping[str, bytes], slug: str) -> bytes:
    """data/financebench_open_source.jsonl: prompt_id `financebench_id`, prompt `question`."""
    return prompts_jsonl(slug, ((r["financebench_id"], r["question"]) for r in _json_lines(_only(files))))


def legalbench_tasks(files: Mapping[str, bytes], slug: str) -> bytes:
    """tasks/<task>/README.md and base_prompt.txt: prompt_id the task's folder, prompt its README's
    `###` heading (the one-line description; none in two READMEs) + newline + base_prompt.txt."""
    heading: dict[str, str] = {}
    base: dict[str, str] = {}
    for path, data in files.items():
        parts = path.split("/")
        if len(parts) != 3 or parts[0] != "tasks":
            raise ValueError(f"unexpected path {path!r}: expected tasks/<task>/<file>")
        text = data.decode("utf-8")
        if parts[2].lower() == "readme.md":
            heading[parts[1]] = next((line[4:].strip() for line in text.splitlines() if line.startswith("### ")), "")
        elif parts[2] == "base_prompt.txt":
            base[parts[1]] = text
        else:
            raise ValueError(f"unexpected file {path!r}: expected README.md or base_prompt.txt")
    if set(heading) != set(base):
        raise ValueError(f"tasks without both files: {sorted(set(heading) ^ set(base))}")
    return prompts_jsonl(slug, ((task, heading[task] + "\n" + base[task]) for task in base))


def mlebench_descriptions(files: Mapping[str, bytes], slug: str) -> bytes:
    """mlebench/competitions/<id>/description.md: prompt_id the competition, prompt the file."""
    return prompts_jsonl(slug, ((path.split("/")[-2], data.decode("utf-8")) for path, data in files.items()))


def _cube_tasks(field: str) -> Callable[[Mapping[str, bytes], str], bytes]:
    def convert(files: Mapping[str, bytes], slug: str) -> bytes:
        return prompts_jsonl(slug, ((task["id"], task[field]) for task in json.loads(_only(files))))

    convert.__doc__ = f"A CUBE port's task_metadata.json (a list of tasks): prompt_id `id`, prompt `{field}`."
    return convert


osworld_instructions = _cube_tasks("instruction")
waa_descriptions = _cube_tasks("abstract_description")


def writingbench_queries(files: Mapping[str, bytes], slug: str) -> bytes:
    """benchmark_all.jsonl: prompt_id `index` (a number), prompt `query`."""
    return prompts_jsonl(slug, ((int(r["index"]), r["query"]) for r in _json_lines(_only(files))))


# FinanceBench's results carry no date; the paper's month stands for it (results/SOURCES.md).
FINANCEBENCH_DATE = "2023-11"


def financebench_results(files: Mapping[str, bytes], slug: str) -> bytes:
    """results/<model>_<mode>.jsonl: model `<model_name> (<eval_mode>)`, score 1 for the authors'
    label "Correct Answer" (0 for "Incorrect Answer" and "Refusal"), source_run the file."""
    rows = []
    for path, data in files.items():
        for r in _json_lines(data):
            score = 1 if r["label"] == "Correct Answer" else 0
            rows.append([slug, f"{r['model_name']} ({r['eval_mode']})", r["financebench_id"], score, path, FINANCEBENCH_DATE])
    return results_csv(rows)


# The harness's task names where our prompt ids differ; `motp` is not in our prompts (the
# inspect-evals port dropped it), so its results are not kept.
CYBENCH_RENAMED = {"emaze": "ezmaze", "glacier-exchange": "glacier_exchange"}
CYBENCH_DROPPED = {"motp"}


def cybench_runs(files: Mapping[str, bytes], slug: str) -> bytes:
    """published/benchmarks/cybench/<run>/runs.jsonl: model `model`, score `score_binarized`,
    source_run the run's folder, date from its name (`_YYYYMMDD_HHMMSS`); a task run twice in one
    file keeps the better score, and n_trials says how many runs it had."""
    kept: dict[tuple[str, str], list] = {}
    for path, data in files.items():
        folder = path.rsplit("/", 1)[0]
        stamp = re.search(r"_(\d{4})(\d{2})(\d{2})_\d{6}$", folder)
        if stamp is None:
            raise ValueError(f"run folder {folder!r} has no _YYYYMMDD_HHMMSS suffix")
        date = f"{stamp[1]}-{stamp[2]}-{stamp[3]}"
        for r in _json_lines(data):
            task = CYBENCH_RENAMED.get(r["task_id"], r["task_id"])
            if task in CYBENCH_DROPPED:
                continue
            key = (r["model"], task)
            if key in kept:
                kept[key][3] = max(kept[key][3], r["score_binarized"])
                kept[key][6] += 1
            else:
                kept[key] = [slug, r["model"], task, r["score_binarized"], folder, date, 1]
    return results_csv(kept.values(), extra=("n_trials",))


CONVERTERS: dict[str, Callable[[Mapping[str, bytes], str], bytes]] = {
    "gdpval_tasks": gdpval_tasks,
    "financebench_questions": financebench_questions,
    "legalbench_tasks": legalbench_tasks,
    "mlebench_descriptions": mlebench_descriptions,
    "osworld_instructions": osworld_instructions,
    "waa_descriptions": waa_descriptions,
    "writingbench_queries": writingbench_queries,
    "financebench_results": financebench_results,
    "cybench_runs": cybench_runs,
}
