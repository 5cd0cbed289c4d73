"""Scoring judges against labels that did not come from them.

Two yardsticks (METHOD.md §3):

- `benchmarks/labels_dev/`: occupations the GDPval authors assigned (matched to O*NET-SOC codes by
  title) and TheAgentCompany role categories (mapped to the SOC families a role can belong to).
  The labels are split once, by a hash of the occupation (TheAgentCompany: of the role), into a
  `tune` half and a `holdout` half (`reference/labels_dev_split.csv`, committed before any tuning):
  judges are tuned on `tune` only, and the `holdout` figures are the ones to quote. Every figure
  comes with a Wilson 95% interval.
- the reference set in `reference/`: task IDs chosen by careful reading (see its guide), scored as
  micro precision and recall by exact Task ID (METHOD.md §1), and beside it two secondary figures:
  tasks whose statements are identical in several occupations counted as one task, and detailed
  work activities (DWAs, through O*NET's Tasks to DWAs); then occupation and family level. It is
  split by benchmark into a `tune` and a `holdout` half (`reference/reference_split.csv`, committed
  before any tuning on it): the benchmarks ranked by a SHA-256 of their slug, the first half tune.

An abstained prompt (status `abstained`: the judge said it was not confident) is a miss: it counts
against top-1 and precision exactly like a wrong label, so abstaining cannot buy precision. The
share of abstained prompts is reported beside every figure.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

# TheAgentCompany role categories → SOC major groups (two-digit) a person in that role works in.
# Loose by design (labels_dev/README.md): a project manager can be management, business or computing.
ROLE_FAMILIES = {
    "sde": {"15"},
    "ds": {"15"},
    "ml": {"15"},
    "qa": {"15"},
    "research": {"15", "19"},
    "pm": {"11", "13", "15"},
    "hr": {"11", "13", "43"},
    "finance": {"11", "13", "43"},
    "admin": {"11", "43"},
    "bm": {"11", "13"},
}
# What each benchmark's development labels are grouped (and split) by.
SPLIT_GROUP = {"gdpval": "occupation", "theagentcompany": "role"}
SPLIT_SALT = "labels-dev-split-v1"
HALVES = ("tune", "holdout")
REFERENCE_SPLIT_SALT = "reference-split-v1"
REFERENCE_SAMPLE_SALT = "reference-v1"
REFERENCE_PER_BENCHMARK = 20
Z95 = 1.959963984540054


def split_half(benchmark: str, group: str) -> str:
    """The half of labels_dev a group (an occupation, a role) belongs to: parity of a SHA-256."""
    digest = hashlib.sha256(f"{SPLIT_SALT}:{benchmark}:{group}".encode()).hexdigest()
    return "tune" if int(digest, 16) % 2 == 0 else "holdout"


def reference_halves(benchmarks: Iterable[str]) -> dict[str, str]:
    """benchmark → half of the reference set: ranked by a SHA-256 of the salted slug, the first
    half (rounded down) `tune`, the rest `holdout`. A rank, not a parity, so that the 12 benchmarks
    split 6 and 6 (a parity put 3 in tune). Made once and committed; `read_reference_split` reads it."""
    ranked = sorted(set(benchmarks), key=lambda b: hashlib.sha256(f"{REFERENCE_SPLIT_SALT}:{b}".encode()).hexdigest())
    return {b: ("tune" if i < len(ranked) // 2 else "holdout") for i, b in enumerate(ranked)}


def reference_sample(benchmark: str, prompt_ids: Iterable[str], n: int = REFERENCE_PER_BENCHMARK) -> list[str]:
    """The reference set's prompts of one benchmark: the first `n` ids by a SHA-256 of the salted
    benchmark and id, so the sample is reproducible and not chosen by content. Growing `n` keeps
    the earlier ones (96 prompts were labeled at 8 a benchmark, 144 added at 20)."""
    return sorted(prompt_ids, key=lambda p: hashlib.sha256(f"{REFERENCE_SAMPLE_SALT}:{benchmark}:{p}".encode()).hexdigest())[:n]


def read_reference_split(path: Path) -> dict[str, str]:
    """benchmark → half, from the committed reference split file."""
    with open(path, encoding="utf-8", newline="") as handle:
        return {row["benchmark"]: row["half"] for row in csv.DictReader(handle)}


def reference_subsets(reference: pd.DataFrame, split: dict[str, str], path: Path) -> dict[str, pd.DataFrame]:
    """The reference rows of each half and of both ("all"). A benchmark the committed split does not
    know is refused rather than put in a half: the split is made once, before tuning."""
    unknown = sorted(set(reference["benchmark"]) - set(split))
    if unknown:
        raise ValueError(f"{path}: benchmarks {unknown} of the reference set are not in the committed reference split")
    halves = reference["benchmark"].map(split)
    return {"all": reference, **{half: reference[halves == half] for half in HALVES}}


def read_split(path: Path) -> dict[tuple[str, str], str]:
    """(benchmark, group) → half, from the committed split file."""
    with open(path, encoding="utf-8", newline="") as handle:
        return {(row["benchmark"], row["group"]): row["half"] for row in csv.DictReader(handle)}


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float | None, float | None]:
    """Wilson score interval for a proportion (successes may be fractional: a mean share over n prompts)."""
    if n <= 0:
        return None, None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def title_matcher(occupations: pd.DataFrame, crosswalk: pd.DataFrame):
    """title → O*NET-SOC codes (with tasks): by O*NET title, else by OEWS/NEM title (13-1020 …).

    An O*NET title matches every code of its detailed SOC occupation (its first 7 characters).
    The lookups are built once; matching a title is then a dictionary read.
    """
    codes = set(occupations["onet_soc_code"])
    by_detailed: dict[str, set[str]] = {}
    for code in codes:
        by_detailed.setdefault(code[:7], set()).add(code)
    by_title: dict[str, set[str]] = {}
    for title, code in zip(occupations["title"].str.strip().str.lower(), occupations["onet_soc_code"]):
        by_title.setdefault(title, set()).update(by_detailed[code[:7]])
    by_oews: dict[str, set[str]] = {}
    for title, code in zip(crosswalk["oews_title"].str.lower(), crosswalk["onet_soc_code"]):
        if code in codes:
            by_oews.setdefault(title, set()).add(code)

    def match(title: str) -> set[str]:
        wanted = title.strip().lower()
        return set(by_title.get(wanted) or by_oews.get(wanted) or set())

    return match


def _ranked_tasks(labels: pd.DataFrame, keys: set[tuple[str, str]]) -> dict[tuple[str, str], list[int]]:
    """(benchmark, prompt_id) → task ids in rank order, for the prompts in `keys` only (one sort)."""
    # A boolean array, not a list: an empty list would select no columns of a frame with no rows.
    wanted = labels[np.fromiter((key in keys for key in zip(labels["benchmark"], labels["prompt_id"])), dtype=bool, count=len(labels))]
    wanted = wanted.sort_values(["benchmark", "prompt_id", "rank"], kind="stable")
    out: dict[tuple[str, str], list[int]] = {}
    for benchmark, prompt_id, task_id in zip(wanted["benchmark"], wanted["prompt_id"], wanted["task_id"].astype(int)):
        out.setdefault((benchmark, prompt_id), []).append(int(task_id))
    return out


def dev_gold(labels_dev_dir: Path, occupations: pd.DataFrame, crosswalk: pd.DataFrame, split: dict[tuple[str, str], str]) -> pd.DataFrame:
    """benchmark, prompt_id, gold, half, gold_codes (set, may be empty), gold_families (set).

    A group that the committed split does not know (a label file grown since) is refused rather
    than silently put in a half: the split is made once.
    """
    rows = []
    gdpval = labels_dev_dir / "gdpval.jsonl"
    if gdpval.is_file():
        match = title_matcher(occupations, crosswalk)
        for line, record in enumerate(_read_jsonl(gdpval), start=1):
            codes = match(record["occupation"])
            if not codes:
                raise ValueError(f"{gdpval}:{line}: occupation title {record['occupation']!r} matches no O*NET or OEWS title")
            half = _half(split, "gdpval", record["occupation"], gdpval, line)
            rows.append((record["benchmark"], str(record["prompt_id"]), record["occupation"], half, codes, {c[:2] for c in codes}))
    tac = labels_dev_dir / "theagentcompany.jsonl"
    if tac.is_file():
        for line, record in enumerate(_read_jsonl(tac), start=1):
            families = ROLE_FAMILIES.get(record["role_category"])
            if families is None:
                raise ValueError(f"{tac}:{line}: role_category {record['role_category']!r} has no family mapping")
            half = _half(split, "theagentcompany", record["role"], tac, line)
            rows.append((record["benchmark"], str(record["prompt_id"]), record["role_category"], half, set(), set(families)))
    return pd.DataFrame(rows, columns=["benchmark", "prompt_id", "gold", "half", "gold_codes", "gold_families"])


def _half(split: dict[tuple[str, str], str], benchmark: str, group: str, path: Path, line: int) -> str:
    half = split.get((benchmark, group))
    if half is None:
        raise ValueError(f"{path}:{line}: {SPLIT_GROUP[benchmark]} {group!r} is not in the committed labels_dev split")
    return half


def _figure(subset: str, benchmark: str, level: str, metric: str, value: float | None, n: int, interval: str = "wilson") -> dict:
    low = high = None
    if value is not None and n:
        if interval == "wilson":
            low, high = wilson(value * n, n)
    return {"subset": subset, "benchmark": benchmark, "level": level, "metric": metric, "value": value, "ci_low": low, "ci_high": high, "n_prompts": n}


def _mean_interval(values: list[float]) -> tuple[float | None, float | None, float | None]:
    """Mean and a normal 95% interval (for counts such as labels per prompt, not proportions)."""
    if not values:
        return None, None, None
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, None, None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, mean - Z95 * sd / math.sqrt(n), mean + Z95 * sd / math.sqrt(n)


def score_against_dev(labels: pd.DataFrame, task_occupation: dict[int, str], gold: pd.DataFrame, abstained: Iterable[tuple[str, str]] = ()) -> list[dict]:
    """Every labels_dev figure, for each half and for both together.

    GDPval: family top-1 (the top-ranked label's family is the authors'), occupation top-1 (its
    occupation is the authors'), occupation precision (share of a prompt's labels in the authors'
    occupation, mean over prompts), occupation hit (some label in it: the v1-v3 "occupation
    accuracy"), labels per labeled prompt and the abstained share. TheAgentCompany: family top-1.
    Both: family top-1. A prompt with no label (abstained, no match) is a miss everywhere.
    """
    abstained = set(abstained)
    by_prompt = _ranked_tasks(labels, set(zip(gold["benchmark"], gold["prompt_id"])))
    per_prompt = []
    for row in gold.itertuples(index=False):
        key = (row.benchmark, row.prompt_id)
        codes = [task_occupation[t] for t in by_prompt.get(key, [])]
        per_prompt.append(
            {
                "half": row.half,
                "benchmark": row.benchmark,
                "has_occupation": bool(row.gold_codes),
                "family_top1": bool(codes) and codes[0][:2] in row.gold_families,
                "occupation_top1": bool(codes) and codes[0] in row.gold_codes,
                "occupation_precision": (sum(c in row.gold_codes for c in codes) / len(codes)) if codes else 0.0,
                "occupation_hit": any(c in row.gold_codes for c in codes),
                "n_labels": len(codes),
                "abstained": key in abstained,
            }
        )
    figures = []
    for subset in (*HALVES, "all"):
        rows = [p for p in per_prompt if subset == "all" or p["half"] == subset]
        for benchmark in ("gdpval", "theagentcompany", "all"):
            mine = [p for p in rows if benchmark == "all" or p["benchmark"] == benchmark]
            n = len(mine)
            if not n:
                continue
            share = lambda name, mine=mine, n=n: sum(p[name] for p in mine) / n  # noqa: E731
            figures.append(_figure(subset, benchmark, "family", "top1", share("family_top1"), n))
            figures.append(_figure(subset, benchmark, "all", "abstained_share", share("abstained"), n))
            if benchmark == "gdpval":
                for metric in ("occupation_top1", "occupation_precision", "occupation_hit"):
                    figures.append(_figure(subset, benchmark, "occupation", metric.removeprefix("occupation_"), share(metric), n))
                labeled = [float(p["n_labels"]) for p in mine if p["n_labels"]]
                mean, low, high = _mean_interval(labeled)
                figures.append({**_figure(subset, benchmark, "all", "labels_per_labeled_prompt", mean, len(labeled), interval="none"), "ci_low": low, "ci_high": high})
    return figures


def read_reference(path: Path) -> pd.DataFrame:
    records = _read_jsonl(path)
    return pd.DataFrame(
        [(r["benchmark"], str(r["prompt_id"]), [int(t) for t in r["task_ids"]], r["onet_soc_codes"], r.get("confidence"), r["labeled_by"]) for r in records],
        columns=["benchmark", "prompt_id", "task_ids", "onet_soc_codes", "confidence", "labeled_by"],
    )


def _prf(predicted: list[set], truth: list[set], misses: int = 0) -> dict:
    """Micro precision, recall, F1; `misses` extra wrong predictions (abstained prompts)."""
    tp = sum(len(p & t) for p, t in zip(predicted, truth))
    n_pred = sum(len(p) for p in predicted) + misses
    n_true = sum(len(t) for t in truth)
    precision = tp / n_pred if n_pred else None
    recall = tp / n_true if n_true else None
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "true_positives": tp}


def statement_groups(tasks: pd.DataFrame) -> dict[int, int]:
    """task_id → the smallest task_id with the same statement (case and spacing ignored)."""
    normalised = tasks.assign(_key=tasks["task"].str.lower().str.split().str.join(" "))
    first = normalised.groupby("_key")["task_id"].transform("min")
    return dict(zip(normalised["task_id"].astype(int), first.astype(int)))


def score_against_reference(
    labels: pd.DataFrame,
    task_occupation: dict[int, str],
    reference: pd.DataFrame,
    *,
    same_statement: dict[int, int] | None = None,
    task_dwas: dict[int, set[str]] | None = None,
    abstained: Iterable[tuple[str, str]] = (),
) -> dict:
    """Micro precision / recall at task (exact ID), same-statement, DWA, occupation and family level."""
    abstained = set(abstained)
    keys = list(zip(reference["benchmark"], reference["prompt_id"]))
    ranked = _ranked_tasks(labels, set(keys))
    predicted_tasks = [set(ranked.get(key, [])) for key in keys]
    true_tasks = [set(t) for t in reference["task_ids"]]
    misses = sum(1 for key, p in zip(keys, predicted_tasks) if key in abstained and not p)

    def occupations(tasks: set) -> set:
        return {task_occupation[t] for t in tasks if t in task_occupation}

    predicted_occ = [occupations(t) for t in predicted_tasks]
    true_occ = [occupations(t) for t in true_tasks]
    out = {
        "n_prompts": len(reference),
        "n_benchmarks": int(reference["benchmark"].nunique()),
        "n_abstained": misses,
        "task": _prf(predicted_tasks, true_tasks, misses),
        "occupation": _prf(predicted_occ, true_occ, misses),
        "family": _prf([{c[:2] for c in o} for o in predicted_occ], [{c[:2] for c in o} for o in true_occ], misses),
        "labels_per_prompt": sum(len(p) for p in predicted_tasks) / len(reference) if len(reference) else None,
    }
    if same_statement is not None:
        group = lambda tasks: {same_statement.get(t, t) for t in tasks}  # noqa: E731
        out["task_same_statement"] = _prf([group(p) for p in predicted_tasks], [group(t) for t in true_tasks], misses)
    if task_dwas is not None:
        dwas = lambda tasks: set().union(*(task_dwas.get(t, set()) for t in tasks)) if tasks else set()  # noqa: E731
        out["dwa"] = _prf([dwas(p) for p in predicted_tasks], [dwas(t) for t in true_tasks], misses)
    return out


REFERENCE_LEVELS = ("task", "task_same_statement", "dwa", "occupation", "family")
