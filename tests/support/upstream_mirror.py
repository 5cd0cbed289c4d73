"""The upstream hosts rebuilt from the shared data folder, and served from 127.0.0.1 (mirror_server.py).

**Reference files** are served as their upstream bytes: the shared folder holds every one as
published (the four it holds converted, as TSV or CSV, are served from the workbooks it keeps
beside them, `UPSTREAM_ORIGINAL`).

**Benchmark recipes** read upstream formats the shared folder does not hold (a Parquet file, task
folders, wheels, per-model result files). For each, `recipe_upstream` writes the upstream-format
files *from the shared JSONL or CSV*, with the columns and layout the converter reads and the real
upstream has (checked against the real files at the pinned revisions; docs/pipeline.md): so the
mirror proves the download path, the converter's rules and the pinned SHA-256 of what it writes,
not that today's upstream still serves those bytes. The inverse of each converter:

- gdpval: a Parquet file with columns task_id, prompt;
- financebench (prompts): JSONL objects with financebench_id, question;
- legalbench: per task, a README.md whose `###` heading holds the prompt up to a space after its
  60th character, and a base_prompt.txt with the rest (the converter joins them with a newline,
  which normalisation turns back into that space);
- mle-bench: each competition's description.md, the prompt as is;
- osworld, windowsagentarena, writingbench: a wheel (a zip) holding the listed member, a JSON list
  of {id, instruction | abstract_description}, or JSONL of {index, query};
- financebench (results): one JSONL file per configuration, {financebench_id, model_name,
  eval_mode, label} with label "Correct Answer" for score 1, "Incorrect Answer" for 0;
- cybench (results): one runs.jsonl per run folder, {task_id, model, score_binarized}, the
  harness's own task names, and a task with n_trials 2 written twice (its score, then 0).
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import warnings
import zipfile
from collections import defaultdict
from pathlib import Path

import pandas as pd

from workbank_dagster.sources.benchmark_set import CatalogEntry, read_catalog
from workbank_dagster.sources.fetch import GITHUB, PYPI, UPSTREAMS
from workbank_dagster.sources.recipes import CYBENCH_RENAMED

SERVER = Path(__file__).with_name("mirror_server.py")
# Where the upstream bytes of each converted reference file lie in the shared folder.
UPSTREAM_ORIGINAL = {
    "onet/task_statements_29_3.tsv": "onet/db_29_3_excel/Task Statements.xlsx",
    "onet/occupation_data_29_3.tsv": "onet/db_29_3_excel/Occupation Data.xlsx",
    "bls/oews/national_M2024_dl.csv": "bls/oews/national_M2024_dl.xlsx",
    "bls/soc/soc_2018_major_groups.csv": "bls/soc/soc_structure_2018.xlsx",
}


def _prompts(shared: Path, entry: CatalogEntry) -> list[dict]:
    return [json.loads(line) for line in (shared / entry.name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _results(shared: Path, entry: CatalogEntry) -> list[dict]:
    with open(shared / entry.name, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _jsonl(records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def _wheel(member: str, data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(member, data)
    return out.getvalue()


def _split(prompt: str) -> tuple[str, str]:
    cut = prompt.find(" ", 60)
    return (prompt, "") if cut < 0 else (prompt[:cut], prompt[cut + 1 :])


def recipe_upstream(entry: CatalogEntry, shared: Path) -> dict[str, bytes]:
    """The upstream files of a fetched catalog entry, {upstream path: bytes}, made from the shared copy."""
    paths = entry.upstream_paths()
    kind = entry.converter
    if kind == "gdpval_tasks":
        frame = pd.DataFrame([(r["prompt_id"], r["prompt"]) for r in _prompts(shared, entry)], columns=["task_id", "prompt"])
        out = io.BytesIO()
        frame.to_parquet(out, index=False)
        return {paths[0]: out.getvalue()}
    if kind == "financebench_questions":
        return {paths[0]: _jsonl({"financebench_id": r["prompt_id"], "question": r["prompt"]} for r in _prompts(shared, entry))}
    if kind == "legalbench_tasks":
        by_task = {r["prompt_id"]: _split(r["prompt"]) for r in _prompts(shared, entry)}
        files = {}
        for path in paths:
            task, name = path.split("/")[1:]
            head, rest = by_task[task]
            files[path] = (f"# {task}\n\n### {head}\n---\n" if name.lower() == "readme.md" else rest).encode("utf-8")
        return files
    if kind == "mlebench_descriptions":
        by_id = {r["prompt_id"]: r["prompt"] for r in _prompts(shared, entry)}
        return {path: by_id[path.split("/")[-2]].encode("utf-8") for path in paths}
    if kind in ("osworld_instructions", "waa_descriptions"):
        field = "instruction" if kind == "osworld_instructions" else "abstract_description"
        tasks = [{"id": r["prompt_id"], field: r["prompt"], "split": "test"} for r in _prompts(shared, entry)]
        return {paths[0]: _wheel(entry.member, json.dumps(tasks, ensure_ascii=False).encode("utf-8"))}
    if kind == "writingbench_queries":
        rows = _jsonl({"index": int(r["prompt_id"]), "query": r["prompt"]} for r in _prompts(shared, entry))
        return {paths[0]: _wheel(entry.member, rows)}
    if kind == "financebench_results":
        by_file = defaultdict(list)
        for r in _results(shared, entry):
            model, _, mode = r["model"].rpartition(" (")
            label = "Correct Answer" if r["score"] == "1" else "Incorrect Answer"
            by_file[r["source_run"]].append({"financebench_id": r["prompt_id"], "model_name": model, "eval_mode": mode.rstrip(")"), "label": label})
        return {path: _jsonl(by_file[path]) for path in paths}
    if kind == "cybench_runs":
        harness_name = {ours: theirs for theirs, ours in CYBENCH_RENAMED.items()}
        by_run = defaultdict(list)
        for r in _results(shared, entry):
            line = {"task_id": harness_name.get(r["prompt_id"], r["prompt_id"]), "model": r["model"], "score_binarized": int(float(r["score"]))}
            by_run[r["source_run"]].append(line)
            by_run[r["source_run"]] += [{**line, "score_binarized": 0}] * (int(r["n_trials"]) - 1)
        return {path: _jsonl(by_run[path.rsplit("/", 1)[0]]) for path in paths}
    raise ValueError(f"no upstream-format builder for converter {kind!r}")


def build_mirror(shared: Path, root: Path) -> Path:
    """`root` laid out as the upstream hosts: every reference file (linked to the shared folder's
    upstream bytes) and every fetched catalog file's upstream files (made by `recipe_upstream`)."""
    for upstream in UPSTREAMS:
        destination = root / GITHUB / upstream.repo / upstream.commit / upstream.path
        destination.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(shared / UPSTREAM_ORIGINAL.get(upstream.target, upstream.target), destination)
    for entry in read_catalog().values():
        if entry.reaches_clone != "fetched":
            continue
        for path, data in recipe_upstream(entry, shared).items():
            recipe = entry.recipe()
            destination = root / entry.host / recipe.served_path(path)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(data)
    return root


class Mirror:
    """mirror_server.py over a folder, as a process of its own; `stop()` ends it by its pid."""

    def __init__(self, root: Path, log: Path) -> None:
        self.root, self.log = root, log
        log.write_text("")
        self.process = subprocess.Popen([sys.executable, str(SERVER), str(root), str(log)], stdout=subprocess.PIPE, text=True)
        self.port = int(self.process.stdout.readline())
        _warn_if_sigterm_is_not_default()
        self.url = f"http://127.0.0.1:{self.port}"
        self.bases = {GITHUB: f"{self.url}/{GITHUB}", PYPI: f"{self.url}/{PYPI}"}

    def requests(self) -> list[str]:
        return self.log.read_text().splitlines()

    def served(self, host: str, relative: Path | str) -> Path:
        return self.root / host / relative

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            # The server restores SIGTERM however it inherited it (mirror_server.py), so this is the
            # last resort: it holds nothing to flush, and is killed by its pid.
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)
        self.process.stdout.close()


def _warn_if_sigterm_is_not_default() -> None:
    """Say so when this process ignores or blocks SIGTERM, which every child it starts inherits.

    The mirrors a pytest worker started outlived their SIGTERM in several CI runs (each stop then
    waited its 10 s). This warning found why: the worker ignored SIGTERM after an in-process Dagster
    run, in a session started ignoring SIGINT (tests/support/session_signals.py, which conftest.py
    now runs). The server restores SIGTERM itself as well (mirror_server.py)."""
    blocked = signal.SIGTERM in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    ignored = signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    if blocked or ignored:
        warnings.warn(
            f"this process {'blocks' if blocked else 'ignores'} SIGTERM (SIGTERM handler {signal.getsignal(signal.SIGTERM)!r}, "
            f"SIGINT handler {signal.getsignal(signal.SIGINT)!r}): a child it starts inherits that",
            stacklevel=3,
        )
