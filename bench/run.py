"""Benchmarks of the pipeline on this machine; results go to bench/results.json (`make bench`).

Every figure is the median of `--runs` runs (default 3) unless the results file says otherwise
(`runs` is recorded beside each figure). Each measured run is a separate process, as a user runs it.

- embed_floor_s   embedding exactly the texts a cold run embeds, with the same model and backend (ONNX),
                  in one plain process
- embed_floor_torch_s  the same texts with the torch backend (one run per bench): the speed the ONNX
                  backend buys, beside its label agreement (bench/backend_agreement.json)
- cold_run_s      `python -m workbank_dagster.cli run` from an empty data dir (environment installed)
- label_cold_s    the labeling step of that cold run (all 24 benchmarks, from the run's metadata)
- warm_run_s      the same command again with nothing changed
- add_benchmark_s a new ~200-prompt benchmark file through the sensor path until headline.json is updated
- peak_rss_mb     the largest resident set of any measured process
- growth          the embedded judge's retrieval and selection on synthetic vectors (time, peak memory)

It measures a clean clone of HEAD (as bench/suite.py does), not the working tree: an edit made while
a bench runs, or left uncommitted, never enters a figure stamped with a commit. The clone runs with
this environment's interpreter and packages. `--working-tree` measures the checkout as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workbank_dagster.labeling.embedder import DEFAULT_BACKEND  # noqa: E402
from workbank_dagster.settings import default_source_dir  # noqa: E402


def machine() -> dict:
    info = {"python": platform.python_version(), "platform": platform.platform(), "cores": os.cpu_count()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["memory_gb"] = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return info


def commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    # The results file itself is rewritten by every bench: it does not make the code a different one.
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)bench/results.json"],
        cwd=REPO, capture_output=True, text=True,
    )
    return out.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def timed(command: list[str], env: dict, cwd: Path = REPO, log: Path | None = None) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall seconds and peak RSS (MB) of one child process and the children it waited for.

    `os.wait4` gives this child's own resource usage; RUSAGE_CHILDREN would be the largest of
    every child so far (a cold run's model would then count as every later run's peak).
    """
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        completed = subprocess.CompletedProcess(command, process.returncode, out.read(), err.read())
    if log is not None:
        log.write_text(completed.stdout + "\n" + completed.stderr)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{completed.stdout[-6000:]}\n{completed.stderr[-3000:]}")
    return elapsed, usage.ru_maxrss / 1024, completed


def run_env(root: Path, source: Path) -> dict:
    return {
        **os.environ,
        "WORKBANK_DATA_DIR": str(root / "data"),
        "WORKBANK_SOURCE_DIR": str(source),
        "DAGSTER_HOME": str(root / "dagster_home"),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


PIPELINE = [sys.executable, "-m", "workbank_dagster.cli", "run"]


def label_seconds(env: dict) -> float | None:
    code = (
        "import dagster as dg, json;"
        "i = dg.DagsterInstance.get();"
        "e = i.get_latest_materialization_event(dg.AssetKey(['labeling','embedded_labels']));"
        "print(e.asset_materialization.metadata['seconds'].value)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True)
    try:
        return float(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


FLOOR = """
import sys, time, json
sys.path.insert(0, {repo!r})
from pathlib import Path
from workbank_dagster.labeling.embedder import Embedder
from workbank_dagster.labeling.prior import training_texts
from workbank_dagster.labeling.text import chunk_text, is_mostly_cjk, role_phrase
from workbank_dagster.labeling.titles import title_rows
from workbank_dagster.sources import onet
from workbank_dagster.sources.benchmarks import read_benchmark_prompts, slug_files
source = Path({source!r})
tasks = onet.read_task_statements(source / onet.TASK_STATEMENTS)
occupations = onet.read_occupations(source / onet.OCCUPATIONS)
with_tasks = occupations[occupations["onet_soc_code"].isin(set(tasks["onet_soc_code"]))]
titles = with_tasks["title"].tolist()
# Judge v4's prior: O*NET's tasks, DWA titles, titles (alternate, reported) and technology, each
# text once (labeling/prior.py), as the cold run's labeling/occupation_prior asset embeds them.
prior = training_texts(
    tasks, with_tasks, onet.read_task_dwas(source / onet.TASK_DWAS),
    title_rows(occupations, onet.read_alternate_titles(source / onet.ALTERNATE_TITLES), onet.read_reported_titles(source / onet.REPORTED_TITLES)),
    onet.read_technology_skills(source / onet.TECHNOLOGY_SKILLS),
)
texts = list(tasks["task"]) + titles + list(prior["text"])
# The user audits' free-text tasks, which analysis/user_audit matches (and so embeds) in `make run`.
from workbank_dagster.audits.tables import read_audit
for path in slug_files(Path({audits!r}), ".csv").values():
    free = read_audit(path)
    for task in free.loc[free["task_id"].isna(), "input_task"]:
        texts.extend(chunk_text(task))
for path in slug_files(source / "benchmarks", ".jsonl").values():
    for prompt in read_benchmark_prompts(path)["prompt"]:
        if not is_mostly_cjk(prompt):
            texts.extend(chunk_text(prompt))
            role = role_phrase(prompt)
            if role:
                texts.append(role)
texts = list(dict.fromkeys(texts))
embedder = Embedder(backend={backend!r})
started = time.perf_counter()
embedder.encode(texts)
print(json.dumps({{"seconds": time.perf_counter() - started, "texts": len(texts)}}))
"""


def embed_floor(source: Path, backend: str = DEFAULT_BACKEND) -> tuple[float, int, float]:
    script = FLOOR.format(repo=str(REPO), source=str(source), audits=str(REPO / "audits"), backend=backend)
    elapsed, peak, completed = timed([sys.executable, "-c", script], {**os.environ, "HF_HUB_OFFLINE": "1"})
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    return result["seconds"], result["texts"], peak


def new_benchmark(source_benchmarks: Path, target: Path, slug: str, n: int = 200) -> None:
    """About 200 prompts: real prompts of two benchmarks under a new slug and new ids."""
    lines = []
    for name in ("officebench", "spider2-lite"):
        for line in (source_benchmarks / f"{name}.jsonl").read_text().splitlines()[: n // 2]:
            record = json.loads(line)
            lines.append(json.dumps({"benchmark": slug, "prompt_id": f"{name}:{record['prompt_id']}", "prompt": record["prompt"]}))
    target.write_text("\n".join(lines) + "\n")


SENSOR_TICK = """
import sys, json, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, {repo!r})
import dagster as dg
from workbank_dagster.automation import benchmark_files_sensor
from workbank_dagster.dagster_instance import dagster_home
from workbank_dagster.settings import settings_at_load
dagster_home()
instance = dg.DagsterInstance.get()
with dg.build_sensor_context(instance=instance, resources={{"pipeline_settings": settings_at_load()}}) as context:
    result = benchmark_files_sensor(context)
for request in result.dynamic_partitions_requests:
    if isinstance(request, dg.AddDynamicPartitionsRequest):
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
keys = [r.partition_key for r in result.run_requests if r.partition_key == {slug!r}]
from workbank_dagster.automation import warehouse_after_partitions
from workbank_dagster.definitions import defs
from workbank_dagster.runner import get_partitions_job, get_warehouse_job
in_process = {{"execution": {{"config": {{"in_process": {{}}}}}}}}
r = dg.execute_job(dg.reconstructable(get_partitions_job), instance=instance, tags={{"dagster/partition": keys[0]}}, run_config=in_process)
# What the daemon does next: warehouse_after_partitions asks for the warehouse job.
if r.success and warehouse_after_partitions(dg.build_sensor_context(instance=instance)).run_requests:
    r = dg.execute_job(dg.reconstructable(get_warehouse_job), instance=instance, run_config=in_process)
print(json.dumps({{"success": r.success, "requested": keys}}))
"""


def add_benchmark(root: Path, source: Path, slug: str) -> float:
    """Time from dropping the file to headline.json rewritten, through the sensor's run request."""
    headline = root / "data" / "outputs" / "headline.json"
    before = headline.stat().st_mtime
    new_benchmark(source / "benchmarks", source / "benchmarks" / f"{slug}.jsonl", slug)
    started = time.perf_counter()
    elapsed, peak, completed = timed([sys.executable, "-c", SENSOR_TICK.format(repo=str(REPO), slug=slug)], run_env(root, source))
    if not json.loads(completed.stdout.strip().splitlines()[-1])["success"] or headline.stat().st_mtime <= before:
        raise RuntimeError("sensor run did not update headline.json")
    return time.perf_counter() - started, peak


def private_sources(root: Path) -> Path:
    """A source folder of links to the shared data, with a benchmarks folder of its own to add to."""
    shared = default_source_dir()
    target = root / "sources"
    target.mkdir(parents=True)
    for child in shared.iterdir():
        if child.name != "benchmarks":
            os.symlink(child, target / child.name)
    (target / "benchmarks").mkdir()
    for path in (shared / "benchmarks").iterdir():
        os.symlink(path, target / "benchmarks" / path.name)
    return target


def growth() -> list[dict]:
    """Retrieval + selection of the default embedded judge (v4: narrowing, prior, benchmark context
    over 10 benchmarks) on synthetic unit vectors, in a fresh process each."""
    code = """
import sys, time, json, resource
sys.path.insert(0, {repo!r})
import numpy as np, pandas as pd
from workbank_dagster.labeling.retrieval import TaskIndex
import scipy.sparse as sp
from workbank_dagster.labeling.judges import EmbeddedJudgeV4
from workbank_dagster.labeling.prior import OccupationPrior
from workbank_dagster.labeling.embeddings import PromptRows
from workbank_dagster.labeling.narrowing import BenchmarkContext
rng = np.random.default_rng(0)
n_tasks, n_occ, dim, n = 18796, 923, 384, {n}
def unit(a): return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)
occ_of = rng.integers(0, n_occ, n_tasks)
tasks = pd.DataFrame({{"task_id": np.arange(n_tasks), "onet_soc_code": [f"{{o:02d}}-0000.00" for o in occ_of], "task": [f"task {{i}} word{{i % 500}}" for i in range(n_tasks)]}})
codes = sorted(set(tasks["onet_soc_code"]))
occupations = pd.DataFrame({{"onet_soc_code": codes, "title": [f"title {{c}}" for c in codes], "description": ["d"] * len(codes)}})
index = TaskIndex(tasks, unit(rng.normal(size=(n_tasks, dim))), occupations, unit(rng.normal(size=(len(codes), dim))))
# Built in float32 blocks: a float64 (n, 384) draw would make the harness, not the judge, the peak.
prompts = np.empty((n, dim), dtype=np.float32)
for i in range(0, n, 10_000):
    prompts[i:i + 10_000] = unit(rng.normal(size=(min(10_000, n - i), dim)).astype(np.float32))
texts = [f"prompt {{i}} word{{i % 500}}" for i in range(n)]
inputs_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
started = time.perf_counter()
judge = EmbeddedJudgeV4()
prior = OccupationPrior(codes, unit(rng.normal(size=(len(codes), dim))), np.zeros(len(codes), dtype=np.float32), "synthetic")
groups = np.arange(n) * 10 // n  # ten benchmarks, each contiguous (retrieval's blocks stay within one)
boosts = sp.csr_matrix((n, len(codes)), dtype=np.float32)
roles, role_vectors, has_role = [None] * n, np.zeros_like(prompts), np.zeros(n, dtype=bool)
common = dict(narrowing=judge.narrowing, boosts=boosts, prior=prior)
rows = PromptRows(texts, prompts, role_vectors, has_role, roles, [str(g) for g in groups])
sums = index.context_sums(rows, groups, 10, **common)
candidates = index.retrieve(rows, context=BenchmarkContext(groups, sums, np.bincount(groups)), **common)
chosen = judge.select(candidates, index, [str(g) for g in groups])
elapsed = time.perf_counter() - started
print(json.dumps({{"prompts": n, "seconds": elapsed, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rss_before_mb": inputs_rss}}))
"""
    out = []
    for n in (1_000, 10_000, 100_000):
        completed = subprocess.run([sys.executable, "-c", code.format(repo=str(REPO), n=n)], cwd=REPO, capture_output=True, text=True)
        if completed.returncode != 0:
            raise RuntimeError(completed.stderr[-2000:])
        out.append(json.loads(completed.stdout.strip().splitlines()[-1]))
    return out


COLD_KEYS = ("embed_floor_backend", "embed_floor_s", "embed_floor_torch_s", "embed_floor_torch_measured", "embed_floor_texts", "cold_run_s", "label_cold_s", "cold_over_floor", "peak_rss_mb_cold")
WARM_KEYS = ("warm_run_s", "add_benchmark_s", "peak_rss_mb_warm", "growth")
SUITE_KEYS = ("suite", "suite_ci_s", "suite_not_e2e_s", "suite_not_e2e_measured")  # bench/suite.py's: every bench keeps them


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cold-runs", type=int, default=None, help="floor and cold runs (default: --runs); each takes minutes")
    parser.add_argument("--only", choices=("cold", "warm"), help="measure one phase; the other's figures are kept from --output")
    parser.add_argument("--output", default=str(REPO / "bench" / "results.json"))
    parser.add_argument(
        "--warm-from",
        nargs=2,
        metavar=("RUN_DIR", "CACHE_DIR"),
        help="with --only warm: start from a finished run (RUN_DIR/data, RUN_DIR/dagster_home) and its embedding cache",
    )
    parser.add_argument(
        "--no-torch-floor", dest="torch_floor", action="store_false",
        help="skip the torch floor (minutes; it does not change with the pipeline's code): its last figure is kept",
    )
    parser.add_argument("--working-tree", action="store_true", help="measure this checkout as it is, not a clean clone of HEAD")
    args = parser.parse_args()
    if args.only == "warm" and not args.warm_from:
        parser.error("--only warm needs --warm-from RUN_DIR CACHE_DIR (a finished run to start from)")
    if not args.working_tree:
        return in_clean_clone(sys.argv[1:], Path(args.output).resolve())
    cold_runs = args.cold_runs or args.runs
    output = Path(args.output)
    previous = json.loads(output.read_text()) if output.exists() else {}
    stamp = {
        "commit": commit(),
        "command": " ".join(["python", "bench/run.py", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": machine(),  # each phase's own: the machines of this workplace differ between sessions
    }
    results: dict = {"machine": stamp["machine"], "runs": {}, "measured": {}}
    # bench/suite.py and bench/backend_agreement.py write their own keys into the same file: kept.
    # ... and bench/quantized_probe.py its own (a cold bench at fd5e028 dropped it and the not-e2e stamp).
    # ... and bench/warehouse_growth.py its own (stamped under measured.warehouse_growth).
    kept = (COLD_KEYS if args.only == "warm" else WARM_KEYS if args.only == "cold" else ()) + SUITE_KEYS + ("backend_agreement", "quantized_probe", "warehouse_growth")
    kept += () if args.torch_floor else ("embed_floor_torch_s",)
    for key in kept:
        if key in previous:
            results[key] = previous[key]
        if key in previous.get("runs", {}):
            results["runs"][key] = previous["runs"][key]
    for phase in ("cold", "warm"):
        if args.only and args.only != phase and phase in previous.get("measured", {}):
            results["measured"][phase] = previous["measured"][phase]
    if "warehouse_growth" in previous.get("measured", {}):
        results["measured"]["warehouse_growth"] = previous["measured"]["warehouse_growth"]
    source_shared = default_source_dir()

    def record(key: str, values: list[float]) -> None:
        """Every run of a figure, and their median as the figure."""
        results["runs"][key] = [round(x, 1) for x in values]
        results[key] = round(statistics.median(values), 1)

    def save(done: bool = False) -> None:
        """Write what is measured so far, after every run: a bench cut short keeps what it measured."""
        results["complete"] = done
        results["peak_rss_mb"] = max(results.get("peak_rss_mb_cold", 0), results.get("peak_rss_mb_warm", 0))
        results["cold_over_floor"] = (
            round(results["cold_run_s"] / results["embed_floor_s"], 2) if results.get("cold_run_s") and results.get("embed_floor_s") else None
        )
        results["goals"] = GOALS
        output.write_text(json.dumps(results, indent=2) + "\n")

    with tempfile.TemporaryDirectory(prefix="workbank-bench-") as tmp:
        root = Path(tmp)
        source = private_sources(root)
        env = run_env(root, source)
        if args.only != "warm":
            # Floor and cold runs alternate, so a bench cut short has as many of one as of the other.
            results["measured"]["cold"] = stamp
            floors, colds, labels, cold_peaks = [], [], [], []
            for _ in range(cold_runs):
                seconds, texts, peak = embed_floor(source_shared)
                floors.append(seconds)
                cold_peaks.append(peak)
                results["embed_floor_texts"] = texts
                results["embed_floor_backend"] = DEFAULT_BACKEND
                shutil.rmtree(root / "data", ignore_errors=True)
                shutil.rmtree(root / "dagster_home", ignore_errors=True)
                elapsed, peak, _ = timed(PIPELINE, env)
                colds.append(elapsed)
                cold_peaks.append(peak)
                labels.append(label_seconds(env))
                record("embed_floor_s", floors)
                record("cold_run_s", colds)
                measured_labels = [x for x in labels if x is not None]
                results["label_cold_s"] = round(statistics.median(measured_labels), 1) if measured_labels else None
                results["peak_rss_mb_cold"] = round(max(cold_peaks))
                save()
            if args.torch_floor:
                seconds, _, _ = embed_floor(source_shared, backend="torch")
                record("embed_floor_torch_s", [seconds])
                results["embed_floor_torch_measured"] = stamp
                save()
            else:  # the kept figure keeps the stamp of the bench that measured it
                results["embed_floor_torch_measured"] = previous.get("embed_floor_torch_measured", previous.get("measured", {}).get("cold"))
        if args.only != "cold":
            results["measured"]["warm"] = stamp
            if args.warm_from:
                run_dir, cache_dir = (Path(p) for p in args.warm_from)
                shutil.copytree(run_dir / "data", root / "data")
                shutil.copytree(run_dir / "dagster_home", root / "dagster_home")
                shutil.rmtree(root / "data" / "cache", ignore_errors=True)
                shutil.copytree(cache_dir, root / "data" / "cache")
                timed(PIPELINE, env)  # not timed: brings the copied run to the warm state of this code
            warms, adds, warm_peaks = [], [], []
            for _ in range(args.runs):
                elapsed, peak, _ = timed(PIPELINE, env)
                warms.append(elapsed)
                warm_peaks.append(peak)
                record("warm_run_s", warms)
                results["peak_rss_mb_warm"] = round(max(warm_peaks))
                save()
            for i in range(args.runs):
                elapsed, peak = add_benchmark(root, source, f"bench-added-{i}")
                adds.append(elapsed)
                warm_peaks.append(peak)
                record("add_benchmark_s", adds)
                results["peak_rss_mb_warm"] = round(max(warm_peaks))
                save()
            results["growth"] = growth()
    save(done=True)
    print(json.dumps(results, indent=2))
    return 0


def in_clean_clone(argv: list[str], output: Path) -> int:
    """This script, with the same arguments, in a clean clone of HEAD beside ../shared (the clone's
    default source folder), its figures written to `output`. The clone is removed at the end."""
    with tempfile.TemporaryDirectory(prefix="workbank-bench-clone-") as tmp:
        clone = Path(tmp) / "main"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        os.symlink((REPO.parent / "shared").resolve(), Path(tmp) / "shared")
        env = {**os.environ, "PYTHONPATH": str(clone)}  # the clone's package, before the editable install of this checkout
        command = [sys.executable, str(clone / "bench" / "run.py"), *argv, "--working-tree", "--output", str(output)]
        return subprocess.run(command, cwd=clone, env=env).returncode


GOALS = {  # the limits of "Fast feedback" (issue 21); tools/readme.py judges the figures against them
    "cold_run_s": "<= 400",
    "warm_run_s": "<= 30",
    "add_benchmark_s": "<= 45",
    "peak_rss_mb": "<= 3072",
    "suite_ci_s": "<= 900 (bench/suite.py)",
    "suite_not_e2e_s": "<= 240 (bench/suite.py --not-e2e)",
}


if __name__ == "__main__":
    sys.exit(main())
