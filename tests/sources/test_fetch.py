"""The pinned sources, proven against a mirror of the upstream hosts on 127.0.0.1.

The mirror (tests/support/upstream_mirror.py) is a real HTTP server in a process of its own, which
each test starts and stops by its pid. It serves the reference files' upstream bytes from the shared
data folder, and each benchmark recipe's upstream files in their upstream format, written from the
shared JSONL or CSV (the module docstring there says how, file by file).

The clone test is issue #39's proof: a `git clone` of the repository's committed HEAD, alone in a
temporary folder, fetches every pinned file from the mirror (each SHA-256 the pinned one, each file
byte-identical to the shared copy), then runs the pipeline from what it fetched to headline.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workbank_dagster.common import file_sha256
from workbank_dagster.settings import REPO_ROOT
from workbank_dagster.sources.benchmark_set import read_catalog
from workbank_dagster.sources.fetch import GITHUB, PYPI, UPSTREAM_BY_TARGET, UPSTREAMS, Resolver
from workbank_dagster.sources.validate import SourceFormatError

pytestmark = pytest.mark.fetch


@pytest.fixture(scope="module")
def mirror_root(tmp_path_factory, source_dir) -> Path:
    """Every upstream file of the reference files and the recipes, laid out as the hosts serve them."""
    from upstream_mirror import build_mirror

    return build_mirror(source_dir, tmp_path_factory.mktemp("hosts") / "mirror")


@pytest.fixture()
def small_mirror(tmp_path, source_dir):
    """A mirror of a few files (one reference file, two recipes) that a test may break; its server
    stopped, by pid, when the test ends."""
    from upstream_mirror import Mirror, recipe_upstream

    root = tmp_path / "mirror"
    occ = UPSTREAM_BY_TARGET["exposure/occ_level.csv"]
    served = root / GITHUB / occ.repo / occ.commit / occ.path
    served.parent.mkdir(parents=True)
    shutil.copyfile(source_dir / occ.target, served)
    catalog = read_catalog()
    for key in (("windowsagentarena", "prompts"), ("financebench", "results")):
        recipe = catalog[key].recipe()
        for path, data in recipe_upstream(catalog[key], source_dir).items():
            destination = root / recipe.host / recipe.served_path(path)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(data)
    mirror = Mirror(root, tmp_path / "requests.log")
    try:
        yield mirror
    finally:
        mirror.stop()


def _leftovers(folder: Path) -> list[str]:
    """Files under `folder`: after a refused fetch there must be none (no partial, no suspect download)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def _resolver(tmp_path: Path, mirror, local: Path | None = None) -> Resolver:
    return Resolver(tmp_path / "downloads", local, mirror.bases, timeout=30)


def test_the_mirror_serves_every_file_and_the_recipes_reproduce_the_shared_copies(tmp_path, mirror_root, source_dir):
    """Every reference file and every fetched catalog file, from the mirror alone (no local copy):
    each SHA-256 is the pinned one and each file is byte-identical to the shared folder's; asked
    again, nothing is downloaded."""
    from upstream_mirror import Mirror

    mirror = Mirror(mirror_root, tmp_path / "requests.log")
    try:
        resolver = _resolver(tmp_path, mirror)
        fetched = [e for e in read_catalog().values() if e.reaches_clone == "fetched"]
        items = [*UPSTREAMS, *(e.recipe() for e in fetched)]
        for item in items:
            path = resolver.path(item)
            assert path.is_relative_to(tmp_path / "downloads"), item.target
            assert file_sha256(path) == item.pinned, item.target
            assert path.read_bytes() == (source_dir / item.target).read_bytes(), item.target
        asked = len(mirror.requests())
        assert asked >= len(items)
        for item in items:
            resolver.path(item)
        assert len(mirror.requests()) == asked
    finally:
        mirror.stop()


@pytest.mark.parametrize("fault", ["404", "500", "truncate"])
def test_an_http_error_or_a_truncated_body_is_one_error_naming_the_file_and_url(tmp_path, small_mirror, fault):
    occ = UPSTREAM_BY_TARGET["exposure/occ_level.csv"]
    served = small_mirror.served(GITHUB, Path(occ.repo) / occ.commit / occ.path)
    served.with_name(served.name + ".fault").write_text(fault)
    resolver = _resolver(tmp_path, small_mirror)
    with pytest.raises(SourceFormatError) as raised:
        resolver.path(occ)
    message = str(raised.value)
    assert message.startswith(occ.url(small_mirror.bases[GITHUB]) + ": download failed")
    assert occ.target in message
    assert {"404": "HTTP Error 404", "500": "HTTP Error 500", "truncate": "truncated"}[fault] in message
    assert _leftovers(tmp_path / "downloads") == []


def test_a_failed_file_of_a_recipe_names_its_url_and_keeps_none_of_the_recipe(tmp_path, small_mirror):
    recipe = read_catalog()[("financebench", "results")].recipe()
    broken = recipe.paths[5]
    served = small_mirror.served(GITHUB, recipe.served_path(broken))
    served.with_name(served.name + ".fault").write_text("404")
    with pytest.raises(SourceFormatError) as raised:
        _resolver(tmp_path, small_mirror).path(recipe)
    assert str(raised.value).startswith(recipe.url(broken, small_mirror.bases) + ": download failed (HTTP Error 404")
    assert "results/financebench.csv" in str(raised.value)
    assert _leftovers(tmp_path / "downloads") == []  # the five files before it went too


def test_a_wrong_hash_is_refused_naming_the_file_and_url(tmp_path, small_mirror):
    """A reference file whose bytes are not the pinned ones, and a recipe whose conversion is not."""
    occ = UPSTREAM_BY_TARGET["exposure/occ_level.csv"]
    small_mirror.served(GITHUB, Path(occ.repo) / occ.commit / occ.path).write_text("O*NET-SOC Code,Title\n11-1011.00,tampered\n")
    resolver = _resolver(tmp_path, small_mirror)
    with pytest.raises(SourceFormatError, match="wrong SHA-256") as raised:
        resolver.path(occ)
    assert str(raised.value).startswith(occ.url(small_mirror.bases[GITHUB]) + ": downloaded file for exposure/occ_level.csv")
    assert _leftovers(tmp_path / "downloads") == []

    # The wheel is served whole and converts, but one prompt differs: the converted file is refused.
    import zipfile

    recipe = read_catalog()[("windowsagentarena", "prompts")].recipe()
    wheel = small_mirror.served(PYPI, recipe.served_path(recipe.paths[0]))
    with zipfile.ZipFile(wheel) as archive:
        tasks = json.loads(archive.read(recipe.member))
    tasks[0]["abstract_description"] += " (edited)"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(recipe.member, json.dumps(tasks))
    with pytest.raises(SourceFormatError) as raised:
        resolver.path(recipe)
    message = str(raised.value)
    assert message.startswith(str(tmp_path / "downloads" / "benchmarks" / "windowsagentarena.jsonl"))
    assert f"the conversion of {recipe.url(recipe.paths[0], small_mirror.bases)} has the wrong SHA-256; expected {recipe.sha256}" in message
    assert _leftovers(tmp_path / "downloads") == []  # neither the conversion nor the suspect wheel


def test_the_resolution_order_is_download_cache_then_local_copy_then_upstream(tmp_path, small_mirror, source_dir, caplog):
    occ = UPSTREAM_BY_TARGET["exposure/occ_level.csv"]
    recipe = read_catalog()[("windowsagentarena", "prompts")].recipe()
    # A local copy with the pinned bytes is read in place: nothing is asked of the hosts.
    resolver = _resolver(tmp_path, small_mirror, local=source_dir)
    assert resolver.path(occ) == source_dir / occ.target
    assert resolver.path(recipe) == source_dir / recipe.target
    assert small_mirror.requests() == [] and _leftovers(tmp_path / "downloads") == []
    # A local copy with other bytes is passed over, said so, and the pinned file fetched.
    local = tmp_path / "local"
    (local / "exposure").mkdir(parents=True)
    (local / occ.target).write_text("edited\n")
    resolver = _resolver(tmp_path, small_mirror, local=local)
    assert resolver.path(occ) == tmp_path / "downloads" / occ.target
    assert "not the pinned" in caplog.text and len(small_mirror.requests()) == 1
    # The download cache comes first: a pinned copy there is used, the local copy is not read.
    (local / occ.target).unlink()
    assert resolver.path(occ) == tmp_path / "downloads" / occ.target
    assert len(small_mirror.requests()) == 1
    # A cached copy that is not the pinned one is made again (from the checked download it came from).
    (tmp_path / "downloads" / occ.target).write_text("edited in the cache\n")
    assert file_sha256(resolver.path(occ)) == occ.pinned
    assert len(small_mirror.requests()) == 1


def test_source_assets_read_the_pinned_files_without_a_local_copy(tmp_path, small_mirror, monkeypatch):
    """With no source folder set and no local copy (a clone alone), a raw asset reads the file it
    fetched; a converted reference file is refused if its conversion drifts."""
    import dagster as dg

    from workbank_dagster import warehouse
    from workbank_dagster.resources import Warehouse
    from workbank_dagster.settings import PipelineSettings
    from workbank_dagster.sources import fetch
    from workbank_dagster.sources.assets import file_assets, raw_assets

    monkeypatch.setattr(fetch, "default_source_dir", lambda: None)
    for name in ("WORKBANK_SOURCE_DIR", "WORKBANK_BENCHMARKS_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WORKBANK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("WORKBANK_UPSTREAM_BASE", small_mirror.bases[GITHUB])
    db = tmp_path / "data" / "warehouse.duckdb"
    selection = [dg.AssetKey([prefix, "eloundou_occupation_exposure"]) for prefix in ("files", "raw")]
    result = dg.materialize(
        [*file_assets, *raw_assets], selection=selection, resources={"warehouse_db": Warehouse(db), "pipeline_settings": PipelineSettings.from_env()}
    )
    assert result.success
    with warehouse.connect(db) as con:
        assert con.execute("select count(*) from raw.eloundou_occupation_exposure").fetchone()[0] > 900
    assert (tmp_path / "data" / "downloads" / "exposure" / "occ_level.csv").is_file()


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def test_a_clone_with_nothing_beside_it_fetches_every_pinned_file_and_reaches_the_headline(
    tmp_path, mirror_root, source_dir, reduced_source_dir, session_cache, small_base_run
):
    """`git clone` of the committed HEAD into a folder with nothing beside it (no shared/), then,
    in the clone, with both hosts pointed at the mirror:

    1. `cli fetch` resolves every reference file and every benchmark file of the catalog: each
       SHA-256 is the pinned one and each file is byte-identical to the shared copy; the committed
       benchmarks come from the clone itself, the rest from its download folder, and the one file
       that is neither committed nor fetchable (TheAgentCompany's results) is reported missing;
    2. `cli run` from the fetched folder reaches headline.json. To take its embeddings from the
       session's cache, it runs on the session's small benchmarks (cybench, whose results are
       fetched, finance-agent, paperbench) with O*NET cut as the session's reduced sources cut it
       (tests/support/reduced_sources.py, on the fetched files): the small base run's inputs, read
       from other copies of the same bytes. So its numbers and its data snapshot equal that run's,
       and its version names the clone's commit.
    """
    from conftest import SMALL, run_env, run_pipeline
    from reduced_sources import build_reduced_sources
    from upstream_mirror import Mirror

    alone = tmp_path / "alone"
    alone.mkdir()
    clone = alone / "workbank-dagster"
    _git("clone", "--quiet", "--no-hardlinks", str(REPO_ROOT), str(clone), cwd=tmp_path)
    assert sorted(p.name for p in alone.iterdir()) == ["workbank-dagster"]  # no shared/ beside it
    head = _git("rev-parse", "HEAD", cwd=clone)
    mirror = Mirror(mirror_root, tmp_path / "requests.log")
    try:
        environment = {k: v for k, v in os.environ.items() if not k.startswith("WORKBANK_")}
        environment.update(
            WORKBANK_UPSTREAM_BASE=mirror.bases[GITHUB], WORKBANK_PYPI_BASE=mirror.bases[PYPI],
            WORKBANK_CACHE_DIR=str(session_cache), DAGSTER_HOME=str(tmp_path / "home"),
        )
        fetched = subprocess.run([sys.executable, "-m", "workbank_dagster.cli", "fetch"], cwd=clone, env=environment,
                                 capture_output=True, text=True, timeout=900)
        assert fetched.returncode == 0, fetched.stderr[-3000:]
    finally:
        mirror.stop()
    lines = dict((name, (digest, Path(path) if digest != "missing" else None))
                 for name, digest, path in (line.split("\t") for line in fetched.stdout.splitlines() if line.count("\t") == 2))
    catalog = read_catalog()
    expected = {u.target: u.pinned for u in UPSTREAMS} | {e.name: e.sha256 for e in catalog.values()}
    assert set(lines) == set(expected)
    for name, (digest, path) in lines.items():
        entry = next((e for e in catalog.values() if e.name == name), None)
        if entry is not None and entry.reaches_clone == "local":
            assert path is None, name  # not committed, no recipe, no local copy beside the clone
            continue
        assert digest == expected[name] == file_sha256(path), name
        assert path.read_bytes() == (source_dir / name).read_bytes(), name
        inside = clone / "benchmarks" if entry is not None and entry.reaches_clone == "committed" else clone / "data" / "downloads"
        assert path.is_relative_to(inside), (name, path)

    # The run: the fetched files, O*NET reduced as the session's, the small benchmarks.
    fetched_folder = tmp_path / "fetched"
    fetched_folder.mkdir()
    for name, (_, path) in lines.items():
        if path is not None and not name.startswith(("benchmarks/", "results/")):
            (fetched_folder / name).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(path, fetched_folder / name)
    sources = build_reduced_sources(fetched_folder, clone / "audits", tmp_path / "sources")
    for kind in ("benchmarks", "results"):
        (sources / kind).mkdir()
    for slug in SMALL:
        for name in (f"benchmarks/{slug}.jsonl", f"results/{slug}.csv"):
            if name in lines and lines[name][1] is not None:
                shutil.copyfile(lines[name][1], sources / name)
    for name in ("onet/task_statements_29_3.tsv", "onet/occupation_data_29_3.tsv", "onet/task_ratings_IM_only_db_29.csv"):
        assert (sources / name).read_bytes() == (reduced_source_dir / name).read_bytes(), name
    env = {**run_env(tmp_path, sources, session_cache), "WORKBANK_UPSTREAM_BASE": "http://127.0.0.1:9/never", "WORKBANK_PYPI_BASE": "http://127.0.0.1:9/never"}
    completed = run_pipeline(env, cwd=clone)
    (tmp_path / "clone_run.log").write_text(completed.stdout + "\n" + completed.stderr)
    assert completed.returncode == 0, completed.stderr[-5000:]
    ours = json.loads((tmp_path / "data" / "outputs" / "headline.json").read_text())
    theirs = json.loads((small_base_run / "data" / "outputs" / "headline.json").read_text())
    assert ours["version"]["commit"] == head and ours["version"]["data_files"] == theirs["version"]["data_files"] > 20
    assert ours["version"]["data_snapshot"] == theirs["version"]["data_snapshot"]
    assert {k: v for k, v in ours.items() if k != "version"} == {k: v for k, v in theirs.items() if k != "version"}
    assert ours["n_benchmarks"] == len(SMALL)


def test_the_mirror_ends_on_sigterm_though_its_starter_ignores_sigterm(tmp_path):
    """A child inherits an ignored SIGTERM; the mirror resets it, so `stop()` ends it by SIGTERM at
    once instead of waiting 10 s for its SIGKILL (as every mirror one CI worker started did), and
    the start warns that the starting process is in that state."""
    import signal
    import time

    from upstream_mirror import Mirror

    (tmp_path / "root").mkdir()
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with pytest.warns(UserWarning, match="ignores SIGTERM"):
            mirror = Mirror(tmp_path / "root", tmp_path / "requests.log")
    finally:
        signal.signal(signal.SIGTERM, previous)
    began = time.monotonic()
    mirror.stop()
    assert time.monotonic() - began < 5
    assert mirror.process.returncode == -signal.SIGTERM
