"""How often the label-uncertainty band covers the true uncovered share, with known labels
(`simulate_band_coverage`), in two worlds: one where the truth is where the band assumes it, one
where it is not. Writes bench/label_band_coverage.json, which docs/analysis.md's paragraph on the
band is written from (`tools/readme.py`) and a test recomputes (tests/analysis/test_uncertainty.py).

The simulation is not the pipeline's code and lives here, not in the package: the pipeline draws
its own band (analysis/calibration.py and analysis/label_draws.py, which this drives); this
only measures what that band is worth.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workbank_dagster.analysis.calibration import IDENTITY, _expit, _logit, fit_calibration  # noqa: E402
from workbank_dagster.analysis.coverage import uncovered_share  # noqa: E402
from workbank_dagster.analysis.label_draws import band, draw_shares, label_sets  # noqa: E402


def simulate_band_coverage(
    *, samples: int = 200, draws: int = 200, seed: int = 40, n_occupations: int = 200, tasks_per_occupation: int = 12,
    benchmark_sizes: tuple[int, ...] = (400, 300, 300, 200), n_tune: int = 65, candidates: int = 5, per_occupation: int = 6,
    threshold: int = 5, truth_model: str = "band", advantage: float = 1.0, true_calibration: tuple[float, float] = (-0.5, 0.6),
) -> dict:
    """How often the band covers the true uncovered share, with known labels.

    A synthetic economy: `n_occupations` occupations of `tasks_per_occupation` tasks with log-normal
    hours. Each benchmark asks mostly for the work of a few occupations of its own, and within an
    occupation some tasks come up more than others, so that tasks reach the threshold. Each prompt
    has `candidates` candidate occupations with the judge's probabilities (a softmax of scores, times
    a share of 0.5-1, the rest on occupations it did not keep), its confidence the best one's, and
    1-3 labels: the best candidate's most similar tasks. Its true labels are its true occupation's.
    Where the true occupation is, two ways (`truth_model`):

    - "band": as the band assumes. Candidates are drawn from the benchmark's occupations (60%) or
      by popularity; the truth is the best candidate with probability
      Λ(true_calibration[0] + true_calibration[1] · logit(confidence)) (an overconfident judge, as a
      softmax is), else another candidate in proportion to the judge's probabilities.
    - "ahead": not as the band assumes. The true occupation is drawn first (one of its benchmark's
      five with probability 0.8, else by popularity), the other candidates by popularity, and the
      judge scores the true one `advantage` standard deviations ahead. It does not know the
      benchmark's occupations, so among the alternatives the truth is not where the judge's
      probabilities put it.

    For each of `samples` suites, a tune set of `n_tune` prompts with known answers calibrates the
    confidence (`fit_calibration`), the band is drawn as the pipeline does, and the true share is
    compared with it; the band with the raw, uncalibrated confidence is scored beside it.
    """
    rng = np.random.default_rng(seed)
    n_tasks = n_occupations * tasks_per_occupation
    hours = rng.lognormal(0.0, 1.0, n_tasks)
    occupation_of = np.repeat(np.arange(n_occupations), tasks_per_occupation)
    log_popularity = np.log(rng.pareto(1.0, n_occupations) + 0.02)
    task_preference = rng.normal(0.0, 1.5, (n_occupations, tasks_per_occupation))
    cores = [rng.choice(n_occupations, size=5, replace=False) for _ in benchmark_sizes]

    def top_k(keys: np.ndarray, k: int) -> np.ndarray:
        return np.argsort(-keys, axis=-1, kind="stable")[..., :k]

    def suite(sizes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        n = int(sum(sizes))
        benchmark = np.repeat(np.arange(len(sizes)), sizes)
        rows = np.arange(n)
        if truth_model == "band":
            from_core = rng.random((n, candidates)) < 0.6
            keys = log_popularity + rng.gumbel(size=(n, n_occupations))
            for b, core in enumerate(cores):  # a benchmark's own occupations come first where a slot is drawn from them
                mine = benchmark % len(cores) == b
                keys[np.ix_(mine, core)] += 50.0 * rng.random((int(mine.sum()), len(core)))
            occ = np.empty((n, candidates), dtype=np.int64)
            taken = np.zeros((n, n_occupations), dtype=bool)
            for j in range(candidates):
                slot = np.where(from_core[:, j][:, None], keys, log_popularity + rng.gumbel(size=(n, n_occupations)))
                slot[taken] = -np.inf
                occ[:, j] = slot.argmax(axis=1)
                taken[rows, occ[:, j]] = True
            scores = rng.normal(0.0, 1.0, (n, candidates))
        else:
            core = np.array([cores[b % len(cores)][rng.integers(5)] for b in benchmark])
            anyone = top_k(log_popularity + rng.gumbel(size=(n, n_occupations)), 1)[:, 0]
            true = np.where(rng.random(n) < 0.8, core, anyone)
            keys = log_popularity + rng.gumbel(size=(n, n_occupations))
            keys[rows, true] = -np.inf
            occ = np.column_stack([true, top_k(keys, candidates - 1)])
            scores = rng.normal(0.0, 1.0, (n, candidates))
            scores[:, 0] += advantage
        p = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True) * rng.uniform(0.5, 1.0, (n, 1))
        order = np.argsort(-p, axis=1, kind="stable")
        occ, p = np.take_along_axis(occ, order, axis=1), np.take_along_axis(p, order, axis=1)
        if truth_model == "band":
            right = rng.random(n) < _expit(true_calibration[0] + true_calibration[1] * _logit(p[:, 0]))
            others = p[:, 1:] / p[:, 1:].sum(axis=1, keepdims=True)
            alternative = 1 + (rng.random((n, 1)) > np.cumsum(others, axis=1)).sum(axis=1).clip(max=candidates - 2)
            truth = np.where(right, 0, alternative)
        else:
            truth = np.argmax(order == 0, axis=1)  # where the true occupation went
        k = rng.integers(1, 4, n)
        within = top_k(task_preference[occ] + rng.gumbel(size=(n, candidates, tasks_per_occupation)), per_occupation)
        tasks = occ[:, :, None] * tasks_per_occupation + within  # (n, candidates, per_occupation), most similar first
        return p, truth, k, tasks, benchmark

    def frames(p, k, tasks, benchmark):
        n = len(p)
        ids = np.array([f"p{i:05d}" for i in range(n)])
        names = np.array([f"b{b}" for b in benchmark])
        first = np.arange(per_occupation)[None, :] < k[:, None]
        labels = pd.DataFrame({"benchmark": np.repeat(names, per_occupation)[first.ravel()], "prompt_id": np.repeat(ids, per_occupation)[first.ravel()],
                               "task_id": tasks[:, 0, :].ravel()[first.ravel()]})
        judgements = pd.DataFrame({"benchmark": names, "prompt_id": ids, "status": "labeled", "confidence": p[:, 0]})
        shape = (n, candidates, per_occupation)
        index = np.indices(shape)
        candidate_rows = pd.DataFrame(
            {"benchmark": names[index[0].ravel()], "prompt_id": ids[index[0].ravel()], "occupation_rank": index[1].ravel() + 1,
             "occupation_probability": p[index[0].ravel(), index[1].ravel()], "task_rank": index[2].ravel() + 1, "task_id": tasks.ravel()}
        )
        return labels, judgements, candidate_rows

    covered = {"calibrated": 0, "raw": 0}
    truths, widths, estimates, fitted = np.empty(samples), np.empty(samples), np.empty(samples), 0
    task_ids = np.arange(n_tasks)
    for s in range(samples):
        tune_p, tune_truth, *_ = suite((n_tune,))
        calibration = fit_calibration(tune_p[:, 0], tune_truth == 0)
        fitted += calibration.fitted
        p, truth, k, tasks, benchmark = suite(benchmark_sizes)
        true_counts = np.zeros(n_tasks)
        chosen = tasks[np.arange(len(p)), truth]
        np.add.at(true_counts, chosen[np.arange(per_occupation)[None, :] < k[:, None]], 1.0)
        truths[s] = uncovered_share(true_counts, hours, threshold)
        sets = label_sets(*frames(p, k, tasks, benchmark), task_ids)
        estimates[s] = uncovered_share(sets.incidence.T @ sets.own.astype(float), hours, threshold)
        for name, cal in (("calibrated", calibration), ("raw", IDENTITY)):
            low, high = band(draw_shares(sets, cal, hours, occupation_of, threshold, draws=draws, seed=seed + s)["share"])
            covered[name] += bool(low <= truths[s] <= high)
            if name == "calibrated":
                widths[s] = high - low
    return {
        "samples": samples,
        "draws": draws,
        "seed": seed,
        "population": {"occupations": n_occupations, "tasks": n_tasks, "benchmark_sizes": list(benchmark_sizes), "tune_prompts": n_tune,
                       "candidates": candidates, "threshold": threshold, "truth_model": truth_model,
                       **({"true_calibration": list(true_calibration)} if truth_model == "band" else {"advantage": advantage})},
        "calibrations_fitted": fitted,
        "mean_true_share": float(truths.mean()),
        "mean_estimate": float(estimates.mean()),
        "mean_band_width": float(widths.mean()),
        "coverage": {name: covered[name] / samples for name in covered},
    }


SCENARIOS = {
    "as_assumed": {"truth_model": "band", "samples": 100, "draws": 100},
    "not_as_assumed": {"truth_model": "ahead", "samples": 100, "draws": 100},
}

if __name__ == "__main__":
    out = {"scenarios": {}}
    for name, arguments in SCENARIOS.items():
        started = time.perf_counter()
        result = simulate_band_coverage(**arguments)
        out["scenarios"][name] = {"arguments": arguments, **result, "seconds": round(time.perf_counter() - started, 1)}
    (REPO / "bench" / "label_band_coverage.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
