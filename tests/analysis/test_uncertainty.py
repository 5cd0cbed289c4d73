"""The label-uncertainty band (analysis/uncertainty.py, calibration.py, label_draws.py): its
calibration against statsmodels, its re-drawing by hand and in frequency, the judge's weak labels,
and the simulation with known labels that says how often the band covers the truth
(bench/label_band_coverage.json)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from workbank_dagster.analysis.calibration import IDENTITY, calibrated_probability, fit_calibration
from workbank_dagster.analysis.coverage import prompts_per_task, summarise
from workbank_dagster.analysis.label_draws import draw_shares, draws_per_chunk, label_sets
from workbank_dagster.analysis.uncertainty import uncertainty_tables, weak_prompts


def test_the_calibration_is_statsmodels_logit_on_logit_confidence():
    import statsmodels.api as sm

    rng = np.random.default_rng(1)
    confidence = rng.uniform(0.02, 0.98, 300)
    correct = rng.random(300) < calibrated_probability(confidence, -0.5, 0.7)
    fit = fit_calibration(confidence, correct)
    x = np.log(confidence / (1 - confidence))
    reference = sm.Logit(correct.astype(float), sm.add_constant(x)).fit(disp=False)
    assert fit.fitted and (fit.n, fit.n_correct) == (300, int(correct.sum()))
    assert (fit.intercept, fit.slope) == pytest.approx(tuple(reference.params), rel=1e-8)
    assert fit.cov == pytest.approx(np.asarray(reference.cov_params()), rel=1e-6)


def test_a_calibration_that_cannot_be_fitted_says_so_and_keeps_the_raw_confidence():
    assert not fit_calibration([0.3] * 5, [1, 0, 1, 0, 1]).fitted  # too few prompts
    unfit = fit_calibration(np.linspace(0.1, 0.9, 20), np.ones(20))  # all right
    assert not unfit.fitted and unfit.probability([0.3])[0] == pytest.approx(0.3)


def _toy():
    """Two labeled prompts, one abstained, on six tasks of three occupations."""
    labels = pd.DataFrame({"benchmark": "b", "prompt_id": ["p1", "p1", "p2"], "task_id": [10, 11, 20], "rank": [1, 2, 1], "score": [0.5, 0.4, 0.15]})
    judgements = pd.DataFrame({"benchmark": "b", "prompt_id": ["p1", "p2", "p3"], "status": ["labeled", "labeled", "abstained"],
                               "confidence": [0.9, 0.3, 0.01]})
    candidates = pd.DataFrame(
        [("p1", 1, 0.9, 1, 10), ("p1", 1, 0.9, 2, 11), ("p1", 2, 0.06, 1, 20), ("p1", 2, 0.06, 2, 21), ("p1", 3, 0.02, 1, 30),
         ("p2", 1, 0.3, 1, 20), ("p2", 2, 0.2, 1, 30), ("p2", 2, 0.2, 2, 31)],
        columns=["prompt_id", "occupation_rank", "occupation_probability", "task_rank", "task_id"],
    ).assign(benchmark="b")
    tasks = pd.DataFrame({"task_id": [10, 11, 20, 21, 30, 31], "onet_soc_code": ["A", "A", "B", "B", "C", "C"], "hours": [1.0, 2.0, 3.0, 4.0, 5.0, np.nan]})
    return labels, judgements, candidates, tasks


def test_label_sets_by_hand():
    labels, judgements, candidates, tasks = _toy()
    sets = label_sets(labels, judgements, candidates, tasks["task_id"].to_numpy())
    # p1: its own {10, 11}; occupation 2's first two {20, 21}; occupation 3's only one {30}. p2: its own {20}; occupation 2's first {30}.
    held = [set(tasks["task_id"].to_numpy()[sets.incidence[i].indices]) for i in range(sets.incidence.shape[0])]
    assert held == [{10, 11}, {20, 21}, {30}, {20}, {30}]
    assert sets.prompt.tolist() == [0, 0, 0, 1, 1] and sets.own.tolist() == [True, False, False, True, False]
    assert sets.share == pytest.approx([0.0, 0.75, 0.25, 0.0, 1.0])
    probabilities = sets.probabilities(np.array([[0.8], [0.5]]))[:, 0]
    assert probabilities == pytest.approx([0.8, 0.15, 0.05, 0.5, 0.5])


def test_re_drawing_chooses_one_set_per_prompt_as_often_as_its_probability():
    labels, judgements, candidates, tasks = _toy()
    sets = label_sets(labels, judgements, candidates, tasks["task_id"].to_numpy())
    q, rng = np.array([0.8, 0.5]), np.random.default_rng(0)
    chosen = np.stack([sets.choose(q, rng.random(2)) for _ in range(20000)])  # draws x prompts: a set of each prompt
    assert (sets.prompt[chosen] == [0, 1]).all()
    frequency = np.bincount(chosen.ravel(), minlength=len(sets.prompt)) / 20000
    assert frequency == pytest.approx(sets.probabilities(q[:, None])[:, 0], abs=0.01)
    # The interval ends: u at q keeps the own set, u just past q takes the first alternative, u near 1 the last.
    assert sets.choose(q, q).tolist() == [0, 3]
    assert sets.choose(q, q + 1e-9).tolist() == [1, 4] and sets.choose(q, np.full(2, 1 - 1e-12)).tolist() == [2, 4]
    # Certain labels are never moved: the draws are the labels as they are.
    assert (sets.choose(np.ones(2), np.full(2, 0.999)) == sets.own_set).all()


def test_the_band_s_point_is_the_headline_and_certain_labels_give_no_width():
    labels, judgements, candidates, tasks = _toy()
    tables = uncertainty_tables(labels, judgements, candidates, pd.DataFrame(columns=["yardstick", "subset", "benchmark", "prompt_id", "n_labels", "occupation_top1"]),
                                tasks, "j", 1, draws=50)
    row = tables["work_time_uncovered_band"].iloc[0]
    headline = summarise(prompts_per_task(labels.assign(prompt_hash="h")), tasks.assign(family_code="x"), 1, ["x"])["work_time_share_uncovered"]
    assert row["share_uncovered"] == pytest.approx(headline)
    assert row["prompts_labeled"] == 2 and row["prompts_with_alternatives"] == 2 and not row["calibration_fitted"]
    # p2 without its other occupation: one prompt of two has an alternative.
    alone = uncertainty_tables(labels, judgements, candidates[(candidates["prompt_id"] != "p2") | (candidates["occupation_rank"] == 1)],
                               pd.DataFrame(columns=["yardstick", "subset", "benchmark", "prompt_id", "n_labels", "occupation_top1"]), tasks, "j", 1, draws=5)
    assert alone["work_time_uncovered_band"].iloc[0][["prompts_labeled", "prompts_with_alternatives"]].tolist() == [2, 1]
    assert row["band_low"] <= row["share_uncovered"] <= row["band_high"] and 0 <= row["band_low"] and row["band_high"] <= 1
    sure = judgements.assign(confidence=1.0)
    sets = label_sets(labels, sure, candidates, tasks["task_id"].to_numpy())
    drawn = draw_shares(sets, IDENTITY, tasks["hours"].to_numpy(), tasks["onet_soc_code"].to_numpy(), 1, draws=20)
    assert drawn["share"] == pytest.approx(np.full(20, headline)) and (drawn["occupations"] == 2).all()


def _many_prompts(n_prompts: int, n_tasks: int = 400):
    """n_prompts labeled prompts, each with 2 own labels and 4 alternative occupations of 2 tasks."""
    rng = np.random.default_rng(5)
    prompts = [f"p{i:06d}" for i in range(n_prompts)]
    task_ids = np.arange(n_tasks) + 1000
    labels = pd.DataFrame({"benchmark": "b", "prompt_id": np.repeat(prompts, 2), "task_id": rng.choice(task_ids, 2 * n_prompts), "rank": np.tile([1, 2], n_prompts), "score": 0.5})
    judgements = pd.DataFrame({"benchmark": "b", "prompt_id": prompts, "status": "labeled", "confidence": rng.uniform(0.1, 0.9, n_prompts)})
    candidates = pd.DataFrame({
        "benchmark": "b", "prompt_id": np.repeat(prompts, 8), "occupation_rank": np.tile(np.repeat([2, 3, 4, 5], 2), n_prompts),
        "occupation_probability": np.tile(np.repeat([0.4, 0.3, 0.2, 0.1], 2), n_prompts), "task_rank": np.tile([1, 2], 4 * n_prompts),
        "task_id": rng.choice(task_ids, 8 * n_prompts),
    })
    tasks = pd.DataFrame({"task_id": task_ids, "onet_soc_code": [f"o{i // 20}" for i in range(n_tasks)], "hours": rng.uniform(1, 5, n_tasks)})
    return label_sets(labels, judgements, candidates, task_ids), tasks


def test_re_drawing_memory_does_not_grow_with_the_number_of_draws():
    """200 draws at once held several sets x 200 arrays (4.8 GB at 100,000 prompts): in chunks of
    columns, the peak is a few chunks whatever the draws, and the draws are the same distribution."""
    import tracemalloc

    sets, tasks = _many_prompts(20_000)  # 100,000 sets: one sets x 200 array of floats is 160 MB
    assert draws_per_chunk(sets.incidence.shape[0], 200) < 200
    tracemalloc.start()
    try:
        drawn = draw_shares(sets, IDENTITY, tasks["hours"].to_numpy(), tasks["onet_soc_code"].to_numpy(), 100, draws=200)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 150 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    # One chunk per draw and all draws in one chunk agree in distribution: the means of 200 draws
    # of the share are within a few of their standard errors.
    one_by_one = draw_shares(sets, IDENTITY, tasks["hours"].to_numpy(), tasks["onet_soc_code"].to_numpy(), 100, draws=200, seed=7, chunk_bytes=1)
    spread = np.hypot(drawn["share"].std(), one_by_one["share"].std()) / np.sqrt(200)
    assert abs(drawn["share"].mean() - one_by_one["share"].mean()) < 4 * spread
    assert drawn["share"].std() > 0


def test_the_calibration_is_fitted_on_the_tune_half_only_and_checked_on_the_others():
    rng = np.random.default_rng(3)
    rows, conf = [], []
    for yardstick, subset, n in (("labels_dev", "tune", 60), ("labels_dev", "holdout", 40), ("reference", "holdout", 50)):
        c = rng.uniform(0.05, 0.95, n)
        right = rng.random(n) < c * (0.3 if subset == "holdout" else 1.0)  # the holdout would pull the fit down, were it used
        for i in range(n):
            rows.append((yardstick, subset, "gdpval", f"{yardstick}{subset}{i}", 1, bool(right[i])))
            conf.append((f"{yardstick}{subset}{i}", c[i]))
    validation = pd.DataFrame(rows, columns=["yardstick", "subset", "benchmark", "prompt_id", "n_labels", "occupation_top1"])
    judgements = pd.DataFrame(conf, columns=["prompt_id", "confidence"]).assign(benchmark="gdpval", status="labeled")
    labels, _, candidates, tasks = _toy()
    table = uncertainty_tables(labels, judgements, candidates, validation, tasks, "j", 1, draws=10)["label_calibration"]
    tune = validation[validation["subset"] == "tune"].merge(judgements, on=["benchmark", "prompt_id"])
    expected = fit_calibration(tune["confidence"], tune["occupation_top1"])
    assert table["intercept"].iloc[0] == pytest.approx(expected.intercept) and table["slope"].iloc[0] == pytest.approx(expected.slope)
    by = table.set_index(["yardstick", "subset"])
    assert by.loc[("labels_dev", "tune"), "fitted_on"] and not by.loc[("labels_dev", "holdout"), "fitted_on"]
    assert by.loc[("labels_dev", "tune"), "mean_calibrated"] == pytest.approx(by.loc[("labels_dev", "tune"), "observed_occupation_top1"], abs=1e-6)
    assert by.loc[("labels_dev", "holdout"), "observed_occupation_top1"] < by.loc[("labels_dev", "holdout"), "mean_calibrated"]


def test_weak_labels_are_the_ones_below_the_judge_s_own_bars():
    labels, judgements, _, _ = _toy()
    weak = weak_prompts(judgements, labels, (0.05, 0.2))
    assert weak["prompt_id"].tolist() == ["p2"]  # rank-1 similarity 0.15 < 0.2; p3 abstained, p1 above both
    assert weak_prompts(judgements.assign(confidence=0.04), labels, (0.05, 0.2))["prompt_id"].tolist() == ["p1", "p2"]
    assert weak_prompts(judgements, labels, None).empty  # a judge without bars marks none


def test_the_abstention_table_counts_each_benchmark_s_weak_labels_and_what_they_cover():
    from workbank_dagster.analysis.uncertainty import abstention_table

    labels, judgements, _, tasks = _toy()
    judgements = pd.concat([judgements, pd.DataFrame({"benchmark": ["c"], "prompt_id": ["q"], "status": ["unlabeled"], "confidence": [None]})])
    table = abstention_table(labels, judgements, weak_prompts(judgements, labels, (0.05, 0.2)), tasks, 1).set_index("benchmark")
    assert table.loc["b", ["n_prompts", "n_not_read", "n_judged", "n_abstained", "n_labeled", "n_labeled_weak"]].tolist() == [3, 0, 3, 1, 2, 1]
    assert table.loc["b", "at_cap"] and not table.loc["c", "at_cap"] and table.loc["c", "n_not_read"] == 1
    assert table.loc["all", "n_prompts"] == 4 and table.loc["all", "share_abstained"] == pytest.approx(1 / 3)
    # p2, the weak prompt, alone lifts task 20 over a threshold of 1.
    assert table.loc["all", "n_tasks_covered_only_with_weak"] == 1 and pd.isna(table.loc["b", "n_tasks_covered_only_with_weak"])
    assert table["n_abstained_errand"].eq(0).all()  # no reason column: no errand
    # Judge v7's personal errands are counted apart (the cap leaves them out); a labeled prompt's reason never counts.
    reasons = judgements["status"].map({"abstained": "personal errand: the agent acts as a customer ('my cart')"}).fillna("personal errand: labeled")
    table = abstention_table(labels, judgements.assign(reason=reasons.to_numpy()), weak_prompts(judgements, labels, (0.05, 0.2)), tasks, 1)
    assert table.set_index("benchmark").loc[["b", "all"], "n_abstained_errand"].tolist() == [1, 1]


def test_the_band_s_coverage_simulation_is_what_the_docs_say(monkeypatch):
    """Suites with known labels, in two worlds: one where the truth is where the band assumes it
    (drawn with the judge's calibrated confidence and its probabilities), one where it is not (the
    judge does not know which occupations a benchmark asks for). The committed
    bench/label_band_coverage.json, which docs/analysis.md is written from, is this computation
    (bench/label_band_coverage.py)."""
    from workbank_dagster.settings import REPO_ROOT

    monkeypatch.syspath_prepend(str(REPO_ROOT / "bench"))
    from label_band_coverage import simulate_band_coverage

    committed = json.loads((REPO_ROOT / "bench" / "label_band_coverage.json").read_text())
    for name, scenario in committed["scenarios"].items():
        result = simulate_band_coverage(**scenario["arguments"])
        assert {k: v for k, v in scenario.items() if k not in ("arguments", "seconds")} == json.loads(json.dumps(result)), name
        assert result["samples"] >= 100 and result["calibrations_fitted"] == result["samples"]


def test_the_step_reads_coded_prompts_and_only_the_candidates_a_re_draw_can_pick():
    """At a million prompts the step read every candidate (some 30 a prompt) with benchmark and
    prompt as strings: 9.4 GB. It reads integer codes in name order and only another occupation's
    first k candidates (k the prompt's labels), and its tables are those of the named, whole read."""
    import duckdb

    from workbank_dagster.analysis.label_steps import coded_uncertainty_tables, read_uncertainty_inputs

    rng = np.random.default_rng(11)
    rows_j, rows_l, rows_c = [], [], []
    for b in ("zeta", "alpha", "mid"):
        for i in range(60):
            prompt = f"q{i:03d}"
            status = "labeled" if i % 7 else ("abstained" if i % 2 else "unlabeled")
            rows_j.append((b, prompt, status, "personal errand: shop" if status == "abstained" and i % 3 == 0 else "", float(rng.uniform(0.05, 0.95)), "j"))
            k = int(rng.integers(1, 4)) if status == "labeled" else 0
            for rank in range(1, k + 1):
                rows_l.append((b, prompt, int(rng.integers(0, 30)), rank, float(rng.uniform(0.1, 0.6))))
            if status != "unlabeled":
                for occupation_rank in range(1, 5):
                    for task_rank in range(1, 6):
                        rows_c.append((b, prompt, occupation_rank, 0.4 / occupation_rank, task_rank, int(rng.integers(0, 30)), "j"))
    judgements = pd.DataFrame(rows_j, columns=["benchmark", "prompt_id", "status", "reason", "confidence", "labeler"])
    labels = pd.DataFrame(rows_l, columns=["benchmark", "prompt_id", "task_id", "rank", "score"])
    candidates = pd.DataFrame(rows_c, columns=["benchmark", "prompt_id", "occupation_rank", "occupation_probability", "task_rank", "task_id", "labeler"])
    top1 = labels[labels["rank"] == 1]
    validation = top1.assign(yardstick="labels_dev", subset=np.where(top1.index % 2, "tune", "holdout"), n_labels=2,
                             occupation_top1=top1.index % 3 > 0, labeler="j")[["yardstick", "subset", "benchmark", "prompt_id", "n_labels", "occupation_top1", "labeler"]]
    tasks = pd.DataFrame({"task_id": np.arange(30), "onet_soc_code": [f"o{i // 5}" for i in range(30)], "hours": rng.uniform(1, 5, 30)})
    con = duckdb.connect()
    con.execute("create schema marts")
    for name, frame in (("fct_prompt_judgements", judgements), ("fct_prompt_task_labels", labels), ("fct_prompt_candidates", candidates),
                        ("fct_judge_validation_prompts", validation)):
        con.register("frame", frame)
        con.execute(f"create table marts.{name} as select * from frame")
        con.unregister("frame")
    coded_labels, coded_judgements, coded_candidates, coded_validation, benchmarks = read_uncertainty_inputs(con, "j")
    assert benchmarks == ["alpha", "mid", "zeta"] and coded_judgements["prompt_id"].dtype.kind in "iu"
    n_labels = coded_labels.groupby(["benchmark", "prompt_id"]).size().rename("k").reset_index()
    read = coded_candidates.merge(n_labels, on=["benchmark", "prompt_id"])
    assert len(read) == len(coded_candidates) < len(candidates) / 3
    assert (read["occupation_rank"] > 1).all() and (read["task_rank"] <= read["k"]).all()
    coded = coded_uncertainty_tables(coded_labels, coded_judgements, coded_candidates, coded_validation, tasks, "j", 2, (0.3, 0.2), benchmarks)
    by_name = lambda frame: frame.sort_values(["benchmark", "prompt_id"], kind="stable").drop(columns="labeler", errors="ignore").reset_index(drop=True)  # noqa: E731
    named = uncertainty_tables(by_name(labels).sort_values(["benchmark", "prompt_id", "rank"], kind="stable"), by_name(judgements),
                               by_name(candidates).sort_values(["benchmark", "prompt_id", "occupation_rank", "task_rank"], kind="stable"),
                               by_name(validation).sort_values(["yardstick", "benchmark", "prompt_id"], kind="stable"), tasks, "j", 2, (0.3, 0.2))
    for name, table in named.items():
        pd.testing.assert_frame_equal(table.reset_index(drop=True), coded[name].reset_index(drop=True), check_dtype=False)
    assert coded["abstention_by_benchmark"]["benchmark"].tolist() == ["alpha", "mid", "zeta", "all"]
    assert coded["work_time_uncovered_band"]["draws"].iloc[0] == 200


def _judged_codes(seed: int):
    """Prompts of four benchmarks as integer codes (the step's): some labeled with 1 to 4 tasks (a few
    outside the task list 0..19, one pair labeled twice), some abstained (a few as personal errands),
    some not read."""
    rng = np.random.default_rng(seed)
    keys = pd.MultiIndex.from_product([range(4), range(150)], names=["benchmark", "prompt_id"]).to_frame(index=False)
    status = rng.choice(["labeled", "abstained", "unlabeled"], len(keys), p=[0.7, 0.2, 0.1])
    reason = np.where(rng.random(len(keys)) < 0.3, "personal errand: x", "other")
    judgements = keys.assign(status=status, reason=reason, confidence=rng.uniform(0.01, 0.99, len(keys)))
    labels = [(b, p, int(task), rank, float(rng.uniform(0, 1)))
              for b, p, s in zip(keys["benchmark"], keys["prompt_id"], status) if s == "labeled"
              for rank, task in enumerate(rng.choice(24, int(rng.integers(1, 5)), replace=False), start=1)]
    labels = pd.DataFrame(labels, columns=["benchmark", "prompt_id", "task_id", "rank", "score"])
    labels = pd.concat([labels, labels[labels["task_id"] < 20].iloc[[3]]], ignore_index=True)  # a (prompt, task) pair twice: counted once
    tasks = pd.DataFrame({"task_id": np.arange(20), "onet_soc_code": [f"o{i // 4}" for i in range(20)], "hours": rng.uniform(1, 5, 20)})
    return labels, judgements, tasks


@pytest.mark.parametrize("bars", [(0.3, 0.4), None])
def test_the_abstention_table_of_codes_is_the_table_of_names(bars):
    """Integer codes take abstention_table's packed paths (membership among the weak, distinct
    (prompt, task) pairs per task): the table of the same prompts by name, which takes the MultiIndex
    and drop_duplicates paths, and the counts are coverage.task_counts'."""
    from workbank_dagster.analysis.coverage import task_counts
    from workbank_dagster.analysis.uncertainty import _among_weak, _counts_with_and_without, abstention_table

    labels, judgements, tasks = _judged_codes(21)
    named = [frame.assign(benchmark=frame["benchmark"].map("b{}".format), prompt_id=frame["prompt_id"].map("p{:04d}".format))
             for frame in (labels, judgements)]
    weak = weak_prompts(judgements, labels, bars)
    assert (len(weak) > 0) == (bars is not None)
    is_weak = _among_weak([labels], weak)[0]
    assert is_weak.tolist() == labels.set_index(["benchmark", "prompt_id"]).index.isin(weak.set_index(["benchmark", "prompt_id"]).index).tolist()
    counts, without = _counts_with_and_without(labels, tasks, is_weak)
    assert counts.tolist() == task_counts(labels, tasks).tolist() and without.tolist() == task_counts(labels[~is_weak], tasks).tolist()
    threshold = int(counts[np.argmax(counts - without)])  # a task the weak labels alone lift to it (given bars)
    coded = abstention_table(labels, judgements, weak, tasks, threshold)
    by_name = abstention_table(*named, weak_prompts(*named[::-1], bars), tasks, threshold)
    pd.testing.assert_frame_equal(coded.assign(benchmark=coded["benchmark"].map(lambda b: b if b == "all" else f"b{b}")), by_name, check_exact=True)
    assert (coded["n_tasks_covered_only_with_weak"].iloc[-1] > 0) == (bars is not None)


@pytest.mark.parametrize(
    ("select", "through_arrow"),
    [
        ("select i::bigint as a, (i % 7)::integer as b, case when i % 5 = 0 then null else i / 3 end as c from range(50) t(i)", True),
        ("select i::bigint as a, case when i % 5 = 0 then null else i::integer end as b from range(50) t(i)", False),  # an integer NULL
        ("select i::bigint as a, 'x' || i as s from range(50) t(i)", False),  # a string
        ("select i::bigint as a, i::double as c from range(0) t(i)", True),  # no rows
    ],
)
def test_a_frame_of_numbers_is_duckdb_s_frame(select, through_arrow):
    """label_steps.numbers_frame reads through Arrow what only floats and integers without NULLs
    make, and gives exactly DuckDB's .df() whichever way it reads."""
    import duckdb

    from workbank_dagster.analysis.label_steps import numbers_frame

    class Reads:  # the connection, counting the reads through .df()
        def __init__(self, con):
            self.con, self.dfs = con, 0

        def sql(self, *args, **kwargs):
            return self.con.sql(*args, **kwargs)

        def execute(self, *args):
            self.dfs += 1
            return self.con.execute(*args)

    con = Reads(duckdb.connect())
    sql = f"select * from ({select}) where a >= $low order by a"
    frame = numbers_frame(con, sql, {"low": 3})
    pd.testing.assert_frame_equal(frame, con.con.execute(sql, {"low": 3}).df(), check_exact=True)
    assert con.dfs == (0 if through_arrow else 1)
