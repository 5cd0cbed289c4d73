"""One staleness mechanism, seen from outside: change one kind of input of one step, run `make run`'s
command, and exactly that step and the dependants whose inputs changed do their work again.

Every cached step records in its materialization whether it worked this time or kept what its key
names (metadata `recomputed`: true or false, or the partitions it worked; fingerprint.py). This test
starts from a copy of the session's small run and changes, one run at a time:

- nothing: every cached step keeps its outputs;
- the data of a partitioned source (one benchmark's prompts file): that partition, its labels and
  what is built from them; no other benchmark's partition;
- the data of a whole-table source (the OEWS employment file): its raw table and what is built from
  it; no labeling step (the judges never read employment);
- a setting (the clustering level of the standard errors): analysis steps and the report only,
  exactly the assets whose code version covers the setting (code_version.py: its value at load);
- the code of one step (a function only the WORKBank audit reaches, run from a copy of the package):
  exactly the assets whose derived code version moved (code_version.py), and nothing else, since
  their outputs come out the same; but for the report page when the copy stamps another version (it
  is not a git checkout, so its headline.json and footer name no commit where the original run
  named one);
- a comment in settings.py and an edit of the LLM judge's prompt: nothing (the embedded judge never
  reads the prompt; a comment is no code).

Every run observes the source files before it loads them (`make run`'s job includes the
`files/*` observations, the benchmark files' one version per partition), and before the first run,
the benchmark file's, the setting's and the last two Dagster is asked, by one GraphQL query each
(tests/support/dagster_staleness.py), which assets and partitions it calls stale: with nothing
changed, nothing; for the benchmark file that benchmark's raw partition; for the setting exactly
the assets whose code version covers it, which are the steps that work; for the code edit exactly the assets whose
code version moved and the headline, whose version covers the code stamp it writes (the copy
names no commit; the page below it Dagster names once the headline has moved), for the comment and the prompt
nothing, as the steps decide. Where the two disagree (what lies below a changed file, which
Dagster calls stale only once the file's own asset is materialized again) docs/pipeline.md says
why (bench/staleness_agreement.py measures every change kind).

A step counts as a dependant by the asset graph of the definitions; a step is one asset definition
(one `dbt build` writes every model). A dependant whose inputs did not change may keep its outputs (the data dictionary reads column types, not rows); what may never
happen is a step that is not a dependant working again, or the changed step keeping its outputs.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
from code_versions import asset_code_versions
from conftest import copy_small_run, run_pipeline
from dagster_staleness import Staleness, observe_in_process, partitioned_assets, query_staleness

from workbank_dagster.fingerprint import RECOMPUTED_METADATA
from workbank_dagster.settings import REPO_ROOT, PipelineSettings

ANALYSIS = "analysis/"
OEWS = "bls/oews/national_M2024_dl.csv"
# What `make run` prints when it launched the audits' run, or asked Dagster and found them fresh.
AUDITS_RAN = "audits: 1 partition(s), run "
AUDITS_FRESH = "audits: 1 partition(s), none stale or missing per Dagster: not run"
# A module whose functions only analysis steps reach (checked below against the code versions).
ANALYSIS_ONLY_MODULE = "analysis/zones.py"


def _definitions():
    from workbank_dagster.definitions import defs

    return defs


def _dependants(defs, changed: set[str]) -> set[str]:
    """Every asset of the steps downstream of `changed` (keys as user strings), and of their own
    steps. A step is one asset definition: one dbt build writes every model, an analysis step all
    of its tables, so a step that works again writes all of its assets."""
    graph = defs.resolve_asset_graph()
    todo = [dg.AssetKey.from_user_string(name) for name in changed]
    seen: set[dg.AssetKey] = set()
    while todo:
        asset_key = todo.pop()
        if asset_key in seen:
            continue
        seen.add(asset_key)
        todo.extend(graph.get(asset_key).child_keys)
        todo.extend(defs.resolve_assets_def(asset_key).keys)
    return {asset_key.to_user_string() for asset_key in seen}


class Runs:
    """`make run`'s command in one folder, and what each run's cached steps did."""

    def __init__(self, root: Path, env: dict[str, str]):
        self.root, self.env = root, env
        self.keys = list(_definitions().resolve_asset_graph().get_all_asset_keys())
        self.partitioned = partitioned_assets(_definitions())

    def ask(self, *, cwd: Path | None = None, **env: str) -> Staleness:
        """What Dagster calls stale now, every asset and partition, by one GraphQL query on the code
        location of `cwd` (the repository by default), the source files observed first."""
        observe_in_process({**self.env, **env})
        return query_staleness({**self.env, **env}, self.partitioned, cwd or REPO_ROOT)

    def run(self, *, cwd: Path | None = None, **env: str) -> tuple[set[str], set[str]]:
        """Run once (its job observes the source files before it loads them); the cached steps
        (`asset` or `asset[partition]`) that worked and that kept."""
        with dg.DagsterInstance.from_config(str(self.root / "dagster_home")) as instance:
            cursor = instance.event_log_storage.get_maximum_record_id() or 0
        completed = run_pipeline({**self.env, **env}, cwd=cwd)
        assert completed.returncode == 0, (completed.stdout[-3000:], completed.stderr[-3000:])
        self.audits_ran = AUDITS_RAN in completed.stdout
        assert self.audits_ran != (AUDITS_FRESH in completed.stdout), completed.stdout[-3000:]
        worked, kept = set(), set()
        with dg.DagsterInstance.from_config(str(self.root / "dagster_home")) as instance:
            for key in self.keys:
                filter_ = dg.AssetRecordsFilter(asset_key=key, after_storage_id=cursor)
                for record in instance.fetch_materializations(filter_, limit=1000).records:
                    materialization = record.asset_materialization
                    flag = materialization.metadata.get(RECOMPUTED_METADATA)
                    if flag is None:
                        continue  # not a cached step: it always works
                    name = key.to_user_string() + (f"[{materialization.partition}]" if materialization.partition else "")
                    did = materialization.partition in flag.value if isinstance(flag.value, list) else bool(flag.value)
                    (worked if did else kept).add(name)
        assert kept or worked, "the run recorded no cached step"
        return worked, kept


def _asset(name: str) -> str:
    return name.split("[", 1)[0]


def _own(path: Path, root: Path) -> Path:
    """`path` under `root` made this test's own to write: the copied source folder links whole
    folders and files into the shared data, so every linked folder on the way is replaced by a
    folder of links, and a linked file is unlinked. Writing through a link would change the shared
    data itself (a first version of this test did, to the OEWS file; restored from the workbook)."""
    current = root
    for part in path.relative_to(root).parts[:-1]:
        current = current / part
        if current.is_symlink():
            target = current.resolve()
            current.unlink()
            current.mkdir()
            for entry in target.iterdir():
                (current / entry.name).symlink_to(entry)
    if path.is_symlink():
        path.unlink()
    assert path.parent.resolve().is_relative_to(root.resolve()), path
    return path


def _write_over(path: Path, root: Path, text: str) -> None:
    _own(path, root).write_text(text, encoding="utf-8")


def _double_employment(path: Path, root: Path, occupation: str) -> None:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    column, code, group = rows[0].index("TOT_EMP"), rows[0].index("OCC_CODE"), rows[0].index("O_GROUP")
    changed = 0
    for row in rows[1:]:
        if row[code] == occupation and row[group] == "detailed":
            row[column] = str(2 * int(row[column].replace(",", "")))
            changed += 1
    assert changed == 1
    with _own(path, root).open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)


def _package_copy(target: Path) -> Path:
    """The repository without its data and environment, to run with one module edited."""
    ignore = shutil.ignore_patterns(".venv", ".git", "data", "test-artifacts", "target", "logs", "__pycache__", "*.egg-info", ".pytest_cache")
    shutil.copytree(REPO_ROOT, target, ignore=ignore)
    return target


def test_a_change_reworks_its_step_and_dependants_only(tmp_path, small_base_run, session_cache):
    defs = _definitions()
    root = tmp_path / "run"
    sources, env = copy_small_run(small_base_run, root, session_cache)
    # The audits the base run read (the repository's), copied so that one can be edited below.
    audits = tmp_path / "audits"
    shutil.copytree(REPO_ROOT / "audits", audits)
    env = {**env, "WORKBANK_AUDITS_DIR": str(audits)}
    runs = Runs(root, env)

    # Nothing changed: every cached step keeps what it made, and Dagster calls nothing stale (the
    # small run observed the files before loading them, so their versions are the ones it loaded).
    # The audits' run, which follows Dagster's staleness (runner.run_audits), is not launched: the
    # audit file is the same file, though in another folder (where files live is no version).
    staleness = runs.ask()
    worked, kept = runs.run()
    assert worked == set(), sorted(worked)
    assert not runs.audits_ran
    assert staleness.stale == set(), (sorted(staleness.stale), staleness.causes)
    assert {"raw/onet_occupations", "raw/benchmark_prompts[cybench]", "labeling/occupation_prior", "labeling/embedded_labels[cybench]",
            "report/html_report", "report/data_dictionary", "analysis/coverage_logit_ratio"} <= kept

    # Data of a partitioned source: cybench's prompts lose their last line.
    prompts = sources / "benchmarks" / "cybench.jsonl"
    _write_over(prompts, sources, "".join(prompts.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]))
    # Dagster sees it: the benchmark files are observed per partition (files/benchmark_prompts), so
    # the one partition whose file changed is stale, and no other (staleness is not transitive: the
    # assets below it go stale once it is materialized with a new data version).
    staleness = runs.ask()
    assert staleness.stale == {"raw/benchmark_prompts[cybench]"}, (sorted(staleness.stale), staleness.causes)
    worked, _ = runs.run()
    allowed = _dependants(defs, {"raw/benchmark_prompts"})
    assert {_asset(name) for name in worked} <= allowed, sorted({_asset(n) for n in worked} - allowed)
    assert {"raw/benchmark_prompts[cybench]", "labeling/embedded_labels[cybench]", "labeling/embedded_judgements[cybench]", "report/html_report"} <= worked
    assert not {name for name in worked if "[" in name and not name.endswith("[cybench]")}, sorted(worked)  # no other benchmark's partition
    assert any(name.startswith("marts/") for name in worked) and any(name.startswith(ANALYSIS) for name in worked)
    assert runs.audits_ran  # the coverage its tasks are met with moved

    # Data of a whole-table source: one occupation's employment doubled.
    shared = (sources / OEWS).resolve()
    before = shared.read_bytes()
    _double_employment(sources / OEWS, sources, "15-1252")
    assert shared.read_bytes() == before and (sources / OEWS).resolve() != shared  # the shared file is untouched
    worked, _ = runs.run()
    allowed = _dependants(defs, {"raw/oews_national"})
    assert {_asset(name) for name in worked} <= allowed, sorted({_asset(n) for n in worked} - allowed)
    assert "raw/oews_national" in worked and not any(name.startswith("labeling/") for name in worked)
    assert any(name.startswith("marts/") for name in worked) and "report/html_report" in worked

    # A setting that only the analysis reads. The code versions cover the values of the settings
    # each asset reads (code_version.py), so Dagster, asked before the run, calls stale exactly the
    # assets that read it, and those are the steps that work.
    default = asset_code_versions(defs, settings=PipelineSettings.of())
    minor = asset_code_versions(defs, settings=PipelineSettings.of(cluster_level="minor"))
    moved = {name for name, version in minor.items() if version != default[name]}
    staleness = runs.ask(WORKBANK_CLUSTER_LEVEL="minor")
    worked, _ = runs.run(WORKBANK_CLUSTER_LEVEL="minor")
    assert worked, "the clustering level changed nothing"
    assert {_asset(name).split("/")[0] for name in worked} <= {"analysis", "report"}, sorted(worked)
    assert "report/html_report" in worked and "report/data_dictionary" not in worked
    assert staleness.stale == moved, (sorted(staleness.stale ^ moved), staleness.causes)
    assert all(cause["category"] == "CODE" for name in moved for cause in staleness.causes[name]), staleness.causes
    assert worked == moved, sorted(worked ^ moved)

    # The code of one step, edited in a copy without changing what it returns: a function of
    # analysis/zones.py. Exactly the assets whose derived code version moves (what Dagster calls
    # stale for its code) work again; everything else keeps its outputs.
    before = asset_code_versions(defs)
    copy = _package_copy(tmp_path / "repo")
    package = copy / "workbank_dagster"
    _edit(package / ANALYSIS_ONLY_MODULE, '    rated = zones.dropna(subset=["zone"])\n', '    rated = zones.dropna(subset=["zone"])\n    rated = rated.copy()\n')
    moved = {name for name, version in asset_code_versions(defs, package).items() if version != before[name]}
    assert moved and {name.split("/")[0] for name in moved} == {"analysis"}, sorted(moved)
    stamped = json.loads((root / "data" / "outputs" / "headline.json").read_text())["version"]
    in_copy = {"WORKBANK_CLUSTER_LEVEL": "minor", "PYTHONPATH": str(copy)}
    _prepare(copy, {**env, **in_copy})
    staleness = runs.ask(cwd=copy, **in_copy)
    worked, kept = runs.run(cwd=copy, **in_copy)
    copy_stamp = json.loads((root / "data" / "outputs" / "headline.json").read_text())["version"]
    assert "commit" not in copy_stamp  # the copy is not a git checkout: no commit, rather than its parent's
    restamped = {"report/html_report"} if copy_stamp != stamped else set()
    assert worked == moved | restamped, sorted(worked ^ (moved | restamped))
    # The analysis tables came out the same: the page is drawn again only to show the copy's version.
    assert ("report/html_report" in kept) == (not restamped)
    # Dagster, asked before the run, called stale exactly the assets whose code version moved, which
    # worked, and the headline, whose version covers the code stamp it writes (report/headline.code_stamp)
    # where the copy names no commit; the page below it Dagster names once the headline has moved
    # (staleness is not transitive).
    named = moved | ({"report/headline", "analysis/coverage_history"} if restamped else set())
    assert staleness.stale == named, (sorted(staleness.stale ^ named), staleness.causes)
    assert all(cause["category"] == "CODE" for name in named for cause in staleness.causes[name]), staleness.causes

    # A comment in settings.py, which every step reads, and an edit of the LLM judge's prompt, which
    # the embedded judge (the one `make run` labels with) never reads: no version of `make run`'s
    # assets moves, and nothing works again. (The LLM labels' own version moves: Dagster calls
    # them stale, and `cli label-llm` would label again.)
    _edit(package / "settings.py", "import functools\n", "import functools\n\n# a comment that changes nothing\n")
    _edit(package / "labeling" / "llm_protocol.py", "You map AI benchmark prompts", "You, an analyst, map AI benchmark prompts")
    moved = {name for name, version in asset_code_versions(defs, package).items() if version != before[name]} - moved
    assert moved == {"labeling/llm_labels", "labeling/llm_judgements"}, sorted(moved)
    staleness = runs.ask(cwd=copy, **in_copy)
    # With them, the audit file gains a task (after Dagster was asked): its audit runs again, and nothing else works.
    with open(audits / "example-org.csv", "a", encoding="utf-8") as handle:
        handle.write(",Schedule the maintenance of the delivery vans,3.0,3.5\n")
    worked, kept = runs.run(cwd=copy, **in_copy)
    assert worked == set(), sorted(worked)
    assert runs.audits_ran
    assert {"labeling/embedded_labels[cybench]", "report/html_report", "analysis/workbank_task_zones"} <= kept
    # Dagster agrees: nothing is stale. The LLM labels' version moved, but `make run` never
    # materializes them: their partitions are missing, not stale.
    assert staleness.stale == set(), (sorted(staleness.stale), staleness.causes)
    assert {"labeling/llm_labels[cybench]", "labeling/llm_judgements[cybench]"} <= staleness.missing


def _prepare(copy: Path, env: dict[str, str]) -> None:
    """The copy's dbt manifest (`cli prepare`), which its code location reads when GraphQL loads it
    (a run prepares its own; the copy leaves `target/` out)."""
    completed = subprocess.run([sys.executable, "-m", "workbank_dagster.cli", "prepare"], cwd=copy, env={**os.environ, **env},
                               capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")
