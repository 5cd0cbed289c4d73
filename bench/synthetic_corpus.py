"""A synthetic corpus for measuring growth: N benchmarks x M prompts, written as partition files.

What the per-benchmark steps would have written (`partition_files.py`: one Parquet file per table
and benchmark) for benchmarks nobody has: the raw prompts and results, and the default judge's
labels and judgements, drawn from a real run's own files. Nothing is embedded or labeled, so a
million prompts take minutes to write, and the files pass the dbt tests real ones pass.

How a synthetic benchmark is drawn (seeded by the corpus seed, its slug and its version, so it does
not depend on which other benchmarks are written beside it):

- It takes one real benchmark of the run as its template (uniformly), and each of its M prompts
  resamples one of the template's prompts, with replacement. The prompt's rows in every
  per-benchmark table (the judge's judgement: status, reason, confidence; its labels: tasks, ranks,
  scores; each model's result) are the resampled prompt's rows, under the new benchmark, prompt id
  and text hash. So tasks, ranks, scores, abstentions and results keep their joint distribution
  within a benchmark, and a benchmark's labels gather on the occupations of its template's.
- The text is new: words drawn from the real prompts' word frequencies up to the resampled
  prompt's length (so sizes and compression are those of real prompts). The same share of prompts
  as in the template repeats an earlier prompt's text (and its rows), as duplicate texts do.
- Only the default judge's rows (its labeler) are kept; a table that has none (the LLM judge's
  before it ran) is not written. A table holding rows per prompt is resampled by prompt; one
  without a `prompt_id` column (rows per benchmark) is copied from the template. So a per-benchmark
  table the run gains later is drawn the same way, with nothing to change here.

    .venv/bin/python bench/synthetic_corpus.py TARGET_DIR --benchmarks 1000 --prompts 1000 [--seed 1]
        [--real data/partitions] [--prefix syn] [--version 1]

TARGET_DIR is a partitions folder (`paths.partitions_dir`); files of other benchmarks
in it are left alone.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workbank_dagster.partition_files import SHARED, PartitionFiles  # noqa: E402
from workbank_dagster.settings import EMBEDDED_LABELER, settings_at_load  # noqa: E402
from workbank_dagster.sources.load_memo import is_load_log  # noqa: E402

PROMPTS = "benchmark_prompts"
# Words of the real prompts: runs of non-space characters.
WORD = re.compile(r"\S+")


@dataclass
class Template:
    """One real benchmark: its prompts in a fixed order, and each table's rows by prompt position."""

    name: str
    prompts: pd.DataFrame
    # table -> (rows sorted by prompt position, start of each prompt's rows, their count); a table
    # without prompt_id holds its rows whole under None. Only the tables the template has a file of
    # with the labeler's rows (or no labeler column): the others get no file either.
    tables: dict[str, tuple[pd.DataFrame, np.ndarray | None, np.ndarray | None]] = field(default_factory=dict)
    duplicate_share: float = 0.0


@dataclass
class Profile:
    """What the generator draws from: the real run's benchmarks, and its prompts' word frequencies."""

    templates: list[Template]
    words: np.ndarray
    word_weights: np.ndarray
    mean_word: float  # characters per word, with the space after it
    tables: list[str]


def per_benchmark_tables(files: PartitionFiles) -> list[str]:
    """The tables of a partitions folder that hold rows per benchmark (not the shared O*NET files,
    not the file errors of rejected sources, not the sources' load logs), prompts first."""
    names = [name for name in files.tables() if name != SHARED and not name.endswith("_file_errors") and not is_load_log(name)]
    return sorted(names, key=lambda name: name != PROMPTS)


def read_profile(real: Path | str, labeler: str = EMBEDDED_LABELER) -> Profile:
    """Every benchmark of a real run's partition files as a template (`labeler`'s rows only)."""
    files = PartitionFiles(real)
    if not files.partitions(PROMPTS):
        raise FileNotFoundError(f"{files.root / PROMPTS}: no prompt files; give --real a finished run's partitions folder")
    tables = per_benchmark_tables(files)
    templates = []
    counts: dict[str, int] = {}
    for name in files.partitions(PROMPTS):
        prompts = files.read(PROMPTS, [name]).sort_values("prompt_id", kind="stable").reset_index(drop=True)
        if not len(prompts):
            continue
        template = Template(name, prompts, duplicate_share=float(prompts["prompt_hash"].duplicated().mean()))
        position = pd.Series(np.arange(len(prompts)), index=prompts["prompt_id"].to_numpy())
        for table in tables:
            if table == PROMPTS:
                continue
            if not files.path(table, name).is_file():
                continue
            rows = files.read(table, [name])
            if "labeler" in rows.columns:
                if len(rows) and not (rows["labeler"] == labeler).any():
                    continue  # another judge's file: none of the default judge's rows
                rows = rows[rows["labeler"] == labeler]
            if "prompt_id" not in rows.columns:
                template.tables[table] = (rows.reset_index(drop=True), None, None)
                continue
            at = rows["prompt_id"].map(position)
            rows = rows[at.notna()].assign(_at=at[at.notna()].astype(np.int64)).sort_values("_at", kind="stable")
            count = np.bincount(rows["_at"].to_numpy(), minlength=len(prompts))
            start = np.concatenate([[0], np.cumsum(count)[:-1]])
            template.tables[table] = (rows.drop(columns="_at").reset_index(drop=True), start, count)
        templates.append(template)
        for text in prompts["prompt"]:
            for word in WORD.findall(text):
                counts[word] = counts.get(word, 0) + 1
    words = np.array(list(counts), dtype=object)
    weights = np.array(list(counts.values()), dtype=float) / sum(counts.values())
    mean_word = float((np.array([len(w) for w in words]) * weights).sum()) + 1
    return Profile(templates, words, weights, mean_word, tables)


def benchmark_seed(seed: int, slug: str, version: int) -> np.random.Generator:
    """A benchmark's own random stream: a function of the corpus seed, its slug and its version."""
    digest = hashlib.sha256(f"{seed}\x1f{slug}\x1f{version}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def texts(rng: np.random.Generator, profile: Profile, lengths: np.ndarray) -> list[str]:
    """One text per length: words drawn by their frequency in the real prompts, cut to the length."""
    need = int(lengths.sum() / profile.mean_word * 1.2) + 64
    stream = ""
    while len(stream) < lengths.sum():
        stream += " " + " ".join(profile.words[rng.choice(len(profile.words), size=need, p=profile.word_weights)])
    ends = np.cumsum(lengths)
    starts = ends - lengths
    return [stream[a:b].strip() or "x" for a, b in zip(starts, ends)]


def _gather(rows: pd.DataFrame, start: np.ndarray, count: np.ndarray, picked: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows of the picked template prompts, in order, and which synthetic prompt each belongs to."""
    n = count[picked]
    owner = np.repeat(np.arange(len(picked)), n)
    offsets = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
    return rows.iloc[np.repeat(start[picked], n) + offsets].reset_index(drop=True), owner


def benchmark_frames(profile: Profile, slug: str, n_prompts: int, *, seed: int, version: int = 1) -> dict[str, pd.DataFrame]:
    """Every per-benchmark table's rows of one synthetic benchmark."""
    rng = benchmark_seed(seed, slug, version)
    template = profile.templates[rng.integers(len(profile.templates))]
    picked = rng.integers(len(template.prompts), size=n_prompts)
    lengths = template.prompts["prompt"].str.len().to_numpy()[picked].clip(min=1)
    body = texts(rng, profile, lengths)
    # Repeated texts, at the template's rate: a prompt takes an earlier one's text and its rows.
    for i in np.flatnonzero(rng.random(n_prompts) < template.duplicate_share):
        if i:
            j = int(rng.integers(i))
            body[i], picked[i] = body[j], picked[j]
    prompt_ids = np.array([f"p{i:07d}" for i in range(n_prompts)], dtype=object)
    hashes = np.array([hashlib.sha256(text.encode("utf-8")).hexdigest() for text in body], dtype=object)
    prompts = template.prompts.iloc[picked].reset_index(drop=True)
    prompts["benchmark"] = slug
    prompts["prompt_id"] = prompt_ids
    prompts["prompt"] = body
    prompts["prompt_hash"] = hashes
    if "source_line" in prompts.columns:
        prompts["source_line"] = np.arange(1, n_prompts + 1)
    if "source_sha256" in prompts.columns:  # no source file: a digest of the synthetic prompts stands in
        prompts["source_sha256"] = hashlib.sha256("\x1e".join(hashes).encode()).hexdigest()
    out = {PROMPTS: prompts.astype(template.prompts.dtypes.to_dict())}
    for table, (rows, start, count) in template.tables.items():
        if start is None:
            frame = rows.assign(benchmark=slug)
        else:
            frame, owner = _gather(rows, start, count, picked)
            frame["benchmark"] = slug
            frame["prompt_id"] = prompt_ids[owner]
            if "prompt_hash" in frame.columns:
                frame["prompt_hash"] = hashes[owner]
        out[table] = frame.astype(rows.dtypes.to_dict())
    return out


def write_benchmark(files: PartitionFiles, profile: Profile, slug: str, n_prompts: int, *, seed: int, version: int = 1) -> dict[str, int]:
    """Write one synthetic benchmark's files (as the partition steps write theirs); rows per table.
    A table its template has no file of gets none (and loses an earlier version's)."""
    frames = benchmark_frames(profile, slug, n_prompts, seed=seed, version=version)
    for table in set(profile.tables) - set(frames):
        files.remove(table, slug)
    for table, frame in frames.items():
        files.write(table, slug, frame)
    return {table: len(frame) for table, frame in frames.items()}


def slugs(prefix: str, n: int) -> list[str]:
    return [f"{prefix}-{i:05d}" for i in range(n)]


def generate(target: Path | str, profile: Profile, n_benchmarks: int, n_prompts: int, *, seed: int = 1, prefix: str = "syn",
             version: int = 1, progress=None) -> list[str]:
    """Write `n_benchmarks` synthetic benchmarks of `n_prompts` prompts each into `target`; their slugs."""
    files = PartitionFiles(target)
    names = slugs(prefix, n_benchmarks)
    for i, slug in enumerate(names):
        write_benchmark(files, profile, slug, n_prompts, seed=seed, version=version)
        if progress is not None:
            progress(i + 1, len(names))
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", type=Path, help="the partitions folder to write into")
    parser.add_argument("--benchmarks", type=int, required=True)
    parser.add_argument("--prompts", type=int, default=1000, help="prompts per benchmark")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--version", type=int, default=1, help="another version draws every benchmark anew (a changed file)")
    parser.add_argument("--prefix", default="syn")
    parser.add_argument("--real", type=Path, default=None, help="a finished run's partitions folder (default: this checkout's)")
    parser.add_argument("--labeler", default=EMBEDDED_LABELER)
    args = parser.parse_args()
    real = args.real or settings_at_load().resolve().partitions_dir
    started = time.perf_counter()
    profile = read_profile(real, args.labeler)

    def progress(done: int, total: int) -> None:
        if done == total or done % max(total // 20, 1) == 0:
            print(f"{done} / {total} benchmarks, {time.perf_counter() - started:.0f} s", flush=True)

    generate(args.target, profile, args.benchmarks, args.prompts, seed=args.seed, prefix=args.prefix, version=args.version, progress=progress)
    print(f"{args.benchmarks * args.prompts:,} prompts in {args.benchmarks:,} benchmarks written to {args.target} "
          f"in {time.perf_counter() - started:.0f} s (templates: {len(profile.templates)} benchmarks of {real})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
