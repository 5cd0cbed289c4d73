"""Each benchmark's instruction text comes from the source its record names (#38).

Every record of benchmarks/instructions.jsonl names a pinned source: a repository commit and path,
and/or a PyPI package version, file and path inside it. The text must be verbatim there (each
segment a substring of the file's text once whitespace is normalised, as the record stores it).

- A record with a PyPI location is checked against that package, downloaded from PyPI here
  (`pip download`, the registry CI installs from): the archive's SHA-256 is the recorded one, and the
  text is in the named file (whose SHA-256 is the record's `source_sha256` when the package is the
  only source).
- A record with a repository source is checked against that file at that commit: from GitHub's
  raw-content host when it answers, else from a local copy of the repository (a bare git directory
  per `owner+name` under WORKBANK_INSTRUCTION_MIRRORS, or of the fork `read_from` names, which
  carries the repository's history unchanged); with neither, those records are skipped with
  the reason. CI reaches only package registries: there the records with a PyPI location are
  checked; every record was checked against its repository when the file was made (with the local
  copies of this project's sessions; the closing note of #38 says so).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from pathlib import Path

import pytest

from workbank_dagster.settings import REPO_ROOT
from workbank_dagster.sources.instructions import read_instructions

FILE = REPO_ROOT / "benchmarks" / "instructions.jsonl"
RECORDS = [json.loads(line) for line in FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
HEX40, HEX64 = set("0123456789abcdef"), set("0123456789abcdef")


def _segments(record: dict) -> list[str]:
    text = record["text"]
    return [" ".join(s.split()) for s in ([text] if isinstance(text, str) else text)]


def _contains(source: bytes, record: dict) -> bool:
    flat = " ".join(source.decode("utf-8").split())
    return all(segment in flat for segment in _segments(record))


def test_every_benchmark_has_a_record_and_every_record_a_pinned_source():
    assert len(read_instructions(FILE)) == len(RECORDS)
    for record in RECORDS:
        source, pypi = record.get("source"), record.get("pypi")
        assert source or pypi, record["benchmark"]
        if source:
            assert len(source["commit"]) == 40 and set(source["commit"]) <= HEX40, record["benchmark"]
            assert source["repo"].count("/") == 1 and source["path"] and source.get("licence"), record["benchmark"]
        if pypi:
            assert pypi["version"] and pypi["path"] and pypi["filename"] and len(pypi["sha256"]) == 64, record["benchmark"]
        assert len(record["source_sha256"]) == 64 and set(record["source_sha256"]) <= HEX64, record["benchmark"]


@pytest.fixture(scope="module")
def pypi_archives(tmp_path_factory) -> dict[str, Path]:
    """Every package the records name, downloaded once from PyPI, by file name."""
    folder = tmp_path_factory.mktemp("pypi")
    wanted = sorted({(r["pypi"]["package"], r["pypi"]["version"], r["pypi"]["filename"]) for r in RECORDS if r.get("pypi")})
    for package, version, filename in wanted:
        kind = ["--no-binary", package] if filename.endswith((".tar.gz", ".zip")) and not filename.endswith(".whl") else ["--only-binary", ":all:"]
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"{package}=={version}", "--no-deps", *kind, "-d", str(folder), "-q"],
            check=True, capture_output=True, timeout=600,
        )
    return {path.name: path for path in folder.iterdir()}


def _member(archive: Path, inner: str) -> bytes:
    if archive.name.endswith(".whl"):
        with zipfile.ZipFile(archive) as handle:
            return handle.read(inner)
    with tarfile.open(archive) as handle:
        return handle.extractfile(inner).read()


@pytest.mark.parametrize("record", [r for r in RECORDS if r.get("pypi")], ids=lambda r: r["benchmark"])
def test_a_text_from_pypi_is_verbatim_in_its_pinned_package(record, pypi_archives):
    pypi = record["pypi"]
    archive = pypi_archives.get(pypi["filename"])
    assert archive is not None, f"PyPI did not give {pypi['filename']} for {pypi['package']}=={pypi['version']}"
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == pypi["sha256"], f"{archive.name}: not the recorded bytes"
    member = _member(archive, pypi["path"])
    assert _contains(member, record), f"{record['benchmark']}: text not in {pypi['package']}=={pypi['version']}:{pypi['path']}"
    if not record.get("source"):
        assert hashlib.sha256(member).hexdigest() == record["source_sha256"]


def _from_repository(source: dict) -> bytes | None:
    url = f"https://raw.githubusercontent.com/{source['repo']}/{source['commit']}/{source['path']}"
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.read()
    except OSError:
        pass
    mirrors = os.environ.get("WORKBANK_INSTRUCTION_MIRRORS")
    if mirrors:
        # `read_from`: a fork that carries the repository's history unchanged, where the file was read.
        for repo in (source["repo"], source.get("read_from")):
            git_dir = Path(mirrors) / str(repo).replace("/", "+") / "repo"
            shown = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{source['commit']}:{source['path']}"], capture_output=True)
            if repo and shown.returncode == 0:
                return shown.stdout
    return None


@pytest.mark.parametrize("record", [r for r in RECORDS if r.get("source")], ids=lambda r: r["benchmark"])
def test_a_text_from_a_repository_is_verbatim_at_its_pinned_commit(record):
    source = record["source"]
    found = _from_repository(source)
    if found is None:
        pytest.skip(f"{source['repo']}@{source['commit'][:12]}: GitHub not reachable and no local copy (WORKBANK_INSTRUCTION_MIRRORS)")
    assert hashlib.sha256(found).hexdigest() == record["source_sha256"], f"{source['repo']}:{source['path']}: not the recorded file"
    assert _contains(found, record), f"{record['benchmark']}: text not in {source['repo']}@{source['commit']}:{source['path']}"
