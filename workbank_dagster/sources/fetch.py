"""Every source file by its pinned SHA-256: from the download cache, a local copy, or its upstream.

Two kinds of pinned file, resolved the same way (`Resolver.path`):

- **Reference files** (`UPSTREAMS`: O*NET, OEWS, SOC, the BLS crosswalks, Eloundou et al., the time
  shares, WORKBank, Dingel & Neiman). Each names a public repository, the commit its folder's
  SOURCES.md pins, the file's path there and the SHA-256 of its bytes, checked when it is
  downloaded. Files that a local copy holds "converted by us" (TSV/CSV exports of workbooks) are
  rebuilt here in code from the downloaded workbook, and the conversion is checked against the
  SHA-256 of the converted file (`target_sha256`), so the parsers read the same bytes either way.
- **Benchmark recipes** (`Recipe`, one per row of `benchmarks/catalog.csv` whose licence does not
  let the repository carry the file): the upstream file(s) at a pinned commit or package version,
  the converter that turns them into our JSONL or CSV (`recipes.py`), and the SHA-256 of what it
  writes. The upstream files themselves are not pinned (a mirror may hold them re-encoded): what the
  pipeline reads is.

`Resolver.path` looks, in order, in the download cache (`<download_dir>/<target>`), then in the
local copy (the folder `shared/data` beside the repository, when it exists: `settings.default_source_dir`),
and takes the first copy whose SHA-256 is the pinned one; only then it downloads. Every download is
written to a temporary file and renamed into place once complete and checked: a refused hash, a
truncated body or an HTTP error is one `SourceFormatError` naming the file and the URL, and leaves
nothing behind (a recipe's upstream files are kept only once its conversion is accepted, so a
failed or refused recipe is fetched again next time rather than trusted).

Hosts are settings: `upstream_base` serves `<repository>/<commit>/<path>` (GitHub's raw-content
host by default) and `pypi_base` serves `<path>` of a wheel (files.pythonhosted.org); the fetch
test points both at a mirror on 127.0.0.1.
"""

from __future__ import annotations

import csv
import http.client
import logging
import shutil
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..atomic import atomic_path
from ..common import file_sha256
from ..settings import Settings, default_source_dir
from .validate import SourceFormatError

log = logging.getLogger(__name__)

GITHUB, PYPI = "github", "pypi"


@dataclass(frozen=True)
class Upstream:
    """A reference file: where its bytes come from, and the SHA-256 the parsers may read."""

    target: str  # the path the parsers read, relative to a source folder (and to the download folder)
    repo: str
    commit: str
    path: str  # inside the repository
    sha256: str  # of the upstream file's bytes
    convert: Callable[[Path, Path], None] | None = None  # upstream file -> target, when not a byte copy
    target_sha256: str | None = None  # of the converted file (a byte copy: sha256)

    @property
    def pinned(self) -> str:
        """The SHA-256 of the file the parsers read."""
        return self.target_sha256 or self.sha256

    def url(self, base: str) -> str:
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{urllib.parse.quote(self.path)}"


@dataclass(frozen=True)
class Recipe:
    """A benchmark file fetched and converted in code (a row of benchmarks/catalog.csv)."""

    target: str  # benchmarks/<slug>.jsonl or results/<slug>.csv
    sha256: str  # of the converted file
    host: str  # github | pypi
    repository: str  # owner/name, or the PyPI package
    revision: str  # the commit, or the package version
    paths: tuple[str, ...]  # upstream files: inside the repository, or a wheel's path on the PyPI host
    member: str  # the file inside the wheel (pypi), else ""
    converter: str  # a name of recipes.CONVERTERS

    @property
    def pinned(self) -> str:
        return self.sha256

    def served_path(self, path: str) -> str:
        """An upstream file's path on its host: `<repository>/<revision>/<path>` on GitHub's, the
        wheel's `packages/…` path on PyPI's."""
        return path if self.host == PYPI else f"{self.repository}/{self.revision}/{path}"

    def url(self, path: str, bases: Mapping[str, str]) -> str:
        return f"{bases[self.host].rstrip('/')}/{urllib.parse.quote(self.served_path(path))}"

    def raw_path(self, path: str) -> Path:
        """Where a download of `path` lies, under the download folder's `_upstream/`."""
        return Path(PYPI) / path if self.host == PYPI else Path(self.served_path(path))


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
             "44e9ce8d46eec806a369fe3e0a9f72c0b0ca1c334270640e22bb43278b55a28d", xlsx_to_tsv,
             "2fd4a8b210fe534f9b10daa4152697832488e420e41b330d5a8b486dafef0699"),
    Upstream("onet/occupation_data_29_3.tsv", *ONET_REPO, "data/Occupation Data.xlsx",
             "13b2aa4c08e6c9a3708d5e5ac83e13da5cc184e3798313c8942a266d00593ace", xlsx_to_tsv,
             "164236c5e0f1d16bfbafe017a16f20a993948cc4b1534d1da631652c81708f0f"),
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
             "national_M2024_dl.xlsx", "accad8fea8ff8b70180c80a127a2b43f8fd9b819a058ca86024e14d33ab4f0ea", oews_xlsx_to_csv,
             "0b7eb656e3489498bab20616e526075eb5c3f4c008528c87cc50bb70b4e59771"),
    Upstream("bls/soc/soc_2018_major_groups.csv", "zapplecat/vinlander", "11761830842305cdedbba7dfd50ae1afb55fa2d8",
             "data/soc_structure_2018.xlsx", "ade08af40923266f3a854842e888ca3e93c15b26a147c20a2b12a61f4c4f4077", soc_major_groups,
             "27eaaf9249dc1c228060cfff988c3ca77147e4cc53ec82fbefb8d80f8d4430ec"),
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


def download(url: str, destination: Path, timeout: float) -> None:
    """`url`'s body into `destination`, whole or not at all: an HTTP error, a refused connection or
    a body shorter than its Content-Length raises OSError and leaves no file."""
    request = urllib.request.Request(url, headers={"User-Agent": "workbank-dagster"})
    try:
        with atomic_path(destination) as partial:
            with urllib.request.urlopen(request, timeout=timeout) as response, open(partial, "wb") as handle:
                announced = response.headers.get("Content-Length")
                received = 0
                while block := response.read(1 << 20):
                    handle.write(block)
                    received += len(block)
            if announced is not None and received != int(announced):
                raise OSError(f"truncated: {received:,} of {int(announced):,} bytes received")
    except http.client.IncompleteRead as exc:
        raise OSError(f"truncated: {len(exc.partial):,} bytes received, {exc.expected:,} more expected") from None
    except http.client.HTTPException as exc:
        raise OSError(f"{type(exc).__name__}: {exc}") from None


def _write_checked(target: Path, write: Callable[[Path], None], pinned: str, what: str, url: str) -> None:
    """`write(temporary file)`, then the file renamed to `target` if its SHA-256 is `pinned`, else
    deleted and one error naming the target and the URL."""
    with atomic_path(target) as partial:
        write(partial)
        digest = file_sha256(partial)
        if digest != pinned:
            raise SourceFormatError(target, f"{what} of {url} has the wrong SHA-256", expected=pinned, found=digest)


@dataclass(frozen=True)
class Resolver:
    """Where pinned files are looked up and fetched to (see the module docstring)."""

    download_dir: Path
    local_dir: Path | None  # a local copy of the sources' layout, read where a file has its pinned SHA-256
    bases: Mapping[str, str]  # host -> base URL
    timeout: float = 120.0

    @classmethod
    def of(cls, settings: Settings) -> Resolver:
        """The pinned sources' resolver of the settings: their download folder and hosts, and the
        local copy (`settings.default_source_dir`) when it exists."""
        return cls(settings.download_dir, default_source_dir(), {GITHUB: settings.upstream_base, PYPI: settings.pypi_base})

    def path(self, item: Upstream | Recipe) -> Path:
        """The local path of `item`'s pinned bytes: the cached copy, the local copy, or a download."""
        cached = self.download_dir / item.target
        if cached.is_file() and file_sha256(cached) == item.pinned:
            return cached
        if self.local_dir is not None:
            local = self.local_dir / item.target
            if local.is_file():
                digest = file_sha256(local)
                if digest == item.pinned:
                    return local
                log.warning(f"{local}: SHA-256 {digest[:16]}…, not the pinned {item.pinned[:16]}…: fetching the pinned file instead")
        if isinstance(item, Upstream):
            self._fetch_upstream(item, cached)
        else:
            self._fetch_recipe(item, cached)
        return cached

    def _download(self, url: str, raw: Path, expected: str) -> None:
        try:
            download(url, raw, self.timeout)
        except OSError as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError) else exc
            raise SourceFormatError(url, f"download failed ({reason})", expected=expected) from None

    def _fetch_upstream(self, upstream: Upstream, cached: Path) -> None:
        url = upstream.url(self.bases[GITHUB])
        raw = self.download_dir / "_upstream" / upstream.repo / upstream.commit / upstream.path
        if not (raw.is_file() and file_sha256(raw) == upstream.sha256):
            self._download(url, raw, f"{upstream.target}: the file {upstream.path} of {upstream.repo}@{upstream.commit[:8]}")
            digest = file_sha256(raw)
            if digest != upstream.sha256:
                raw.unlink()
                raise SourceFormatError(url, f"downloaded file for {upstream.target} has the wrong SHA-256", expected=upstream.sha256, found=digest)
        if upstream.convert is None:
            _write_checked(cached, lambda partial: shutil.copyfile(raw, partial), upstream.pinned, "the copy", url)
        else:
            _write_checked(cached, lambda partial: upstream.convert(raw, partial), upstream.pinned, "the conversion", url)

    def _fetch_recipe(self, recipe: Recipe, cached: Path) -> None:
        from .recipes import CONVERTERS

        raws = {path: self.download_dir / "_upstream" / recipe.raw_path(path) for path in recipe.paths}
        try:
            for path, raw in raws.items():
                if not raw.is_file():
                    self._download(recipe.url(path, self.bases), raw, f"{recipe.target}: the file {path} of {recipe.repository} {recipe.revision}")
        except SourceFormatError:
            _forget(raws.values())  # a recipe's downloads are kept only once its conversion is accepted
            raise
        first = recipe.url(recipe.paths[0], self.bases)
        where = first if len(recipe.paths) == 1 else f"{first} and {len(recipe.paths) - 1} more files of {recipe.repository} {recipe.revision}"
        try:
            files = {path: _member(raw, recipe.member) for path, raw in raws.items()}
            converted = CONVERTERS[recipe.converter](files, Path(recipe.target).stem)
        except (KeyError, ValueError, zipfile.BadZipFile) as exc:
            _forget(raws.values())
            raise SourceFormatError(cached, f"converting {where} failed ({type(exc).__name__}: {exc})") from None
        try:
            _write_checked(cached, lambda partial: partial.write_bytes(converted), recipe.sha256, "the conversion", where)
        except SourceFormatError:
            _forget(raws.values())  # a wrong file upstream (or in between) is not kept to be trusted next time
            raise


def _member(raw: Path, member: str) -> bytes:
    """The bytes of a download, or of one file inside it (a wheel)."""
    if not member:
        return raw.read_bytes()
    with zipfile.ZipFile(raw) as archive:
        return archive.read(member)


def _forget(paths) -> None:
    for path in paths:
        Path(path).unlink(missing_ok=True)


def fetch_all(resolver: Resolver) -> list[Path]:
    """Every reference file's local path (UPSTREAMS' order), fetched where needed."""
    return [resolver.path(u) for u in UPSTREAMS]


__all__ = ["UPSTREAMS", "Recipe", "Resolver", "Upstream", "fetch_all"]
