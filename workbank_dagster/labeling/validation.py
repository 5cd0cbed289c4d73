"""Scoring judges against labels that did not come from them: the yardsticks of yardsticks.py
(docs/method.md §3), each figure for each committed half and for both.

- labels_dev: family and occupation top-1, occupation precision and hit, labels per labeled prompt;
  every figure comes with a Wilson 95% interval.
- the reference set: micro precision and recall by exact Task ID (docs/method.md §1), and beside it
  two secondary figures: tasks whose statements are identical in several occupations counted as one
  task, and detailed work activities (DWAs, through O*NET's Tasks to DWAs); then occupation and
  family level.
- the intent yardstick, per benchmark: *top-1 plausible* (the share of labeled prompts whose top
  label's occupation is in the set), *any plausible* (the share with some label in it) and *primary
  covered* (the primary occupation has a covered task under this labeler alone), then the mean over
  benchmarks.

An abstained prompt (status `abstained`: the judge said it was not confident) is a miss: it counts
against top-1 and precision exactly like a wrong label, so abstaining cannot buy precision. The
share of abstained prompts is reported beside every figure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from .yardsticks import HALVES

INTENT_LEVELS = ("top1_plausible", "any_plausible", "primary_covered")
Z95 = 1.959963984540054


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


def _ranked_tasks(labels: pd.DataFrame, keys: set[tuple[str, str]]) -> dict[tuple[str, str], list[int]]:
    """(benchmark, prompt_id) → task ids in rank order, for the prompts in `keys` only (one sort)."""
    # A boolean array, not a list: an empty list would select no columns of a frame with no rows.
    wanted = labels[np.fromiter((key in keys for key in zip(labels["benchmark"], labels["prompt_id"])), dtype=bool, count=len(labels))]
    wanted = wanted.sort_values(["benchmark", "prompt_id", "rank"], kind="stable")
    out: dict[tuple[str, str], list[int]] = {}
    for benchmark, prompt_id, task_id in zip(wanted["benchmark"], wanted["prompt_id"], wanted["task_id"].astype(int)):
        out.setdefault((benchmark, prompt_id), []).append(int(task_id))
    return out


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
