"""Judge v4's pieces as pure functions: title normalisation and matching, technology matching, the
narrowing, the margin rule, abstention, the O*NET prior, and the validation figures."""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbank_dagster.labeling.embeddings import PromptRows
from workbank_dagster.labeling.judges import EmbeddedJudgeV4, EmbeddedJudgeV6
from workbank_dagster.labeling.narrowing import BenchmarkContext, Narrowing
from workbank_dagster.labeling.prior import OccupationPrior, prior_key, training_texts
from workbank_dagster.labeling.retrieval import Candidates, TaskIndex
from workbank_dagster.labeling.technology import TechnologyIndex
from workbank_dagster.labeling.titles import TitleIndex, normalise, title_rows
from workbank_dagster.labeling.validation import score_against_dev, score_against_reference, statement_groups, wilson
from workbank_dagster.labeling.yardsticks import (
    read_reference,
    read_reference_split,
    read_split,
    reference_halves,
    reference_subsets,
    split_half,
)
from workbank_dagster.settings import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "bench"))

from judge_v5 import EmbeddedJudgeV5  # noqa: E402  (bench/judge_v5.py, put on the path above: measured by bench, never run)

# --- titles ----------------------------------------------------------------------------------------


def test_normalise_plural_seniority_inversion_and_ampersand():
    assert normalise("Registered Nurses") == normalise("registered nurse") == ("registered", "nurse")
    assert normalise("Senior Staff Accountant") == ("accountant",)
    assert normalise("Director of Sales") == normalise("Sales Director") == ("sales", "director")
    assert normalise("Director of Parks & Recreation") == normalise("Parks and Recreation Director")
    assert normalise("Newly hired US-based attorney") == ("attorney",)
    # Plural rules that a bare trailing-s cut gets wrong.
    assert normalise("Secretaries") == ("secretary",) and normalise("Business Analysts") == ("business", "analyst")
    assert normalise("Logistics Analyst") == ("logistics", "analyst")


def _titles() -> TitleIndex:
    rows = pd.DataFrame(
        [
            ("13-2011.00", "Accountants and Auditors", "title"),
            ("13-2011.00", "Staff Accountant", "alternate"),
            ("13-2011.00", "Auditor", "alternate"),
            ("11-2022.00", "Sales Managers", "title"),
            ("11-2022.00", "Sales Director", "alternate"),
            ("33-1012.00", "First-Line Supervisors of Police and Detectives", "title"),
            ("33-1012.00", "Police Sergeant", "alternate"),
            ("33-1012.00", "Detective Sergeant", "reported"),
            ("11-1011.00", "CEO (Chief Executive Officer)", "reported"),
            ("11-9021.00", "Project Manager", "alternate"),
            ("13-1082.00", "Project Manager", "alternate"),
            ("13-1082.00", "Project Management Specialists", "title"),
            ("29-1141.00", "Registered Nurses", "title"),
            ("29-1141.99", "Nurse Manager", "alternate"),  # a code without tasks: moved to 29-1141.00
            ("11-9199.00", "Safety Manager", "alternate"),  # no task-bearing sibling: dropped
        ],
        columns=["onet_soc_code", "title", "source"],
    )
    return TitleIndex(rows, {"13-2011.00", "11-2022.00", "33-1012.00", "11-1011.00", "11-9021.00", "13-1082.00", "29-1141.00"})


def test_title_match_exact_decides_with_full_confidence():
    match = _titles().match("Staff Accountant")
    assert match.best == ("13-2011.00", 1.0) and match.confidence == 1.0 and match.matched == "accountant"
    assert _titles().match("Director of Sales").best[0] == "11-2022.00"


def test_title_match_shorter_tail_is_less_confident():
    match = _titles().match("green hydrogen project manager")
    assert set(match.distribution) == {"11-9021.00", "13-1082.00"} and match.matched == "project manager"
    assert match.confidence == pytest.approx(0.5 * 0.85**2)


def test_title_match_conjuncts_parentheses_head_noun_and_generic_words():
    titles = _titles()
    assert titles.match("Retail Buyer and Auditor").best[0] == "13-2011.00"  # the conjunct that is a title
    assert titles.match("CEO").best[0] == "11-1011.00" and titles.match("chief executive officer").best[0] == "11-1011.00"
    sergeant = titles.match("Platoon Sergeant")  # not a listed title: its head noun is
    assert sergeant.best[0] == "33-1012.00" and sergeant.matched == "… sergeant" and sergeant.confidence == pytest.approx(0.5)
    assert titles.match("Manager") is None and titles.match("senior analyst") is None  # generic words decide nothing
    assert titles.match("Nurse Manager").best[0] == "29-1141.00"
    assert titles.match("Safety Manager") is None


def test_title_rows_reads_every_title_source():
    occupations = pd.DataFrame({"onet_soc_code": ["13-2011.00"], "title": ["Accountants and Auditors"]})
    alternate = pd.DataFrame({"onet_soc_code": ["13-2011.00"] * 2, "alternate_title": ["Staff Accountant", "Certified Public Accountant"], "short_title": [None, "CPA"]})
    reported = pd.DataFrame({"onet_soc_code": ["13-2011.00"], "reported_title": ["Audit Manager"]})
    rows = title_rows(occupations, alternate, reported)
    assert rows["source"].value_counts().to_dict() == {"alternate": 2, "title": 1, "short": 1, "reported": 1}


# --- technology ------------------------------------------------------------------------------------


def test_technology_vendor_alias_case_and_idf():
    codes = ["43-3031.00", "13-2011.00", "15-1252.00", "27-3043.00"]
    technology = pd.DataFrame(
        [
            ("43-3031.00", "Intuit QuickBooks"), ("13-2011.00", "Intuit QuickBooks"),
            *[(c, "Microsoft Excel") for c in codes],
            ("15-1252.00", "GitLab"), ("15-1252.00", "Python"),
            ("27-3043.00", "Microsoft Word"), ("15-1252.00", "Salesforce software"),
        ],
        columns=["onet_soc_code", "example"],
    )
    index = TechnologyIndex(technology, codes)
    assert index.find("Post the invoices in QuickBooks and export to Excel") == {"Intuit QuickBooks", "Microsoft Excel"}
    assert index.find("open the repo on gitlab, fix the python script") == {"GitLab"}  # CamelCase names match in lower case
    # "excel" the verb, "word" the noun, "software" left by stripping a vendor: not tools.
    assert index.find("you will excel at choosing the right word for the software") == set()
    share, tools = index.evidence("Reconcile the QuickBooks ledger in Excel")
    assert tools == ["Intuit QuickBooks", "Microsoft Excel"]
    assert share[0] == pytest.approx(1.0) and share[1] == pytest.approx(1.0) and share[2] == 0.0  # Excel's IDF is 0
    assert index.evidence("no tools here")[0].sum() == 0.0


# --- the judge ---------------------------------------------------------------------------------------


class _Index:
    """The little of a TaskIndex that the judge reads."""

    def __init__(self, task_occupation: list[int], titles: list[str]) -> None:
        self.task_occupation = np.array(task_occupation)
        self.task_ids = np.arange(100, 100 + len(task_occupation))
        self.titles = titles


def _candidates(rows: list[tuple[list[int], list[float], list[int], list[float]]]) -> Candidates:
    """(task positions, their similarities, occupation order, occupation probabilities) per prompt."""
    return Candidates(
        [np.array(r[0]) for r in rows],
        [np.array(r[1], dtype=np.float32) for r in rows],
        np.array([r[2] for r in rows]),
        np.zeros((len(rows), len(rows[0][2]))),
        np.array([r[3] for r in rows]),
        np.array([max(r[3]) for r in rows]),
    )


INDEX = _Index([0, 0, 0, 1, 1, 2], ["Accountants", "Bookkeepers", "Auditors"])


def test_margin_rule_adds_a_task_only_when_close_to_the_first():
    judge = EmbeddedJudgeV4(second_occupation=0.5, task_margin=0.05, max_labels=3, abstain_below=0.0, min_similarity=0.0)
    far = _candidates([([0, 1, 3], [0.60, 0.50, 0.40], [0, 1], [0.9, 0.1])])
    close = _candidates([([0, 1, 3], [0.60, 0.57, 0.56], [0, 1], [0.9, 0.1])])
    assert [t for t, _ in judge.select(far, INDEX, ["b"])[0].labels] == [100]
    # 101 is within the margin; 103 too, but its occupation (p 0.1 < 0.5 × 0.9) was not chosen.
    assert [t for t, _ in judge.select(close, INDEX, ["b"])[0].labels] == [100, 101]


def test_second_occupation_when_close_and_its_best_task_is_rank_two():
    judge = EmbeddedJudgeV4(second_occupation=0.5, task_margin=0.0, max_labels=3, abstain_below=0.0, min_similarity=0.0)
    both = _candidates([([3, 0, 1], [0.70, 0.60, 0.59], [0, 1], [0.5, 0.4])])
    judged = judge.select(both, INDEX, ["b"])[0]
    # Rank 1 is the best occupation's best task even though occupation 1's task is more similar.
    assert [t for t, _ in judged.labels] == [100, 103] and judged.status == "labeled" and judged.confidence == 0.5


def test_max_labels_caps_the_margin_rule():
    judge = EmbeddedJudgeV4(second_occupation=0.5, task_margin=1.0, max_labels=2, abstain_below=0.0, min_similarity=0.0)
    many = _candidates([([0, 1, 2], [0.6, 0.6, 0.6], [0, 1], [0.9, 0.1])])
    assert len(judge.select(many, INDEX, ["b"])[0].labels) == 2


def test_abstains_below_confidence_with_reason_and_never_more_than_the_cap():
    judge = EmbeddedJudgeV4(abstain_below=0.3, max_abstain_share=0.2, min_similarity=0.0)
    rows = [([0, 3], [0.6, 0.5], [0, 1], [p, 0.01]) for p in (0.9, 0.1, 0.05, 0.2, 0.8, 0.7, 0.6, 0.5, 0.4, 0.35)]
    judged = judge.select(_candidates(rows), INDEX, ["b"] * 10)
    statuses = [j.status for j in judged]
    # Three prompts are below 0.3, but 20% of 10 prompts is 2: the two least confident abstain.
    assert statuses.count("abstained") == 2 and statuses[2] == statuses[1] == "abstained" and statuses[3] == "labeled"
    assert judged[2].labels == [] and "confidence 0.050 below 0.3" in judged[2].reason and "Accountants" in judged[2].reason
    assert [j.confidence for j in judged] == [r[3][0] for r in rows]
    # The cap is per benchmark: alone in its benchmark, a prompt cannot abstain (20% of 1 is 0).
    alone = judge.select(_candidates(rows[:3]), INDEX, ["a", "b", "c"])
    assert [j.status for j in alone] == ["labeled"] * 3


def test_abstains_when_no_task_is_similar_enough_within_the_same_cap():
    judge = EmbeddedJudgeV4(abstain_below=0.3, min_similarity=0.3, max_abstain_share=0.2)
    rows = [([0, 3], [sim, 0.1], [0, 1], [p, 0.01]) for sim, p in [(0.2, 0.9), (0.5, 0.1), (0.29, 0.9)] + [(0.5, 0.9)] * 7]
    judged = judge.select(_candidates(rows), INDEX, ["b"] * 10)
    # Three prompts are below a bar (similarity 0.2 and 0.29, confidence 0.1); the cap of 2 takes the
    # two furthest below theirs (0.2 / 0.3 and 0.1 / 0.3), and the 0.29 one is labeled.
    assert [j.status for j in judged[:3]] == ["abstained", "abstained", "labeled"]
    assert judged[0].labels == [] and "no task of Accountants similar enough (best 0.200 < 0.3)" in judged[0].reason
    assert "confidence 0.100 below 0.3" in judged[1].reason


# --- narrowing and the benchmark context -------------------------------------------------------------


def _tiny_index() -> TaskIndex:
    rng = np.random.default_rng(0)
    tasks = pd.DataFrame(
        {
            "task_id": range(12),
            "onet_soc_code": ["11-1011.00"] * 3 + ["11-2022.00"] * 3 + ["43-3031.00"] * 3 + ["43-4051.00"] * 3,
            "task": [f"task {w} number {i}" for i, w in enumerate(["plan", "lead", "sell", "bill"] * 3)],
        }
    )
    vectors = rng.normal(size=(12, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    occupations = pd.DataFrame(
        {"onet_soc_code": ["11-1011.00", "11-2022.00", "43-3031.00", "43-4051.00"], "title": ["Chief", "Sales Manager", "Bookkeeper", "Agent"], "description": [""] * 4}
    )
    titles = rng.normal(size=(4, 8)).astype(np.float32)
    return TaskIndex(tasks, vectors, occupations, titles / np.linalg.norm(titles, axis=1, keepdims=True))


def test_family_narrowing_orders_the_best_family_first_and_probabilities_sum():
    import scipy.sparse as sp

    index = _tiny_index()
    prompt = index.task_vectors[[0]]
    # A boost makes the two family-43 occupations together likelier than the single best one.
    boosts = sp.csr_matrix(np.array([[0.0, 0.0, 2.9, 2.9]], dtype=np.float32))
    candidates = index.retrieve(PromptRows(["a prompt"], prompt, np.zeros_like(prompt), np.zeros(1, bool), [None], ["b"]), n_occupations=4,
                                narrowing=Narrowing(temperature=1.0, family=5.0), boosts=boosts)
    families = [index.occupation_codes[o][:2] for o in candidates.occupations[0]]
    assert families[:2] == ["43", "43"]
    assert 0 < candidates.occupation_probability[0].sum() <= 1.0 + 1e-9


def test_benchmark_context_leaves_the_prompt_out():
    scores = np.array([[3.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 3.0]])
    z = (scores - scores.mean(1, keepdims=True)) / scores.std(1, keepdims=True)
    context = BenchmarkContext(groups=np.array([0, 0, 1]), sums=np.array([z[0] + z[1], z[2]]), counts=np.array([2, 1]))
    got = context.of(scores, slice(0, 3))
    assert np.allclose(got[0], z[1]) and np.allclose(got[1], z[0])  # each sees only the other
    assert np.allclose(got[2], 0.0)  # alone in its benchmark: no context


def _narrowed_scores(index: TaskIndex, rows: PromptRows, narrowing: Narrowing) -> np.ndarray:
    """Each prompt's occupation rank scores, in occupation order, with the benchmark context."""
    groups = np.zeros(len(rows), dtype=np.int64)
    context = BenchmarkContext(groups, index.context_sums(rows, groups, 1, narrowing=narrowing), np.array([len(rows)]))
    candidates = index.retrieve(rows, n_occupations=4, narrowing=narrowing, context=context)
    out = np.zeros((len(rows), 4))
    np.put_along_axis(out, candidates.occupations, candidates.occupation_scores, axis=1)
    return out


def test_the_context_weighs_more_only_for_a_prompt_that_states_no_role():
    """Judge v5: a prompt that states no role gets `context_without_role`; one that states a role is
    narrowed exactly as by v4 (its scores to the bit), whatever its siblings do."""
    index = _tiny_index()
    # Three siblings near the Chief's tasks; the subject, twice, near the Sales Manager's: once
    # stating no role, once stating one.
    vectors = index.task_vectors[[0, 1, 2, 4, 4]]
    has_role = np.array([False, False, False, False, True])
    roles = [None, None, None, None, "sales manager"]
    role_vectors = np.zeros_like(vectors)
    role_vectors[4] = index.title_vectors[1]
    rows = PromptRows([f"prompt {i}" for i in range(5)], vectors, role_vectors, has_role, roles, ["b"] * 5)
    v4 = Narrowing(temperature=2.0, family=2.0, context=1.0)
    v5 = Narrowing(temperature=2.0, family=2.0, context=1.0, context_without_role=4.0)
    everyone = Narrowing(temperature=2.0, family=2.0, context=4.0)
    assert v5.context_weights(has_role).ravel().tolist() == [4.0, 4.0, 4.0, 4.0, 1.0]
    assert Narrowing(context=1.0).context_weights(has_role).ravel().tolist() == [1.0] * 5  # v4: unchanged
    old, new, strong = (_narrowed_scores(index, rows, n) for n in (v4, v5, everyone))
    assert np.array_equal(new[4], old[4])  # states a role: v4's scores
    assert np.array_equal(new[:4], strong[:4]) and not np.allclose(new[3], old[3])  # states none: context 4 ×
    # The siblings' shared occupation gains on the subject that states no role, and only there.
    chief = 0
    assert new[3, chief] - new[3].mean() > old[3, chief] - old[3].mean()


def test_judge_v6_weighs_the_own_evidence_of_a_prompt_that_states_no_role_and_only_there():
    """Judge v6: for a prompt that states no role, each signal of its own evidence gets its
    `*_without_role` multiple (task statements 2 ×, centroid 0 ×, words 0.5 ×, title and technology
    boosts 2 ×); a prompt that states a role is scored as by v5, to the bit."""
    import scipy.sparse as sp

    index = _tiny_index()
    vectors = index.task_vectors[[0, 4, 7, 4]]
    has_role = np.array([False, False, False, True])
    roles = [None, None, None, "sales manager"]
    role_vectors = np.zeros_like(vectors)
    role_vectors[3] = index.title_vectors[1]
    texts = ["plan the lead task", "sell number 4", "bill the task", "sell number 4"]
    rows = PromptRows(texts, vectors, role_vectors, has_role, roles, ["b"] * 4)
    v6 = EmbeddedJudgeV6().narrowing
    v5 = EmbeddedJudgeV5().narrowing
    assert (v6.tasks_without_role, v6.centroid_without_role, v6.lexical_without_role, v6.boosts_without_role) == (2.0, 0.0, 0.5, 2.0)
    _, new = index._scores(rows, v6)
    _, old = index._scores(rows, v5)
    assert np.array_equal(new[3], old[3])  # states a role: v5's (and v4's) scores
    # States none: the score is the sum of its signals, each at its multiple.
    only = {name: index._scores(rows, Narrowing(**{f"{other}_without_role": float(other == name) for other in ("tasks", "centroid", "lexical")}))[1]
            for name in ("tasks", "centroid", "lexical")}
    assert np.allclose(new[:3], 2.0 * only["tasks"][:3] + 0.0 * only["centroid"][:3] + 0.5 * only["lexical"][:3])
    assert np.allclose(old[:3], only["tasks"][:3] + only["centroid"][:3] + only["lexical"][:3]) and not np.allclose(new[:3], old[:3])
    # The title and technology boosts: 2 × where no role is stated, as they were where one is.
    boosts = sp.csr_matrix(np.tile(np.array([[0.0, 1.5, 0.0, 0.0]]), (4, 1)))
    zero = np.zeros((4, 4))
    added = index._evidence(zero, rows, slice(0, 4), v6, boosts, None)
    assert added[:, 1].tolist() == [3.0, 3.0, 3.0, 1.5]
    assert np.array_equal(index._evidence(zero, rows, slice(0, 4), v5, boosts, None), boosts.toarray())


def test_judge_v6_s_weights_are_what_the_committed_search_chose():
    """bench/judge_variants.json holds the search that chose v6's weights (`--search`, on the `tune`
    halves, from v5): its choice is v6's, its start is v5, and its trace holds `tune` figures only."""
    import json

    from workbank_dagster.settings import REPO_ROOT

    search = json.loads((REPO_ROOT / "bench" / "judge_variants.json").read_text())["search"]
    v5, v6 = EmbeddedJudgeV5(), EmbeddedJudgeV6()
    assert search["start"] == v5.labeler
    assert search["chosen"] == {field: getattr(v6.narrowing, field) for field in search["chosen"]}
    for field in ("temperature", "family", "prior", "context", "context_without_role"):
        assert getattr(v6.narrowing, field) == getattr(v5.narrowing, field), field  # the rest is v5's
    assert all(key.startswith("tune:") for step in search["trace"] for key in step.get("tune", {}))


# --- the O*NET prior ---------------------------------------------------------------------------------


def test_prior_fits_o_net_texts_and_round_trips(tmp_path):
    rng = np.random.default_rng(1)
    codes = ["11-1011.00", "13-2011.00", "15-1252.00"]
    centres = rng.normal(size=(3, 16))
    labels = [codes[i % 3] for i in range(300)]
    vectors = np.array([centres[i % 3] + 0.3 * rng.normal(size=16) for i in range(300)], dtype=np.float32)
    prior = OccupationPrior.fit(vectors, labels, codes, "sha")
    assert (prior.log_proba(centres.astype(np.float32)).argmax(axis=1) == [0, 1, 2]).all()
    assert np.allclose(np.exp(prior.log_proba(vectors[:5])).sum(axis=1), 1.0)
    prior.save(tmp_path / "prior.npz")
    loaded = OccupationPrior.load(tmp_path / "prior.npz")
    assert loaded.codes == codes and loaded.inputs_sha256 == "sha" and np.array_equal(loaded.coef, prior.coef)
    with pytest.raises(ValueError, match="no training text"):
        OccupationPrior.fit(vectors[:2], labels[:2], codes, "sha")


def test_prior_training_texts_are_capped_deterministic_and_hashed():
    tasks = pd.DataFrame({"task_id": [1, 2], "onet_soc_code": ["11-1011.00", "13-2011.00"], "task": ["Direct the firm.", "Audit books."]})
    occupations = pd.DataFrame({"onet_soc_code": ["11-1011.00", "13-2011.00"], "title": ["Chief Executives", "Accountants"]})
    titles = pd.DataFrame({"onet_soc_code": ["13-2011.00"] * 100, "title": [f"Accountant {i:03d}" for i in range(100)]})
    dwas = pd.DataFrame({"onet_soc_code": ["13-2011.00", "99-9999.00"], "dwa_title": ["Examine financial records.", "Not an occupation with tasks."]})
    texts = training_texts(tasks, occupations, dwas, titles, None)
    # 13-2011.00: its title and 100 more, capped at 60; 11-1011.00: its title. The DWA of a code without tasks leaves.
    assert texts["kind"].value_counts().to_dict() == {"title": 1 + 60, "task": 2, "dwa": 1}
    assert prior_key(texts, "m") == prior_key(training_texts(tasks, occupations, dwas, titles.iloc[::-1], None), "m")
    assert prior_key(texts, "m") != prior_key(texts, "other embedding") and prior_key(texts, "m") != prior_key(texts.iloc[1:], "m")


def test_the_prior_s_key_covers_its_code(package_copy):
    """An edit of the code that fits the prior (or of what it calls) refits it: its key holds that
    code's derived version (code_version.py), not a version string bumped by hand; a comment does not."""
    texts = pd.DataFrame({"onet_soc_code": ["13-2011.00"], "text": ["Audit books."]})
    key = prior_key(texts, "m")
    package_copy("labeling/prior.py", "    def log_proba(", "    # a comment\n    def log_proba(")
    assert prior_key(texts, "m") == key
    package_copy("labeling/prior.py", "    def log_proba(", "    def unused(self):\n        return 1\n\n    def log_proba(")
    assert prior_key(texts, "m") != key


# --- validation figures ------------------------------------------------------------------------------


def test_wilson_interval_matches_the_textbook_values():
    low, high = wilson(40, 50)  # Wilson (1927) / Newcombe (1998): 0.6696-0.8876 for 40/50
    assert (round(low, 4), round(high, 4)) == (0.6696, 0.8876)
    low, high = wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson(3, 0) == (None, None)
    # At 0 or n successes the bound is the estimate itself, not a rounding error beside it (the full run's
    # 0 abstained of 111 TheAgentCompany prompts had a lower bound of 6.9e-18, above its 0.0).
    for n in (10, 45, 111, 7263):
        assert wilson(0, n)[0] == 0.0 and wilson(n, n)[1] == 1.0


def test_committed_split_is_the_hash_rule():
    path = REPO_ROOT / "reference" / "labels_dev_split.csv"
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 32 and all(split_half(r["benchmark"], r["group"]) == r["half"] for r in rows)
    assert read_split(path)[("gdpval", "Lawyers")] == "holdout"


def test_committed_reference_split_is_the_hash_rule_and_covers_the_reference_set():
    path = REPO_ROOT / "reference" / "reference_split.csv"
    split = read_reference_split(path)
    reference = read_reference(REPO_ROOT / "reference" / "reference_labels.jsonl")
    assert split == reference_halves(reference["benchmark"])
    assert sorted(split.values()).count("tune") == sorted(split.values()).count("holdout") == 6
    subsets = reference_subsets(reference, split, path)
    assert len(subsets["tune"]) + len(subsets["holdout"]) == len(subsets["all"]) == len(reference)
    assert set(subsets["holdout"]["benchmark"]).isdisjoint(subsets["tune"]["benchmark"])


def test_a_reference_benchmark_outside_the_committed_split_is_refused():
    reference = pd.DataFrame({"benchmark": ["gdpval", "newbench"], "prompt_id": ["a", "b"]})
    with pytest.raises(ValueError, match=r"reference_split.csv: benchmarks \['newbench'\]"):
        reference_subsets(reference, {"gdpval": "holdout"}, Path("reference/reference_split.csv"))


def _gold():
    return pd.DataFrame(
        [
            ("gdpval", "p1", "Lawyers", "holdout", {"23-1011.00"}, {"23"}),
            ("gdpval", "p2", "Lawyers", "holdout", {"23-1011.00"}, {"23"}),
            ("gdpval", "p3", "Nurses", "tune", {"29-1141.00"}, {"29"}),
            ("theagentcompany", "t1", "sde", "holdout", set(), {"15"}),
        ],
        columns=["benchmark", "prompt_id", "gold", "half", "gold_codes", "gold_families"],
    )


def test_dev_figures_count_an_abstained_prompt_as_a_miss():
    task_occupation = {1: "23-1011.00", 2: "23-2011.00", 3: "29-1141.00", 4: "15-1252.00"}
    labels = pd.DataFrame(
        [("gdpval", "p1", 2, 1), ("gdpval", "p1", 1, 2), ("gdpval", "p3", 3, 1), ("theagentcompany", "t1", 4, 1)],
        columns=["benchmark", "prompt_id", "task_id", "rank"],
    )
    figures = {(f["subset"], f["benchmark"], f["level"], f["metric"]): f for f in score_against_dev(labels, task_occupation, _gold(), {("gdpval", "p2")})}
    holdout = lambda *k: figures[("holdout", *k)]["value"]  # noqa: E731
    assert holdout("gdpval", "family", "top1") == 1 / 2  # p1's top label is 23-2011 (family 23); p2 abstained
    assert holdout("gdpval", "occupation", "top1") == 0.0
    assert holdout("gdpval", "occupation", "precision") == (0.5 + 0.0) / 2
    assert holdout("gdpval", "occupation", "hit") == 1 / 2
    assert holdout("gdpval", "all", "labels_per_labeled_prompt") == 2.0
    assert holdout("gdpval", "all", "abstained_share") == 0.5
    assert holdout("theagentcompany", "family", "top1") == 1.0
    assert figures[("tune", "gdpval", "occupation", "top1")]["value"] == 1.0
    row = figures[("holdout", "gdpval", "family", "top1")]
    assert (row["ci_low"], row["ci_high"]) == wilson(1, 2) and row["n_prompts"] == 2


def test_reference_figures_exact_same_statement_and_dwa():
    tasks = pd.DataFrame({"task_id": [1, 2, 3], "onet_soc_code": ["23-1011.00", "23-2011.00", "23-2011.00"], "task": ["Draft wills.", "draft  wills.", "File papers."]})
    task_occupation = dict(zip(tasks["task_id"], tasks["onet_soc_code"]))
    reference = pd.DataFrame({"benchmark": ["b", "b"], "prompt_id": ["x", "y"], "task_ids": [[1], [3]], "onet_soc_codes": [["23-1011.00"], ["23-2011.00"]]})
    labels = pd.DataFrame({"benchmark": ["b"], "prompt_id": ["x"], "task_id": [2], "rank": [1]})  # the same statement, other occupation
    out = score_against_reference(labels, task_occupation, reference, same_statement=statement_groups(tasks),
                                  task_dwas={1: {"D1"}, 2: {"D1"}, 3: {"D2"}}, abstained={("b", "y")})
    assert out["task"]["precision"] == 0.0 and out["task"]["recall"] == 0.0
    # y abstained: one more wrong prediction in every precision.
    assert out["task_same_statement"]["precision"] == 0.5 and out["task_same_statement"]["recall"] == 0.5
    assert out["dwa"]["precision"] == 0.5 and out["dwa"]["recall"] == 0.5
    assert out["n_abstained"] == 1 and out["family"]["precision"] == 0.5
    assert math.isclose(out["labels_per_prompt"], 0.5)


# --- progress of long steps ----------------------------------------------------------------------------


def test_progress_logs_done_total_and_time_left_without_flooding():
    from workbank_dagster.progress import Progress

    now = [0.0]
    lines: list[str] = []
    meter = Progress("embedding", 1000, log=lines.append, every_s=15.0, unit="texts", bar=False, clock=lambda: now[0])
    for _ in range(100):  # 100 batches of 10 over 100 s: a line every 15 s, not one per batch
        now[0] += 1.0
        meter.update(10)
    meter.close()
    assert len(lines) == 7 and lines[-1] == "embedding: 1,000 / 1,000 texts (100%), 1m40s elapsed: done"
    assert lines[0] == "embedding: 150 / 1,000 texts (15%), 15s elapsed, about 1m25s left"


def test_llm_template_t2_states_the_sparse_rule_and_does_not_reuse_t1(tmp_path):
    from workbank_dagster.labeling.chat_model import LLMSettings
    from workbank_dagster.labeling.judgement_cache import Judgement as Paid
    from workbank_dagster.labeling.judgement_cache import JudgementCache
    from workbank_dagster.labeling.llm_judge import LLMJudge
    from workbank_dagster.labeling.llm_protocol import SYSTEM_PROMPT, Item

    settings = LLMSettings(model="m")
    assert LLMJudge(settings, JudgementCache(tmp_path / "j.sqlite")).labeler == "llm:m:t3" and settings.max_labels == 3
    assert "usually one to three" in SYSTEM_PROMPT and "actually exercises" in SYSTEM_PROMPT
    cache = JudgementCache(tmp_path / "j.sqlite")
    item = Item(prompt_hash="h", prompt="p", candidates=((1, "Task one", "Occupation"),))
    cache.put("llm:m:t1", *item.key, Paid([1], [], 10, 2, 0.0, "sync"))
    assert LLMJudge(LLMSettings(model="m"), cache).cache.get_many("llm:m:t1", [item.key])  # the t1 judgement is there
    todo, cached = LLMJudge(settings, cache).pending([item])
    assert todo == [item] and cached == {}


def test_embedding_reports_progress_only_for_what_it_encodes(tmp_path):
    from workbank_dagster.labeling.embedding_store import EmbeddingStore
    from workbank_dagster.progress import reporter

    lines: list[str] = []
    store = EmbeddingStore(tmp_path / "e.sqlite")
    encode = lambda texts: np.ones((len(texts), 384), dtype=np.float32)  # noqa: E731
    progress = reporter(lines.append, every_s=0.0, bar=False)
    store.embed("m", [f"text {i}" for i in range(1200)], encode, batch=500, progress=progress)
    # Batches of 500, 500, 200: a line after each but the last, then the closing line.
    assert lines[:2] == [line for line in lines[:2] if line.startswith("embedding with m: ")] and len(lines) == 3
    assert "500 / 1,200 texts" in lines[0] and "1,000 / 1,200" in lines[1] and lines[2].endswith(": done")
    lines.clear()
    store.embed("m", [f"text {i}" for i in range(1200)], encode, progress=progress)  # all cached: nothing to report
    assert lines == []
