"""A researcher can cite a run: CITATION.cff, and the version stamp in headline.json and the report's
footer (package version, git commit when there is one, labeler, data snapshot)."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import duckdb
import pandas as pd
import yaml

from workbank_dagster.report import headline, page
from workbank_dagster.settings import REPO_ROOT


def test_citation_cff_is_complete_and_carries_the_package_version():
    cff = yaml.safe_load((REPO_ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert {"message", "title", "authors", "version", "license", "references"} <= set(cff)
    assert str(cff["version"]) == tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert cff["license"] == "MIT"
    titles = " | ".join(ref["title"] for ref in cff["references"])
    for work in ("O*NET 29.3", "Occupational Employment and Wage Statistics, May 2024", "GPTs are GPTs", "Estimating Time Spent on Work Tasks",
                 "Future of Work with AI Agents", "How Many Jobs Can be Done at Home?", "AI benchmarks barely cover"):
        assert work in titles, work
    for ref in cff["references"]:
        assert ref["authors"] and ref["type"] in ("dataset", "article", "software"), ref["title"]


def _con(rows: list[tuple[str, str]]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("create schema marts")
    con.register("rows", pd.DataFrame(rows, columns=["file", "sha256"]))
    con.execute("create table marts.dim_source_file as select * from rows")
    return con


def test_the_data_snapshot_hashes_every_input_file_by_name_and_hash():
    rows = [("onet/a.tsv", "1" * 64), ("benchmarks/b.jsonl", "2" * 64)]
    snapshot, n = headline.data_snapshot(_con(rows))
    assert n == 2 and re.fullmatch(r"[0-9a-f]{64}", snapshot)
    assert headline.data_snapshot(_con(list(reversed(rows))))[0] == snapshot  # the order rows were loaded in does not matter
    assert headline.data_snapshot(_con([rows[0], ("benchmarks/b.jsonl", "3" * 64)]))[0] != snapshot  # one file's bytes do
    assert headline.data_snapshot(_con([rows[0], ("benchmarks/c.jsonl", "2" * 64)]))[0] != snapshot  # and its name
    assert headline.data_snapshot(duckdb.connect()) == (None, 0)


def test_the_commit_is_the_checkout_s_and_nothing_outside_one(tmp_path):
    found = headline.git_commit(REPO_ROOT)
    if (REPO_ROOT / ".git").exists():
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout.strip()
        assert found is not None and found[0] == head and isinstance(found[1], bool)
    copy = tmp_path / "copy"
    copy.mkdir()
    assert headline.git_commit(copy) is None  # not a checkout
    # A folder inside another checkout is not that checkout: no borrowed commit.
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    assert headline.git_commit(copy) is None
    assert headline.git_commit(tmp_path) is not None


def test_the_stamp_and_the_footer_name_version_commit_labeler_and_snapshot(monkeypatch):
    con = _con([("onet/a.tsv", "1" * 64)])
    monkeypatch.setattr(headline, "git_commit", lambda root=REPO_ROOT: ("abc123def4567890", True))
    stamp = headline.version_stamp(con, "embedded:m:v6")
    assert stamp["package"] == "workbank-dagster" and stamp["package_version"] == headline.package_version() is not None
    assert stamp["commit"] == "abc123def4567890" and stamp["commit_dirty"] is True
    assert stamp["labeler"] == "embedded:m:v6" and stamp["data_files"] == 1 and len(stamp["data_snapshot"]) == 64
    line = page.version_line(stamp)
    assert f"workbank-dagster {stamp['package_version']}" in line and "commit abc123def456 with uncommitted changes" in line
    assert "labeler embedded:m:v6" in line and f"data snapshot sha256:{stamp['data_snapshot'][:16]} (1 input files)" in line
    # Outside a git checkout the stamp has no commit at all, and the footer says none.
    monkeypatch.setattr(headline, "git_commit", lambda root=REPO_ROOT: None)
    stamp = headline.version_stamp(con, "embedded:m:v6")
    assert "commit" not in stamp and "commit_dirty" not in stamp
    assert "commit" not in page.version_line(stamp)


def test_no_page_or_module_points_outside_the_repository():
    """The specification is docs/method.md; nothing in the README, docs/ or the package points to a
    file outside the repository (the shared folder's METHOD.md, a DEVELOPERS.md), except the
    optional yardsticks that stay outside (labels_dev, benchmark_intent), which runs skip."""
    files = [REPO_ROOT / "README.md", REPO_ROOT / "pyproject.toml", *sorted((REPO_ROOT / "docs").glob("*.md")),
             *sorted((REPO_ROOT / "workbank_dagster").rglob("*.py")), *sorted((REPO_ROOT / "workbank_dagster").rglob("*.j2"))]
    found = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            outside = "../shared" in line and not re.search(r"labels_dev|benchmark_intent", line)
            if outside or "DEVELOPERS.md" in line or re.search(r"(?<![/\w])METHOD\.md", line):
                found.append(f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()[:100]}")
    assert found == []
    assert (REPO_ROOT / "docs" / "method.md").is_file()
    assert Path(REPO_ROOT / "CITATION.cff").is_file()
