"""The no-source-folder path: download pinned upstream files from a real local HTTP server, check
SHA-256, convert workbooks in code, and get byte-identical tables to the shared folder's."""

from __future__ import annotations

import http.server
import os
import threading
from dataclasses import replace
from functools import partial
from pathlib import Path

import dagster as dg
import pytest

from workbank_dagster import warehouse
from workbank_dagster.common import file_sha256
from workbank_dagster.resources import Warehouse
from workbank_dagster.settings import PipelineSettings
from workbank_dagster.sources.assets import file_assets, raw_assets
from workbank_dagster.sources.fetch import UPSTREAMS, ensure_source, fetch_all
from workbank_dagster.sources.validate import SourceFormatError

# Where each upstream file's bytes lie in the shared folder (converted targets come from their workbook).
LOCAL_ORIGINAL = {
    "onet/task_statements_29_3.tsv": "onet/db_29_3_excel/Task Statements.xlsx",
    "onet/occupation_data_29_3.tsv": "onet/db_29_3_excel/Occupation Data.xlsx",
    "bls/oews/national_M2024_dl.csv": "bls/oews/national_M2024_dl.xlsx",
    "bls/soc/soc_2018_major_groups.csv": "bls/soc/soc_structure_2018.xlsx",
}


class _Handler(http.server.SimpleHTTPRequestHandler):
    requests: list[str] = []

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        type(self).requests.append(self.path)
        super().do_GET()


@pytest.fixture()
def upstream_server(tmp_path, source_dir):
    """A mirror laid out as <repo>/<commit>/<path>, served on 127.0.0.1."""
    root = tmp_path / "mirror"
    for upstream in UPSTREAMS:
        destination = root / upstream.repo / upstream.commit / upstream.path
        destination.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(source_dir / LOCAL_ORIGINAL.get(upstream.target, upstream.target), destination)
    _Handler.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"base": f"http://127.0.0.1:{server.server_address[1]}", "root": root, "handler": _Handler}
    finally:
        server.shutdown()
        server.server_close()


def test_fetch_reproduces_the_shared_files_byte_for_byte(upstream_server, tmp_path, source_dir):
    paths = fetch_all(tmp_path / "downloads", base=upstream_server["base"])
    assert len(paths) == len(UPSTREAMS) == 20
    for upstream, path in zip(UPSTREAMS, paths):
        assert file_sha256(path) == file_sha256(source_dir / upstream.target), upstream.target
    # Cached: a second fetch downloads nothing.
    served = len(upstream_server["handler"].requests)
    fetch_all(tmp_path / "downloads", base=upstream_server["base"])
    assert len(upstream_server["handler"].requests) == served


def test_fetch_refuses_a_file_with_the_wrong_hash(upstream_server, tmp_path):
    upstream = next(u for u in UPSTREAMS if u.target == "exposure/occ_level.csv")
    served = upstream_server["root"] / upstream.repo / upstream.commit / upstream.path
    served.unlink()
    served.write_text("O*NET-SOC Code,Title\n11-1011.00,tampered\n")
    with pytest.raises(SourceFormatError, match="wrong SHA-256"):
        ensure_source(upstream.target, tmp_path / "downloads", base=upstream_server["base"])
    assert not (tmp_path / "downloads" / upstream.target).exists()


def test_fetch_names_the_missing_file(upstream_server, tmp_path):
    upstream = UPSTREAMS[0]
    (upstream_server["root"] / upstream.repo / upstream.commit / upstream.path).unlink()
    with pytest.raises(SourceFormatError, match="download failed"):
        ensure_source(upstream.target, tmp_path / "downloads", base=upstream_server["base"])


def test_source_assets_in_fetch_mode(upstream_server, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBANK_SOURCE_DIR", "fetch")
    monkeypatch.setenv("WORKBANK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("WORKBANK_UPSTREAM_BASE", upstream_server["base"])
    db = tmp_path / "data" / "warehouse.duckdb"
    # Two sources stand for all: every file's download is checked byte for byte above, and a fetched
    # file is read by the same asset as a local one (the full-data run materializes every raw asset).
    selection = [dg.AssetKey([prefix, table]) for prefix in ("files", "raw") for table in ("onet_task_statements", "oews_national")]
    result = dg.materialize(
        [*file_assets, *raw_assets], selection=selection, resources={"warehouse_db": Warehouse(db), "pipeline_settings": PipelineSettings.from_env()}
    )
    assert result.success
    with warehouse.connect(db) as con:
        assert con.execute("select count(*) from raw.onet_task_statements").fetchone()[0] == 18_796
        assert con.execute("select count(*) from raw.oews_national where o_group = 'detailed'").fetchone()[0] == 831
    # The workbook's conversion lies under its key (fetch.conversion_key), in the download folder.
    assert len(list((tmp_path / "data" / "downloads" / "_converted").glob("*/onet/task_statements_29_3.tsv"))) == 1


def test_a_conversion_is_made_again_when_its_converter_changes_and_only_then(upstream_server, tmp_path, monkeypatch):
    """The converted file is keyed by what it is made from (fetch.conversion_key). Its modification
    time decided before: a changed converter was not run again (the old conversion was newer than
    the download), and a download touched after the conversion was converted again for nothing."""
    from workbank_dagster.sources import fetch

    upstream = next(u for u in UPSTREAMS if u.convert is not None)
    downloads = tmp_path / "downloads"
    calls: list[str] = []

    def counting(source: Path, target: Path) -> None:
        calls.append("counting")
        upstream.convert(source, target)

    def changed(source: Path, target: Path) -> None:
        calls.append("changed")
        target.write_text("a changed converter's output\n")

    monkeypatch.setitem(fetch.UPSTREAM_BY_TARGET, upstream.target, replace(upstream, convert=counting))
    first = ensure_source(upstream.target, downloads, base=upstream_server["base"])
    assert calls == ["counting"] and first.name == Path(upstream.target).name
    # The download touched, after the conversion: nothing to convert again.
    download = downloads / "_upstream" / upstream.repo / upstream.commit / upstream.path
    later = first.stat().st_mtime + 60
    os.utime(download, (later, later))
    assert ensure_source(upstream.target, downloads, base=upstream_server["base"]) == first
    assert calls == ["counting"]
    # A changed converter: its own file, made by it, whatever the times say.
    monkeypatch.setitem(fetch.UPSTREAM_BY_TARGET, upstream.target, replace(upstream, convert=changed))
    second = ensure_source(upstream.target, downloads, base=upstream_server["base"])
    assert calls == ["counting", "changed"]
    assert second != first and second.read_text() == "a changed converter's output\n"
    assert first.is_file()  # the first conversion stays, as any content-addressed entry
