"""Fetch the reference sources from their pinned upstream copies when no source folder is configured.

Every entry names a public repository, the commit SOURCES.md pins, the file's path there and the
SHA-256 of its bytes. A download whose hash differs is refused. Files that the shared folder holds
"converted by us" (TSV/CSV exports of workbooks) are rebuilt here in code from the downloaded
workbook, in the same format, so the parsers read the same tables either way.

Both are content-addressed, like the embedding and judgement stores: a download lies under the
repository, commit and path it came from and is checked against its SHA-256; a conversion lies under
`_converted/<key>/`, where the key is that SHA-256 and the converting code (`conversion_key`). A
changed converter writes a new file, and an old one is never taken for it (its modification time
decided this before, and missed a changed converter).

Benchmark prompts and model results are assembled from two dozen repositories and packages
(benchmarks/SOURCES.md); there is no single upstream file to fetch, so they always come from a
local folder (`<source dir>/benchmarks`, `<source dir>/results`).

The upstream base URL is the setting `upstream_base` (`WORKBANK_UPSTREAM_BASE`, default GitHub's
raw-content host); tests point it at a local HTTP server. This path has not been run against the real hosts from this machine,
which reaches only package registries.
"""

from __future__ import annotations

import csv
import hashlib
import inspect
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..common import file_sha256
from ..fingerprint import code_sha256
from .validate import SourceFormatError


@dataclass(frozen=True)
class Upstream:
    target: str  # the path the parsers read, relative to the source folder
    repo: str
    commit: str
    path: str  # inside the repository
    sha256: str  # of the upstream file's bytes
    convert: Callable[[Path, Path], None] | None = None  # upstream file -> target, when not a byte copy

    def url(self, base: str) -> str:
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{urllib.parse.quote(self.path)}"


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _write_rows(rows, target: Path, delimiter: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", encoding="utf-8", newline="") as handle:
        if delimiter == "\t":
            for row in rows:
                handle.write("\t".join(_cell_text(v) for v in row) + "\n")
        else:
            writer = csv.writer(handle, lineterminator="\n")
            for row in rows:
                writer.writerow([_cell_text(v) for v in row])


def _sheet_rows(path: Path, sheet: str | None = None):
    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        ws = book[sheet] if sheet else book.worksheets[0]
        return [list(row) for row in ws.iter_rows(values_only=True)]
    finally:
        book.close()


def xlsx_to_tsv(source: Path, target: Path) -> None:
    """First sheet as TSV: integers without decimals, empty cells empty, no quoting (onet/SOURCES.md)."""
    _write_rows(_sheet_rows(source), target, "\t")


def oews_xlsx_to_csv(source: Path, target: Path) -> None:
    """Sheet national_M2024_dl as CSV, numbers as stored, BLS symbols kept (bls/SOURCES.md)."""
    _write_rows(_sheet_rows(source, "national_M2024_dl"), target, ",")


def soc_major_groups(source: Path, target: Path) -> None:
    """The Major Group rows of the 2018 SOC structure (header on row 8)."""
    rows = _sheet_rows(source, "2018 Structure")
    header_index = next(i for i, row in enumerate(rows) if row and row[0] == "Major Group")
    out = [["soc_major_group_code", "soc_major_group_title"]]
    for row in rows[header_index + 1 :]:
        if row and row[0] and all(v is None for v in row[1:4]):
            out.append([row[0], row[4]])
    _write_rows(out, target, ",")


ONET_REPO = ("eugene-maina72/Phase_5_Capstone_Project-SmartPath", "826ec4e0f0bc73ac117fcb7d38230ccb0b27519d")
ELOUNDOU_HEAD = ("openai/GPTs-are-GPTs", "0471612fef3cc22b74fb884d27bff9dbd3770582")
WORKBANK_REPO = ("yn-09/Data_visualization", "8b39757a6bb04a5de03c36520060c54ed2c3459f")

UPSTREAMS: tuple[Upstream, ...] = (
    Upstream("onet/task_statements_29_3.tsv", *ONET_REPO, "data/Task Statements.xlsx",
             "44e9ce8d46eec806a369fe3e0a9f72c0b0ca1c334270640e22bb43278b55a28d", xlsx_to_tsv),
    Upstream("onet/occupation_data_29_3.tsv", *ONET_REPO, "data/Occupation Data.xlsx",
             "13b2aa4c08e6c9a3708d5e5ac83e13da5cc184e3798313c8942a266d00593ace", xlsx_to_tsv),
    Upstream("onet/db_29_3_excel/Alternate Titles.xlsx", *ONET_REPO, "data/Alternate Titles.xlsx",
             "2dd1ee54ed76a005e099cfb19ac7afea3bcd0528f1c919330f23f80d22d6ef77"),
    Upstream("onet/db_29_3_excel/Sample of Reported Titles.xlsx", *ONET_REPO, "data/Sample of Reported Titles.xlsx",
             "d94f9cac64d72b200af085cd9ce8d90090af2ad1b3db6b2e6b0d5e7908de87a8"),
    Upstream("onet/db_29_3_excel/Technology Skills.xlsx", *ONET_REPO, "data/Technology Skills.xlsx",
             "ed39ff225e4c17dbaea338e6fe565e477cfaa617b99b15c985640fc9e8e52083"),
    Upstream("onet/db_29_3_excel/Related Occupations.xlsx", *ONET_REPO, "data/Related Occupations.xlsx",
             "47c929b55153bde8c13ea8630a9834223eed3246cd77faf9d062536af8c9cd3f"),
    Upstream("onet/db_29_3_excel/Tasks to DWAs.xlsx", *ONET_REPO, "data/Tasks to DWAs.xlsx",
             "159c477138b692754cf0c7dd8adeb4646f594a35cbc101250ee9ff947e365fa3"),
    Upstream("onet/db_29_3_excel/DWA Reference.xlsx", *ONET_REPO, "data/DWA Reference.xlsx",
             "2bc21199fec3dc2cdd26b0511e2c79461db07efd209be16f422ad37788ee4fcb"),
    Upstream("onet/task_ratings_IM_only_db_29.csv", "emmanuelwunjc/AI-Work-Displacement", "4357c8c87c115574969f42e98a07938ac0b705d7",
             "external/onet_task_ratings.csv", "f5a7cbd0a857ab2b45f459da153a472dd185433ae170b72b02c18fe4b96b0774"),
    Upstream("onet/dingel_neiman/occupations_workathome.csv", "jdingel/DingelNeiman-workathome", "3ebab4f646ed45b01162ecd7794f00a518932c53",
             "occ_onet_scores/output/occupations_workathome.csv", "42ff3ae084478b554526671710b53a16d39f88c3eebb24f56f46372d7243bd40"),
    Upstream("bls/oews/national_M2024_dl.csv", "jj-squared/AI_jobs_impact", "33fd992d4a8d55ee3fb72a9c69f5a5816b0b8cf1",
             "national_M2024_dl.xlsx", "accad8fea8ff8b70180c80a127a2b43f8fd9b819a058ca86024e14d33ab4f0ea", oews_xlsx_to_csv),
    Upstream("bls/soc/soc_2018_major_groups.csv", "zapplecat/vinlander", "11761830842305cdedbba7dfd50ae1afb55fa2d8",
             "data/soc_structure_2018.xlsx", "ade08af40923266f3a854842e888ca3e93c15b26a147c20a2b12a61f4c4f4077", soc_major_groups),
    Upstream("bls/crosswalks/nem-onet-to-soc-crosswalk.xlsx", "openai/GPTs-are-GPTs", "36af7ac78d218158fd2070bd8775c86a99f222da",
             "data/nem-onet-to-soc-crosswalk.xlsx", "5aac9713a7e73b428819b20e3b895c97adbf09b4b59ac8c9423a340dbe129a4a"),
    Upstream("bls/crosswalks/soc_2010_to_2018_crosswalk.csv", "sidsatya/ailabor", "59360056746a97da547282800553833a9f2a7f99",
             "data/occsoc_crosswalks/soc_2010_to_2018_crosswalk.csv", "69d6fc111c2dd41c22179ad85b27c27b5054db17609f2636041366dd58a0b059"),
    Upstream("exposure/full_labelset.tsv", *ELOUNDOU_HEAD, "data/full_labelset.tsv",
             "094378905e1f3349e50a9a83dc69643a2ef227954d611c8316a46da08cb3d8de"),
    Upstream("exposure/occ_level.csv", *ELOUNDOU_HEAD, "data/occ_level.csv",
             "40c74f53de40aec91c0017d80690cbba915f83a8bb414bcf2f884692f1749acb"),
    Upstream("timeshare/task_time_share_estimates.xlsx", "Stephanehk/Estimating-Time-Spent-On-Work", "c71f6e551f3d41ea85bcd06010779308ce1bdece",
             "task_time_share_estimates.xlsx", "6e754906c5e7657a520645749221c1b7ac62b4d04deee23fda014aaebb8b6fc4"),
    Upstream("workbank/domain_worker_desires.csv", *WORKBANK_REPO, "domain_worker_desires.csv",
             "58e969946a4620bc2f8d1ebed954bfd60daf5798f851df32e79951d2f8b536a2"),
    Upstream("workbank/expert_rated_technological_capability.csv", *WORKBANK_REPO, "expert_rated_technological_capability.csv",
             "3af00c0c69043cdd0f023fa56f0e076fdd7bb117bed64e046edd234be28197df"),
    Upstream("workbank/task_statement_with_metadata.csv", *WORKBANK_REPO, "task_statement_with_metadata.csv",
             "25d67da26125b2c4008c9e9f1590ed4769969f8e19656043bf48be6ef4700d24"),
)
UPSTREAM_BY_TARGET = {u.target: u for u in UPSTREAMS}


def _download(url: str, destination: Path, timeout: float) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(destination.name + ".part")
    request = urllib.request.Request(url, headers={"User-Agent": "workbank-dagster"})
    with urllib.request.urlopen(request, timeout=timeout) as response, open(partial, "wb") as handle:
        while block := response.read(1 << 20):
            handle.write(block)
    partial.replace(destination)


def conversion_key(upstream: Upstream) -> str:
    """What a converted file is made from: the upstream file's SHA-256, this module's code (and what
    it imports) and the converter's own source (a converter may live elsewhere)."""
    assert upstream.convert is not None
    digest = hashlib.sha256()
    for part in (upstream.sha256, upstream.target, code_sha256(__name__), inspect.getsource(upstream.convert)):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def ensure_source(target: str, download_dir: Path, *, base: str, timeout: float = 120.0) -> Path:
    """The local path of `target`, downloading, checking and converting it first if needed: the
    checked copy for a byte copy, the conversion of this key (`conversion_key`) for a converted file."""
    upstream = UPSTREAM_BY_TARGET.get(target)
    local = download_dir / target
    if upstream is None:
        return local  # benchmarks/results: local only
    raw = download_dir / "_upstream" / upstream.repo / upstream.commit / upstream.path
    if not (raw.is_file() and file_sha256(raw) == upstream.sha256):
        url = upstream.url(base)
        try:
            _download(url, raw, timeout)
        except OSError as exc:
            raise SourceFormatError(url, f"download failed ({exc})", expected=f"the file {upstream.path} of {upstream.repo}@{upstream.commit[:8]}") from None
        digest = file_sha256(raw)
        if digest != upstream.sha256:
            raw.unlink()
            raise SourceFormatError(url, "downloaded file has the wrong SHA-256", expected=upstream.sha256, found=digest)
    if upstream.convert is None:
        if not (local.is_file() and file_sha256(local) == upstream.sha256):
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_bytes(raw.read_bytes())
        return local
    converted = download_dir / "_converted" / conversion_key(upstream)[:16] / target
    if not converted.is_file():
        converted.parent.mkdir(parents=True, exist_ok=True)
        partial = converted.with_name(converted.name + ".part")
        upstream.convert(raw, partial)
        partial.replace(converted)
    return converted


def fetch_all(download_dir: Path, *, base: str) -> list[Path]:
    return [ensure_source(u.target, download_dir, base=base) for u in UPSTREAMS]


__all__ = ["UPSTREAMS", "ensure_source", "fetch_all"]
