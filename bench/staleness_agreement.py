"""Does Dagster's own staleness name the steps that `make run` then works again? (#41 item 1)

Every cached step decides itself whether to work (its key, fingerprint.py) and records it in its
materialization (`recomputed`). Dagster has its own view: code versions, data versions and the
file observations give each asset and partition a stale status, the one the UI shows. This bench
measures whether the two agree, change kind by change kind, in the order of
tests/scenarios/test_staleness.py and with its changes (its helpers apply them): from a small run
(the session's three small benchmarks over the reduced sources, built here as the test session
builds `small_base_run`), for each change:

1. apply it;
2. observe the `files/*` source assets (as `make run`'s first step will) and ask Dagster, by one GraphQL query,
   the stale status and root causes of every asset and partition (tests/support/dagster_staleness.py);
3. run `make run`'s command and read which cached steps worked and which kept their outputs;
4. record: stale per Dagster, worked per the steps, stale-but-kept, worked-but-not-stale, Dagster's
   causes for the stale-but-kept, and the same against the stale assets with everything downstream
   of them (Dagster's staleness is not transitive: an asset is stale when its own code version or a
   direct input's data version moved, so what lies below a stale asset shows fresh until that
   asset is materialized again).

    PYTHONPATH=. .venv/bin/python bench/staleness_agreement.py WORK_DIR [--cache-dir DIR] [--output bench/staleness_agreement.json]

WORK_DIR receives the reduced sources, the small run and its copy (several hundred MB at most);
--cache-dir an embedding cache to share (default WORK_DIR/cache; a warm one saves the O*NET
embedding). Reads the shared data (WORKBANK_SOURCE_DIR or ../shared/data), never writes it. Leave
the checkout alone while it runs: the report's key holds its version stamp (commit and whether
tracked files changed), so an edit would redraw the report in the next case (the bench stops if
the stamp moved).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO, REPO / "tests", REPO / "tests" / "support", REPO / "tests" / "scenarios", REPO / "bench"):
    sys.path.insert(0, str(folder))

from code_versions import asset_code_versions  # noqa: E402
from conftest import SMALL, SOURCE_DIR, copy_small_run, run_env, run_pipeline, small_source_dir  # noqa: E402
from dagster_staleness import asset_children, compare, file_assets, observe_sources, partitioned_assets, query_staleness  # noqa: E402
from reduced_sources import build_reduced_sources  # noqa: E402
from run import commit, machine  # noqa: E402
from test_staleness import ANALYSIS_ONLY_MODULE, OEWS, Runs, _double_employment, _edit, _package_copy, _write_over  # noqa: E402

# The change kinds, in the order they are applied (each on top of the ones before, as in the test).
CASES = {
    "nothing": "nothing changed (a run after the small run, which observed the files)",
    "prompts": "one benchmark's prompts file (cybench loses its last line)",
    "oews": "the OEWS employment file (one occupation's employment doubled)",
    "setting": "a setting only the analysis reads (WORKBANK_CLUSTER_LEVEL=minor)",
    "dbt_setting": "a setting dbt's models read too (WORKBANK_COVERAGE_THRESHOLD=3)",
    "code": "the code of one step (a function of analysis/zones.py, in a copy of the package)",
    "comment_prompt": "a comment in settings.py and an edit of the LLM judge's prompt (in that copy)",
}


def build_base(work: Path, cache: Path) -> Path:
    """The small base run, as the test session's `small_base_run` makes it, made again each time:
    the report's key holds the checkout's version stamp (commit, uncommitted changes), so a base
    made at another commit would have the report drawn again in the first case."""
    base = work / "small_base"
    reduced = work / "reduced_sources"
    shutil.rmtree(reduced, ignore_errors=True)
    build_reduced_sources(SOURCE_DIR, REPO / "audits", reduced)
    shutil.rmtree(base, ignore_errors=True)
    sources = small_source_dir(base, reduced, SMALL)
    completed = run_pipeline(run_env(base, sources, cache))
    (work / "small_base_run.log").write_text(completed.stdout + "\n" + completed.stderr)
    if completed.returncode != 0:
        raise SystemExit(f"the small base run failed: {completed.stderr[-3000:]}")
    (base / "built").touch()
    return base


def prepare_copy(copy: Path, env: dict[str, str]) -> None:
    """The copy's dbt manifest, which its code location reads (the copy leaves `target/` out)."""
    completed = subprocess.run([sys.executable, "-m", "workbank_dagster.cli", "prepare"], cwd=copy, env={**os.environ, **env},
                               capture_output=True, text=True, timeout=600)
    if completed.returncode != 0:
        raise SystemExit(f"cli prepare in the copy failed: {completed.stderr[-3000:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work_dir", type=Path)
    parser.add_argument("--cache-dir", type=Path)
    parser.add_argument("--output", type=Path, default=REPO / "bench" / "staleness_agreement.json")
    args = parser.parse_args()
    work = args.work_dir.resolve()
    cache = (args.cache_dir or work / "cache").resolve()
    cache.mkdir(parents=True, exist_ok=True)
    stamp = commit()
    started = time.perf_counter()
    base = build_base(work, cache)
    base_s = time.perf_counter() - started

    from workbank_dagster.definitions import defs

    root = work / "run"
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(work / "repo", ignore_errors=True)
    sources, env = copy_small_run(base, root, cache)
    runs = Runs(root, env)
    children, partitioned, files = asset_children(defs), partitioned_assets(defs), file_assets(defs)
    cases = []

    def measure(name: str, cwd: Path = REPO, **extra: str) -> None:
        at = time.perf_counter()
        case_env = {**env, **extra}
        observe_sources(case_env, files, cwd, partitioned, SMALL)
        staleness = query_staleness(case_env, partitioned, cwd)
        asked = time.perf_counter()
        worked, kept = runs.run(cwd=None if cwd == REPO else cwd, **extra)
        record = {"case": name, "change": CASES[name], **compare(staleness, worked, kept, children),
                  "ask_s": round(asked - at, 1), "run_s": round(time.perf_counter() - asked, 1)}
        cases.append(record)
        print(f"{name}: agree={record['agree']} stale={len(record['stale_cached'])} worked={len(record['worked'])} "
              f"stale_but_kept={len(record['stale_but_kept'])} worked_but_not_stale={len(record['worked_but_not_stale'])}", flush=True)

    measure("nothing")

    prompts = sources / "benchmarks" / "cybench.jsonl"
    _write_over(prompts, sources, "".join(prompts.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]))
    measure("prompts")

    _double_employment(sources / OEWS, sources, "15-1252")
    measure("oews")

    measure("setting", WORKBANK_CLUSTER_LEVEL="minor")

    settings_now = {"WORKBANK_CLUSTER_LEVEL": "minor", "WORKBANK_COVERAGE_THRESHOLD": "3"}
    measure("dbt_setting", **settings_now)

    before = asset_code_versions(defs)
    copy = _package_copy(work / "repo")
    package = copy / "workbank_dagster"
    _edit(package / ANALYSIS_ONLY_MODULE, '    rated = zones.dropna(subset=["zone"])\n', '    rated = zones.dropna(subset=["zone"])\n    rated = rated.copy()\n')
    moved = sorted(name for name, version in asset_code_versions(defs, package).items() if version != before[name])
    in_copy = {**settings_now, "PYTHONPATH": str(copy)}
    prepare_copy(copy, {**env, **in_copy})
    measure("code", cwd=copy, **in_copy)
    cases[-1]["code_versions_moved"] = moved

    _edit(package / "settings.py", "from __future__ import annotations\n", "from __future__ import annotations\n\n# a comment that changes nothing\n")
    _edit(package / "labeling" / "llm_protocol.py", "You map AI benchmark prompts", "You, an analyst, map AI benchmark prompts")
    prepare_copy(copy, {**env, **in_copy})
    measure("comment_prompt", cwd=copy, **in_copy)

    result = {
        "commit": stamp,
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "benchmarks": list(SMALL),
        "observed_with": "dagster asset materialize -m workbank_dagster.definitions --select files/<table>,... (in process); the benchmark files once per partition (--partition <slug>)",
        "asked_with": "dagster-graphql -w workspace.yaml: assetNodes { staleStatus staleCauses }, per partitioned asset "
                      "assetNodeOrError { partitionKeys staleStatusByPartition staleCausesByPartition }",
        "base_s": round(base_s, 1),
        "cases": cases,
    }
    if commit() != stamp:
        raise SystemExit(f"the checkout changed while the bench ran ({stamp} -> {commit()}): the report's version stamp moved with it; run again")
    args.output.write_text(json.dumps(result, indent=1, sort_keys=False) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
