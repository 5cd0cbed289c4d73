"""Scoring judges against labels that did not come from them.

Two yardsticks (docs/method.md §3):

- `benchmarks/labels_dev/`: occupations the GDPval authors assigned (matched to O*NET-SOC codes by
  title) and TheAgentCompany role categories (mapped to the SOC families a role can belong to).
  The labels are split once, by a hash of the occupation (TheAgentCompany: of the role), into a
  `tune` half and a `holdout` half (`reference/labels_dev_split.csv`, committed before any tuning):
  judges are tuned on `tune` only, and the `holdout` figures are the ones to quote. Every figure
  comes with a Wilson 95% interval.
- the reference set in `reference/`: task IDs chosen by careful reading (see its guide), scored as
  micro precision and recall by exact Task ID (docs/method.md §1), and beside it two secondary figures:
  tasks whose statements are identical in several occupations counted as one task, and detailed
  work activities (DWAs, through O*NET's Tasks to DWAs); then occupation and family level. It is
  split by benchmark into a `tune` and a `holdout` half (`reference/reference_split.csv`, committed
  before any tuning on it): the benchmarks ranked by a SHA-256 of their slug, the first half tune.
- `benchmarks/labels_dev/benchmark_intent.jsonl`: per benchmark, the work its own paper says it asks
  for, the occupation whose work that most directly is (`primary`) and a generous set of plausible
  occupations. Scored per benchmark: *top-1 plausible* (the share of labeled prompts whose top
  label's occupation is in the set), *any plausible* (the share with some label in it) and *primary
  covered* (the primary occupation has a covered task under this labeler alone), then the mean over
  benchmarks. Split by benchmark into halves (`reference/intent_split.csv`, committed before any
  tuning on it): a benchmark the reference split holds keeps its half there, the others are ranked
  by a SHA-256 of their salted slug and fill the halves to equal size, tune first.

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
INTENT_SPLIT_SALT = "intent-split-v1"
INTENT_LEVELS = ("top1_plausible", "any_plausible", "primary_covered")
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


def intent_halves(benchmarks: Iterable[str], reference_split: dict[str, str]) -> dict[str, str]:
    """benchmark → half of the intent yardstick. A benchmark in the reference split keeps its half
    there (tuning on one yardstick must not leak into the other's held-out half); the others,
    ranked by a SHA-256 of the salted slug, fill the halves to equal size (an odd one out goes to
    `holdout`), tune first. Made once and committed; `read_reference_split` reads it too."""
    wanted = sorted(set(benchmarks))
    out = {b: reference_split[b] for b in wanted if b in reference_split}
    rest = sorted((b for b in wanted if b not in out), key=lambda b: hashlib.sha256(f"{INTENT_SPLIT_SALT}:{b}".encode()).hexdigest())
    for b in rest:
        tune = sum(h == "tune" for h in out.values())
        out[b] = "tune" if tune < len(wanted) // 2 else "holdout"
    return out


def read_intent(path: Path) -> pd.DataFrame:
    """benchmark, work, primary, plausible (a set of O*NET-SOC codes, the primary among them), one row
    per benchmark; a record without those fields, or naming a benchmark twice, is refused by line."""
    rows = []
    for line, record in enumerate(_read_jsonl(path), start=1):
        for field in ("benchmark", "primary", "plausible"):
            if field not in record:
                raise ValueError(f"{path}:{line}: missing field {field!r}")
        plausible = {p["onet_soc_code"] for p in record["plausible"]} | {record["primary"]}
        rows.append((record["benchmark"], record.get("work", ""), record["primary"], plausible))
    frame = pd.DataFrame(rows, columns=["benchmark", "work", "primary", "plausible"])
    twice = frame["benchmark"][frame["benchmark"].duplicated()]
    if len(twice):
        raise ValueError(f"{path}: benchmark {twice.iloc[0]!r} is given twice")
    return frame


def covered_occupations(labels: pd.DataFrame, task_occupation: dict[int, str], threshold: int) -> set[str]:
    """The occupations with a task that at least `threshold` distinct prompts of these labels carry."""
    if labels.empty:
        return set()
    counts = labels.drop_duplicates(["benchmark", "prompt_id", "task_id"]).groupby("task_id").size()
    return {task_occupation[int(t)] for t, n in counts.items() if n >= threshold and int(t) in task_occupation}


def occupations_with_coverage(per_task: pd.DataFrame, task_occupation: dict[int, str], threshold: int) -> set[str]:
    """covered_occupations from counts: `per_task` task_id, n_prompts (rows of one task are summed:
    counts made per benchmark file)."""
    if per_task.empty:
        return set()
    counts = per_task.groupby(per_task["task_id"].astype(int))["n_prompts"].sum()
    return {task_occupation[int(t)] for t, n in counts.items() if n >= threshold and int(t) in task_occupation}


def score_against_intent(labels: pd.DataFrame, task_occupation: dict[int, str], intent: pd.DataFrame, covered: set[str], split: dict[str, str]) -> list[dict]:
    """Per benchmark of the intent yardstick that has labels, and the mean over benchmarks of each half
    and of all: top-1 plausible and any plausible (shares of the benchmark's labeled prompts; a
    prompt without labels is not counted) and primary covered (1 or 0; the mean is a share of
    benchmarks). `covered`: occupations with a covered task (covered_occupations)."""
    by_prompt = _ranked_tasks(labels, set(zip(labels["benchmark"], labels["prompt_id"]))) if not labels.empty else {}
    per_benchmark: dict[str, dict] = {}
    for row in intent.itertuples(index=False):
        tops, anys = [], []
        for (benchmark, _), tasks in by_prompt.items():
            if benchmark != row.benchmark or not tasks:
                continue
            codes = [task_occupation[t] for t in tasks]
            tops.append(codes[0] in row.plausible)
            anys.append(any(c in row.plausible for c in codes))
        if not tops:
            continue
        per_benchmark[row.benchmark] = {
            "top1_plausible": sum(tops) / len(tops),
            "any_plausible": sum(anys) / len(anys),
            "primary_covered": float(row.primary in covered),
            "n": len(tops),
        }
    unknown = sorted(set(per_benchmark) - set(split))
    if unknown:
        raise ValueError(f"benchmarks {unknown} of the intent yardstick are not in the committed intent split")
    figures = []
    for benchmark, values in sorted(per_benchmark.items()):
        for metric in INTENT_LEVELS:
            figures.append({**_figure(split[benchmark], benchmark, "occupation", metric, values[metric], values["n"], interval="none")})
    for subset in (*HALVES, "all"):
        mine = [v for b, v in per_benchmark.items() if subset == "all" or split[b] == subset]
        for metric in INTENT_LEVELS:
            if mine:
                value = sum(v[metric] for v in mine) / len(mine)
                figures.append({**_figure(subset, "all", "occupation", metric, value, sum(v["n"] for v in mine), interval="none")})
    return figures


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
    # The interval holds p by construction; at p = 0 or 1 the subtraction leaves rounding (6.9e-18 for 0 of 111), not a bound.
    return min(max(0.0, centre - half), p), max(min(1.0, centre + half), p)


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


def dev_gold(labels_dev_dir: Path | None, occupations: pd.DataFrame, crosswalk: pd.DataFrame, split: dict[tuple[str, str], str]) -> pd.DataFrame:
    """benchmark, prompt_id, gold, half, gold_codes (set, may be empty), gold_families (set); no rows
    when the folder (an optional yardstick outside the repository) is None or lacks the files.

    A group that the committed split does not know (a label file grown since) is refused rather
    than silently put in a half: the split is made once.
    """
    rows = []
    if labels_dev_dir is None:
        return pd.DataFrame(rows, columns=["benchmark", "prompt_id", "gold", "half", "gold_codes", "gold_families"])
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


def dev_outcomes(labels: pd.DataFrame, task_occupation: dict[int, str], gold: pd.DataFrame, abstained: Iterable[tuple[str, str]] = ()) -> list[dict]:
    """Per labels_dev prompt: its half and benchmark, whether its top-ranked label is in the authors'
    family and occupation, its occupation precision and hit, its number of labels and whether it
    abstained (score_against_dev's figures are means of these; the label-uncertainty band's
    calibration is fitted on them, analysis/uncertainty.py)."""
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
                "prompt_id": row.prompt_id,
                "has_occupation": bool(row.gold_codes),
                "family_top1": bool(codes) and codes[0][:2] in row.gold_families,
                "occupation_top1": bool(codes) and codes[0] in row.gold_codes,
                "occupation_precision": (sum(c in row.gold_codes for c in codes) / len(codes)) if codes else 0.0,
                "occupation_hit": any(c in row.gold_codes for c in codes),
                "n_labels": len(codes),
                "abstained": key in abstained,
            }
        )
    return per_prompt


def reference_outcomes(labels: pd.DataFrame, task_occupation: dict[int, str], reference: pd.DataFrame, halves: dict[str, str]) -> list[dict]:
    """Per reference-set prompt (`halves`: benchmark -> half of the committed reference split): whether
    its top-ranked label's occupation, and family, is one the careful reading gave it (`onet_soc_codes`),
    and its number of labels."""
    by_prompt = _ranked_tasks(labels, set(zip(reference["benchmark"], reference["prompt_id"])))
    out = []
    for row in reference.itertuples(index=False):
        codes = [task_occupation[t] for t in by_prompt.get((row.benchmark, row.prompt_id), [])]
        truth = set(row.onet_soc_codes)
        out.append(
            {
                "half": halves[row.benchmark],
                "benchmark": row.benchmark,
                "prompt_id": row.prompt_id,
                "has_occupation": bool(truth),
                "family_top1": bool(codes) and codes[0][:2] in {c[:2] for c in truth},
                "occupation_top1": bool(codes) and codes[0] in truth,
                "n_labels": len(codes),
            }
        )
    return out


def score_against_dev(labels: pd.DataFrame, task_occupation: dict[int, str], gold: pd.DataFrame, abstained: Iterable[tuple[str, str]] = ()) -> list[dict]:
    """Every labels_dev figure, for each half and for both together.

    GDPval: family top-1 (the top-ranked label's family is the authors'), occupation top-1 (its
    occupation is the authors'), occupation precision (share of a prompt's labels in the authors'
    occupation, mean over prompts), occupation hit (some label in it: the v1-v3 "occupation
    accuracy"), labels per labeled prompt and the abstained share. TheAgentCompany: family top-1.
    Both: family top-1. A prompt with no label (abstained, no match) is a miss everywhere.
    """
    per_prompt = dev_outcomes(labels, task_occupation, gold, abstained)
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
