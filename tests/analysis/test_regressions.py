"""The regression helpers against hand computations and simulations with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbank_dagster.analysis.regressions import (
    Z95,
    coverage_logit,
    delta_ratio,
    fit_clustered_logit,
    importance_logit,
    importance_quintiles,
    logit_interval,
    mean_probability_interval,
)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def test_logit_interval_by_hand():
    params = np.array([-1.0, 0.8, 0.3])
    cov = np.array([[0.04, 0.01, -0.002], [0.01, 0.09, 0.0], [-0.002, 0.0, 0.01]])
    x = np.array([1.0, 1.0, 2.0])
    p, low, high = logit_interval(x, params, cov)
    # by hand: eta = -1 + 0.8 + 0.6 = 0.4, se(eta) = sqrt(x' V x), the interval on the logit scale transformed back
    se_eta = np.sqrt(x @ cov @ x)
    assert p[0] == pytest.approx(_sigmoid(0.4))
    assert (low[0], high[0]) == pytest.approx((_sigmoid(0.4 - Z95 * se_eta), _sigmoid(0.4 + Z95 * se_eta)))


def test_logit_interval_is_statsmodels_get_prediction_with_the_clustered_covariance():
    """docs/method.md §5: the curve's interval is what statsmodels' get_prediction computes (on the logit
    scale, transformed back), with the cluster-robust covariance of the fit."""
    rng = np.random.default_rng(5)
    n = 400
    X = pd.DataFrame({"const": 1.0, "exposed": (rng.random(n) < 0.4).astype(float), "log_wage_bill": rng.normal(size=n)})
    y = (rng.random(n) < _sigmoid(X.to_numpy() @ np.array([-2.0, 1.0, 0.5]))).astype(float)
    result = fit_clustered_logit(y, X, rng.integers(0, 12, n))
    grid = np.column_stack([np.ones(5), np.ones(5), np.linspace(-3, 3, 5)])
    p, low, high = logit_interval(grid, np.asarray(result.params), np.asarray(result.cov_params()))
    prediction = result.get_prediction(grid)
    assert prediction.predicted == pytest.approx(p, rel=1e-10)
    assert np.asarray(prediction.conf_int()) == pytest.approx(np.column_stack([low, high]), rel=1e-8)


def test_mean_probability_interval_is_the_delta_method_on_the_logit_of_the_mean():
    p, se = 0.02, 0.015  # the probability-scale interval p ± 1.96 se would reach below 0
    low, high = mean_probability_interval(p, se)
    se_eta = se / (p * (1 - p))
    assert (low, high) == pytest.approx((_sigmoid(np.log(p / (1 - p)) - Z95 * se_eta), _sigmoid(np.log(p / (1 - p)) + Z95 * se_eta)))
    assert 0 < low < p < high < 1 and p - Z95 * se < 0


def _rare_coverage_tasks():
    """Coverage as rare as the full run's (about 6% of tasks): at the ends of the wage-bill range the
    predicted probability is near 0 and its standard error large."""
    return _synthetic_tasks(seed=2, n_occ=44, families=11, wage_sd=1.5, effect_sd=1.0, intercept=-4.0, importance_slope=0.5, wage_slope=0.8)


def test_every_probability_bound_lies_in_zero_one():
    """The coverage curve's bands and the adjusted probabilities by importance quintile, on data where
    an interval on the probability scale leaves [0, 1] (the full run's curve had lower bounds below 0
    when it was built that way): every bound is inside [0, 1] and brackets its estimate."""
    tasks = _rare_coverage_tasks()
    for frame in (coverage_logit(tasks).curve, importance_logit(tasks).adjusted):
        assert len(frame) and frame[["p", "ci_low", "ci_high"]].notna().all().all()
        assert ((frame["ci_low"] >= 0) & (frame["ci_high"] <= 1)).all(), frame[(frame["ci_low"] < 0) | (frame["ci_high"] > 1)]
        assert ((frame["ci_low"] <= frame["p"]) & (frame["p"] <= frame["ci_high"])).all()


def test_delta_ratio_by_hand():
    params = np.array([-2.0, 1.0])
    cov = np.diag([0.01, 0.04])
    x1, x0 = np.array([1.0, 1.0]), np.array([1.0, 0.0])
    ratio, low, high = delta_ratio(x1, x0, params, cov)
    p1, p0 = _sigmoid(-1.0), _sigmoid(-2.0)
    g = (1 - p1) * x1 - (1 - p0) * x0
    se = np.sqrt(g @ cov @ g)
    assert ratio == pytest.approx(p1 / p0)
    assert (low, high) == pytest.approx((np.exp(np.log(p1 / p0) - Z95 * se), np.exp(np.log(p1 / p0) + Z95 * se)))


def test_clustered_covariance_matches_sandwich_by_hand():
    rng = np.random.default_rng(3)
    n = 60
    x = rng.normal(size=n)
    groups = np.repeat(np.arange(6), 10)
    y = (rng.random(n) < _sigmoid(-0.3 + 0.9 * x)).astype(float)
    X = pd.DataFrame({"const": 1.0, "x": x})
    result = fit_clustered_logit(y, X, groups)
    beta = np.asarray(result.params)
    p = _sigmoid(X.to_numpy() @ beta)
    bread = np.linalg.inv((X.to_numpy() * (p * (1 - p))[:, None]).T @ X.to_numpy())
    scores = X.to_numpy() * (y - p)[:, None]
    meat = sum(np.outer(scores[groups == g].sum(0), scores[groups == g].sum(0)) for g in range(6))
    G, N, K = 6, n, 2
    correction = G / (G - 1) * (N - 1) / (N - K)
    assert np.asarray(result.cov_params()) == pytest.approx(correction * bread @ meat @ bread, rel=1e-6)


def test_delta_interval_covers_the_true_probability_95_percent_of_the_time():
    rng = np.random.default_rng(2)
    true = np.array([-2.0, 1.0, 0.5])
    point = np.array([1.0, 1.0, 0.2])
    p_true = _sigmoid(point @ true)
    hits, reps = 0, 400
    for _ in range(reps):
        n = 1500
        exposed = rng.random(n) < 0.4
        w = rng.normal(size=n)
        X = pd.DataFrame({"const": 1.0, "exposed": exposed.astype(float), "log_wage_bill": w})
        y = (rng.random(n) < _sigmoid(X.to_numpy() @ true)).astype(float)
        result = fit_clustered_logit(y, X, rng.integers(0, 100, n))
        _, low, high = logit_interval(point, np.asarray(result.params), np.asarray(result.cov_params()))
        hits += low[0] <= p_true <= high[0]
    assert 0.92 <= hits / reps <= 0.98


def _synthetic_tasks(seed=0, n_occ=60, per=20, *, families=10, wage_sd=1.0, effect_sd=0.5, intercept=-2.0, importance_slope=0.4, wage_slope=0.2):
    rng = np.random.default_rng(seed)
    rows = []
    for o in range(n_occ):
        code = f"{11 + 2 * (o % families):02d}-{1000 + o:04d}.00"
        wage_bill = np.exp(rng.normal(20, wage_sd))
        effect = rng.normal(0, effect_sd)
        for t in range(per):
            exposed = rng.random() < 0.5
            importance = rng.uniform(1, 5)
            eta = intercept + 1.2 * exposed + importance_slope * (importance - 3) + wage_slope * (np.log(wage_bill) - 20) + effect
            rows.append((o * 100 + t, code, exposed, importance, rng.random() < _sigmoid(eta), wage_bill))
    return pd.DataFrame(rows, columns=["task_id", "onet_soc_code", "exposed", "importance", "covered", "wage_bill"])


def test_coverage_logit_recovers_direction_and_shapes():
    tasks = _synthetic_tasks()
    tasks["exposed"] = tasks["exposed"].astype("boolean")
    tasks.loc[0, "exposed"] = pd.NA
    fit = coverage_logit(tasks, grid_points=10)
    assert fit.n_dropped_unlabeled == 1 and fit.n_obs == len(tasks) - 1
    est = fit.coefs.set_index("term")["estimate"]
    assert est["exposed"] > 0.6 and set(fit.coefs.columns) == {"term", "estimate", "std_error", "z", "p_value", "n_obs", "n_clusters"}
    assert len(fit.curve) == 20 and (fit.curve["ci_low"] < fit.curve["p"]).all() and (fit.curve["p"] < fit.curve["ci_high"]).all()
    ratio, low, high = fit.ratio
    assert low < ratio < high and ratio > 1


def test_importance_quintiles_are_ntile():
    tasks = pd.DataFrame({"task_id": range(12), "importance": [3, 1, 2, 2, 5, 4, 4, None, 1, 3, 5, 2]})
    q = importance_quintiles(tasks)
    assert len(q) == 11 and q.value_counts().sort_index().tolist() == [3, 2, 2, 2, 2]
    assert q.loc[1] == 1 and q.loc[10] == 5 and 7 not in q.index


def test_importance_logit_drops_perfectly_predicted_occupations():
    tasks = _synthetic_tasks(seed=1)
    tasks.loc[tasks["onet_soc_code"] == tasks["onet_soc_code"].iloc[0], "covered"] = True
    fit = importance_logit(tasks)
    assert fit.occupations_dropped >= 1
    assert set(fit.adjusted["quintile"]) == {1, 2, 3, 4, 5} and len(fit.adjusted) == 10
    top = fit.adjusted.query("quintile == 5")["p"].mean()
    bottom = fit.adjusted.query("quintile == 1")["p"].mean()
    assert top > bottom and fit.ratio[1] < fit.ratio[0] < fit.ratio[2]


def test_degenerate_samples_give_nans_not_a_failed_run():
    """A small run (one benchmark) may cover no task, or leave no occupation with mixed coverage."""
    tasks = pd.DataFrame(
        {
            "task_id": range(40),
            "onet_soc_code": [f"{11 + i % 4}-10{i % 8}1.00" for i in range(40)],
            "exposed": [i % 2 == 0 for i in range(40)],
            "importance": [1 + (i % 5) for i in range(40)],
            "wage_bill": [1e9 * (1 + i % 7) for i in range(40)],
            "covered": False,
        }
    )
    fit = coverage_logit(tasks)
    assert fit.n_obs == 40 and all(np.isnan(fit.ratio)) and fit.curve["p"].isna().all() and len(fit.curve) == 100
    imp = importance_logit(tasks)
    assert imp.occupations_kept == 0 and imp.occupations_dropped == 8 and all(np.isnan(imp.ratio)) and len(imp.adjusted) == 10


def test_importance_logit_with_one_cluster_gives_nans_not_a_failed_run():
    """A sparse judge on a small run left mixed coverage in occupations of one SOC major group only:
    statsmodels' clustered covariance then divides by (clusters - 1) = 0 (ZeroDivisionError before)."""
    rows = []
    for occupation in range(3):
        for task in range(12):
            rows.append((occupation * 100 + task, f"15-12{occupation}1.00", task % 2 == 0, 1 + task % 5, 1e9, task in (0, 5, 7)))
    tasks = pd.DataFrame(rows, columns=["task_id", "onet_soc_code", "exposed", "importance", "wage_bill", "covered"])
    fit = importance_logit(tasks)
    assert fit.occupations_kept == 3 and all(np.isnan(fit.ratio)) and fit.adjusted["p"].isna().all()


def test_importance_ratio_standard_error_by_numerical_gradient_and_by_simulation():
    """The top / bottom quintile ratio's interval used to be checked only for bracketing the ratio.
    Its delta-method standard error against (1) the gradient of log r taken numerically and (2) the
    spread of log r over parameters drawn from N(params, V)."""
    from workbank_dagster.analysis.regressions import quintile_design, quintile_ratio

    rng = np.random.default_rng(4)
    n = 400
    base = np.zeros((n, 7))
    base[:, 0] = rng.integers(0, 2, n)  # exposed
    quintile = rng.integers(1, 6, n)
    for q in range(2, 6):
        base[:, q - 1] = quintile == q
    base[np.arange(n), 5 + (np.arange(n) % 2)] = 1.0  # two occupation dummies
    params = np.array([0.6, 0.2, 0.4, 0.7, 1.1, -1.5, -0.8])
    a = rng.normal(size=(7, 7)) * 0.05
    cov = a @ a.T + np.eye(7) * 0.01
    ratio, low, high = quintile_ratio(base, params, cov)
    se = (np.log(high) - np.log(low)) / (2 * Z95)

    def log_ratio(theta):
        return np.log(_sigmoid(quintile_design(base, 5) @ theta).mean()) - np.log(_sigmoid(quintile_design(base, 1) @ theta).mean())

    assert np.log(ratio) == pytest.approx(log_ratio(params))
    eps = 1e-6
    numeric = np.array([(log_ratio(params + eps * e) - log_ratio(params - eps * e)) / (2 * eps) for e in np.eye(7)])
    assert se == pytest.approx(np.sqrt(numeric @ cov @ numeric), rel=1e-6)
    draws = rng.multivariate_normal(params, cov, size=4000)
    simulated = np.std([log_ratio(theta) for theta in draws], ddof=1)
    assert se == pytest.approx(simulated, rel=0.05)


def _marts_from(tasks: pd.DataFrame, path) -> None:
    """The four marts an analysis step's task frame reads, from a synthetic task table."""
    from workbank_dagster import warehouse

    occupations = tasks.groupby("onet_soc_code", as_index=False)["wage_bill"].first()
    with warehouse.connect(path) as con:
        con.execute("create schema if not exists marts")
        dim_task = tasks.assign(family_code=tasks["onet_soc_code"].str[:2] + "-0000", task="t", task_type="Core")
        frames = {
            "dim_task": dim_task[["task_id", "onet_soc_code", "family_code", "task", "task_type", "importance", "exposed"]],
            "fct_task_coverage": tasks.assign(n_prompts=tasks["covered"].astype(int) * 5)[["task_id", "n_prompts", "covered"]],
            "dim_occupation": occupations.assign(employment=1000.0, title="an occupation"),
            "fct_task_hours": tasks.assign(hours=100.0)[["task_id", "onet_soc_code", "hours"]],
        }
        for name, frame in frames.items():
            warehouse.replace_table(con, "marts", name, frame)


def test_an_analysis_step_keeps_its_tables_until_its_inputs_change(tmp_path):
    """A warm run does not refit: with the same marts, settings and code the step keeps the tables
    it wrote (metadata `recomputed` false, the tables as they were); a changed mart or setting refits."""
    import dagster as dg

    from workbank_dagster import warehouse
    from workbank_dagster.analysis.assets import coverage_regression
    from workbank_dagster.resources import Warehouse
    from workbank_dagster.settings import EmbeddedJudgeSettings, MethodSettings, PathSettings, PipelineSettings

    db = tmp_path / "w.duckdb"
    tasks = _synthetic_tasks()
    _marts_from(tasks, db)
    instance = dg.DagsterInstance.ephemeral()
    method = MethodSettings.configure_at_launch()  # as the definitions give it: a launchpad value reaches pipeline_settings
    settings = PipelineSettings(paths=PathSettings(), method=method, embedded_judge=EmbeddedJudgeSettings())
    resources = {"warehouse_db": Warehouse(db), "method": method, "pipeline_settings": settings}

    def run(run_config=None) -> tuple[bool, pd.DataFrame]:
        result = dg.materialize([coverage_regression], instance=instance, resources=resources, run_config=run_config)
        flags = {m.metadata["recomputed"].value for m in result.asset_materializations_for_node("coverage_regression")}
        assert len(flags) == 1
        with warehouse.connect(db) as con:
            return flags.pop(), con.execute("select * from analysis.coverage_logit_coefs order by term").df()

    recomputed, first = run()
    assert recomputed
    with warehouse.connect(db) as con:  # marks the table: a kept table is this one, not a refit
        con.execute("update analysis.coverage_logit_coefs set n_obs = -1")
    recomputed, kept = run()
    assert not recomputed and (kept["n_obs"] == -1).all()
    tasks.loc[0, "covered"] = not tasks.loc[0, "covered"]
    _marts_from(tasks, db)
    recomputed, refit = run()
    assert recomputed and (refit["n_obs"] == first["n_obs"]).all()
    recomputed, _ = run({"resources": {"method": {"config": {"cluster_level": "minor"}}}})
    assert recomputed


def test_simple_ratios_are_the_shares_of_the_task_table_and_the_occupations_add_up():
    """ratios_by_threshold (analysis/comparison.py): the simple ratios are P(covered | group) over
    P(covered | other group) computed by hand, their interval is the saturated logit's, and the
    importance rows say where every occupation went (kept, all covered, none covered, no rating)."""
    from workbank_dagster.analysis.comparison import threshold_ratios

    tasks = _synthetic_tasks(seed=6).assign(n_prompts=0)
    rng = np.random.default_rng(6)
    tasks["n_prompts"] = np.where(tasks["covered"], rng.integers(5, 12, len(tasks)), rng.integers(0, 5, len(tasks)))
    unrated = tasks["onet_soc_code"] == tasks["onet_soc_code"].iloc[-1]
    tasks.loc[unrated, "importance"] = np.nan  # an occupation of analyst-written tasks only
    table = threshold_ratios(tasks, (1, 5)).set_index(["ratio", "threshold", "kind"])
    at5 = tasks["n_prompts"] >= 5
    by_hand = at5[tasks["exposed"]].mean() / at5[~tasks["exposed"]].mean()
    row = table.loc[("exposure", 5, "simple")]
    assert row["estimate"] == pytest.approx(by_hand) and row["ci_low"] < row["estimate"] < row["ci_high"]
    assert row["p_high"] == pytest.approx(at5[tasks["exposed"]].mean())
    X = pd.DataFrame({"const": 1.0, "high": tasks["exposed"].astype(float)})
    result = fit_clustered_logit(at5.astype(float).to_numpy(), X, tasks["onet_soc_code"].str[:2].to_numpy())
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(delta_ratio(np.array([1.0, 1.0]), np.array([1.0, 0.0]), np.asarray(result.params), np.asarray(result.cov_params()))[1:])
    rated = tasks.dropna(subset=["importance"]).copy()
    rated["quintile"] = importance_quintiles(rated)
    covered = rated["n_prompts"] >= 5
    assert table.loc[("importance", 5, "simple"), "estimate"] == pytest.approx(covered[rated["quintile"] == 5].mean() / covered[rated["quintile"] == 1].mean())
    adjusted = table.loc[("importance", 5, "adjusted")]
    fit = importance_logit(tasks.assign(covered=at5))
    assert adjusted["estimate"] == pytest.approx(fit.ratio[0]) and adjusted["n_occupations"] == fit.occupations_kept
    assert adjusted["occupations_all_covered"] + adjusted["occupations_none_covered"] == fit.occupations_dropped
    assert adjusted["n_occupations"] + fit.occupations_dropped + adjusted["occupations_without_ratings"] == tasks["onet_soc_code"].nunique()
    assert adjusted["occupations_without_ratings"] == 1
    assert table.loc[("exposure", 5, "adjusted"), "estimate"] == pytest.approx(coverage_logit(tasks.assign(covered=at5)).ratio[0])
    # At threshold 1 more tasks are covered, and the rows are there for it too.
    assert table.loc[("exposure", 1, "simple"), "n_tasks_covered"] > row["n_tasks_covered"]


def test_the_steps_over_the_task_table_are_kept_while_no_tasks_flag_moves(tmp_path):
    """The regressions read a task's covered flag, and ratios_by_threshold its prompt count only as
    compared with the thresholds: a refresh that moves prompt counts and no task's flag (at a million
    prompts, adding a benchmark moved 10 to 100 counts and no flag) keeps all three steps' tables; a
    count that crosses a sensitivity threshold refits the ratios only, and a moved covered flag all three."""
    import dagster as dg

    from workbank_dagster import warehouse
    from workbank_dagster.analysis.assets import coverage_regression, importance_regression, ratios_by_threshold
    from workbank_dagster.resources import Warehouse
    from workbank_dagster.settings import PipelineSettings

    db = tmp_path / "w.duckdb"
    tasks = _synthetic_tasks(seed=3)
    _marts_from(tasks, db)  # n_prompts 5 for a covered task, 0 for the others
    settings = PipelineSettings.of().resolve()
    assert settings.coverage_threshold == 5 and 1 in settings.sensitivity_thresholds and max(settings.sensitivity_thresholds) == 10
    instance = dg.DagsterInstance.ephemeral()
    resources = {"warehouse_db": Warehouse(db), "pipeline_settings": PipelineSettings.of()}
    steps = {"coverage_regression": coverage_regression, "importance_regression": importance_regression, "ratios_by_threshold": ratios_by_threshold}

    def recomputed() -> dict[str, bool]:
        result = dg.materialize(list(steps.values()), instance=instance, resources=resources)
        flags = {name: {m.metadata["recomputed"].value for m in result.asset_materializations_for_node(name)} for name in steps}
        assert all(len(found) == 1 for found in flags.values())
        return {name: found.pop() for name, found in flags.items()}

    def counts(sql: str) -> None:
        with warehouse.connect(db) as con:
            con.execute(sql)

    assert recomputed() == dict.fromkeys(steps, True)
    counts("update marts.fct_task_coverage set n_prompts = 7 where covered")  # 5 -> 7: on the same side of every threshold (1, 3, 5, 10)
    assert recomputed() == dict.fromkeys(steps, False)
    uncovered = int(tasks.loc[~tasks["covered"], "task_id"].iloc[0])
    counts(f"update marts.fct_task_coverage set n_prompts = 2 where task_id = {uncovered}")  # crosses threshold 1, not 5
    assert recomputed() == {"coverage_regression": False, "importance_regression": False, "ratios_by_threshold": True}
    counts(f"update marts.fct_task_coverage set n_prompts = 5, covered = true where task_id = {uncovered}")
    assert recomputed() == dict.fromkeys(steps, True)


def test_judge_ratios_are_kept_while_no_judges_covered_tasks_change(tmp_path):
    """judge_ratios reads of each judge's labels only which tasks it covers (at least
    `coverage_threshold` distinct prompts): labels that cover no new task keep its fits; a task a
    judge newly covers refits them, with that judge's covered task among the fit's."""
    import dagster as dg

    from workbank_dagster import warehouse
    from workbank_dagster.analysis.label_steps import judge_ratio_assets
    from workbank_dagster.resources import Warehouse
    from workbank_dagster.settings import PipelineSettings

    db = tmp_path / "w.duckdb"
    tasks = _synthetic_tasks(seed=4)
    _marts_from(tasks, db)
    covered = tasks.loc[tasks["covered"], "task_id"].astype(int).tolist()

    def labels(judge: str, task_ids: list[int], prompts: int, first: int = 0) -> pd.DataFrame:
        return pd.DataFrame([(judge, "b", f"{t}-{i}", t) for t in task_ids for i in range(first, first + prompts)],
                            columns=["labeler", "benchmark", "prompt_id", "task_id"])

    table = pd.concat([labels("judge-a", covered, 5), labels("judge-b", covered[::2], 5)], ignore_index=True)
    with warehouse.connect(db) as con:
        warehouse.replace_table(con, "marts", "fct_prompt_task_labels_all_labelers", table)
    instance = dg.DagsterInstance.ephemeral()
    resources = {"warehouse_db": Warehouse(db), "pipeline_settings": PipelineSettings.of()}

    def run(extra: pd.DataFrame | None = None) -> tuple[bool, pd.DataFrame]:
        if extra is not None:
            with warehouse.connect(db) as con:
                con.execute("insert into marts.fct_prompt_task_labels_all_labelers select * from extra")
        result = dg.materialize([judge_ratio_assets], instance=instance, resources=resources)
        (materialization,) = result.asset_materializations_for_node("judge_ratios")
        with warehouse.connect(db) as con:
            return materialization.metadata["recomputed"].value, con.execute("select * from analysis.judge_ratios order by labeler").df()

    recomputed, first = run()
    assert recomputed and list(first["labeler"]) == ["judge-a", "judge-b"] and first["threshold"].eq(5).all()
    uncovered = int(tasks.loc[~tasks["covered"], "task_id"].iloc[0])
    # A sixth prompt on a covered task, four on an uncovered one: no judge covers another task.
    recomputed, kept = run(pd.concat([labels("judge-a", covered[:1], 1, first=5), labels("judge-a", [uncovered], 4)]))
    assert not recomputed
    pd.testing.assert_frame_equal(kept, first)
    recomputed, refit = run(labels("judge-a", [uncovered], 1, first=4))  # its fifth prompt: judge-a covers it now
    assert recomputed
    assert refit.loc[1].equals(first.loc[1]) and not refit.loc[0].equals(first.loc[0])
