"""Which benchmark files a run reads, and where each one comes from.

The repository's table of benchmarks is `benchmarks/catalog.csv`: one row per file (a benchmark's
prompts, and its per-prompt results where any are published), with its full name, its licence as
the source states it, where our copy was taken from, and how the file reaches a clone:

- **committed**: the licence lets the repository carry it; the copy is in `benchmarks/prompts/` or
  `benchmarks/results/`;
- **fetched**: the licence does not allow it or does not say; a recipe (repository and commit, or
  PyPI package and version; the upstream file(s); the converter, `recipes.py`) makes it again, and
  its SHA-256 pins the result (`fetch.Recipe`);
- **local**: neither: no licence is stated and no single upstream file can be converted (a table
  transcribed by hand). It is read from the local copy (fetch.py) when that holds it, by its
  pinned SHA-256; without it the benchmark has no results, and the run says so.

`benchmarks/NOTICE.md` is written from the table (`python -m workbank_dagster.cli notice`; a test
fails when it is out of date).

A run's benchmarks (`benchmark_set`):

- no source folder set (the default): the catalog's, each file by its pinned SHA-256 (fetch.py:
  download cache, the local copy, upstream);
- a source folder set (`WORKBANK_SOURCE_DIR`): its `benchmarks/<slug>.jsonl` and
  `results/<slug>.csv`, read as given (full name and licence from its `benchmarks/SOURCES.md`);
- and in both cases your own folder, when set (`WORKBANK_BENCHMARKS_DIR`): `<slug>.jsonl` and,
  beside it, `<slug>.csv` for its results; a slug of yours replaces the one of the same name.

Every file is recorded under one name whichever copy was read (`benchmarks/<slug>.jsonl`,
`results/<slug>.csv`), so identical bytes make an identical data snapshot.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..common import SLUG_PATTERN, file_sha256
from ..settings import REPO_ROOT, Settings
from .benchmarks import slug_files
from .fetch import GITHUB, PYPI, Recipe, Resolver
from .recipes import CONVERTERS
from .validate import SourceFormatError

BENCHMARKS_DIR = REPO_ROOT / "benchmarks"
CATALOG_PATH = BENCHMARKS_DIR / "catalog.csv"
NOTICE_PATH = BENCHMARKS_DIR / "NOTICE.md"
COLUMNS = [
    "benchmark", "kind", "full_name", "licence", "origin", "reaches_clone", "sha256",
    "host", "repository", "revision", "paths", "member", "converter",
]
KINDS = {"prompts": ("benchmarks", ".jsonl"), "results": ("results", ".csv")}
REACHES = ("committed", "fetched", "local")


@dataclass(frozen=True)
class CatalogEntry:
    benchmark: str
    kind: str  # prompts | results
    full_name: str
    licence: str  # as the source states it
    origin: str  # where our copy was taken from, in words
    reaches_clone: str  # committed | fetched | local
    sha256: str  # of the file the pipeline reads
    host: str  # github | pypi
    repository: str  # owner/name, or the PyPI package
    revision: str  # commit, or package version
    paths: str  # upstream path(s), `; `-separated, or `@recipes/<file>.txt` (one per line)
    member: str  # inside a wheel
    converter: str  # recipes.CONVERTERS (fetched only)

    @property
    def name(self) -> str:
        """The file as a source folder lays it out, and as every run records it."""
        folder, suffix = KINDS[self.kind]
        return f"{folder}/{self.benchmark}{suffix}"

    @property
    def committed_path(self) -> Path:
        return BENCHMARKS_DIR / self.kind / f"{self.benchmark}{KINDS[self.kind][1]}"

    def upstream_paths(self) -> tuple[str, ...]:
        if self.paths.startswith("@"):
            listing = BENCHMARKS_DIR / self.paths[1:]
            return tuple(line for line in listing.read_text(encoding="utf-8").splitlines() if line.strip())
        return tuple(part.strip() for part in self.paths.split(";") if part.strip())

    def recipe(self) -> Recipe:
        return Recipe(self.name, self.sha256, self.host, self.repository, self.revision, self.upstream_paths(), self.member, self.converter)

    @property
    def source(self) -> str:
        """Repository and commit, or package and version."""
        return f"PyPI {self.repository} {self.revision}" if self.host == PYPI else f"{self.repository}@{self.revision[:8]}"


def read_catalog(path: Path = CATALOG_PATH) -> dict[tuple[str, str], CatalogEntry]:
    """The catalog's rows by (benchmark, kind); a bad row is one error naming the line and column."""
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header != COLUMNS:
            raise SourceFormatError(path, "unexpected header", line=1, expected=", ".join(COLUMNS), found=", ".join(header or []))
        entries: dict[tuple[str, str], CatalogEntry] = {}
        for number, row in enumerate(reader, start=2):
            if len(row) != len(COLUMNS):
                raise SourceFormatError(path, f"{len(row)} fields", line=number, expected=f"{len(COLUMNS)} fields")
            entry = CatalogEntry(*row)
            _check_entry(entry, path, number)
            if (entry.benchmark, entry.kind) in entries:
                raise SourceFormatError(path, "a second row for this file", line=number, column="benchmark", found=f"{entry.benchmark} {entry.kind}")
            entries[(entry.benchmark, entry.kind)] = entry
    for benchmark, kind in entries:
        if kind == "results" and (benchmark, "prompts") not in entries:
            raise SourceFormatError(path, f"results of {benchmark!r} without a prompts row", column="benchmark")
    return entries


def _check_entry(entry: CatalogEntry, path: Path, line: int) -> None:
    def bad(column: str, expected: str) -> SourceFormatError:
        return SourceFormatError(path, "bad value", line=line, column=column, expected=expected, found=getattr(entry, column))

    if not SLUG_PATTERN.match(entry.benchmark):
        raise bad("benchmark", f"a slug matching {SLUG_PATTERN.pattern}")
    if entry.kind not in KINDS:
        raise bad("kind", " or ".join(KINDS))
    if entry.reaches_clone not in REACHES:
        raise bad("reaches_clone", ", ".join(REACHES))
    if not re.fullmatch(r"[0-9a-f]{64}", entry.sha256):
        raise bad("sha256", "64 lowercase hex digits")
    if not entry.full_name or not entry.licence:
        raise bad("licence" if entry.full_name else "full_name", "a non-empty text")
    if entry.reaches_clone == "fetched":
        if entry.host not in (GITHUB, PYPI):
            raise bad("host", f"{GITHUB} or {PYPI}")
        if entry.converter not in CONVERTERS:
            raise bad("converter", "one of " + ", ".join(sorted(CONVERTERS)))
        if not entry.paths or not entry.repository or not entry.revision:
            raise bad("paths" if not entry.paths else "repository" if not entry.repository else "revision", "a non-empty value for a fetched file")
        if entry.host == PYPI and not entry.member:
            raise bad("member", "the file inside the wheel")
        if entry.paths.startswith("@") and not (BENCHMARKS_DIR / entry.paths[1:]).is_file():
            raise bad("paths", f"a list of paths under {BENCHMARKS_DIR}")


@dataclass(frozen=True)
class BenchmarkFile:
    """One file of a benchmark, as a run reads it."""

    name: str  # benchmarks/<slug>.jsonl or results/<slug>.csv, whichever copy is read
    fingerprint: str  # SHA-256 of its bytes; a file not fetched yet: its pinned SHA-256
    resolve: Callable[[], Path | None] = field(repr=False, compare=False)
    missing: str = ""  # what the run says when `resolve` finds nothing (an optional file)

    def path(self) -> Path | None:
        """Its local path, fetched if needed (SourceFormatError naming the file and URL if that
        fails), or None for an optional file that is nowhere at hand."""
        return self.resolve()


@dataclass(frozen=True)
class Benchmark:
    slug: str
    prompts: BenchmarkFile
    results: BenchmarkFile | None
    full_name: str
    licence: str


def _file(name: str, path: Path) -> BenchmarkFile:
    return BenchmarkFile(name, file_sha256(path), lambda: path)


def _catalog_file(entry: CatalogEntry, resolver: Resolver) -> BenchmarkFile:
    if entry.reaches_clone == "committed":
        return BenchmarkFile(entry.name, file_sha256(entry.committed_path), lambda: entry.committed_path)
    if entry.reaches_clone == "fetched":
        recipe = entry.recipe()
        return BenchmarkFile(entry.name, entry.sha256, lambda: resolver.path(recipe))

    def local_copy() -> Path | None:
        local = None if resolver.local_dir is None else resolver.local_dir / entry.name
        return local if local is not None and local.is_file() and file_sha256(local) == entry.sha256 else None

    found = local_copy()
    return BenchmarkFile(
        entry.name, entry.sha256 if found else "missing", local_copy,
        missing=f"{entry.name} is not in the repository ({entry.licence}) and no local copy with its pinned SHA-256 "
        f"was found ({resolver.local_dir or 'no local folder'}): {entry.benchmark} is read without it",
    )


def _folder_benchmarks(prompts_dir: Path, results_dir: Path, sources_md: Path) -> dict[str, Benchmark]:
    """The `<slug>.jsonl` files of a folder, each with its `<slug>.csv` results file of
    `results_dir` if there is one (benchmarks.slug_files: a file whose name is not a safe slug,
    of either kind, is an error naming it)."""
    paths = slug_files(prompts_dir, ".jsonl")
    results = slug_files(results_dir, ".csv")
    attribution = folder_attribution(sources_md, sorted(paths)).set_index("benchmark")
    return {
        slug: Benchmark(
            slug,
            _file(f"benchmarks/{slug}.jsonl", path),
            _file(f"results/{slug}.csv", results[slug]) if slug in results else None,
            attribution.loc[slug, "full_name"],
            attribution.loc[slug, "licence"],
        )
        for slug, path in paths.items()
    }


def benchmark_set(settings: Settings) -> dict[str, Benchmark]:
    """The run's benchmarks by slug (see the module docstring). A file of a folder whose name is not
    a safe slug stops it with an error naming the file (benchmarks.slug_files). Nothing is
    downloaded here: a fetched file is fetched by `BenchmarkFile.path`."""
    if settings.source_dir is not None:
        found = _folder_benchmarks(settings.source_dir / "benchmarks", settings.source_dir / "results", settings.source_dir / "benchmarks" / "SOURCES.md")
    else:
        resolver = Resolver.of(settings)
        catalog = read_catalog()
        found = {}
        for (slug, kind), entry in sorted(catalog.items()):
            if kind == "prompts":
                results = catalog.get((slug, "results"))
                found[slug] = Benchmark(
                    slug, _catalog_file(entry, resolver), _catalog_file(results, resolver) if results else None, entry.full_name, entry.licence
                )
    if settings.benchmarks_dir is not None:
        found.update(_folder_benchmarks(settings.benchmarks_dir, settings.benchmarks_dir, settings.benchmarks_dir / "SOURCES.md"))
    return found


def _field(section: str, name: str) -> str | None:
    match = re.search(rf"\*\*{name}:\*\*\s*(.+)", section)
    return match.group(1).strip() if match else None


def folder_attribution(sources_md: Path, slugs: list[str]) -> pd.DataFrame:
    """benchmark, full_name, licence per slug, from the `## <slug>` sections of a folder's SOURCES.md;
    a benchmark without a section, or a section without a licence line, says so."""
    text = sources_md.read_text(encoding="utf-8") if sources_md.is_file() else ""
    sections = {}
    for block in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        head, _, body = block.partition("\n")
        sections[head.strip()] = body
    rows = []
    for slug in slugs:
        section = sections.get(slug)
        if section is None:
            rows.append((slug, slug, f"no entry in {sources_md.name}: licence unknown"))
        else:
            rows.append((slug, _field(section, "Full name") or slug, _field(section, "License") or f"not stated in {sources_md.name}"))
    return pd.DataFrame(rows, columns=["benchmark", "full_name", "licence"]).astype("string")


def notice_text(catalog: dict[tuple[str, str], CatalogEntry]) -> str:
    """benchmarks/NOTICE.md: every file of the catalog, its licence, source and how a clone gets it."""
    entries = [catalog[key] for key in sorted(catalog)]
    count = {reach: sum(e.reaches_clone == reach for e in entries) for reach in REACHES}
    lines = [
        "# Benchmarks: sources and licences",
        "",
        "<!-- Written by `python -m workbank_dagster.cli notice` from catalog.csv; do not edit by hand. -->",
        "",
        "Every benchmark file the pipeline reads by default, one row per file of `catalog.csv`. The licence is",
        "the one the source states; the prompts are the benchmarks' authors' work, the results the work of whoever",
        "ran the models (the origin says who). How each file reaches a clone of this repository:",
        "",
        f"- **committed** ({count['committed']} files): the licence allows redistribution; the copy is in `prompts/` or `results/`.",
        f"- **fetched** ({count['fetched']} files): the licence does not allow it or does not say; the pipeline downloads the",
        "  upstream file(s) at the pinned revision, converts them in code (`workbank_dagster/sources/recipes.py`) and",
        "  checks the SHA-256 below.",
        f"- **local** ({count['local']} file{'s' if count['local'] != 1 else ''}): no licence stated and no upstream file to convert; read from a local copy",
        "  (the folder `shared/data` beside the repository) when it is there, else left out, and the run says so.",
        "",
        "| benchmark | file | reaches a clone | licence (as the source states it) | source | taken from |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for e in entries:
        lines.append(f"| {e.benchmark} | `{e.name}` | {e.reaches_clone} | {e.licence} | {e.source} | {e.origin} |")
    lines += ["", "## Fetch recipes", "", "| file | upstream | converter | SHA-256 of the converted file |", "| --- | --- | --- | --- |"]
    for e in entries:
        if e.reaches_clone == "fetched":
            paths = e.upstream_paths()
            upstream = f"`{e.member}` in `{paths[0].rsplit('/', 1)[-1]}`" if e.member else f"`{paths[0]}`" if len(paths) == 1 else f"{len(paths)} files listed in `{e.paths[1:]}`"
            lines.append(f"| `{e.name}` | {e.source}: {upstream} | `{e.converter}` | `{e.sha256}` |")
    lines += ["", "Full names:", ""]
    lines += [f"- **{e.benchmark}**: {e.full_name}" for e in entries if e.kind == "prompts"]
    return "\n".join(lines) + "\n"
