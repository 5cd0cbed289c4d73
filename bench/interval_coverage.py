"""How often the uncovered-work-time bootstrap intervals cover the truth, on a synthetic population
with a known answer (`simulate_interval_coverage`); writes bench/interval_coverage.json, which the
README's interval paragraph is written from (tools/readme.py) and a test recomputes
(tests/analysis/test_analysis_units.py).

The simulation is not the pipeline's code and lives here, not in the package: the pipeline
bootstraps its own labels (analysis/coverage.py's `bootstrap_share`, which this drives); this only
measures what that interval is worth.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import sparse

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workbank_dagster.analysis.coverage import REPORTED_INTERVAL, bootstrap_share  # noqa: E402


def simulate_interval_coverage(
    *, samples: int = 400, replicates: int = 200, seed: int = 2026, n_tasks: int = 2000, sizes: tuple[int, ...] = (200, 300, 400),
    labels_per_prompt: int = 2, threshold: int = 5,
) -> dict:
    """How often each bootstrap interval of `bootstrap_share` covers the true uncovered share.

    A synthetic population with a known answer: `n_tasks` tasks with log-normal hours and a skewed
    (Pareto) chance of being labeled; a benchmark suite is `sizes` prompts in benchmarks, each prompt
    labeling `labels_per_prompt` distinct tasks drawn with those chances. The true share is the
    plug-in one, the share of hours on tasks whose expected number of prompts in a suite of this
    size is below `threshold` (the inclusion chances are measured on 200,000 simulated prompts).
    Each of `samples` suites is drawn, its share estimated and bootstrapped as the pipeline does
    (prompts resampled within benchmarks, `replicates` replicates).
    """
    rng = np.random.default_rng(seed)
    hours = rng.lognormal(0.0, 1.0, n_tasks)
    weight = rng.pareto(1.2, n_tasks) + 0.05
    log_p = np.log(weight / weight.sum())

    def draw(n: int) -> np.ndarray:  # Gumbel top-k: k distinct tasks per prompt, drawn by weight
        keys = log_p + rng.gumbel(size=(n, n_tasks))
        rows = np.arange(n)
        chosen = np.empty((n, labels_per_prompt), dtype=np.int64)
        for j in range(labels_per_prompt):  # the k largest keys by k row-wise argmaxes (30x faster than argpartition)
            chosen[:, j] = keys.argmax(axis=1)
            keys[rows, chosen[:, j]] = -np.inf
        return chosen

    inclusion = np.zeros(n_tasks)
    for _ in range(20):
        np.add.at(inclusion, draw(10_000).ravel(), 1.0)
    n_prompts = sum(sizes)
    expected = n_prompts * inclusion / 200_000
    truth = float(hours[expected < threshold].sum() / hours.sum())
    groups, start = [], 0
    for size in sizes:
        groups.append(np.arange(start, start + size))
        start += size
    methods = ("percentile", "basic", "bca")
    covered = dict.fromkeys(methods, 0)
    estimates = np.empty(samples)
    for s in range(samples):
        chosen = draw(n_prompts)
        incidence = sparse.csr_matrix(
            (np.ones(chosen.size), (np.repeat(np.arange(n_prompts), labels_per_prompt), chosen.ravel())), shape=(n_prompts, n_tasks)
        )
        boot = bootstrap_share(incidence, hours, groups, threshold, replicates=replicates, rng=rng)
        estimates[s] = boot["estimate"]
        for m in methods:
            covered[m] += boot[f"ci_low_{m}"] <= truth <= boot[f"ci_high_{m}"]
    return {
        "samples": samples,
        "replicates": replicates,
        "seed": seed,
        "population": {"tasks": n_tasks, "benchmark_sizes": list(sizes), "labels_per_prompt": labels_per_prompt, "threshold": threshold},
        "true_share": truth,
        "mean_estimate": float(estimates.mean()),
        "coverage": {m: covered[m] / samples for m in methods},
        "reported": REPORTED_INTERVAL,
    }


if __name__ == "__main__":
    started = time.perf_counter()
    result = simulate_interval_coverage()
    result["seconds"] = round(time.perf_counter() - started, 1)
    (REPO / "bench" / "interval_coverage.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
