"""Judges: given a prompt's candidate tasks, decide which tasks the prompt exercises.

Every judge has a `labeler` string `method:model:template-version` (docs/method.md §3) and returns, per
prompt, an ordered list of (task_id, score): rank 1 first.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from ..settings import EMBEDDED_LABELER, EMBEDDED_LABELER_V3, EMBEDDED_LABELER_V4, EMBEDDED_LABELER_V6
from .evidence import EvidenceWeights
from .narrowing import Narrowing
from .retrieval import Candidates, TaskIndex


@dataclass(frozen=True)
class EmbeddedJudgeV3:
    """The selection rule that stands in for a chat model.

    Take the prompt's `n_occupations` best occupations (hybrid retrieval score); label the
    `first_tasks` most similar tasks of the best one and the `other_tasks` most similar of each
    other, best occupation first; drop any task whose similarity to the prompt is below
    `min_similarity`, so a prompt that resembles no work well gets few or no labels (label
    density decides the headline: docs/method.md §3). Score = cosine similarity of prompt and task.
    """

    n_occupations: int = 4
    first_tasks: int = 3
    other_tasks: int = 2
    min_similarity: float = 0.25
    labeler: str = EMBEDDED_LABELER_V3

    def select(self, candidates: Candidates, index: TaskIndex) -> list[list[tuple[int, float]]]:
        out = []
        for row, (positions, sims) in enumerate(zip(candidates.task_positions, candidates.task_similarity)):
            chosen: list[tuple[int, float]] = []
            for rank, occupation in enumerate(candidates.occupations[row][: self.n_occupations]):
                quota = self.first_tasks if rank == 0 else self.other_tasks
                mine = index.task_occupation[positions] == occupation
                for position, sim in zip(positions[mine][:quota], sims[mine][:quota]):
                    if sim >= self.min_similarity:
                        chosen.append((int(index.task_ids[position]), float(sim)))
            out.append(chosen)
        return out

    def summary(self) -> str:
        """The rule in words, from the judge's own parameters (the report's methodology)."""
        return (
            f"labels the {self.first_tasks} most similar tasks of its best occupation and the {self.other_tasks} most similar of each of the "
            f"next {self.n_occupations - 1} (of the retrieval's ranking), dropping any below cosine {self.min_similarity}"
        )

    def describe(self) -> dict:
        return {
            "n_occupations": self.n_occupations,
            "first_tasks": self.first_tasks,
            "other_tasks": self.other_tasks,
            "min_similarity": self.min_similarity,
        }



@dataclass(frozen=True)
class Judgement:
    """What judge v4 decided for one prompt: its labels, status, reason and confidence."""

    labels: list[tuple[int, float]]
    status: str  # labeled | abstained
    reason: str
    confidence: float


@dataclass(frozen=True)
class EmbeddedJudgeV4:
    """Narrow, then label sparingly.

    Retrieval has ranked occupations family first (narrowing.Narrowing, with the title, technology
    and prior evidence of evidence.py and prior.py). The judge takes the best occupation, and the
    second one too when its probability is at least `second_occupation` × the first's (with the
    default 0.02 the second is left out when the first is 50 times as likely, as after a confident
    title match). Rank 1 is the best occupation's most similar candidate task, rank 2 the second
    occupation's; a further task of either is added only when its similarity is within
    `task_margin` of rank 1's (the margin rule), up to `max_labels`.

    It **abstains** (status `abstained`, with the reason) when its confidence, the probability of
    the best occupation, is below `abstain_below`, or its rank-1 task's similarity is below
    `min_similarity`. Abstention is capped, so it cannot buy precision: in each benchmark at most
    `max_abstain_share` of the prompts it judges abstain (those furthest below either bar); the
    others are labeled as usual. Score = cosine similarity of prompt and task.
    """

    # Tuned on the `tune` half of labels_dev only (reference/labels_dev_split.csv; README, Validation).
    narrowing: Narrowing = Narrowing(temperature=2.0, family=2.0, prior=0.2, context=1.0)
    evidence: EvidenceWeights = EvidenceWeights(title_weight=4.0, decide_at=0.7, technology_weight=1.0)
    second_occupation: float = 0.02
    task_margin: float = 0.05
    max_labels: int = 3
    abstain_below: float = 0.05
    max_abstain_share: float = 0.2
    min_similarity: float = 0.2
    personal_errands: bool = False
    labeler: str = EMBEDDED_LABELER_V4

    def select(self, candidates: Candidates, index: TaskIndex, groups: list[str], errands: list[str | None] | None = None) -> list[Judgement]:
        """One judgement per prompt; `groups[i]` is prompt i's benchmark (the abstention cap is per
        benchmark). With `personal_errands`, a prompt that `errands` marks (labels.personal_errands)
        abstains with that reason, outside the cap: it asks for no worker's task."""
        confidence = candidates.occupation_probability[:, 0]
        errands = errands if (self.personal_errands and errands is not None) else [None] * len(candidates.task_positions)
        plans = [self._plan(row, candidates, index) for row in range(len(candidates.task_positions))]
        # How far below its bar each prompt is (< 1: it would abstain); the lowest abstain first.
        shortfall = np.array(
            [min(confidence[row] / self.abstain_below if self.abstain_below > 0 else np.inf, plan[1] / self.min_similarity if self.min_similarity > 0 else np.inf)
             for row, plan in enumerate(plans)]
        )
        allowed = self._abstention_allowed(np.where([e is None for e in errands], shortfall, np.inf), groups)
        out = []
        for row, (picked, best) in enumerate(plans):
            positions, sims = candidates.task_positions[row], candidates.task_similarity[row]
            title = index.titles[int(candidates.occupations[row][0])]
            if errands[row] is not None:
                reason = f"personal errand: the agent acts as a customer or private person ({errands[row]!r}), not as a worker (best guess: {title})"
                out.append(Judgement([], "abstained", reason, float(confidence[row])))
            elif allowed[row] and confidence[row] < self.abstain_below:
                out.append(Judgement([], "abstained", f"confidence {confidence[row]:.3f} below {self.abstain_below} (best guess: {title})", float(confidence[row])))
            elif allowed[row]:
                out.append(Judgement([], "abstained", f"no task of {title} similar enough (best {best:.3f} < {self.min_similarity})", float(confidence[row])))
            else:
                labels = [(int(index.task_ids[positions[i]]), float(sims[i])) for i in picked]
                out.append(Judgement(labels, "labeled", "", float(confidence[row])))
        return out

    def _plan(self, row: int, candidates: Candidates, index: TaskIndex) -> tuple[list[int], float]:
        """The candidate indices to label for one prompt, and the similarity of its rank-1 task."""
        positions, sims = candidates.task_positions[row], candidates.task_similarity[row]
        occupations, p = candidates.occupations[row], candidates.occupation_probability[row]
        chosen = [occupations[0]]
        if len(occupations) > 1 and p[1] >= self.second_occupation * p[0]:
            chosen.append(occupations[1])
        # Candidates are ordered by similarity: each chosen occupation's best task is its first.
        owner = index.task_occupation[positions]
        firsts = [int(np.argmax(owner == o)) for o in chosen if (owner == o).any()]
        if not firsts:
            return [], 0.0
        # Rank 1: the best occupation's best task; then the second occupation's best task; then
        # further tasks of either only within `task_margin` of the first (the margin rule).
        picked = [firsts[0]] + [i for i in firsts[1:] if sims[i] >= self.min_similarity]
        floor = sims[firsts[0]] - self.task_margin
        for i in np.nonzero(np.isin(owner, chosen))[0]:
            if len(picked) >= self.max_labels or sims[i] < floor:
                break
            if i not in picked:
                picked.append(int(i))
        return picked[: self.max_labels], float(sims[firsts[0]])

    def _abstention_allowed(self, shortfall: np.ndarray, groups: list[str]) -> np.ndarray:
        """Which prompts may abstain: those below a bar (shortfall < 1), the furthest below first,
        at most `max_abstain_share` of each benchmark's prompts; the rest are labeled."""
        allowed = np.zeros(len(shortfall), dtype=bool)
        by_group: dict[str, list[int]] = {}
        for i, group in enumerate(groups):
            by_group.setdefault(group, []).append(i)
        for members in by_group.values():
            quota = int(np.floor(self.max_abstain_share * len(members)))
            low = sorted((i for i in members if shortfall[i] < 1.0), key=lambda i: (shortfall[i], i))
            allowed[low[:quota]] = True
        return allowed

    def summary(self) -> str:
        """The rule in words, from the judge's own parameters (the report's methodology)."""
        n = self.narrowing
        without = [
            (n.context if n.context_without_role is None else n.context_without_role, "the mean occupation score of its benchmark's other prompts"),
            (n.tasks_without_role, "its most similar task statements"),
            (n.boosts_without_role, "the titles and tools it names"),
            (n.lexical_without_role, "the words it shares with an occupation's text"),
            (n.centroid_without_role, "its similarity to an occupation's mean task"),
            (n.instruction if n.instruction_without_role is None else n.instruction_without_role, "its benchmark's instruction text"),
        ]
        weights = "; ".join(f"{text} {weight:g} ×" for weight, text in without if weight)
        text = (
            f"narrows to a family, then labels its best occupation (and the second when it is at least {self.second_occupation:g} × as likely) "
            f"with 1 to {self.max_labels} of their tasks (rank 1 the best occupation's most similar task; a further task only within "
            f"{self.task_margin:g} cosine of it); it abstains, saying why, when the best occupation's probability is below {self.abstain_below:g} "
            f"or its best task's cosine below {self.min_similarity:g}, at most {self.max_abstain_share:.0%} of a benchmark's prompts. "
            f"A prompt that states a role is matched to O*NET's titles; one that states none weighs, against one that does: {weights}"
        )
        if n.instruction:
            text += f" (its benchmark's instruction text {n.instruction:g} × where it states one)"
        if n.instruction_tasks:
            text += f"; a candidate task's similarity is moved towards the instruction's ({n.instruction_tasks:g} ×)"
        if self.personal_errands:
            text += ". A personal errand (the agent acting as a customer or a private person) abstains with that reason"
        return text

    def describe(self) -> dict:
        return {
            "narrowing": asdict(self.narrowing),
            "evidence": asdict(self.evidence),
            "second_occupation": self.second_occupation,
            "task_margin": self.task_margin,
            "max_labels": self.max_labels,
            "abstain_below": self.abstain_below,
            "max_abstain_share": self.max_abstain_share,
            "min_similarity": self.min_similarity,
            "personal_errands": self.personal_errands,
        }


@dataclass(frozen=True)
class EmbeddedJudgeV6(EmbeddedJudgeV4):
    """Judge v5, with a prompt that states no role weighing its own evidence differently.

    v5 (bench/judge_v5.py, measured there, never run) weighed every signal of such a prompt as v4 does,
    and only its benchmark context more. The signals are not equally good evidence of the work asked for
    when no role is named: the task statements most similar to the prompt are; the similarity to an
    occupation's mean task vector (its centroid) and the words it shares with an occupation's text
    mostly carry the domain a prompt is dressed in (a Kaggle page's sport, a database's shop). For a
    prompt that states no role, decided per prompt, v6 weighs the task evidence 2 ×, the title and
    technology boosts 2 ×, the words 0.5 × and the centroid 0 × (`Narrowing.*_without_role`), beside
    v5's context 4 ×. A prompt that states a role is narrowed exactly as by v4 and v5. The four weights
    were chosen together by a coordinate search on the `tune` halves of labels_dev and the reference
    set, and the `holdout` halves were read once, for the chosen set (bench/judge_variants.py,
    docs/labeling.md).
    """

    narrowing: Narrowing = Narrowing(
        temperature=2.0,
        family=2.0,
        prior=0.2,
        context=1.0,
        context_without_role=4.0,
        tasks_without_role=2.0,
        centroid_without_role=0.0,
        lexical_without_role=0.5,
        boosts_without_role=2.0,
    )
    labeler: str = EMBEDDED_LABELER_V6


@dataclass(frozen=True)
class EmbeddedJudgeV7(EmbeddedJudgeV6):
    """Judge v6 reading what each benchmark asks for (#38; the default).

    A benchmark's prompts are often a GitHub issue, a Kaggle page or a question about invoices: the
    domain they are dressed in, not the work. The instruction the benchmark's harness wraps around
    every prompt says what the work is ("act as an expert software developer", "train a model and
    produce a submission file"); it is data (benchmarks/instructions.jsonl, with its source). v7
    scores that text as it scores a prompt (its task statements, words, titles and tools, the prior),
    z-scored, and adds it to the occupation score of each of the benchmark's prompts: 4 × for a prompt
    that states no role of its own (`Narrowing.instruction_without_role`), 0.5 × for one that does
    (`Narrowing.instruction`); and a candidate task's similarity is moved towards the instruction's
    (`Narrowing.instruction_tasks`, 0.3: (s + 0.3 s_instruction) / 1.3). With the instruction carrying
    the work the siblings share, the benchmark context of a no-role prompt weighs 2 × (v6: 4 ×). A
    benchmark without an instruction is labeled exactly as by v6 with that context weight, and so is
    every benchmark with these weights at 0 (tests/labeling/test_judge_v7.py). The weights were chosen
    by a coordinate search on the `tune` halves of labels_dev, the reference set and the
    benchmark-intent yardstick (bench/judge_variants.py --search-instruction); the `holdout` halves
    were read once, for the chosen set.

    A personal errand (the agent acts as a customer or a private person: "add this to my cart",
    "change my address") abstains with that reason (`personal_errands`; labels.personal_errands):
    it asks for no worker's task, and labeling it as the clerk who serves the customer counted the
    wrong side of the counter. It is counted with the other abstentions, outside their 20% cap.
    """

    # v6's weights, with the instruction's and the lighter context of a no-role prompt.
    narrowing: Narrowing = replace(
        EmbeddedJudgeV6.narrowing, context_without_role=2.0, instruction=0.5, instruction_without_role=4.0, instruction_tasks=0.3
    )
    personal_errands: bool = True
    labeler: str = EMBEDDED_LABELER
