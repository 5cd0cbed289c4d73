"""The re-drawing of the label-uncertainty band (uncertainty.py): every labeled prompt's possible
label sets (`label_sets`: its own, then one per other candidate occupation), the draws that keep a
prompt's labels with its calibrated probability (calibration.py) or move them to another candidate
(`draw_shares`), and the band, the central quantiles of the draws (`band`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import sparse

from .calibration import Calibration, _expit, _logit

BAND_LEVEL = 0.95


@dataclass
class LabelSets:
    """Every labeled prompt's possible label sets: its own (first), then one per other candidate
    occupation. `incidence` is sets x tasks (1 where the set holds the task, columns in the order of
    the task frame); `prompt` the prompt (0..n-1) of each set; `own` marks each prompt's own set;
    `share` each alternative's share of the probability of being wrong (its occupation's probability
    over the alternatives'); `confidence` each prompt's raw confidence."""

    incidence: sparse.csr_matrix
    prompt: np.ndarray
    own: np.ndarray
    share: np.ndarray
    confidence: np.ndarray

    @property
    def n_prompts(self) -> int:
        return len(self.confidence)

    def probabilities(self, q: np.ndarray) -> np.ndarray:
        """Each set's probability (sets x columns of q) when each prompt's own labels are right with
        probability q[prompt] (prompts x columns); a prompt without alternatives keeps its own."""
        keep = np.where(self.has_alternative[:, None], q, 1.0)[self.prompt]
        return np.where(self.own[:, None], keep, (1.0 - keep) * self.share[:, None])

    @cached_property
    def own_set(self) -> np.ndarray:
        """Each prompt's own set (sets are grouped by prompt, its own first)."""
        return np.flatnonzero(self.own)

    @cached_property
    def n_alternatives(self) -> np.ndarray:
        """Each prompt's alternative sets."""
        return np.bincount(self.prompt[~self.own], minlength=self.n_prompts)

    @cached_property
    def has_alternative(self) -> np.ndarray:
        return self.n_alternatives > 0

    @cached_property
    def alternative_bounds(self) -> np.ndarray:
        """prompts x (most alternatives of a prompt): each prompt's running sum of its alternatives'
        shares, the last one (and the padding after it) exactly 1.0."""
        alternative = ~self.own
        position = np.arange(len(self.own)) - self.own_set[self.prompt] - 1  # 0 for a prompt's first alternative
        width = int(position[alternative].max()) + 1 if alternative.any() else 1
        shares = np.zeros((self.n_prompts, width))
        shares[self.prompt[alternative], position[alternative]] = self.share[alternative]
        bounds = np.cumsum(shares, axis=1)
        bounds[np.arange(width)[None, :] >= (self.n_alternatives - 1)[:, None]] = 1.0
        return bounds

    def choose(self, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The set each prompt draws, with the probabilities of `probabilities(q)`: given u uniform on
        [0, 1) per prompt, its own set when u <= q (always, for a prompt without alternatives), else the
        alternative whose interval of the running share sum holds (u - q) / (1 - q). Per prompt, not
        per set: at a million prompts a draw over every set took 84 ms, 200 times."""
        keep = np.where(self.has_alternative, q, 1.0)
        chosen = self.own_set.copy()
        moved = np.flatnonzero(u > keep)
        if len(moved):
            within = (u[moved] - keep[moved]) / (1.0 - keep[moved])
            step = (self.alternative_bounds[moved] < within[:, None]).sum(axis=1)
            chosen[moved] += 1 + np.minimum(step, self.alternative_bounds.shape[1] - 1)
        return chosen


def label_sets(labels: pd.DataFrame, judgements: pd.DataFrame, candidates: pd.DataFrame, task_ids: np.ndarray) -> LabelSets:
    """The label sets of every prompt the judge labeled. `labels`: benchmark, prompt_id, task_id
    (one labeler); `judgements`: benchmark, prompt_id, status, confidence; `candidates`: benchmark,
    prompt_id, occupation_rank, occupation_probability, task_rank, task_id; `task_ids` the columns.
    An alternative set holds its occupation's first k candidate tasks, k the prompt's own labels."""
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
    members = pd.concat(
        [own.assign(occupation_rank=0)[["prompt", "occupation_rank", "column"]], alt[["prompt", "occupation_rank", "column"]]], ignore_index=True
    )
    rows = set_of.reindex(pd.MultiIndex.from_frame(members[["prompt", "occupation_rank"]])).to_numpy()
    incidence = sparse.csr_matrix((np.ones(len(rows)), (rows, members["column"].astype("int64").to_numpy())), shape=(len(sets), len(task_ids)))
    incidence.data[:] = 1.0
    confidence = labeled["confidence"].astype(float).fillna(1.0).to_numpy()
    return LabelSets(incidence, sets["prompt"].to_numpy(dtype=np.int64), (sets["occupation_rank"] == 0).to_numpy(), sets["share"].to_numpy(dtype=float), confidence)


# The re-drawing holds a few sets x draws arrays at once (probabilities, their running sum, the
# uniforms, the choice): the draws go in chunks of columns that keep each such array near this many
# bytes, so memory stays flat as prompts grow (200 draws at once took 4.8 GB at 100,000 prompts).
DRAW_CHUNK_BYTES = 16 * 2**20


def draws_per_chunk(n_sets: int, draws: int, chunk_bytes: int = DRAW_CHUNK_BYTES) -> int:
    """How many draws (columns) one chunk of the re-drawing takes for `n_sets` label sets."""
    return max(1, min(draws, chunk_bytes // (8 * max(n_sets, 1))))


def draw_shares(sets: LabelSets, calibration: Calibration, hours: np.ndarray, occupation: np.ndarray, threshold: int, *,
                draws: int = 200, seed: int = 20261204, chunk_bytes: int = DRAW_CHUNK_BYTES) -> dict[str, np.ndarray]:
    """`draws` re-drawings of every labeled prompt's labels: per draw, the uncovered share of the
    hours (aligned to the incidence's task columns), the tasks labeled and covered, and the
    occupations (`occupation`: each task column's occupation code) with a covered task. The draws
    are made a chunk of columns at a time (draws_per_chunk), so memory does not grow with `draws`."""
    rng = np.random.default_rng(seed)
    if calibration.fitted:
        a, b = rng.multivariate_normal([calibration.intercept, calibration.slope], calibration.cov, size=draws).T
    else:
        a, b = np.full(draws, calibration.intercept), np.full(draws, calibration.slope)
    logit_confidence = _logit(sets.confidence)[:, None]
    n_tasks = sets.incidence.shape[1]
    own_counts = np.asarray(sets.incidence.T @ sets.own.astype(float))
    counts = np.empty((n_tasks, draws))  # tasks x draws
    step = draws_per_chunk(sets.incidence.shape[0], draws, chunk_bytes)
    for start in range(0, draws, step):
        columns = slice(start, min(start + step, draws))
        q = _expit(a[None, columns] + b[None, columns] * logit_confidence)
        u = rng.random((sets.n_prompts, q.shape[1]))
        for column in range(q.shape[1]):
            # A draw's counts are the own labels' counts, with the moved prompts' own sets taken out
            # and the sets they moved to put in.
            chosen = sets.choose(q[:, column], u[:, column])
            moved = chosen != sets.own_set
            added = np.bincount(sets.incidence[chosen[moved]].indices, minlength=n_tasks)
            removed = np.bincount(sets.incidence[sets.own_set[moved]].indices, minlength=n_tasks)
            counts[:, start + column] = own_counts + added - removed
    covered = counts >= threshold
    has_hours = ~np.isnan(hours)
    weights = np.where(has_hours, hours, 0.0)
    shares = (weights[:, None] * ~covered).sum(axis=0) / weights.sum()
    codes, occupation_index = np.unique(occupation, return_inverse=True)
    by_occupation = sparse.csr_matrix((np.ones(len(occupation_index)), (occupation_index, np.arange(len(occupation_index)))), shape=(len(codes), len(occupation_index)))
    occupations = (np.asarray(by_occupation @ covered.astype(float)) > 0).sum(axis=0)
    return {"share": shares, "tasks": covered.sum(axis=0), "occupations": occupations, "labeled": (counts > 0).sum(axis=0)}


def band(values: np.ndarray, level: float = BAND_LEVEL) -> tuple[float, float]:
    alpha = (1 - level) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return float(low), float(high)
