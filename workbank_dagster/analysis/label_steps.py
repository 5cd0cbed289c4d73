"""The analysis steps that read the judges' labels: coverage sensitivity (with the bootstrap and each
benchmark's contribution), each judge's ratios, the label-uncertainty band, and the O*NET-weighted
model scores. Thin: they read, close, compute with the pure functions, then write (step.py)."""

import dagster as dg
import pandas as pd
import pyarrow as pa

from ..progress import reporter
from ..resources import WarehouseResource
from ..settings import PipelineSettings
from .coverage import BenchmarkCounts, bootstrap_uncovered_share, counts_of_pairs, sensitivity_table, summarise
from .history import benchmark_contributions
from .near_duplicates import by_prompt_code, near_duplicate_counts
from .regressions import coverage_logit, importance_logit
from .scores import occupation_model_scores, score_differences
from .step import TASK_DEPS, analysis_step, computed_or_kept, key, regression_frame, task_frame
from .uncertainty import uncertainty_tables, weak_prompts

LABEL_DEPS = [
    key("marts", "fct_prompt_task_labels_all_labelers"), key("marts", "fct_benchmark_prompts"), *TASK_DEPS, key("marts", "dim_family"), key("marts", "dim_task_twins")
]
LABELS = "marts.fct_prompt_task_labels_all_labelers"
# What the coverage figures read of the labels: per-benchmark aggregates (analysis/coverage.py), and,
# for the bootstrap, each of the active labeler's (prompt, task) pairs as integers, the prompt by its
# position among every prompt ordered by benchmark then prompt_id. Ordered: the frames are the
# step's fingerprint as well as its input.
COUNTS_SQL = f"select labeler, benchmark, task_id, count(distinct prompt_id) as n_prompts from {LABELS} group by all order by all"
# The other labelers' only, when every label of the active labeler's has its prompt among
# fct_benchmark_prompts: its counts are then made from LABELS_SQL's rows (coverage.counts_of_pairs).
OTHER_COUNTS_SQL = COUNTS_SQL.replace("group by all", "where labeler <> ? group by all")
TEXTS_SQL = f"select task_id, count(distinct prompt_hash) as n_texts from {LABELS} where labeler = ? group by all order by all"
LABELED_SQL = f"select benchmark, count(distinct prompt_id) as n_prompts_labeled from {LABELS} where labeler = ? group by all order by all"
SIZES_SQL = "select benchmark, count(distinct prompt_id) as n_prompts from marts.fct_benchmark_prompts group by all order by all"
# The active labeler's labels, read once for the bootstrap and the near-duplicate rows: each label's
# prompt by its position among every prompt ordered by benchmark then prompt_id (what
# coverage.bootstrap_uncovered_share resamples; -1 for a prompt fct_benchmark_prompts lacks), task
# and rank (analysis/near_duplicates.py moves or adds labels by rank, and asks of a prompt only which
# labels share it). At a million prompts two reads of the same 2.3 M labels, the distinct pairs and
# the labels by benchmark and prompt code, took 1.2 to 2.2 s; this one 0.55 to 0.9 s.
LABELS_SQL = f"""
with prompts as (
    select benchmark, prompt_id, row_number() over (order by benchmark, prompt_id) - 1 as prompt
    from (select distinct benchmark, prompt_id from marts.fct_benchmark_prompts)
)
select coalesce(p.prompt, -1) as prompt, l.task_id, l.rank
from {LABELS} as l
left join prompts as p using (benchmark, prompt_id)
where l.labeler = ?
order by all
"""
# The near-duplicate rows' labels by benchmark and prompt code in name order, read only when some
# label's prompt is not among fct_benchmark_prompts (LABELS_SQL cannot tell those prompts apart).
ACTIVE_LABELS_SQL = f"""
select dense_rank() over (order by benchmark) - 1 as benchmark, dense_rank() over (order by benchmark, prompt_id) - 1 as prompt_id, task_id, rank
from {LABELS} where labeler = ? order by all
"""
TWINS_SQL = "select task_id, twin_task_id from marts.dim_task_twins order by task_id, twin_task_id"


@analysis_step("coverage_sensitivity", ["coverage_sensitivity", "work_time_uncovered_interval", "benchmark_contribution"], LABEL_DEPS)
def coverage_sensitivity_assets(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings):
    with warehouse_db.connect() as con:
        inputs = read_sensitivity_inputs(con, pipeline_settings.resolve())
    yield from computed_or_kept(context, warehouse_db, sensitivity_tables, *inputs, progress=reporter(context.log.info))


def read_sensitivity_inputs(con, settings) -> tuple:
    """sensitivity_tables' inputs (but `progress`) from the warehouse, for `settings` (resolved).
    Ordered: the frames are the step's fingerprint as well as its input."""
    active = settings.active_labeler
    tasks = task_frame(con)
    families = [r[0] for r in con.execute("select family_code from marts.dim_family order by 1").fetchall()]
    texts = con.execute(TEXTS_SQL, [active]).df()
    labeled = con.execute(LABELED_SQL, [active]).df()
    sizes = con.execute(SIZES_SQL).df()
    labels = con.execute(LABELS_SQL, [active]).df()
    twins = con.execute(TWINS_SQL).df()
    unplaced = bool((labels["prompt"].to_numpy() < 0).any())
    counts = con.execute(COUNTS_SQL).df() if unplaced else con.execute(OTHER_COUNTS_SQL, [active]).df()
    active_labels = con.execute(ACTIVE_LABELS_SQL, [active]).df() if unplaced and len(twins) else None
    return (tasks, families, counts, texts, labeled, sizes, labels, active, settings.coverage_threshold, settings.sensitivity_thresholds,
            twins, active_labels)


def sensitivity_tables(
    tasks: pd.DataFrame, families: list[str], counts: pd.DataFrame, texts: pd.DataFrame, labeled: pd.DataFrame, sizes: pd.DataFrame,
    labels: pd.DataFrame, active_labeler: str, threshold: int, thresholds: tuple[int, ...],
    twins: pd.DataFrame | None = None, active_labels: pd.DataFrame | None = None, *, progress,
) -> dict[str, pd.DataFrame]:
    """`counts`: labeler, benchmark, task_id, n_prompts (every labeler's per-benchmark aggregate; the
    active labeler's made from `labels` and `sizes` when it has none there and every label's prompt is placed);
    `texts`: task_id, n_texts and `labeled`: benchmark, n_prompts_labeled (the active labeler's);
    `sizes`: benchmark, n_prompts (every prompt); `labels`: prompt, task_id, rank (LABELS_SQL: the
    active labeler's labels, the prompt by its position among every prompt, -1 for one `sizes` does
    not count), whose pairs the bootstrap resamples (coverage.bootstrap_uncovered_share) and which
    the near-duplicate rows count (analysis/near_duplicates.py), given `twins` with rows; those rows
    count `active_labels` (benchmark, prompt_id, task_id, rank) instead when given (a label whose
    prompt is -1)."""
    if active_labeler not in set(counts["labeler"]) and len(labels) and (labels["prompt"].to_numpy() >= 0).all():
        counts = pd.concat([counts, counts_of_pairs(labels, sizes).assign(labeler=active_labeler)[list(counts.columns)]], ignore_index=True)
    by_labeler = {labeler: BenchmarkCounts(group, tasks) for labeler, group in counts.groupby("labeler")}
    texts_per_task = texts.set_index("task_id")["n_texts"]
    placed = labels["prompt"].to_numpy() >= 0
    pairs = labels if placed.all() else labels[placed]
    near = None
    if twins is not None and len(twins):
        near = near_duplicate_counts(by_prompt_code(labels) if active_labels is None else active_labels, twins, tasks)
    table = sensitivity_table(
        by_labeler, texts_per_task, tasks, families, active_labeler=active_labeler, threshold=threshold, thresholds=thresholds, near_duplicates=near
    )
    active = by_labeler.get(active_labeler) or BenchmarkCounts(counts.iloc[0:0], tasks)
    point = summarise(active.total, tasks, threshold, families)["work_time_share_uncovered"]
    boot = bootstrap_uncovered_share(pairs, sizes["n_prompts"].tolist(), tasks, threshold, replicates=200, progress=progress)
    interval = pd.DataFrame(
        [
            {
                "threshold": threshold,
                "labeler": active_labeler,
                "share_uncovered": point,
                "ci_low": boot["ci_low"],
                "ci_high": boot["ci_high"],
                "bootstrap_mean": boot["bootstrap_mean"],
                "ci_low_percentile": boot["ci_low_percentile"],
                "ci_high_percentile": boot["ci_high_percentile"],
                "ci_low_bca": boot["ci_low_bca"],
                "ci_high_bca": boot["ci_high_bca"],
                "replicates": boot["replicates"],
                "method": boot["method"],
            }
        ]
    )
    contribution = benchmark_contributions(active, labeled.set_index("benchmark")["n_prompts_labeled"], tasks, families, threshold)
    return {"coverage_sensitivity": table, "work_time_uncovered_interval": interval, "benchmark_contribution": contribution}


# Each judge with a label, and the tasks it covers: at least `threshold` distinct prompts (benchmark and
# prompt id) labeled with the task, over every benchmark (BenchmarkCounts.total). Ordered: the frames are the
# step's fingerprint as well as its input, so its fits are kept while no judge's covered tasks change.
JUDGES_SQL = f"select distinct labeler from {LABELS} order by labeler"
COVERED_BY_JUDGE_SQL = f"""
select labeler, task_id from {LABELS}
group by labeler, task_id
having count(distinct (benchmark, prompt_id)) >= ?
order by labeler, task_id
"""


@analysis_step("judge_ratios", ["judge_ratios"], [key("marts", "fct_prompt_task_labels_all_labelers"), *TASK_DEPS])
def judge_ratio_assets(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings):
    """Both regression ratios under each judge's coverage. Its own step, apart from coverage_sensitivity:
    the fits read only which tasks each judge covers, which a refresh of a benchmark seldom moves."""
    settings = pipeline_settings.resolve()
    with warehouse_db.connect() as con:
        tasks = regression_frame(task_frame(con))
        judges = [row[0] for row in con.execute(JUDGES_SQL).fetchall()]
        covered = con.execute(COVERED_BY_JUDGE_SQL, [settings.coverage_threshold]).df()
    yield from computed_or_kept(context, warehouse_db, judge_ratio_tables, tasks, judges, covered, settings.coverage_threshold, settings.cluster_level)


def judge_ratio_tables(tasks: pd.DataFrame, judges: list[str], covered: pd.DataFrame, threshold: int, cluster_level: str) -> dict[str, pd.DataFrame]:
    """`covered`: labeler, task_id of each judge's covered tasks (COVERED_BY_JUDGE_SQL)."""
    by_judge = {judge: set(covered.loc[covered["labeler"] == judge, "task_id"].astype(int)) for judge in judges}
    return {"judge_ratios": judge_ratios(by_judge, tasks, threshold, cluster_level)}


def judge_ratios(covered_by_judge: dict[str, set[int]], tasks: pd.DataFrame, threshold: int, cluster_level: str) -> pd.DataFrame:
    """The exposure and importance ratios with each judge's coverage (`covered_by_judge`: each judge's
    covered task ids; `threshold` is recorded): how far the headline's ratios depend on who labeled
    (label density flattens both towards 1, docs/method.md §3)."""
    rows = []
    for labeler, covered in sorted(covered_by_judge.items()):
        mine = tasks.assign(covered=tasks["task_id"].astype(int).isin(covered).to_numpy())
        exposure = coverage_logit(mine, cluster_level=cluster_level).ratio
        importance = importance_logit(mine, cluster_level=cluster_level).ratio
        rows.append(
            {
                "labeler": labeler,
                "threshold": threshold,
                "exposure_coverage_ratio": exposure[0],
                "exposure_ci_low": exposure[1],
                "exposure_ci_high": exposure[2],
                "importance_top_bottom_ratio": importance[0],
                "importance_ci_low": importance[1],
                "importance_ci_high": importance[2],
            }
        )
    return pd.DataFrame(rows, columns=["labeler", "threshold", "exposure_coverage_ratio", "exposure_ci_low", "exposure_ci_high",
                                       "importance_top_bottom_ratio", "importance_ci_low", "importance_ci_high"])


UNCERTAINTY_DEPS = [
    key("marts", "fct_prompt_task_labels"), key("marts", "fct_prompt_judgements"), key("marts", "fct_prompt_candidates"),
    key("marts", "fct_judge_validation_prompts"), *TASK_DEPS,
]


# The label-uncertainty step's inputs with a benchmark and a prompt as integer codes (in name order,
# so every frame sorts as by the names), and only the candidates a re-draw can pick: another
# occupation's (rank > 1), within the prompt's own number of labels (label_draws.label_sets takes
# the first k of them). At a million prompts the candidates by name were some 30 rows a prompt with
# two strings each; the step's peak memory followed them.
# Two statements: DuckDB binds parameters of the last statement of a string only.
UNCERTAINTY_NAMES_SQL = (
    """create or replace temporary table uncertain_benchmarks as
    select benchmark, row_number() over (order by benchmark) - 1 as code
    from (select distinct benchmark from marts.fct_prompt_judgements where labeler = $labeler)""",
    """create or replace temporary table uncertain_prompts as
    select benchmark, prompt_id, row_number() over (order by benchmark, prompt_id) - 1 as code
    from (select distinct benchmark, prompt_id from marts.fct_prompt_judgements where labeler = $labeler)""",
)
UNCERTAIN_LABELS_SQL = """
select b.code as benchmark, p.code as prompt_id, l.task_id, l.rank, l.score
from marts.fct_prompt_task_labels as l join uncertain_benchmarks as b using (benchmark) join uncertain_prompts as p using (benchmark, prompt_id)
order by 1, 2, l.rank
"""
UNCERTAIN_JUDGEMENTS_SQL = """
select b.code as benchmark, p.code as prompt_id, j.status, j.reason, j.confidence
from marts.fct_prompt_judgements as j join uncertain_benchmarks as b using (benchmark) join uncertain_prompts as p using (benchmark, prompt_id)
where j.labeler = $labeler
order by 1, 2
"""
# The labeled prompts coded once, with their number of labels, so the candidates (29.5 M rows at a
# million prompts) meet one join on their names instead of three; and no candidate ranked below every
# prompt's number of labels reaches it (4.3 s to 2.5 s at a million prompts, the same rows).
UNCERTAIN_CANDIDATES_SQL = (
    """create or replace temporary table relabeled_prompts as
    select b.code as benchmark_code, p.code as prompt_code, l.benchmark, l.prompt_id, count(*) as n_labels
    from marts.fct_prompt_task_labels as l join uncertain_benchmarks as b using (benchmark) join uncertain_prompts as p using (benchmark, prompt_id)
    group by all""",
    """select r.benchmark_code as benchmark, r.prompt_code as prompt_id, c.occupation_rank, c.occupation_probability, c.task_rank, c.task_id
    from marts.fct_prompt_candidates as c join relabeled_prompts as r using (benchmark, prompt_id)
    where c.labeler = $labeler and c.occupation_rank > 1 and c.task_rank <= r.n_labels
        and c.task_rank <= (select max(n_labels) from relabeled_prompts)
    order by 1, 2, c.occupation_rank, c.task_rank""",
)
UNCERTAIN_VALIDATION_SQL = """
select v.yardstick, v.subset, b.code as benchmark, p.code as prompt_id, v.n_labels, v.occupation_top1
from marts.fct_judge_validation_prompts as v join uncertain_benchmarks as b using (benchmark) join uncertain_prompts as p using (benchmark, prompt_id)
where v.labeler = $labeler
order by v.yardstick, 3, 4
"""


def numbers_frame(con, sql: str, parameters: dict | None = None) -> pd.DataFrame:
    """`sql`'s result as DuckDB's .df() gives it, through Arrow when every column is a float or an
    integer without NULLs (Arrow and .df() then give the same columns, dtypes and values; else .df()
    after all). Arrow converts the columns on several threads: at a million prompts the 9.3 M
    candidates took 2.28 s through .df(), 1.37 through Arrow, the 2.3 M labels 0.54 and 0.45
    (medians of three)."""
    table = con.sql(sql, params=parameters).to_arrow_table()
    if all(pa.types.is_floating(field.type) or (pa.types.is_integer(field.type) and table.column(field.name).null_count == 0) for field in table.schema):
        return table.to_pandas()
    return con.execute(sql, parameters).df()


def read_uncertainty_inputs(con, labeler: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame, list[str]]:
    """The labels, judgements, candidates (only those a re-draw can pick) and yardstick rows of
    `labeler`, benchmark and prompt as integer codes in name order, and the benchmarks by code."""
    for statement in UNCERTAINTY_NAMES_SQL:
        con.execute(statement, {"labeler": labeler})
    benchmarks = [row[0] for row in con.execute("select benchmark from uncertain_benchmarks order by code").fetchall()]
    labels = numbers_frame(con, UNCERTAIN_LABELS_SQL)
    judgements = con.execute(UNCERTAIN_JUDGEMENTS_SQL, {"labeler": labeler}).df()
    con.execute(UNCERTAIN_CANDIDATES_SQL[0])
    candidates = numbers_frame(con, UNCERTAIN_CANDIDATES_SQL[1], {"labeler": labeler})
    validation = con.execute(UNCERTAIN_VALIDATION_SQL, {"labeler": labeler}).df()
    return labels, judgements, candidates, validation, benchmarks


def coded_uncertainty_tables(labels, judgements, candidates, validation, tasks, labeler, threshold, bars, benchmarks: list[str]) -> dict[str, pd.DataFrame]:
    """uncertainty.uncertainty_tables on coded inputs (read_uncertainty_inputs), the benchmarks named again."""
    tables = uncertainty_tables(labels, judgements, candidates, validation, tasks, labeler, threshold, bars)
    abstention = tables["abstention_by_benchmark"]
    names = abstention["benchmark"].map(lambda code: code if code == "all" else benchmarks[int(code)])
    tables["abstention_by_benchmark"] = abstention.assign(benchmark=names.astype(str))
    return tables


@analysis_step("label_uncertainty", ["label_calibration", "work_time_uncovered_band", "abstention_by_benchmark"], UNCERTAINTY_DEPS)
def label_uncertainty(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings):
    """The active labeler's confidence calibrated on labels_dev's tune half, and the uncovered share
    with every labeled prompt's labels re-drawn from its candidates (analysis/uncertainty.py)."""
    settings = pipeline_settings.resolve()
    labeler = settings.active_labeler
    with warehouse_db.connect() as con:
        # Ordered: the frames are the step's fingerprint as well as its input.
        labels, judgements, candidates, validation, benchmarks = read_uncertainty_inputs(con, labeler)
        tasks = con.execute("select task_id, onet_soc_code, hours from marts.dim_task left join marts.fct_task_hours using (task_id, onet_soc_code) order by task_id").df()
        bars = judge_bars(con, labeler)
    yield from computed_or_kept(
        context, warehouse_db, coded_uncertainty_tables, labels, judgements, candidates, validation, tasks, labeler, settings.coverage_threshold, bars,
        benchmarks,
    )


def judge_bars(con, labeler: str) -> tuple[float, float] | None:
    """The judge's own abstention bars (abstain_below, min_similarity) as its candidates record them;
    None for a judge without them (judge v3, the LLM judge)."""
    found = con.execute("select distinct abstain_below, min_similarity from marts.fct_prompt_candidates where labeler = ?", [labeler]).fetchall()
    return (float(found[0][0]), float(found[0][1])) if len(found) == 1 else None


SCORE_DEPS = [
    key("marts", "fct_benchmark_results"), key("marts", "fct_prompt_task_labels"), key("marts", "dim_task"), key("marts", "dim_occupation"),
    key("marts", "fct_prompt_judgements"), key("marts", "fct_prompt_candidates"),
]


# The results and the labels of the prompts that have results, with every name as its position in
# sorted order (benchmark, model, and a prompt by its benchmark and id): the scores come out of the
# same rows in the same order as from the names, and take a fraction of the memory (strings were
# most of it: 1.8 GB for 3.7 M results). Ordered: the frames are the step's fingerprint as well as its input.
SCORED_NAMES_SQL = """
create or replace temporary table scored_benchmarks as
    select benchmark, row_number() over (order by benchmark) - 1 as code from (select distinct benchmark from marts.fct_benchmark_results);
create or replace temporary table scored_models as
    select model, row_number() over (order by model) - 1 as code from (select distinct model from marts.fct_benchmark_results);
create or replace temporary table scored_prompts as
    select benchmark, prompt_id, row_number() over (order by benchmark, prompt_id) - 1 as code
    from (select distinct benchmark, prompt_id from marts.fct_benchmark_results);
"""
CODED_RESULTS_SQL = """
select b.code as benchmark, m.code as model, p.code as prompt_id, r.score
from marts.fct_benchmark_results as r
join scored_benchmarks as b using (benchmark) join scored_models as m using (model) join scored_prompts as p using (benchmark, prompt_id)
order by 1, 2, 3
"""
CODED_LABELS_SQL = """
select b.code as benchmark, p.code as prompt_id, l.task_id, l.rank, l.score
from marts.fct_prompt_task_labels as l
join scored_benchmarks as b using (benchmark) join scored_prompts as p using (benchmark, prompt_id)
order by 1, 2, 3
"""
CODED_JUDGEMENTS_SQL = """
select b.code as benchmark, p.code as prompt_id, j.status, j.confidence
from marts.fct_prompt_judgements as j
join scored_benchmarks as b using (benchmark) join scored_prompts as p using (benchmark, prompt_id)
where j.labeler = ?
order by 1, 2
"""


@analysis_step("model_scores", ["occupation_model_scores", "model_score_differences"], SCORE_DEPS)
def model_scores(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings):
    with warehouse_db.connect() as con:
        con.execute(SCORED_NAMES_SQL)
        benchmarks = [row[0] for row in con.execute("select benchmark from scored_benchmarks order by code").fetchall()]
        models = [row[0] for row in con.execute("select model from scored_models order by code").fetchall()]
        results = con.execute(CODED_RESULTS_SQL).df()
        labels = con.execute(CODED_LABELS_SQL).df()
        tasks = con.execute("select task_id, onet_soc_code from marts.dim_task order by task_id").df()
        titles = con.execute("select onet_soc_code, title from marts.dim_occupation order by onet_soc_code").df()
        labeler = pipeline_settings.resolve().active_labeler
        judgements = con.execute(CODED_JUDGEMENTS_SQL, [labeler]).df()
        bars = judge_bars(con, labeler)
    yield from computed_or_kept(
        context, warehouse_db, score_tables, results, labels, tasks, titles, pipeline_settings.method.min_prompts_per_task, judgements, bars, benchmarks, models
    )


def score_tables(
    results: pd.DataFrame, labels: pd.DataFrame, tasks: pd.DataFrame, titles: pd.DataFrame, k: int, judgements: pd.DataFrame, bars,
    benchmarks: list[str] | None = None, models: list[str] | None = None,
) -> dict[str, pd.DataFrame]:
    """The O*NET-weighted scores, with each cell's prompts whose labels the judge marks as weak
    (uncertainty.weak_prompts; `bars` None: not known). With `benchmarks` and `models`, `results`,
    `labels` and `judgements` name each by its position in those lists (and a prompt by any code
    unique to it), and the tables name them back."""
    weak = weak_prompts(judgements, labels, bars) if bars is not None else None
    scores = occupation_model_scores(results, labels, tasks, k=k, weak=weak)
    if benchmarks is not None and models is not None and len(scores):
        scores["benchmark"] = pd.Series(benchmarks, dtype=object).take(scores["benchmark"].to_numpy()).to_numpy()
        scores["model"] = pd.Series(models, dtype=object).take(scores["model"].to_numpy()).to_numpy()
    return {"occupation_model_scores": scores, "model_score_differences": score_differences(scores, titles.set_index("onet_soc_code")["title"], top=20)}
