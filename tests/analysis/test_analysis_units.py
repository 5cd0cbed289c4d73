"""Sensitivity, bootstrap, O*NET-weighted scores, WORKBank zones and the telework split on small data with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbank_dagster.analysis.coverage import (
    BenchmarkCounts,
    bootstrap_share,
    bootstrap_uncovered_share,
    prompt_task_pairs,
    prompts_per_task,
    sensitivity_table,
    summarise,
)
from workbank_dagster.analysis.scores import occupation_model_scores, score_differences
from workbank_dagster.analysis.telework import match_telework, telework_split
from workbank_dagster.analysis.zones import agency_table, coverage_by_zone, modal_level, task_zones, unbenchmarked_green_light, zone

TASKS = pd.DataFrame(
    {
        "task_id": [1, 2, 3, 4],
        "onet_soc_code": ["11-1011.00", "11-1011.00", "15-1252.00", "47-2061.00"],
        "family_code": ["11-0000", "11-0000", "15-0000", "47-0000"],
        "hours": [100.0, 300.0, 600.0, np.nan],
    }
)
FAMILIES = ["11-0000", "15-0000", "47-0000"]


def _labels(rows):
    return pd.DataFrame(rows, columns=["benchmark", "prompt_id", "task_id", "prompt_hash"])


def test_summarise_by_hand():
    labels = _labels([("a", "1", 1, "h1"), ("a", "2", 1, "h2"), ("b", "1", 3, "h1"), ("b", "2", 3, "h3")])
    s = summarise(prompts_per_task(labels), TASKS, 2, FAMILIES)
    # tasks 1 and 3 covered; occupations 11-1011 and 15-1252; family 47 uncovered; hours uncovered = 300 of 1000
    assert s == {"n_tasks_covered": 2, "n_occupations_with_covered_task": 2, "n_families_without_covered_occupation": 1, "work_time_share_uncovered": 0.3}
    # Duplicate texts once: task 3's two prompts are distinct texts, task 1's too; h1 appears on tasks 1 and 3.
    assert prompts_per_task(labels, dedupe_texts=True).to_dict() == {1: 2, 3: 2}


def test_sensitivity_variants():
    active = _labels([("a", "1", 1, "h1"), ("a", "2", 1, "h1"), ("b", "1", 3, "h2")])
    other = _labels([("a", "1", 2, "h1")])
    counts = {"emb": BenchmarkCounts.from_labels(active, TASKS), "llm": BenchmarkCounts.from_labels(other, TASKS)}
    texts = prompts_per_task(active, dedupe_texts=True)
    table = sensitivity_table(counts, texts, TASKS, FAMILIES, active_labeler="emb", threshold=2, thresholds=(1, 2))
    by = {(r.variant, r.labeler, r.threshold): r for r in table.itertuples()}
    assert by[("threshold", "emb", 1)].n_tasks_covered == 2 and by[("threshold", "emb", 2)].n_tasks_covered == 1
    assert by[("judge", "llm", 2)].n_tasks_covered == 0
    assert by[("duplicate_texts_once", "emb", 2)].n_tasks_covered == 0  # both prompts of task 1 share one text
    assert by[("without:a", "emb", 2)].n_tasks_covered == 0 and ("without:b", "emb", 2) in by


def test_bootstrap_is_deterministic_and_its_intervals_are_the_textbook_ones():
    rng = np.random.default_rng(0)
    tasks = pd.DataFrame({"task_id": range(50), "onet_soc_code": [f"11-{i:04d}.00" for i in range(50)], "family_code": "11-0000", "hours": rng.uniform(1, 10, 50)})
    prompts = pd.DataFrame({"benchmark": ["a"] * 100 + ["b"] * 100, "prompt_id": [str(i) for i in range(200)]})
    labels = pd.DataFrame({"benchmark": prompts["benchmark"], "prompt_id": prompts["prompt_id"], "task_id": rng.integers(0, 50, 200), "prompt_hash": prompts["prompt_id"]})
    point = summarise(prompts_per_task(labels), tasks, 4, ["11-0000"])["work_time_share_uncovered"]
    pairs, sizes = prompt_task_pairs(labels, prompts)
    boot = bootstrap_uncovered_share(pairs, sizes, tasks, 4, replicates=100, seed=1)
    assert boot["estimate"] == pytest.approx(point)
    low, high = np.percentile(boot["shares"], [2.5, 97.5])
    assert (boot["ci_low_percentile"], boot["ci_high_percentile"]) == pytest.approx((low, high), abs=1e-12)
    # The reported interval is the basic (pivotal) one: 2 x estimate - the percentiles, by hand.
    assert (boot["ci_low"], boot["ci_high"]) == (boot["ci_low_basic"], boot["ci_high_basic"])
    assert (boot["ci_low"], boot["ci_high"]) == pytest.approx((2 * point - high, 2 * point - low), abs=1e-15)
    again = bootstrap_uncovered_share(pairs, sizes, tasks, 4, replicates=100, seed=1)
    assert (again["ci_low"], again["ci_high"], again["ci_low_bca"]) == (boot["ci_low"], boot["ci_high"], boot["ci_low_bca"])


def test_a_benchmark_s_counts_sum_to_every_benchmark_s_and_leave_it_out():
    """The per-benchmark aggregate gives what the labels give: over every benchmark, and without each one."""
    labels = _labels([("a", "1", 1, "h1"), ("a", "2", 1, "h2"), ("a", "2", 3, "h2"), ("b", "1", 3, "h1"), ("b", "1", 3, "h1"), ("c", "9", 9, "h9")])
    counts = BenchmarkCounts.from_labels(labels, TASKS)
    assert counts.benchmarks == ["a", "b", "c"]
    assert list(counts.total) == list(prompts_per_task(labels).reindex(TASKS["task_id"]).fillna(0))  # task 9 is not in TASKS
    for benchmark in counts.benchmarks:
        rest = labels[labels["benchmark"] != benchmark]
        assert list(counts.without(benchmark)) == list(prompts_per_task(rest).reindex(TASKS["task_id"]).fillna(0))


def test_summarise_with_its_groups_coded_once_is_what_it_was():
    """Summary codes occupations and families once (the sensitivity table summarises every
    benchmark left out): the figures are those of the groupby and set it replaced (#42), on random
    counts, with a task of no occupation, a family outside `families` and one named twice."""
    rng = np.random.default_rng(4)
    n = 400
    tasks = pd.DataFrame({
        "task_id": np.arange(n),
        "onet_soc_code": [None if i == 7 else f"{rng.integers(11, 20)}-{rng.integers(0, 30):04d}.00" for i in range(n)],
        "family_code": [f"{rng.integers(11, 21)}-0000" for _ in range(n)],
        "hours": np.where(rng.random(n) < 0.1, np.nan, rng.uniform(1, 100, n)),
    })
    families = [f"{f}-0000" for f in range(11, 20)] + ["11-0000"]
    for trial in range(20):
        counts = rng.integers(0, 8, n).astype(float)
        covered = counts >= 3
        hours = tasks["hours"].to_numpy()
        has = ~np.isnan(hours)
        with_family = set(tasks.loc[covered, "family_code"])
        expected = {
            "n_tasks_covered": int(covered.sum()),
            "n_occupations_with_covered_task": int(pd.Series(covered).groupby(tasks["onet_soc_code"].to_numpy()).any().sum()),
            "n_families_without_covered_occupation": sum(1 for f in families if f not in with_family),
            "work_time_share_uncovered": float(hours[has & ~covered].sum() / hours[has].sum()),
        }
        assert summarise(counts, tasks, 3, families) == expected, trial


def test_the_bootstrap_draws_as_it_did_with_one_count_per_benchmark():
    """Counting every benchmark's draws at once (one bincount a replicate, not one per benchmark, each
    as long as every prompt) keeps the replicates to the bit: the same draws, in the same order."""
    rng = np.random.default_rng(2)
    tasks = pd.DataFrame({"task_id": range(30), "onet_soc_code": "11-1011.00", "family_code": "11-0000", "hours": rng.uniform(1, 10, 30)})
    prompts = pd.DataFrame({"benchmark": ["b"] * 40 + ["a"] * 70 + ["c"] * 5, "prompt_id": [f"p{i}" for i in range(115)]})
    labels = pd.DataFrame({"benchmark": prompts["benchmark"], "prompt_id": prompts["prompt_id"], "task_id": rng.integers(0, 30, 115)})
    pairs, sizes = prompt_task_pairs(labels, prompts)
    assert sizes == [70, 40, 5]  # benchmarks in order
    ours = bootstrap_uncovered_share(pairs, sizes, tasks, 3, replicates=50, seed=7)
    # The loop as it was (#42): the prompts in (benchmark, prompt_id) order, one bincount per benchmark.
    ordered = prompts.sort_values(["benchmark", "prompt_id"]).reset_index(drop=True)
    at = {key: i for i, key in enumerate(zip(ordered["benchmark"], ordered["prompt_id"]))}
    from scipy import sparse

    incidence = sparse.csr_matrix((np.ones(115), ([at[(b, p)] for b, p in zip(labels["benchmark"], labels["prompt_id"])], labels["task_id"])), shape=(115, 30))
    hours = tasks["hours"].to_numpy()

    def as_it_was(groups):
        draw = np.random.default_rng(7)
        shares = []
        for _ in range(50):
            weights = np.zeros(115)
            for members in groups:
                weights += np.bincount(draw.choice(members, size=len(members), replace=True), minlength=115)
            shares.append(hours[(incidence.T @ weights) < 3].sum() / hours.sum())
        return shares

    groups = [np.where(ordered["benchmark"].to_numpy() == b)[0] for b in ordered["benchmark"].unique()]
    shares = as_it_was(groups)
    assert list(ours["shares"]) == shares
    assert bootstrap_share(incidence, hours, groups, 3, replicates=50, rng=np.random.default_rng(7))["shares"].tolist() == shares
    # Groups that are not runs of consecutive prompts (drawn from by position in the group, not as a
    # range), and a one-prompt group, draw as they did too.
    mixed = [np.arange(0, 114, 2), np.arange(1, 114, 2)[::-1], np.array([114])]
    assert bootstrap_share(incidence, hours, mixed, 3, replicates=50, rng=np.random.default_rng(7))["shares"].tolist() == as_it_was(mixed)


def test_bca_interval_matches_scipy_on_the_same_replicates():
    """Our BCa formulas against scipy.stats.bootstrap's, fed the replicates and jackknife scipy used."""
    from scipy import stats

    from workbank_dagster.analysis.coverage import bootstrap_intervals

    x = np.random.default_rng(5).lognormal(size=40)
    res = stats.bootstrap((x,), np.mean, method="BCa", n_resamples=2000, random_state=np.random.default_rng(6))
    jackknife = np.array([np.delete(x, i).mean() for i in range(len(x))])
    ours = bootstrap_intervals(res.bootstrap_distribution, float(x.mean()), jackknife)
    assert ours["ci_low_bca"] == pytest.approx(res.confidence_interval.low, rel=1e-3)
    assert ours["ci_high_bca"] == pytest.approx(res.confidence_interval.high, rel=1e-3)
    basic = stats.bootstrap((x,), np.mean, method="basic", n_resamples=2000, random_state=np.random.default_rng(6))
    assert ours["ci_low_basic"] == pytest.approx(basic.confidence_interval.low, rel=1e-9)
    assert ours["ci_high_basic"] == pytest.approx(basic.confidence_interval.high, rel=1e-9)


def test_bca_ends_are_scipy_stats_norms_bit_for_bit_without_importing_scipy_stats():
    """bootstrap_intervals takes the normal quantile and distribution function from scipy.special
    (ndtri, ndtr), which scipy.stats' norm.ppf and norm.cdf compute: the same BCa ends, exactly, and
    a run whose fits are kept does not pay scipy.stats' import (0.8 s)."""
    import subprocess
    import sys

    from scipy import stats

    from workbank_dagster.analysis.coverage import bootstrap_intervals

    rng = np.random.default_rng(11)
    shares, jackknife = rng.normal(0.9, 0.01, 200), rng.normal(0.9, 0.001, 500)
    ours = bootstrap_intervals(shares, 0.905, jackknife)
    below = (np.sum(shares < 0.905) + 0.5 * np.sum(shares == 0.905)) / len(shares)
    z0 = stats.norm.ppf(np.clip(below, 0.5 / len(shares), 1 - 0.5 / len(shares)))
    d = jackknife.mean() - jackknife
    acceleration = float((d**3).sum() / (6.0 * float((d**2).sum()) ** 1.5))
    z = stats.norm.ppf([0.025, 0.975])
    ends = np.percentile(shares, 100 * np.clip(stats.norm.cdf(z0 + (z0 + z) / (1 - acceleration * (z0 + z))), 0.0, 1.0))
    assert (ours["ci_low_bca"], ours["ci_high_bca"], ours["bca_z0"]) == (float(ends[0]), float(ends[1]), float(z0))
    probe = ("import sys, numpy as np; from workbank_dagster.analysis.coverage import bootstrap_intervals; "
             "bootstrap_intervals(np.linspace(0.8, 0.9, 50), 0.85, np.linspace(0.84, 0.86, 9)); print('scipy.stats' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_weighted_and_simple_scores_by_hand():
    labels = pd.DataFrame({"benchmark": "b", "prompt_id": ["p1", "p2", "p3", "p1"], "task_id": [1, 1, 2, 2]})
    results = pd.DataFrame({"benchmark": "b", "model": "m", "prompt_id": ["p1", "p2", "p3"], "score": [1.0, 0.0, 1.0]})
    tasks = pd.DataFrame({"task_id": [1, 2, 3], "onet_soc_code": ["11-1011.00"] * 3})
    out = occupation_model_scores(results, labels, tasks, k=2).iloc[0]
    # task 1: p1, p2 -> 0.5; task 2: p3, p1 -> 1.0; weighted = 0.75; simple over {p1, p2, p3} = 2/3
    assert out["n_tasks"] == 2 and out["n_prompts"] == 3
    assert out["weighted_score"] == pytest.approx(0.75) and out["simple_score"] == pytest.approx(2 / 3)
    assert out["share_of_occupation_tasks"] == pytest.approx(2 / 3)
    assert occupation_model_scores(results, labels, tasks, k=3).empty
    diff = score_differences(occupation_model_scores(results, labels, tasks, k=2), pd.Series({"11-1011.00": "Chief Executives"}))
    assert diff.loc[0, "label"] == "Chief Executives · 2 tasks · 3 prompts"
    # The prompts behind a row whose labels the judge marks as weak are counted (unknown without bars).
    assert pd.isna(out["n_prompts_weak"])
    weak = pd.DataFrame({"benchmark": ["b", "b"], "prompt_id": ["p2", "p9"]})
    assert occupation_model_scores(results, labels, tasks, k=2, weak=weak).iloc[0]["n_prompts_weak"] == 1


def test_zones_at_three():
    assert zone(3.0, 3.0) == "Green Light" and zone(2.9, 3.0) == "Red Light"
    assert zone(3.5, 2.5) == "R&D Opportunity" and zone(1, 1) == "Low Priority" and zone(None, 3) is None


def test_modal_level_ties_nearest_mean_then_lower():
    assert modal_level(pd.Series([2, 2, 3])) == (2, False)
    assert modal_level(pd.Series([1, 1, 4, 4, 5])) == (4, True)  # mean 3.0: 4 is nearer than 1
    assert modal_level(pd.Series([2, 2, 4, 4])) == (2, True)  # mean 3.0: equally near, lower wins


def test_task_zones_and_tables():
    workers = pd.DataFrame({"task_id": [1, 1, 2, 3], "automation_desire": [4.0, 3.0, 1.0, 5.0], "human_agency_scale": [2, 2, 5, 1]})
    experts = pd.DataFrame({"task_id": [1, 2, 2, 4], "automation_capacity": [4.0, 4.0, 5.0, 2.0], "human_agency_scale": [1, 3, 4, 2]})
    zones, ties = task_zones(workers, experts)
    z = zones.set_index("task_id")
    assert z.loc[1, "zone"] == "Green Light" and z.loc[2, "zone"] == "Red Light" and pd.isna(z.loc[3, "zone"])
    assert pd.isna(z.loc[3, "mean_capability"]) and pd.isna(z.loc[4, "mean_desire"])
    assert ties == {"worker": 0, "expert": 1} and z.loc[2, "modal_has_expert"] == 3  # mean 3.5: 3 and 4 tie, lower wins
    table = agency_table(zones)
    assert table.shape == (5, 6) and table.set_index("worker").loc["H2", "H1"] == 1
    zones["covered"] = [False, True, False, False]
    zones["hours"] = [10.0, 5.0, 1.0, 2.0]
    by_zone = coverage_by_zone(zones).set_index("zone")
    assert by_zone.loc["Green Light", "n_tasks"] == 1 and by_zone.loc["Red Light", "n_covered"] == 1
    green = unbenchmarked_green_light(zones)
    assert green["task_id"].tolist() == [1]


def test_user_audit_reading_and_table(tmp_path):
    from workbank_dagster.audits.tables import audit_table, read_audit
    from workbank_dagster.sources.validate import SourceFormatError

    path = tmp_path / "acme.csv"
    path.write_text("task_id,task,desire,capability\n21670,,4,4\n,Answer customer calls,2,4.5\n")
    frame = read_audit(path)
    tasks = pd.DataFrame({"task_id": [21670, 2587], "task": ["Modify software", "Review policies"], "onet_soc_code": ["15-1252.00", "43-4051.00"], "n_prompts": [7, 0], "covered": [True, False]})
    matches = pd.DataFrame({"row": [3], "task_id": [2587], "match_score": [0.61]})
    table = audit_table("acme", frame, matches, tasks, path)
    assert table["matched_by"].tolist() == ["task_id", "embedded judge"]
    assert table["zone"].tolist() == ["Green Light", "Red Light"] and table["unbenchmarked"].tolist() == [False, True]
    path.write_text("task_id,task\n,\n")
    with pytest.raises(SourceFormatError, match="acme.csv:2"):
        read_audit(path)
    path.write_text("task_id,desire\n99999999,3\n")
    with pytest.raises(SourceFormatError, match="not an O\\*NET 29.3 task ID"):
        audit_table("acme", read_audit(path), matches.iloc[0:0], tasks, path)
    path.write_text("task_id,desire\n21670,7\n")
    with pytest.raises(SourceFormatError, match="'desire'"):
        read_audit(path)


# Dingel-Neiman scores (O*NET-SOC 2010 codes) and a BLS SOC 2010 -> 2018 crosswalk, made up but shaped like the real ones.
TELEWORK = pd.DataFrame(
    {
        "onet_soc_code": ["11-1011.00", "11-1011.03", "15-1132.00", "15-1133.00", "15-1199.01", "15-1199.02", "11-9061.00", "11-2031.00"],
        "teleworkable": [0.5, 0.1, 1.0, 0.6, 0.0, 1.0, 0.2, 0.9],
    }
)
SOC_CROSSWALK = pd.DataFrame(
    [
        ("11-1011", "11-1011"),  # kept its code
        ("15-1132", "15-1252"), ("15-1133", "15-1252"),  # two 2010 codes merged into one 2018 code
        ("15-1132", "15-1253"), ("15-1133", "15-1253"), ("15-1199", "15-1253"), ("15-1199", "15-1299"),
        ("11-9061", "11-9171"),  # renumbered and renamed: Funeral Service Managers -> Funeral Home Managers
        ("11-2031", "11-2032"), ("11-2031", "11-2033"),  # one 2010 code split into two 2018 codes
        ("47-2061", "47-2061"),  # no Dingel-Neiman score for 47-2061
    ],
    columns=["soc_2010_code", "soc_2018_code"],
)
TELEWORK_TASKS = pd.DataFrame(
    {
        "onet_soc_code": [
            "11-1011.00", "11-1011.04", "15-1252.00", "15-1253.00", "11-9171.00", "11-2032.00", "11-2033.00", "47-2061.00", "47-2061.00",
        ],
        "hours": [100.0, 0.0, 200.0, 100.0, 100.0, 50.0, 50.0, 400.0, np.nan],
        "covered": [True, False, False, False, True, False, True, False, False],
    }
)


def test_telework_matched_through_the_soc_2010_2018_crosswalk():
    scores, methods, how = match_telework(TELEWORK_TASKS["onet_soc_code"], TELEWORK, SOC_CROSSWALK)
    # 11-9171.00 has no 2010 twin and no Dingel-Neiman code shares its six digits: only the crosswalk (11-9061 -> 11-9171) finds it.
    assert scores["11-9171.00"] == pytest.approx(0.2) and methods["11-9171.00"] == "crosswalk"
    # 15-1252 is fed by 15-1132 and 15-1133: the average of their scores.
    assert scores["15-1252.00"] == pytest.approx((1.0 + 0.6) / 2)
    # 15-1253 by 15-1132, 15-1133 and 15-1199, whose two O*NET codes count once, as their mean 0.5 (not 4 codes at 0.65).
    assert scores["15-1253.00"] == pytest.approx((1.0 + 0.6 + 0.5) / 3)
    # 11-2031 split into 11-2032 and 11-2033: each gets its full score.
    assert scores["11-2032.00"] == pytest.approx(0.9) and scores["11-2033.00"] == pytest.approx(0.9)
    # The exact O*NET-SOC match comes first (0.5, not the SOC mean 0.3); a new O*NET code of the same SOC gets the crosswalked mean.
    assert scores["11-1011.00"] == pytest.approx(0.5) and methods["11-1011.00"] == "exact"
    assert scores["11-1011.04"] == pytest.approx((0.5 + 0.1) / 2) and methods["11-1011.04"] == "crosswalk"
    assert "47-2061.00" not in scores.index and methods["47-2061.00"] == "unmatched"
    counts = {k: how[k] for k in ("exact", "crosswalk", "unmatched", "crosswalk_averaged")}
    assert counts == {"exact": 1, "crosswalk": 6, "unmatched": 1, "crosswalk_averaged": 2}


def test_telework_split_reports_the_unmatched_hours():
    table, how = telework_split(TELEWORK_TASKS, TELEWORK, SOC_CROSSWALK)
    rows = table.set_index("group")
    assert rows.index.tolist() == ["teleworkable", "not_teleworkable", "unmatched"]
    # Of 1,000 hours (the NaN row dropped): 400 unmatched (47-2061.00); teleworkable 50 + 160 + 70 + 20 + 45 + 45 = 390.
    assert rows.at["unmatched", "hours_total"] == pytest.approx(400.0) and rows.at["unmatched", "hours_uncovered"] == pytest.approx(400.0)
    assert rows.at["teleworkable", "hours_total"] == pytest.approx(390.0)
    assert rows.at["teleworkable", "hours_uncovered"] == pytest.approx(160 + 70 + 45)
    assert rows.at["not_teleworkable", "hours_total"] == pytest.approx(210.0) and rows["hours_total"].sum() == pytest.approx(1000.0)
    assert how["hours_unmatched_share"] == pytest.approx(0.4)
    assert how["hours_share"] == pytest.approx({"exact": 0.1, "crosswalk": 0.5, "unmatched": 0.4})
    assert "average" in how["averaging"]


def test_interval_coverage_simulation_is_what_the_readme_says(monkeypatch):
    """400 simulated suites from a population with a known answer (a count threshold): how often each
    bootstrap interval covers the true share. The committed bench/interval_coverage.json (which the
    README's paragraph is written from) is this computation (bench/interval_coverage.py); the reported
    interval is called a confidence interval only if it covers 92-98% of the time, and if another
    interval did, it would have to be the one reported."""
    import json

    from workbank_dagster.analysis.coverage import INTERVAL_NOTE, REPORTED_INTERVAL
    from workbank_dagster.report.intervals import BOOTSTRAP_CI_COVERAGE as NOMINAL
    from workbank_dagster.settings import REPO_ROOT

    monkeypatch.syspath_prepend(str(REPO_ROOT / "bench"))
    from interval_coverage import simulate_interval_coverage

    result = simulate_interval_coverage()  # its time on this machine is in bench/interval_coverage.json ("seconds")
    assert result["samples"] >= 400
    committed = json.loads((REPO_ROOT / "bench" / "interval_coverage.json").read_text())
    assert {k: v for k, v in committed.items() if k != "seconds"} == json.loads(json.dumps(result))
    reached = [m for m, v in result["coverage"].items() if NOMINAL[0] <= v <= NOMINAL[1]]
    if reached:
        assert REPORTED_INTERVAL in reached and "not a confidence interval" not in INTERVAL_NOTE
    else:
        assert "not a confidence interval" in INTERVAL_NOTE


def test_counts_of_pairs_are_the_distinct_prompts_per_benchmark_and_task():
    """coverage.counts_of_pairs (the coverage step's active labeler, from prompts by position) gives
    the per-benchmark counts that counting distinct prompt ids by name gives (BenchmarkCounts.from_labels),
    a label read twice and a benchmark without labels included."""
    from workbank_dagster.analysis.coverage import BenchmarkCounts, counts_of_pairs, prompt_task_pairs

    rng = np.random.default_rng(4)
    prompts = pd.DataFrame([(b, f"p{i}") for b, n in (("a", 5), ("b", 3), ("c", 7)) for i in range(n)], columns=["benchmark", "prompt_id"])
    picked = prompts[prompts["benchmark"] != "b"].sample(20, replace=True, random_state=2)
    labels = picked.assign(task_id=rng.integers(1, 6, len(picked)))
    labels = pd.concat([labels, labels.head(4)], ignore_index=True)
    tasks = pd.DataFrame({"task_id": range(1, 6)})
    pairs, sizes = prompt_task_pairs(labels, prompts)
    sized = pd.DataFrame({"benchmark": ["a", "b", "c"], "n_prompts": sizes})
    ours, theirs = BenchmarkCounts(counts_of_pairs(pairs, sized), tasks), BenchmarkCounts.from_labels(labels, tasks)
    assert ours.benchmarks == theirs.benchmarks == ["a", "c"]
    assert (ours.matrix.toarray() == theirs.matrix.toarray()).all()
    assert len(counts_of_pairs(pairs.iloc[0:0], sized)) == 0
