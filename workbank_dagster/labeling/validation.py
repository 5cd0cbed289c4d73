"""Scoring judges against labels that did not come from them.

Two yardsticks (METHOD.md §3):

- `benchmarks/labels_dev/`: occupations the GDPval authors assigned (matched to O*NET-SOC codes by
  title) and TheAgentCompany role categories (mapped to the SOC families a role can belong to).
  *Family accuracy*: the top-ranked label's family is right. *Occupation accuracy*: some label is a
  task of the right occupation (GDPval only; a title matches every O*NET code of its SOC detailed
  occupation, e.g. Registered Nurses 29-1141.00-.04).
- the reference set in `reference/`: task IDs chosen by careful reading (see its guide), scored as
  precision and recall at task, occupation and family level.
"""

from __future__ import annotations

import json
from pathlib import Path

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


def occupation_codes_for_title(title: str, occupations: pd.DataFrame, crosswalk: pd.DataFrame) -> set[str]:
    """O*NET-SOC codes (with tasks) for a title: by O*NET title, else by OEWS/NEM title (13-1020 …)."""
    return title_matcher(occupations, crosswalk)(title)


def _ranked_tasks(labels: pd.DataFrame, keys: set[tuple[str, str]]) -> dict[tuple[str, str], list[int]]:
    """(benchmark, prompt_id) → task ids in rank order, for the prompts in `keys` only (one sort)."""
    wanted = labels[[key in keys for key in zip(labels["benchmark"], labels["prompt_id"])]]
    wanted = wanted.sort_values(["benchmark", "prompt_id", "rank"], kind="stable")
    out: dict[tuple[str, str], list[int]] = {}
    for benchmark, prompt_id, task_id in zip(wanted["benchmark"], wanted["prompt_id"], wanted["task_id"].astype(int)):
        out.setdefault((benchmark, prompt_id), []).append(int(task_id))
    return out


def dev_gold(labels_dev_dir: Path, occupations: pd.DataFrame, crosswalk: pd.DataFrame) -> pd.DataFrame:
    """benchmark, prompt_id, source, gold_codes (set, may be empty), gold_families (set)."""
    rows = []
    gdpval = labels_dev_dir / "gdpval.jsonl"
    if gdpval.is_file():
        match = title_matcher(occupations, crosswalk)
        for record in _read_jsonl(gdpval):
            codes = match(record["occupation"])
            if not codes:
                raise ValueError(f"{gdpval}: occupation title {record['occupation']!r} matches no O*NET or OEWS title")
            rows.append((record["benchmark"], str(record["prompt_id"]), record["occupation"], codes, {c[:2] for c in codes}))
    tac = labels_dev_dir / "theagentcompany.jsonl"
    if tac.is_file():
        for record in _read_jsonl(tac):
            families = ROLE_FAMILIES.get(record["role_category"])
            if families is None:
                raise ValueError(f"{tac}: role_category {record['role_category']!r} has no family mapping")
            rows.append((record["benchmark"], str(record["prompt_id"]), record["role_category"], set(), set(families)))
    return pd.DataFrame(rows, columns=["benchmark", "prompt_id", "gold", "gold_codes", "gold_families"])


def score_against_dev(labels: pd.DataFrame, task_occupation: dict[int, str], gold: pd.DataFrame) -> dict:
    """Family accuracy (top label) on every gold prompt; occupation accuracy (any label) where known."""
    by_prompt = _ranked_tasks(labels, set(zip(gold["benchmark"], gold["prompt_id"])))
    family_hits = occupation_hits = n_occupation = n_labels = 0
    per_benchmark: dict[str, list[int]] = {}
    for row in gold.itertuples(index=False):
        tasks = by_prompt.get((row.benchmark, row.prompt_id), [])
        n_labels += len(tasks)
        codes = [task_occupation[t] for t in tasks]
        family_ok = bool(codes) and codes[0][:2] in row.gold_families
        family_hits += family_ok
        per_benchmark.setdefault(row.benchmark, [0, 0])
        per_benchmark[row.benchmark][0] += family_ok
        per_benchmark[row.benchmark][1] += 1
        if row.gold_codes:
            n_occupation += 1
            occupation_hits += any(code in row.gold_codes for code in codes)
    n = len(gold)
    return {
        "n_prompts": n,
        "family_accuracy": family_hits / n if n else None,
        "n_prompts_with_occupation": n_occupation,
        "occupation_accuracy": occupation_hits / n_occupation if n_occupation else None,
        "labels_per_prompt": n_labels / n if n else None,
        "family_accuracy_by_benchmark": {b: hits / total for b, (hits, total) in per_benchmark.items()},
    }


def read_reference(path: Path) -> pd.DataFrame:
    records = _read_jsonl(path)
    return pd.DataFrame(
        [(r["benchmark"], str(r["prompt_id"]), [int(t) for t in r["task_ids"]], r["onet_soc_codes"], r.get("confidence"), r["labeled_by"]) for r in records],
        columns=["benchmark", "prompt_id", "task_ids", "onet_soc_codes", "confidence", "labeled_by"],
    )


def _prf(predicted: list[set], truth: list[set]) -> dict:
    tp = sum(len(p & t) for p, t in zip(predicted, truth))
    n_pred = sum(len(p) for p in predicted)
    n_true = sum(len(t) for t in truth)
    precision = tp / n_pred if n_pred else None
    recall = tp / n_true if n_true else None
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def score_against_reference(labels: pd.DataFrame, task_occupation: dict[int, str], reference: pd.DataFrame) -> dict:
    """Micro precision / recall at task, occupation and family level over the reference prompts."""
    by_prompt = {key: set(tasks) for key, tasks in _ranked_tasks(labels, set(zip(reference["benchmark"], reference["prompt_id"]))).items()}
    predicted_tasks, true_tasks = [], []
    for row in reference.itertuples(index=False):
        predicted_tasks.append(by_prompt.get((row.benchmark, row.prompt_id), set()))
        true_tasks.append(set(row.task_ids))

    def occupations(tasks: set) -> set:
        return {task_occupation[t] for t in tasks if t in task_occupation}

    predicted_occ = [occupations(t) for t in predicted_tasks]
    true_occ = [occupations(t) for t in true_tasks]
    return {
        "n_prompts": len(reference),
        "n_benchmarks": int(reference["benchmark"].nunique()),
        "task": _prf(predicted_tasks, true_tasks),
        "occupation": _prf(predicted_occ, true_occ),
        "family": _prf([{c[:2] for c in o} for o in predicted_occ], [{c[:2] for c in o} for o in true_occ]),
        "labels_per_prompt": sum(len(p) for p in predicted_tasks) / len(reference) if len(reference) else None,
    }
