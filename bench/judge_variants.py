"""Variants of judge v4 scored on both halves of both yardsticks, from a finished run's data folder.

    python bench/judge_variants.py DATA_DIR [--cache-dir DIR] [--variants v4,context0,...] [--stability]
                                   [--search] [--output bench/judge_variants.json]

DATA_DIR is a run's data folder (`make run` writes `data/`): its warehouse (the O*NET tables and the
benchmark prompts), its embedding store (DATA_DIR/cache unless the run had another; every prompt is
embedded already, so a variant costs retrieval only, about 10 s) and its occupation prior. Each variant labels the prompts of the
benchmarks that the yardsticks cover, with the pipeline's own functions
(`labels.retrieve_narrowed`, `EmbeddedJudgeV4.select`), and is scored as `judge_validation` scores
a run: labels_dev per half of reference/labels_dev_split.csv, the reference set per half of
reference/reference_split.csv. `v4` reproduces the run's figures.

Choose on the `tune` halves; the `holdout` halves are for reporting. Each variant's change against
v4 comes with a paired 95% interval over the same prompts (normal for top-1 shares, a bootstrap
over prompts, 1,000 replicates, for micro precision).

`--search` repeats the search that chose judge v6's weights, on the `tune` halves only: from v5,
a coordinate search over the multiples of a no-role prompt's own signals (`SEARCH`), two passes,
each value kept when it raises `search_objective` (tune occupation precision + family precision / 2
+ 2 × task precision + TheAgentCompany family top-1 / 2). Its trace holds `tune` figures only.

`--search-instruction` repeats the search that chose judge v7's weights (`SEARCH_INSTRUCTION`, from
v6 with personal errands, two passes, maximising `search_objective_instruction`: v6's objective plus
the intent yardstick's tune top-1 plausible share). `--against NAME` sets the variant every other is
compared with (default v4); `--instructions FILE` gives the benchmarks' instruction texts.

`--stability` also measures, for v4 to v7, what the issue asks of a judge whose labels depend on
sibling prompts: the share of a benchmark's prompts whose labels change when the other 10% of its
prompts are added (every benchmark labeled without every eleventh prompt, by a hash of its id, then
with them).

Variants (a comma-separated list; every other one is a change to v4, and each is compared with v4):
- `v4`: judge v4, the default until #19;
- `v5`: judge v5, the default until v6 (v4 with `norolecontext4`);
- `v6`: judge v6, the default, as the pipeline runs it (v5 with `noroletasks2`, `norolecentroid0`,
  `norolelexical0.5` and `noroleboosts2`);
- `contextW`: the benchmark-context weight set to W (v4: 1.0; `context0` without, `context-1`
  against the siblings' mean);
- `norolecontextW`: the benchmark context weighs W for a prompt that states no role (1.0 for one
  that does); `noroletasksW`, `norolecentroidW`, `norolelexicalW`, `noroleboostsW`, `norolepriorW`:
  that signal (task statements, centroid, words, title and technology boosts, prior) weighs W × its
  usual weight for a prompt that states no role;
- `A+B`: variants A and B together (`norolecontext4+noroletasks1.5` was chosen on the `tune`
  halves; its second part added nothing on the `holdout` halves, so v5 is `norolecontext4`);
- `activityW`: for a prompt that states no role, W × the z-scored similarity of the prompt to the
  detailed work activities (DWAs) of each occupation's tasks (mean of its 3 best), a signal of the
  activity asked for rather than the domain;
- `noabstain`: no prompt abstains (v4 lets at most 20% of a benchmark's prompts abstain);
- `siblingwordsS`: words that at least S of a benchmark's prompts use, and that O*NET's task
  statements use at most S/4 as often ("owncloud", "rocketchat"), and URLs, taken out of the text
  that the lexical and title/technology evidence read (the vectors are the prompts' own);
- `taskwordsL`: inside the chosen occupations, candidate tasks ordered by cosine + L × TF-IDF
  similarity of prompt and task statement;
- `distinctS`: what the prompt says once the shared boilerplate is taken out: the sentences that at
  least S of its benchmark's prompts (and at least 3) repeat word for word are dropped, and the rest
  (when something was dropped and 5 words or more remain) is what retrieval reads and embeds;
- `v7`: judge v7, the default (#38): v6 reading each benchmark's instruction text and abstaining on
  personal errands (needs `--instructions benchmarks/instructions.jsonl`);
- `noroleinstructionW`, `instructionW`: the benchmark instruction's z-scored occupation score added
  W × to a prompt that states no role, or to one that does; `instructiontasksL`: candidate task
  similarity moved L × towards the instruction's; `instructionclipC`: the instruction's z-scores
  clipped to ±C; `instructionvotes`: a confident title match in the instruction votes instead of
  deciding; `inheritrole`: a prompt that states no role takes the role its instruction states;
  `errands`: personal errands abstain;
- `twinstogether`, `twinsbyevidence`: a label on one of near-identical task statements counted for
  all of them, or moved to the one in the prompt's rank-1 occupation (analysis/near_duplicates.py);
- `requestL`: the activity a prompt asks for: its sentences that ask for something ("your task",
  "please", "can you", "I need", or a sentence opening with an imperative verb: write, predict,
  calculate, fix…) embedded apart, and the prompt's vector moved towards them, v + L × v_request
  (normalised), where the prompt has such sentences and others.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from judge_v5 import EmbeddedJudgeV5  # noqa: E402  (bench/judge_v5.py: measured here, never run by the pipeline)
from run import commit  # noqa: E402

from workbank_dagster.analysis.near_duplicates import labels_with_twins  # noqa: E402
from workbank_dagster.labeling import validation, yardsticks  # noqa: E402
from workbank_dagster.labeling.embedder import Embedder  # noqa: E402
from workbank_dagster.labeling.embedding_store import EmbeddingStore  # noqa: E402
from workbank_dagster.labeling.embeddings import EmbeddedPrompts, Embeddings, embed_prompts  # noqa: E402
from workbank_dagster.labeling.judges import EmbeddedJudgeV4, EmbeddedJudgeV6, EmbeddedJudgeV7  # noqa: E402
from workbank_dagster.labeling.label_files import partition_prompts  # noqa: E402
from workbank_dagster.labeling.label_tables import judgement_rows  # noqa: E402
from workbank_dagster.labeling.matching import LabelingRuntime, retrieval_options  # noqa: E402
from workbank_dagster.labeling.occupation_knowledge import load_knowledge  # noqa: E402
from workbank_dagster.labeling.onet_tables import OnetTables  # noqa: E402
from workbank_dagster.labeling.prompt_retrieval import OccupationKnowledge, retrieve_narrowed  # noqa: E402
from workbank_dagster.labeling.text import without_urls  # noqa: E402
from workbank_dagster.resources import Warehouse  # noqa: E402
from workbank_dagster.settings import NEAR_IDENTICAL, PipelineSettings  # noqa: E402
from workbank_dagster.sources.instructions import read_instructions  # noqa: E402

WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
REQUEST = re.compile(
    r"\b(your (?:task|goal|job)|you (?:are|will|need|must|should|have to) (?:asked|required|to|be)|please|can you|could you"
    r"|i need|i want|we need|(?:^|\. )(?:write|create|build|predict|find|calculate|compute|identify|determine|prepare|draft"
    r"|generate|list|return|provide|analy[sz]e|implement|fix|update|design|summari[sz]e|estimate|classify|develop|make|add"
    r"|remove|change|set|open|send|schedule|review|check))\b",
    re.I,
)
REPLICATES = 1000
FIGURES = {
    # name → (yardstick, subset, benchmark, level, metric)
    "gdpval_family_top1": ("labels_dev", "gdpval", "family", "top1"),
    "gdpval_occupation_top1": ("labels_dev", "gdpval", "occupation", "top1"),
    "gdpval_occupation_precision": ("labels_dev", "gdpval", "occupation", "precision"),
    "theagentcompany_family_top1": ("labels_dev", "theagentcompany", "family", "top1"),
    "reference_task_precision": ("reference", "all", "task", "precision"),
    "reference_occupation_precision": ("reference", "all", "occupation", "precision"),
    "reference_family_precision": ("reference", "all", "family", "precision"),
    "reference_task_recall": ("reference", "all", "task", "recall"),
    "reference_occupation_recall": ("reference", "all", "occupation", "recall"),
    "reference_family_recall": ("reference", "all", "family", "recall"),
}


def _without_words(text: str, words: set[str], min_words: int = 8) -> str:
    """The text without its URLs and `words` (any case); the text itself if fewer than `min_words` remain."""
    kept = re.sub(r"\s+", " ", WORD.sub(lambda m: "" if m.group(0).lower() in words else m.group(0), without_urls(text))).strip()
    return kept if len(WORD.findall(kept)) >= min_words else text


def _micro(outcome: dict, keys: list, level: str, column: int, sample) -> float:
    """Micro precision (column 1) or recall (column 2) over the reference prompts `keys[sample]`."""
    tp = sum(outcome["reference"][keys[i]][level][0] for i in sample)
    n = sum(outcome["reference"][keys[i]][level][column] for i in sample)
    return tp / n if n else 0.0


class Bench:
    """A run's data, loaded once: the task index, judge v4's knowledge, the prompts and the yardsticks."""

    def __init__(self, data_dir: Path, cache_dir: Path | None = None, instructions: Path | None = None) -> None:
        self.settings = PipelineSettings.of(data_dir=str(data_dir), cache_dir=str(cache_dir or "")).resolve()
        self.warehouse = Warehouse(self.settings.duckdb_path)
        runtime = LabelingRuntime()
        self.embeddings = Embeddings(EmbeddingStore(self.settings.cache_dir / "embeddings.sqlite"), Embedder())
        onet = OnetTables.from_warehouse(self.warehouse)
        self.index = runtime.task_index(onet, self.embeddings)
        self.knowledge = load_knowledge(onet, self.index, runtime, self.settings)
        tasks = self.warehouse.query("SELECT task_id, onet_soc_code, task FROM raw.onet_task_statements")
        occupations = self.warehouse.query("SELECT onet_soc_code, title FROM raw.onet_occupations")
        crosswalk = self.warehouse.query("SELECT onet_soc_code, oews_title FROM raw.onet_oews_crosswalk")
        occupations = occupations[occupations["onet_soc_code"].isin(set(tasks["onet_soc_code"]))]
        self.tasks = tasks
        self.task_occupation = dict(zip(tasks["task_id"].astype(int), tasks["onet_soc_code"]))
        self.gold = yardsticks.dev_gold(
            self.settings.labels_dev_dir, occupations, crosswalk, yardsticks.read_split(REPO / "reference" / "labels_dev_split.csv")
        )
        split_path = REPO / "reference" / "reference_split.csv"
        reference = yardsticks.read_reference(REPO / "reference" / "reference_labels.jsonl")
        self.reference = yardsticks.reference_subsets(reference, yardsticks.read_reference_split(split_path), split_path)
        self.intent = yardsticks.read_intent(self.settings.labels_dev_dir / "benchmark_intent.jsonl")
        self.intent_split = yardsticks.read_reference_split(REPO / "reference" / "intent_split.csv")
        # Every benchmark: "primary covered" counts prompts over all of them, as the run does.
        self.benchmarks = self.settings.partition_files.partitions("benchmark_prompts")
        self.prompts = partition_prompts(self.settings.partition_files, self.benchmarks)
        self.instructions = {b: i.text for b, i in read_instructions(instructions).items()} if instructions else {}
        self.embedded = embed_prompts(self.prompts, self.embeddings, self.instructions)
        self._task_words = None
        self._twins = None

    def label(
        self, judge: EmbeddedJudgeV4, embedded: EmbeddedPrompts, task_words: float = 0.0, activity: float = 0.0, twins: str = "separate"
    ) -> tuple[pd.DataFrame, pd.DataFrame, object]:
        knowledge = self._with_activity(embedded, activity) if activity else self.knowledge
        retrieved = retrieve_narrowed(embedded, self.index, knowledge, judge.narrowing, judge.evidence, **retrieval_options(self.settings))
        if task_words:
            self._reorder_by_task_words(retrieved, task_words)
        decided = judge.select(retrieved.candidates, self.index, retrieved.prompts["benchmark"].tolist(), retrieved.errands)
        labels, judgements = judgement_rows(retrieved, decided, judge.labeler)
        if twins != "separate":
            labels = labels_with_twins(labels, self.twins, twins, self.task_occupation)
        return labels, judgements, retrieved

    @property
    def twins(self) -> pd.DataFrame:
        """Near-identical task statements of different occupations (analysis/near_duplicates.py)."""
        if self._twins is None:
            self._twins = self.index.near_identical_pairs(NEAR_IDENTICAL)
        return self._twins

    def _with_activity(self, embedded: EmbeddedPrompts, weight: float) -> OccupationKnowledge:
        """Judge knowledge whose score boosts also carry, for each prompt stating no role, `weight` ×
        the z-scored similarity of the prompt to each occupation's detailed work activities (the
        mean of its 3 most similar DWA titles, through O*NET's Tasks to DWAs)."""
        links = self.warehouse.query("SELECT DISTINCT onet_soc_code, dwa_id, dwa_title FROM raw.onet_task_dwas")
        dwas = sorted(set(links["dwa_id"]))
        position = {d: i for i, d in enumerate(dwas)}
        titles = dict(zip(links["dwa_id"], links["dwa_title"]))
        vectors = self.embeddings.texts([titles[d] for d in dwas])
        by_code = links.groupby("onet_soc_code")["dwa_id"].apply(lambda ids: np.array(sorted({position[d] for d in ids})))
        similarity = embedded.vectors @ vectors.T
        activity = np.zeros((len(similarity), len(self.index.occupation_codes)))
        for o, code in enumerate(self.index.occupation_codes):
            columns = by_code.get(code)
            if columns is not None and len(columns):
                block = similarity[:, columns]
                activity[:, o] = (-np.partition(-block, 2, axis=1)[:, :3] if block.shape[1] > 3 else block).mean(axis=1)
        activity = (activity - activity.mean(axis=1, keepdims=True)) / np.maximum(activity.std(axis=1, keepdims=True), 1e-12)
        extra = sp.csr_matrix(weight * activity * (~embedded.has_role)[:, None])
        evidence = self.knowledge.evidence

        class WithActivity:
            def boosts(self, texts, roles, weights):
                boosts, records = evidence.boosts(texts, roles, weights)
                return boosts + extra, records

        return OccupationKnowledge(WithActivity(), self.knowledge.prior)

    def _reorder_by_task_words(self, retrieved, weight: float) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        if self._task_words is None:
            vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True, ngram_range=(1, 2))
            self._task_words = (vectorizer, vectorizer.fit_transform(self.index.tasks["task"].tolist()))
        vectorizer, documents = self._task_words
        queries = vectorizer.transform([without_urls(t) for t in retrieved.prompts["prompt"]])
        candidates = retrieved.candidates
        for i, positions in enumerate(candidates.task_positions):
            if len(positions):
                combined = candidates.task_similarity[i] + weight * (documents[positions] @ queries[i].T).toarray().ravel()
                order = np.argsort(-combined, kind="stable")
                candidates.task_positions[i] = positions[order]
                candidates.task_similarity[i] = combined[order].astype(np.float32)

    def without_sibling_words(self, share: float) -> EmbeddedPrompts:
        """The embedded prompts with the text that the lexical and title evidence read stripped of
        the words their benchmark's siblings share (see `siblingwords` above); the vectors are kept."""
        onet = Counter()
        for text in self.tasks["task"]:
            onet.update({w.lower() for w in WORD.findall(text)})
        onet_share = {w: n / len(self.tasks) for w, n in onet.items()}
        prompts = self.embedded.prompts
        texts = []
        for _, group in prompts.groupby("benchmark", sort=False):
            df = Counter()
            for text in group["prompt"]:
                df.update({w.lower() for w in WORD.findall(text)})
            bar = max(5, share * len(group))
            shared = {w for w, n in df.items() if n >= bar and onet_share.get(w, 0.0) * 4 < share}
            texts.extend(_without_words(text, shared) for text in group["prompt"])
        return replace(self.embedded, prompts=prompts.assign(prompt=texts))

    def with_distinct_text(self, share: float) -> EmbeddedPrompts:
        """The embedded prompts as `distinctS` reads them (see above): text and vector of what is left
        once the sentences that the benchmark's prompts repeat are dropped."""
        prompts = self.embedded.prompts
        texts = prompts["prompt"].tolist()
        changed = []
        for _, group in prompts.groupby("benchmark", sort=False):
            split = {i: [s for s in SENTENCE_END.split(texts[i]) if s.strip()] for i in group.index}
            repeats = Counter(s for sentences in split.values() for s in set(sentences))
            bar = max(3, share * len(group))
            for i, sentences in split.items():
                kept = [s for s in sentences if repeats[s] < bar]
                if len(kept) < len(sentences) and len(" ".join(kept).split()) >= 5:
                    texts[i] = " ".join(kept)
                    changed.append(i)
        vectors = self.embedded.vectors.copy()
        if changed:
            vectors[changed] = self.embeddings.prompts([texts[i] for i in changed])[0]
        return replace(self.embedded, prompts=prompts.assign(prompt=texts), vectors=vectors)

    def with_instruction_roles(self) -> EmbeddedPrompts:
        """The embedded prompts as `inheritrole` reads them: a prompt that states no role of its own
        takes the role its benchmark's instruction states ("act as an expert software developer")."""
        embedded = self.embedded
        told = embedded.instructions
        stated = {b: i for i, (b, r) in enumerate(zip(told.benchmarks, told.roles)) if r is not None}
        roles, role_vectors, has_role = list(embedded.roles), embedded.role_vectors.copy(), embedded.has_role.copy()
        for row, benchmark in enumerate(embedded.prompts["benchmark"]):
            i = stated.get(benchmark)
            if i is not None and not has_role[row]:
                roles[row], role_vectors[row], has_role[row] = told.roles[i], told.role_vectors[i], True
        return replace(embedded, roles=roles, role_vectors=role_vectors, has_role=has_role)

    def with_request(self, weight: float) -> EmbeddedPrompts:
        """The embedded prompts as `requestL` reads them (see above): each vector moved towards the
        embedding of the prompt's sentences that ask for something."""
        rows, requests = [], []
        for i, text in enumerate(self.embedded.prompts["prompt"]):
            sentences = SENTENCE_END.split(text)
            asking = [s for s in sentences if REQUEST.search(s)]
            if asking and len(asking) < len(sentences):
                rows.append(i)
                requests.append(" ".join(asking))
        vectors = self.embedded.vectors.copy()
        if rows:
            moved = vectors[rows] + weight * self.embeddings.prompts(requests)[0]
            vectors[rows] = moved / np.linalg.norm(moved, axis=1, keepdims=True)
        return replace(self.embedded, vectors=vectors)

    def per_prompt(self, labels: pd.DataFrame, judgements: pd.DataFrame) -> dict:
        """Per-prompt outcomes for the paired comparisons: top-1 hits (labels_dev) and, per reference
        prompt, (true positives, predicted, true) at each level."""
        abstained = set(zip(*[judgements.loc[judgements["status"] == "abstained", c] for c in ("benchmark", "prompt_id")]))
        ranked = labels.sort_values(["benchmark", "prompt_id", "rank"]).groupby(["benchmark", "prompt_id"])["task_id"].apply(list).to_dict()
        dev = {}
        for row in self.gold.itertuples(index=False):
            codes = [self.task_occupation[int(t)] for t in ranked.get((row.benchmark, row.prompt_id), [])]
            dev[(row.benchmark, row.prompt_id)] = {
                "half": row.half,
                "family_top1": bool(codes) and codes[0][:2] in row.gold_families,
                "occupation_top1": bool(codes) and codes[0] in row.gold_codes,
                "occupation_precision": sum(c in row.gold_codes for c in codes) / len(codes) if codes else 0.0,
            }
        reference = {}
        for row in self.reference["all"].itertuples(index=False):
            key = (row.benchmark, row.prompt_id)
            predicted = {int(t) for t in ranked.get(key, [])}
            truth = set(row.task_ids)
            miss = 1 if key in abstained and not predicted else 0
            levels = {
                "task": (predicted, truth),
                "occupation": ({self.task_occupation[t] for t in predicted}, {self.task_occupation[t] for t in truth if t in self.task_occupation}),
            }
            levels["family"] = ({c[:2] for c in levels["occupation"][0]}, {c[:2] for c in levels["occupation"][1]})
            reference[key] = {level: (len(p & t), len(p) + miss, len(t)) for level, (p, t) in levels.items()}
        covered = validation.covered_occupations(labels, self.task_occupation, self.settings.coverage_threshold)
        intent = {
            (f["subset"], f["benchmark"], f["metric"]): f["value"]
            for f in validation.score_against_intent(labels, self.task_occupation, self.intent, covered, self.intent_split)
        }
        intent_prompts = self._intent_prompts(labels)
        return {"dev": dev, "reference": reference, "intent": intent, "intent_prompts": intent_prompts,
                "covered": covered,
                "labels_per_labeled": len(labels) / max(int((judgements["status"] == "labeled").sum()), 1),
                "abstained_max": float(judgements.groupby("benchmark")["status"].apply(lambda s: (s == "abstained").mean()).max())}

    def _intent_prompts(self, labels: pd.DataFrame) -> dict:
        """Per labeled prompt of an intent benchmark: (benchmark, top-1 plausible, any plausible), for
        the paired intervals."""
        plausible = dict(zip(self.intent["benchmark"], self.intent["plausible"]))
        ranked = labels[labels["benchmark"].isin(set(plausible))].sort_values(["benchmark", "prompt_id", "rank"])
        out = {}
        for (benchmark, prompt_id), tasks in ranked.groupby(["benchmark", "prompt_id"])["task_id"]:
            codes = [self.task_occupation[int(t)] for t in tasks]
            out[(benchmark, prompt_id)] = (codes[0] in plausible[benchmark], any(c in plausible[benchmark] for c in codes))
        return out

    def halves(self, subset: str) -> set[tuple[str, str]]:
        return set(zip(self.reference[subset]["benchmark"], self.reference[subset]["prompt_id"]))


def figures(bench: Bench, outcome: dict) -> dict:
    out = {}
    for half in ("tune", "holdout"):
        for name, (yardstick, benchmark, level, metric) in FIGURES.items():
            if yardstick == "labels_dev":
                rows = [v for (b, _), v in outcome["dev"].items() if b == benchmark and v["half"] == half]
                value = float(np.mean([r[f"{level}_{metric}"] for r in rows])) if rows else None
            else:
                keys = bench.halves(half)
                tp, predicted, true = (sum(outcome["reference"][k][level][i] for k in keys) for i in range(3))
                value = (tp / predicted if predicted else 0.0) if metric == "precision" else (tp / true if true else 0.0)
            out[f"{half}:{name}"] = None if value is None else round(value, 4)
        for metric in validation.INTENT_LEVELS:
            value = outcome["intent"].get((half, "all", metric))
            out[f"{half}:intent_{metric}"] = None if value is None else round(value, 4)
    for metric in validation.INTENT_LEVELS:
        value = outcome["intent"].get(("all", "all", metric))
        out[f"all:intent_{metric}"] = None if value is None else round(value, 4)
    out["intent_by_benchmark"] = {
        b: {m: round(outcome["intent"][(h, b, m)], 3) for m in validation.INTENT_LEVELS}
        for (h, b, metric) in outcome["intent"] if b != "all" and metric == "top1_plausible"
    }
    out["primary_software_developers_covered"] = "15-1252.00" in outcome["covered"]
    out["occupations_with_covered_task"] = len(outcome["covered"])
    out["labels_per_labeled_prompt"] = round(outcome["labels_per_labeled"], 3)
    out["abstained_share_max"] = round(outcome["abstained_max"], 3)
    return out


def paired(bench: Bench, base: dict, other: dict, rng: np.random.Generator) -> dict:
    """Each figure's change against v4 on the same prompts, with a 95% interval."""
    out = {}
    for half in ("tune", "holdout"):
        for name, (yardstick, benchmark, level, metric) in FIGURES.items():
            if yardstick == "labels_dev":
                keys = [k for k, v in base["dev"].items() if k[0] == benchmark and v["half"] == half]
                d = np.array([float(other["dev"][k][f"{level}_{metric}"]) - float(base["dev"][k][f"{level}_{metric}"]) for k in keys])
                mean = float(d.mean())
                half_width = 1.959964 * float(d.std(ddof=1)) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
                out[f"{half}:{name}"] = [round(mean, 4), round(mean - half_width, 4), round(mean + half_width, 4)]
            else:
                keys = sorted(bench.halves(half))
                column = 1 if metric == "precision" else 2
                everything = range(len(keys))
                mean = _micro(other, keys, level, column, everything) - _micro(base, keys, level, column, everything)
                draws = [
                    _micro(other, keys, level, column, sample) - _micro(base, keys, level, column, sample)
                    for sample in (rng.integers(0, len(keys), len(keys)) for _ in range(REPLICATES))
                ]
                out[f"{half}:{name}"] = [round(mean, 4), round(float(np.quantile(draws, 0.025)), 4), round(float(np.quantile(draws, 0.975)), 4)]
        for column, metric in enumerate(("top1_plausible", "any_plausible")):
            out[f"{half}:intent_{metric}"] = _paired_intent(bench, base, other, half, column, rng)
    return out


def _paired_intent(bench: Bench, base: dict, other: dict, half: str, column: int, rng: np.random.Generator) -> list[float] | None:
    """The change of an intent share (mean over the half's benchmarks of each benchmark's share of
    labeled prompts) with a 95% bootstrap interval: prompts resampled within each benchmark, each
    judge's labeled prompts apart (a prompt labeled by one judge and abstained by the other counts
    for the one only, as the figure does)."""
    benchmarks = sorted(b for b, h in bench.intent_split.items() if half in (h, "all") and b in set(bench.intent["benchmark"]))
    def shares(outcome):
        return [np.array([v[column] for (b, _), v in outcome["intent_prompts"].items() if b == benchmark], dtype=float) for benchmark in benchmarks]
    first, second = shares(base), shares(other)
    if not all(len(x) for x in first + second):
        return None
    mean = float(np.mean([x.mean() for x in second]) - np.mean([x.mean() for x in first]))
    draws = []
    for _ in range(REPLICATES):
        draws.append(
            np.mean([x[rng.integers(0, len(x), len(x))].mean() for x in second]) - np.mean([x[rng.integers(0, len(x), len(x))].mean() for x in first])
        )
    return [round(mean, 4), round(float(np.quantile(draws, 0.025)), 4), round(float(np.quantile(draws, 0.975)), 4)]


def variant(base: EmbeddedJudgeV4, name: str) -> tuple[EmbeddedJudgeV4, dict]:
    """A variant's judge and its options (see the module docstring)."""
    if name == "v4":
        return base, {}
    if name == "v5":
        return EmbeddedJudgeV5(), {}
    if name == "v6":
        return EmbeddedJudgeV6(), {}
    if "+" in name:
        judge, options = base, {}
        for part in name.split("+"):
            changed, more = variant(base, part)
            judge = replace(judge, narrowing=replace(judge.narrowing, **{k: v for k, v in vars(changed.narrowing).items() if v != vars(base.narrowing)[k]}))
            own = {k: v for k, v in vars(changed).items() if k not in ("narrowing", "labeler") and v != vars(base)[k]}
            judge = replace(judge, **own) if own else judge
            options.update(more)
        return judge, options
    if name == "errands":
        return replace(base, personal_errands=True), {}
    if name == "v7":
        return EmbeddedJudgeV7(), {}
    if name == "inheritrole":
        return base, {"inherit_role": True}
    if name.startswith("instructionclip"):
        return replace(base, narrowing=replace(base.narrowing, instruction_clip=float(name.removeprefix("instructionclip")))), {}
    if name == "instructionvotes":
        return replace(base, narrowing=replace(base.narrowing, instruction_decides=False)), {}
    if name.startswith("instructiontasks"):
        return replace(base, narrowing=replace(base.narrowing, instruction_tasks=float(name.removeprefix("instructiontasks")))), {}
    if name.startswith("noroleinstruction"):
        return replace(base, narrowing=replace(base.narrowing, instruction_without_role=float(name.removeprefix("noroleinstruction")))), {}
    if name.startswith("instruction"):
        return replace(base, narrowing=replace(base.narrowing, instruction=float(name.removeprefix("instruction")))), {}
    if name.startswith("norolecontext"):
        return replace(base, narrowing=replace(base.narrowing, context_without_role=float(name.removeprefix("norolecontext")))), {}
    for signal in ("tasks", "centroid", "lexical", "boosts", "prior"):
        if name.startswith(f"norole{signal}"):
            return replace(base, narrowing=replace(base.narrowing, **{f"{signal}_without_role": float(name.removeprefix(f"norole{signal}"))})), {}
    if name.startswith("activity"):
        return base, {"activity": float(name.removeprefix("activity"))}
    if name.startswith("context"):
        return replace(base, narrowing=replace(base.narrowing, context=float(name.removeprefix("context")))), {}
    if name == "noabstain":
        return replace(base, max_abstain_share=0.0), {}
    if name.startswith("siblingwords"):
        return base, {"sibling_words": float(name.removeprefix("siblingwords"))}
    if name.startswith("taskwords"):
        return base, {"task_words": float(name.removeprefix("taskwords"))}
    if name.startswith("distinct"):
        return base, {"distinct": float(name.removeprefix("distinct"))}
    if name.startswith("request"):
        return base, {"request": float(name.removeprefix("request"))}
    if name in ("twinstogether", "twinsbyevidence"):
        return base, {"twins": {"twinstogether": "together", "twinsbyevidence": "by_evidence"}[name]}
    raise SystemExit(f"unknown variant {name!r}")


SEARCH = (
    ("tasks_without_role", (0.5, 1.5, 2.0)),
    ("centroid_without_role", (0.0, 0.5, 2.0)),
    ("lexical_without_role", (0.5, 1.5, 2.0)),
    ("prior_without_role", (0.0, 2.0, 4.0)),
    ("boosts_without_role", (0.0, 0.5, 2.0)),
)


# The search that chose judge v7's weights of the benchmark instruction (#38), from v6: the instruction's
# weight for a prompt that states no role, how its z-scores are clipped, whether a confident title match
# in it decides or only votes, its weight for a prompt that states a role, how far candidate tasks are
# ordered by the instruction too, and the benchmark context's weight for a no-role prompt (which the
# instruction may make less needed).
SEARCH_INSTRUCTION = (
    ("instruction_without_role", (1.0, 2.0, 3.0, 4.0)),
    ("instruction_clip", (2.0, 3.0, 5.0)),
    ("instruction_decides", (False,)),
    ("instruction", (0.5, 1.0)),
    ("instruction_tasks", (0.3, 0.5, 1.0)),
    ("context_without_role", (2.0, 3.0)),
)


def search_objective(tune: dict) -> float:
    """What the search maximises, from `tune` figures only (v6's search)."""
    return (
        tune["tune:reference_occupation_precision"]
        + tune["tune:reference_family_precision"] / 2
        + 2 * tune["tune:reference_task_precision"]
        + tune["tune:theagentcompany_family_top1"] / 2
    )


def search_objective_instruction(tune: dict) -> float:
    """v7's search: v6's objective plus the intent yardstick's top-1 plausible share, from `tune` figures only."""
    return search_objective(tune) + tune["tune:intent_top1_plausible"]


def search(bench: Bench, start: EmbeddedJudgeV4, passes: int = 2, grid=None, objective=search_objective) -> dict:
    """The coordinate search that chose v6's weights (see above), from `start`, on the `tune` halves;
    with `grid` and `objective`, v7's search over the instruction's weights."""
    grid = grid or SEARCH

    def tune_figures(judge: EmbeddedJudgeV4) -> dict:
        labels, judgements, _ = bench.label(judge, bench.embedded)
        return {k: v for k, v in figures(bench, bench.per_prompt(labels, judgements)).items() if k.startswith("tune:")}

    narrowing = start.narrowing
    best = objective(tune_figures(start))
    trace = [{"pass": 0, "field": None, "value": None, "objective": round(best, 4)}]
    for number in range(1, passes + 1):
        for field, values in grid:
            keep = getattr(narrowing, field)
            for value in values:
                tune = tune_figures(replace(start, narrowing=replace(narrowing, **{field: value})))
                score = objective(tune)
                trace.append({"pass": number, "field": field, "value": value, "objective": round(score, 4), "tune": tune})
                if score > best + 1e-9:
                    best, keep = score, value
            narrowing = replace(narrowing, **{field: keep})
        print(f"search pass {number}:", {field: getattr(narrowing, field) for field, _ in grid}, round(best, 4), flush=True)
    return {"start": start.labeler, "chosen": {field: getattr(narrowing, field) for field, _ in grid}, "objective": round(best, 4), "trace": trace}


def stability(bench: Bench, judge: EmbeddedJudgeV4) -> dict:
    """Per benchmark, the share of prompts (of the 10/11 labeled first) whose label set changes when
    the remaining eleventh is added."""
    files = bench.settings.partition_files
    prompts = partition_prompts(files, files.partitions("benchmark_prompts"))
    late = np.array([int(hashlib.sha256(f"{b}:{p}".encode()).hexdigest(), 16) % 11 == 0 for b, p in zip(prompts["benchmark"], prompts["prompt_id"])])
    sets = []
    for frame in (prompts[~late].reset_index(drop=True), prompts):
        labels, _, _ = bench.label(judge, embed_prompts(frame, bench.embeddings, bench.instructions))
        sets.append(labels.groupby(["benchmark", "prompt_id"])["task_id"].apply(lambda s: tuple(sorted(s))).to_dict())
    first = prompts[~late]
    changed: dict[str, list[bool]] = {}
    for b, p in zip(first["benchmark"], first["prompt_id"]):
        changed.setdefault(b, []).append(sets[0].get((b, p), ()) != sets[1].get((b, p), ()))
    per_benchmark = {b: round(float(np.mean(v)), 4) for b, v in sorted(changed.items())}
    everything = [x for v in changed.values() for x in v]
    return {"share_changed_all": round(float(np.mean(everything)), 4), "per_benchmark": per_benchmark, "prompts_compared": len(everything)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--variants", default="v4,v5,v6,context0,norolecontext3,noroletasks1.5,norolecontext4+noroletasks1.5,activity0.5,norolecontext4+siblingwords0.2,norolecontext4+distinct0.2,norolecontext4+request0.5")
    parser.add_argument("--stability", action="store_true")
    parser.add_argument("--search", action="store_true")
    parser.add_argument("--search-instruction", action="store_true", help="v7's search over the instruction's weights (needs --instructions)")
    parser.add_argument("--output", type=Path, default=REPO / "bench" / "judge_variants.json")
    parser.add_argument("--instructions", type=Path, default=None, help="benchmark instruction texts (JSONL, sources/instructions.py)")
    parser.add_argument("--against", default="v4", help="the variant every other one is compared with (paired changes)")
    args = parser.parse_args()
    started = time.perf_counter()
    stamp = commit()  # the code that runs: taken now, not after edits made while it ran
    bench = Bench(args.data_dir, args.cache_dir, args.instructions)
    base_judge = EmbeddedJudgeV4()
    rng = np.random.default_rng(0)
    outcomes, results = {}, {}
    names = args.variants.split(",")
    for name in [args.against, *(n for n in names if n != args.against)]:
        judge, options = variant(base_judge, name)
        embedded = bench.embedded
        if sum(key in options for key in ("sibling_words", "distinct", "request", "inherit_role")) > 1:
            raise SystemExit(f"{name}: siblingwords, distinct, request and inheritrole each rewrite the prompts; combine at most one")
        if "inherit_role" in options:
            embedded = bench.with_instruction_roles()
        if "sibling_words" in options:
            embedded = bench.without_sibling_words(options["sibling_words"])
        if "distinct" in options:
            embedded = bench.with_distinct_text(options["distinct"])
        if "request" in options:
            embedded = bench.with_request(options["request"])
        labels, judgements, retrieved = bench.label(judge, embedded, options.get("task_words", 0.0), options.get("activity", 0.0), options.get("twins", "separate"))
        outcomes[name] = bench.per_prompt(labels, judgements)
        results[name] = {"figures": figures(bench, outcomes[name]), "candidate_recall": candidate_recall(bench, retrieved)}
        if name != args.against:
            results[name]["change_against"] = paired(bench, outcomes[args.against], outcomes[name], rng)
        print(name, json.dumps(results[name]["figures"]), flush=True)
    out = {
        "commit": stamp,
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "data_dir": str(args.data_dir),
        "benchmarks": bench.benchmarks,
        "prompts": len(bench.prompts),
        "against": args.against,
        "variants": results,
    }
    if args.search_instruction:
        start = replace(EmbeddedJudgeV6(), personal_errands=True)  # errands are decided on evidence, not searched (docs/labeling.md)
        out["search_instruction"] = search(bench, start, grid=SEARCH_INSTRUCTION, objective=search_objective_instruction)
    if args.search:
        out["search"] = search(bench, EmbeddedJudgeV5())
    if args.stability:
        for name in ("v4", "v5", "v6", "v7"):
            out[f"stability_{name}"] = stability(bench, variant(base_judge, name)[0])
            print(f"stability {name}", json.dumps(out[f"stability_{name}"]), flush=True)
    out["seconds"] = round(time.perf_counter() - started, 1)
    args.output.write_text(json.dumps(out, indent=2) + "\n")


def candidate_recall(bench: Bench, retrieved) -> dict:
    """How often a reference task (and its occupation) is among the candidates a judge, the LLM judge
    included, is sent: per half and in all."""
    where = {key: i for i, key in enumerate(zip(retrieved.prompts["benchmark"], retrieved.prompts["prompt_id"]))}
    out = {}
    for subset, rows in bench.reference.items():
        hits = totals = occupation_hits = occupation_totals = 0
        for benchmark, prompt_id, truth in zip(rows["benchmark"], rows["prompt_id"], rows["task_ids"]):
            i = where.get((benchmark, prompt_id))
            sent = set(bench.index.task_ids[retrieved.candidates.task_positions[i]].tolist()) if i is not None else set()
            hits += len(sent & set(truth))
            totals += len(truth)
            true_occupations = {bench.task_occupation[t] for t in truth if t in bench.task_occupation}
            occupation_hits += len({bench.task_occupation[t] for t in sent} & true_occupations)
            occupation_totals += len(true_occupations)
        out[subset] = {"task": round(hits / totals, 4), "occupation": round(occupation_hits / occupation_totals, 4)}
    return out


if __name__ == "__main__":
    main()
