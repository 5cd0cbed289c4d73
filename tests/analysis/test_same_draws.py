"""The label-uncertainty band and the bootstrap, made faster at a million prompts (#42), give what
the straightforward code gave, to the bit: the label sets of a merge per table, the re-drawing with
scipy's row selection, and the bootstrap with one generator call per benchmark (references here)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from workbank_dagster.analysis import keys, label_draws
from workbank_dagster.analysis.calibration import IDENTITY, Calibration, _expit, _logit
from workbank_dagster.analysis.coverage import bootstrap_share
from workbank_dagster.analysis.label_draws import draw_shares, draws_per_chunk, label_sets


def reference_label_sets(labels, judgements, candidates, task_ids):
    """label_sets as it was: a merge per table on (benchmark, prompt_id), groupby-first, a MultiIndex lookup."""
    key = ["benchmark", "prompt_id"]
    column = pd.Series(np.arange(len(task_ids)), index=pd.Index(np.asarray(task_ids, dtype=np.int64)))
    labeled = judgements.loc[judgements["status"] == "labeled", [*key, "confidence"]].sort_values(key).reset_index(drop=True)
    labeled["prompt"] = np.arange(len(labeled))
    own = labels[[*key, "task_id"]].merge(labeled[[*key, "prompt"]], on=key)
    own = own.assign(column=own["task_id"].astype("int64").map(column)).dropna(subset=["column"])
    k = own.groupby("prompt").size().reindex(labeled["prompt"], fill_value=0).to_numpy()
    alt = candidates.loc[candidates["occupation_rank"] > 1, [*key, "occupation_rank", "occupation_probability", "task_rank", "task_id"]]
    alt = alt.merge(labeled[[*key, "prompt"]], on=key)
    alt = alt[alt["task_rank"].to_numpy() <= k[alt["prompt"].to_numpy()]]
    alt = alt.assign(column=alt["task_id"].astype("int64").map(column)).dropna(subset=["column"])
    occupations = alt.groupby(["prompt", "occupation_rank"], as_index=False)["occupation_probability"].first()
    total = occupations.groupby("prompt")["occupation_probability"].transform("sum")
    count = occupations.groupby("prompt")["occupation_probability"].transform("size")
    occupations["share"] = np.where(total > 0, occupations["occupation_probability"] / total.where(total > 0, 1.0), 1.0 / count)
    sets = pd.concat(
        [pd.DataFrame({"prompt": labeled["prompt"], "occupation_rank": 0, "share": 0.0}), occupations[["prompt", "occupation_rank", "share"]]],
        ignore_index=True,
    ).sort_values(["prompt", "occupation_rank"], kind="stable").reset_index(drop=True)
    sets["set"] = np.arange(len(sets))
    set_of = sets.set_index(["prompt", "occupation_rank"])["set"]
    members = pd.concat([own.assign(occupation_rank=0)[["prompt", "occupation_rank", "column"]], alt[["prompt", "occupation_rank", "column"]]], ignore_index=True)
    rows = set_of.reindex(pd.MultiIndex.from_frame(members[["prompt", "occupation_rank"]])).to_numpy()
    incidence = sparse.csr_matrix((np.ones(len(rows)), (rows, members["column"].astype("int64").to_numpy())), shape=(len(sets), len(task_ids)))
    incidence.data[:] = 1.0
    return incidence, sets["prompt"].to_numpy(dtype=np.int64), (sets["occupation_rank"] == 0).to_numpy(), sets["share"].to_numpy(dtype=float)


def reference_counts(sets, calibration, draws, seed, chunk_bytes):
    """draw_shares' per-draw task counts as they were: every prompt's set chosen, and the moved
    prompts' sets selected from the incidence matrix by scipy."""
    rng = np.random.default_rng(seed)
    if calibration.fitted:
        a, b = rng.multivariate_normal([calibration.intercept, calibration.slope], calibration.cov, size=draws).T
    else:
        a, b = np.full(draws, calibration.intercept), np.full(draws, calibration.slope)
    logit_confidence = _logit(sets.confidence)[:, None]
    n_tasks = sets.incidence.shape[1]
    own_counts = np.asarray(sets.incidence.T @ sets.own.astype(float))
    counts = np.empty((n_tasks, draws))
    bounds = sets.alternative_bounds
    step = draws_per_chunk(sets.incidence.shape[0], draws, chunk_bytes)
    for start in range(0, draws, step):
        columns = slice(start, min(start + step, draws))
        q = _expit(a[None, columns] + b[None, columns] * logit_confidence)
        u = rng.random((sets.n_prompts, q.shape[1]))
        for column in range(q.shape[1]):
            keep = np.where(sets.has_alternative, q[:, column], 1.0)
            chosen = sets.own_set.copy()
            moved = np.flatnonzero(u[:, column] > keep)
            within = (u[moved, column] - keep[moved]) / (1.0 - keep[moved])
            chosen[moved] += 1 + np.minimum((bounds[moved] < within[:, None]).sum(axis=1), bounds.shape[1] - 1)
            moved = chosen != sets.own_set
            added = np.bincount(sets.incidence[chosen[moved]].indices, minlength=n_tasks)
            removed = np.bincount(sets.incidence[sets.own_set[moved]].indices, minlength=n_tasks)
            counts[:, start + column] = own_counts + added - removed
    return counts


def _judged(n_prompts: int, seed: int, *, coded: bool):
    """Prompts of two benchmarks, rows shuffled: most labeled with 1 to 4 tasks (some outside the
    task list), their candidates 0 to 5 other occupations (a probability missing, some all zero),
    a few candidates of prompts that were not labeled."""
    rng = np.random.default_rng(seed)
    keys = [(b, i if coded else f"p{i:04d}") for b in ((0, 1) if coded else ("zeta", "alpha")) for i in range(n_prompts // 2)]
    judgements = pd.DataFrame(keys, columns=["benchmark", "prompt_id"])
    judgements["status"] = np.where(rng.random(len(keys)) < 0.85, "labeled", "abstained")
    judgements["confidence"] = np.where(rng.random(len(keys)) < 0.05, np.nan, rng.uniform(0.02, 0.999, len(keys)))
    labels, candidates = [], []
    for (b, p), status in zip(keys, judgements["status"]):
        k = int(rng.integers(1, 5))
        labels += [(b, p, int(rng.integers(0, 70)), rank) for rank in range(1, k + 1)] if status == "labeled" else []
        zero = rng.random() < 0.1
        for occupation in range(1, int(rng.integers(1, 7)) + 1):
            probability = 0.0 if zero else (np.nan if rng.random() < 0.03 else float(rng.uniform(0.01, 0.5)))
            candidates += [(b, p, occupation, probability, rank, int(rng.integers(0, 70))) for rank in range(1, 6)]
    labels = pd.DataFrame(labels, columns=["benchmark", "prompt_id", "task_id", "rank"]).sample(frac=1, random_state=seed)
    candidates = pd.DataFrame(candidates, columns=["benchmark", "prompt_id", "occupation_rank", "occupation_probability", "task_rank", "task_id"])
    return labels, judgements.sample(frac=1, random_state=seed), candidates.sample(frac=1, random_state=seed + 1)


@pytest.mark.parametrize("ordered", ["shuffled", "ordered", "ordered, no missing probability"])
@pytest.mark.parametrize("coded", [True, False])
def test_label_sets_are_those_of_the_merges(coded, ordered):
    """Rows shuffled (every lookup and grouping sorts), or in the order the step reads them (ordered
    by prompt, then rank: the paths that skip the sorts), with a probability missing or none."""
    labels, judgements, candidates = _judged(400, 3, coded=coded)
    if ordered != "shuffled":
        labels = labels.sort_values(["benchmark", "prompt_id", "rank"])
        candidates = candidates.sort_values(["benchmark", "prompt_id", "occupation_rank", "task_rank"])
        judgements = judgements.sort_values(["benchmark", "prompt_id"])
    if ordered == "ordered, no missing probability":
        candidates = candidates.fillna({"occupation_probability": 0.25})
    task_ids = np.arange(0, 66)  # tasks 66..69 are not in the list: their labels and candidates are left out
    sets = label_sets(labels, judgements, candidates, task_ids)
    incidence, prompt, own, share = reference_label_sets(labels, judgements, candidates, task_ids)
    for ours, theirs in ((sets.incidence.indptr, incidence.indptr), (sets.incidence.indices, incidence.indices), (sets.incidence.data, incidence.data),
                         (sets.prompt, prompt), (sets.own, own), (sets.share, share)):
        assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes()
    assert (sets.n_alternatives == 0).any() and (sets.n_alternatives >= 4).any()
    assert int(sets.has_alternative.sum()) == len(np.unique(prompt[~own]))  # the band's prompts_with_alternatives


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("chunk_bytes", [1, 4096, 2**24])
def test_the_re_drawing_counts_what_scipy_s_row_selection_counted(chunk_bytes, threads, monkeypatch):
    """On one thread or several (each draw counted on whichever), in chunks of any size: the counts of
    the one-thread code before the speed-ups."""
    monkeypatch.setattr(label_draws, "DRAW_THREADS", threads)
    labels, judgements, candidates = _judged(300, 4, coded=True)
    sets = label_sets(labels, judgements, candidates, np.arange(70))
    rng = np.random.default_rng(0)
    hours, occupation = rng.uniform(1, 5, 70), np.repeat(np.arange(14), 5)
    fitted = Calibration(0.4, 1.3, np.array([[0.02, 0.005], [0.005, 0.01]]), 100, 60, True)
    for calibration in (IDENTITY, fitted):
        counts = reference_counts(sets, calibration, 40, 9, chunk_bytes)
        drawn = draw_shares(sets, calibration, hours, occupation, 3, draws=40, seed=9, chunk_bytes=chunk_bytes)
        covered = counts >= 3
        assert drawn["share"].tolist() == ((hours[:, None] * ~covered).sum(axis=0) / hours.sum()).tolist()
        assert drawn["tasks"].tolist() == covered.sum(axis=0).tolist() and drawn["labeled"].tolist() == (counts > 0).sum(axis=0).tolist()
        assert len(set(drawn["share"].tolist())) > 1


def test_the_bootstrap_draws_a_run_of_equal_benchmarks_in_one_call_as_it_drew_them_one_by_one():
    """Benchmarks of one size in a row (the synthetic corpus: a thousand of 1,000) are drawn with one
    generator call: the replicates are those of a call per benchmark, ranges or not, sizes mixed."""
    rng = np.random.default_rng(8)
    sizes = [30, 30, 30, 7, 7, 1, 1, 20, 30]
    n = sum(sizes)
    incidence = sparse.csr_matrix((np.ones(2 * n), (np.repeat(np.arange(n), 2), rng.integers(0, 25, 2 * n))), shape=(n, 25))
    incidence.data[:] = 1.0
    hours = rng.uniform(1, 10, 25)
    starts = np.cumsum([0, *sizes[:-1]])
    ranges = [np.arange(s, s + size) for s, size in zip(starts, sizes)]
    shuffled = [rng.permutation(members) for members in ranges]
    mixed = [members if i % 3 else shuffled[i] for i, members in enumerate(ranges)]

    def one_call_per_group(groups):
        draw, shares = np.random.default_rng(5), []
        for _ in range(30):
            drawn = np.concatenate([members[draw.integers(0, len(members), size=len(members))] for members in groups])
            weights = np.bincount(drawn, minlength=n).astype(float)
            shares.append(hours[(incidence.T @ weights) < 3].sum() / hours.sum())
        return shares

    for groups in (ranges, shuffled, mixed):
        assert bootstrap_share(incidence, hours, groups, 3, replicates=30, rng=np.random.default_rng(5))["shares"].tolist() == one_call_per_group(groups)


def test_packed_pairs_are_equal_exactly_for_equal_pairs_and_refuse_what_they_cannot_pack():
    from workbank_dagster.analysis.keys import packed_pairs

    a, b = (np.array([0, 1, 1, 3]), np.array([5, 0, 5, 2])), (np.array([1, 3, 0]), np.array([5, 2, 7]))
    left, right = packed_pairs(a, b)  # one radix for both: (1, 5) and (3, 2) meet across them, (0, 7) meets nothing
    assert list(pd.Index(left).get_indexer(right)) == [2, 3, -1]
    assert len(set(left)) == 4
    assert packed_pairs((np.array([0, -1]), np.array([1, 2]))) is None  # a negative
    assert packed_pairs((np.array(["x"]), np.array([1]))) is None  # not integers
    assert packed_pairs((np.array([2**61]), np.array([3]))) is None  # 2**61 * 4 overflows the bound
    assert [len(p) for p in packed_pairs((np.zeros(0, np.int64), np.zeros(0, np.int64)), a)] == [0, 4]


def _reference_first(group, values):
    first = pd.Series(values).groupby(group).first()
    return first.index.to_numpy(), first.to_numpy(dtype=float), np.searchsorted(first.index.to_numpy(), group)


@pytest.mark.parametrize("missing", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("ordered", [True, False])
def test_the_first_value_per_group_is_pandas_first_in_order_or_not(ordered, missing):
    """label_draws._first_per_group, on groups in order (no sort) or shuffled, with values missing or
    not: pandas' groupby first (a group of only NaN gives NaN)."""
    rng = np.random.default_rng(11)
    group = np.sort(rng.integers(0, 300, 2000)) * 7
    values = np.where(rng.random(2000) < missing, np.nan, rng.random(2000))
    if not ordered:
        group = rng.permutation(group)
    for ours, theirs in zip(label_draws._first_per_group(group, values), _reference_first(group, values)):
        assert ours.dtype.kind == theirs.dtype.kind and ours.tobytes() == theirs.astype(ours.dtype).tobytes()


@pytest.mark.parametrize("ordered", [True, False])
def test_the_incidence_is_scipy_s_from_coordinates(ordered):
    """label_draws._incidence laid out by row counts (each part's rows in order) or by scipy (not in
    order): the arrays of scipy's csr_matrix from the coordinates, repeats counted once."""
    rng = np.random.default_rng(12)
    n_rows, n_columns = 500, 40
    owner = rng.integers(0, 2, n_rows)  # which part holds each row
    parts = [np.flatnonzero(owner == part) for part in (0, 1)]
    rows = [np.sort(rng.choice(members, 3 * len(members))) for members in parts]
    rows = rows if ordered else [rng.permutation(part) for part in rows]
    columns = [rng.integers(0, n_columns, len(part)) for part in rows]  # some (row, column) repeated
    ours = label_draws._incidence(rows, columns, (n_rows, n_columns))
    theirs = sparse.csr_matrix((np.ones(sum(map(len, rows))), (np.concatenate(rows), np.concatenate(columns))), shape=(n_rows, n_columns))
    theirs.data[:] = 1.0
    assert theirs.nnz < sum(map(len, rows))
    for a, b in ((ours.indptr, theirs.indptr), (ours.indices, theirs.indices), (ours.data, theirs.data)):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_rows_and_columns_are_those_of_the_merge_and_the_map():
    """label_draws._rows_of (a run of equal keys looked up once) and keys.positions_among (a table by
    task id, or pandas' index when the ids are not small non-negative integers): a merge's pairs and a
    map's NaN as -1."""
    rng = np.random.default_rng(13)
    table = pd.DataFrame({"benchmark": [0, 0, 1, 1, 2], "prompt_id": [0, 3, 1, 2, 0]})
    frame = pd.DataFrame({"benchmark": rng.integers(0, 3, 400), "prompt_id": rng.integers(0, 4, 400)})
    for rows in (frame, frame.sort_values(["benchmark", "prompt_id"])):  # runs of one row, or of many
        expected = rows.merge(table.assign(row=np.arange(5)), how="left", on=["benchmark", "prompt_id"])["row"].fillna(-1).to_numpy()
        assert label_draws._rows_of(table, rows, ["benchmark", "prompt_id"]).tolist() == expected.tolist()
    task_ids = np.array([40, 3, 17, 8])
    wanted = pd.Series(rng.integers(-3, 45, 300), dtype="int32")
    column = pd.Series(np.arange(4), index=pd.Index(task_ids))
    for ids, values in ((task_ids, wanted), (task_ids, wanted.clip(0, 40)), (task_ids + 2**40, wanted.astype("int64") + 2**40), (task_ids, wanted.astype(object))):
        expected = values.astype("int64").map(pd.Series(np.arange(4), index=pd.Index(ids))).fillna(-1).to_numpy(dtype=np.int64)
        assert keys.positions_among(values, ids).tolist() == expected.tolist()
    assert (keys.positions_among(wanted, task_ids) >= 0).sum() == wanted.isin(column.index).sum() > 0
