"""The yardsticks judges are scored against (validation.py), read from their files, and the halves
each is split into once, committed before any tuning on it (docs/method.md §3):

- `benchmarks/labels_dev/`: occupations the GDPval authors assigned (matched to O*NET-SOC codes by
  title) and TheAgentCompany role categories (mapped to the SOC families a role can belong to).
  The labels are split once, by a hash of the occupation (TheAgentCompany: of the role), into a
  `tune` half and a `holdout` half (`reference/labels_dev_split.csv`, committed before any tuning):
  judges are tuned on `tune` only, and the `holdout` figures are the ones to quote.
- the reference set in `reference/`: task IDs chosen by careful reading (see its guide), a
  reproducible sample of each benchmark's prompts. It is split by benchmark into a `tune` and a
  `holdout` half (`reference/reference_split.csv`, committed before any tuning on it): the
  benchmarks ranked by a SHA-256 of their slug, the first half tune.
- `benchmarks/labels_dev/benchmark_intent.jsonl`: per benchmark, the work its own paper says it asks
  for, the occupation whose work that most directly is (`primary`) and a generous set of plausible
  occupations. Split by benchmark into halves (`reference/intent_split.csv`, committed before any
  tuning on it): a benchmark the reference split holds keeps its half there, the others are ranked
  by a SHA-256 of their salted slug and fill the halves to equal size, tune first.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterable
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
# What each benchmark's development labels are grouped (and split) by.
SPLIT_GROUP = {"gdpval": "occupation", "theagentcompany": "role"}
SPLIT_SALT = "labels-dev-split-v1"
HALVES = ("tune", "holdout")
REFERENCE_SPLIT_SALT = "reference-split-v1"
REFERENCE_SAMPLE_SALT = "reference-v1"
REFERENCE_PER_BENCHMARK = 20
INTENT_SPLIT_SALT = "intent-split-v1"


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


def read_split(path: Path) -> dict[tuple[str, str], str]:
    """(benchmark, group) → half, from the committed split file."""
    with open(path, encoding="utf-8", newline="") as handle:
        return {(row["benchmark"], row["group"]): row["half"] for row in csv.DictReader(handle)}


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


def read_reference(path: Path) -> pd.DataFrame:
    records = _read_jsonl(path)
    return pd.DataFrame(
        [(r["benchmark"], str(r["prompt_id"]), [int(t) for t in r["task_ids"]], r["onet_soc_codes"], r.get("confidence"), r["labeled_by"]) for r in records],
        columns=["benchmark", "prompt_id", "task_ids", "onet_soc_codes", "confidence", "labeled_by"],
    )
