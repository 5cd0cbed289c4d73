"""The benchmarks that travel with the project: benchmarks/catalog.csv, the committed copies, the
NOTICE written from it, and which files a run reads in each setting (sources/benchmark_set.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from workbank_dagster.common import file_sha256
from workbank_dagster.settings import REPO_ROOT, PipelineSettings
from workbank_dagster.sources import benchmark_set as bs
from workbank_dagster.sources.validate import SourceFormatError

# Licences that do not let the repository carry a file (or do not say that they do).
NOT_REDISTRIBUTABLE = ("not stated", "none stated", "not checked", "NC", "terms are not stated")


def test_the_catalog_lists_every_benchmark_of_the_shared_folder_with_its_bytes(source_dir):
    """One prompts row per benchmark file of the shared folder and one results row per results
    file, each pinning the shared copy's SHA-256."""
    catalog = bs.read_catalog()
    shared = {f"benchmarks/{p.name}" for p in (source_dir / "benchmarks").glob("*.jsonl")} | {
        f"results/{p.name}" for p in (source_dir / "results").glob("*.csv")
    }
    assert {e.name for e in catalog.values()} == shared
    assert len([e for e in catalog.values() if e.kind == "prompts"]) == 24
    for entry in catalog.values():
        assert entry.sha256 == file_sha256(source_dir / entry.name), entry.name


def test_a_file_is_committed_only_where_its_licence_allows_and_the_copy_is_the_pinned_one():
    catalog = bs.read_catalog()
    committed = {e.committed_path for e in catalog.values() if e.reaches_clone == "committed"}
    on_disk = {p for kind in bs.KINDS for p in (bs.BENCHMARKS_DIR / kind).glob("*") if p.is_file()}
    assert committed == on_disk  # every committed row has its copy, and no copy lacks a row
    for entry in catalog.values():
        if entry.reaches_clone == "committed":
            assert file_sha256(entry.committed_path) == entry.sha256, entry.name
            assert not any(word in entry.licence for word in NOT_REDISTRIBUTABLE), (entry.name, entry.licence)
        else:
            assert any(word in entry.licence for word in NOT_REDISTRIBUTABLE) or "not stated in the wheel" in entry.licence, (entry.name, entry.licence)
    reached = {e.reaches_clone for e in catalog.values()}
    assert reached == {"committed", "fetched", "local"}


def test_the_notice_is_written_from_the_catalog():
    """benchmarks/NOTICE.md is what `cli notice` writes from the catalog today (run it after an edit)."""
    assert bs.NOTICE_PATH.read_text(encoding="utf-8") == bs.notice_text(bs.read_catalog())
    text = bs.NOTICE_PATH.read_text(encoding="utf-8")
    for entry in bs.read_catalog().values():
        assert f"| {entry.benchmark} | `{entry.name}` | {entry.reaches_clone} | {entry.licence} |" in text


def test_a_bad_catalog_row_is_one_error_naming_line_and_column(tmp_path):
    good = bs.CATALOG_PATH.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "catalog.csv"

    def with_line(number: int, line: str) -> None:
        lines = list(good)
        lines[number - 1] = line
        bad.write_text("\n".join(lines) + "\n")

    with_line(2, good[1].replace(",committed,", ",maybe,", 1))
    with pytest.raises(SourceFormatError, match=r"catalog.csv:2: column 'reaches_clone': bad value; expected committed, fetched, local, found 'maybe'"):
        bs.read_catalog(bad)
    fetched = next(i for i, line in enumerate(good, start=1) if ",fetched," in line)
    with_line(fetched, good[fetched - 1].rsplit(",", 1)[0] + ",no_such_converter")
    with pytest.raises(SourceFormatError, match=rf"catalog.csv:{fetched}: column 'converter': bad value"):
        bs.read_catalog(bad)
    with_line(3, good[1])
    with pytest.raises(SourceFormatError, match="catalog.csv:3: column 'benchmark': a second row for this file"):
        bs.read_catalog(bad)


def test_the_default_set_is_the_catalog_and_fetches_nothing_until_a_file_is_read(tmp_path, monkeypatch):
    """No source folder: the catalog's benchmarks, committed ones from the repository, fetched ones
    counted by their pinned hash (nothing is downloaded to list them)."""
    from workbank_dagster.sources import fetch

    monkeypatch.setattr(fetch, "default_source_dir", lambda: None)  # a clone alone
    settings = PipelineSettings.of(data_dir=str(tmp_path / "data")).resolve()
    found = bs.benchmark_set(settings)
    assert len(found) == 24
    assert found["cybench"].prompts.path() == REPO_ROOT / "benchmarks" / "prompts" / "cybench.jsonl"
    assert found["gdpval"].prompts.fingerprint == bs.read_catalog()[("gdpval", "prompts")].sha256
    assert found["gdpval"].full_name.startswith("GDPval") and "not stated" in found["gdpval"].licence
    tac = found["theagentcompany"].results
    assert tac.fingerprint == "missing" and tac.path() is None
    assert "is not in the repository" in tac.missing and "theagentcompany is read without it" in tac.missing
    assert not (tmp_path / "data" / "downloads").exists()


def test_a_source_folder_is_read_as_given_and_your_own_folder_adds_to_either(tmp_path, source_dir):
    folder = tmp_path / "sources"
    (folder / "benchmarks").mkdir(parents=True)
    (folder / "results").mkdir()
    shutil.copy(source_dir / "benchmarks" / "cybench.jsonl", folder / "benchmarks")
    shutil.copy(source_dir / "results" / "cybench.csv", folder / "results")
    (folder / "benchmarks" / "SOURCES.md").write_text("## cybench\n- **Full name:** Cybench as given.\n- **License:** Apache-2.0.\n")
    own = tmp_path / "own"
    own.mkdir()
    (own / "mine.jsonl").write_text(json.dumps({"benchmark": "mine", "prompt_id": "1", "prompt": "Reconcile the ledger."}) + "\n")
    (own / "mine.csv").write_text("benchmark,model,prompt_id,score\nmine,m,1,1\n")
    (own / "cybench.jsonl").write_text(json.dumps({"benchmark": "cybench", "prompt_id": "x", "prompt": "Mine now."}) + "\n")

    settings = PipelineSettings.of(source_dir=str(folder), data_dir=str(tmp_path / "data")).resolve()
    found = bs.benchmark_set(settings)
    assert sorted(found) == ["cybench"]
    assert found["cybench"].prompts.path() == folder / "benchmarks" / "cybench.jsonl"
    assert found["cybench"].results.name == "results/cybench.csv" and found["cybench"].full_name == "Cybench as given."

    settings = PipelineSettings.of(source_dir=str(folder), benchmarks_dir=str(own), data_dir=str(tmp_path / "data")).resolve()
    found = bs.benchmark_set(settings)
    assert sorted(found) == ["cybench", "mine"]
    assert found["mine"].prompts.name == "benchmarks/mine.jsonl" and found["mine"].results.path() == own / "mine.csv"
    assert found["cybench"].prompts.path() == own / "cybench.jsonl"  # yours replaces the one of the same name
    assert found["mine"].licence == "no entry in SOURCES.md: licence unknown"

    settings = PipelineSettings.of(benchmarks_dir=str(own), data_dir=str(tmp_path / "data")).resolve()
    assert len(bs.benchmark_set(settings)) == 25  # the catalog's 24 (cybench replaced) and yours


def test_folder_attribution_reads_sources_md_sections(tmp_path):
    """A folder's benchmarks get their full name and licence from its SOURCES.md; a benchmark without
    a section, or a section without a licence line, says so."""
    sources = tmp_path / "SOURCES.md"
    sources.write_text("# B\n\n## alpha\n- **Full name:** Alpha Bench, 2024.\n- **License:** MIT.\n\n## beta\n- **Full name:** Beta.\n")
    found = bs.folder_attribution(sources, ["alpha", "beta", "gamma"]).set_index("benchmark")
    assert found.loc["alpha", "full_name"] == "Alpha Bench, 2024." and found.loc["alpha", "licence"] == "MIT."
    assert "not stated" in found.loc["beta", "licence"]
    assert found.loc["gamma", "full_name"] == "gamma" and "no entry" in found.loc["gamma", "licence"]
    assert list(bs.folder_attribution(tmp_path / "missing.md", ["alpha"])["licence"]) == ["no entry in missing.md: licence unknown"]


def test_the_fetched_and_local_files_are_kept_out_of_the_repository():
    """The files the licences keep out are not committed anywhere in the repository."""
    import subprocess

    tracked = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    kept_out = {e.name.rsplit("/", 1)[1] for e in bs.read_catalog().values() if e.reaches_clone != "committed"}
    names = {Path(path).name for path in tracked}
    assert kept_out and not (kept_out & names)
