"""Retrieval, chunking, language and the embedding store on small data with known answers."""

from __future__ import annotations

import dagster as dg
import numpy as np
import pandas as pd
import pytest

from workbank_dagster.labeling.embedder import same_length_groups
from workbank_dagster.labeling.embedding_store import EmbeddingStore
from workbank_dagster.labeling.embeddings import Embeddings, PromptRows
from workbank_dagster.labeling.judges import EmbeddedJudgeV3
from workbank_dagster.labeling.label_tables import label_rows
from workbank_dagster.labeling.matching import LabelingRuntime
from workbank_dagster.labeling.prompt_retrieval import retrieve
from workbank_dagster.labeling.retrieval import top_k
from workbank_dagster.labeling.text import chunk_text, is_mostly_cjk, pool_chunks
from workbank_dagster.settings import PipelineSettings


def _unit(rows):
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_top_k_matches_brute_force_across_chunks():
    rng = np.random.default_rng(0)
    queries, corpus = _unit(rng.normal(size=(37, 8))), _unit(rng.normal(size=(101, 8)))
    idx, scores = top_k(queries, corpus, 5, chunk=7)
    sims = queries @ corpus.T
    expected = np.argsort(-sims, axis=1, kind="stable")[:, :5]
    assert (idx == expected).all()
    assert np.allclose(scores, np.take_along_axis(sims, expected, axis=1))


def test_top_k_more_than_corpus():
    idx, scores = top_k(_unit([[1, 0], [0, 1]]), _unit([[1, 0.1], [0.1, 1], [1, 1]]), 10)
    assert idx.shape == (2, 3) and idx[0, 0] == 0 and idx[1, 0] == 1


def test_chunking_keeps_whole_text_and_bounds_chunks():
    text = " ".join(f"w{i}" for i in range(1000))
    chunks = chunk_text(text, words_per_chunk=150)
    assert len(chunks) == 7 and chunks[-1].endswith("w999") and chunks[0].startswith("w0 ")
    capped = chunk_text(text, words_per_chunk=50, max_chunks=4)
    assert len(capped) == 4 and capped[0].startswith("w0 ") and capped[-1].endswith("w999")


def test_language_detection():
    assert not is_mostly_cjk("Write a memo to the board about the Q3 budget.")
    assert is_mostly_cjk("请为公司撰写一份关于第三季度预算的备忘录，并附上数据表。")
    assert not is_mostly_cjk("Summarise 第三季度 results for the board of directors today please")


def test_pool_chunks_is_normalised_mean():
    vectors = _unit([[1, 0], [0, 1], [1, 0]])
    pooled = pool_chunks(vectors, np.array([0, 0, 1]), 2)
    assert np.allclose(pooled[0], _unit([[1, 1]])[0]) and np.allclose(pooled[1], [1, 0])


class CountingEncoder:
    model_name = "all-MiniLM-L6-v2"
    store_key = "all-MiniLM-L6-v2/counting"
    loaded = False

    def __init__(self):
        self.calls = 0
        self.texts = 0

    def encode(self, texts):
        self.calls += 1
        self.texts += len(texts)
        return _unit([[len(t), sum(map(ord, t)) % 97 + 1, 1] for t in texts])


def test_store_embeds_each_text_once(tmp_path):
    store = EmbeddingStore(tmp_path / "e.sqlite")
    encoder = CountingEncoder()
    first = store.embed("m", ["a", "bb", "a"], encoder.encode)
    again = EmbeddingStore(tmp_path / "e.sqlite").embed("m", ["bb", "a"], encoder.encode)
    assert encoder.texts == 2 and encoder.calls == 1
    assert np.allclose(first[1], again[0]) and np.allclose(first[0], first[2])


def _tiny_index(embeddings):
    from workbank_dagster.labeling.matching import build_task_index

    tasks = pd.DataFrame(
        {
            "task_id": [10, 11, 20, 21],
            "onet_soc_code": ["13-2011.00", "13-2011.00", "49-3023.00", "49-3023.00"],
            "task": ["Prepare budget reports.", "Audit financial statements.", "Repair engines.", "Replace brake pads."],
        }
    )
    occupations = pd.DataFrame(
        {
            "onet_soc_code": ["13-2011.00", "49-3023.00", "11-1011.00"],
            "title": ["Accountants and Auditors", "Automotive Service Technicians", "Chief Executives"],
            "description": ["Examine financial records.", "Repair vehicles.", "Direct organizations."],
        }
    )
    return build_task_index(tasks, occupations, embeddings)


def test_index_keeps_only_occupations_with_tasks(tmp_path):
    embeddings = Embeddings(store=EmbeddingStore(tmp_path / "e.sqlite"), embedder=CountingEncoder())
    index = _tiny_index(embeddings)
    assert list(index.occupation_codes) == ["13-2011.00", "49-3023.00"]
    assert index.task_occupation.tolist() == [0, 0, 1, 1]


def test_index_fits_its_lexical_model_on_the_first_search_only(tmp_path):
    """The TF-IDF over the occupations is fitted when a search first needs it: the task index's own
    step, which on a warm run reads only the vectors, does not pay for it (bench/compare_warm.py)."""
    from workbank_dagster.labeling.embeddings import PromptRows

    embeddings = Embeddings(store=EmbeddingStore(tmp_path / "e.sqlite"), embedder=CountingEncoder())
    index = _tiny_index(embeddings)
    assert "_lexical" not in vars(index)
    vectors = embeddings.texts(["Fix the brakes of a car.", "Audit the budget."])
    rows = PromptRows(["Fix the brakes of a car.", "Audit the budget."], vectors, np.zeros_like(vectors), np.zeros(2, bool), [None, None], ["b", "b"])
    first = index.retrieve(rows, n_occupations=2)
    fitted = vars(index)["_lexical"]
    again = index.retrieve(rows, n_occupations=2)
    assert vars(index)["_lexical"] is fitted  # fitted once
    assert sorted(fitted[0].vocabulary_) and "brake" in " ".join(fitted[0].vocabulary_)
    assert np.array_equal(first.occupations, again.occupations) and np.allclose(first.occupation_scores, again.occupation_scores)


def test_embedded_judge_takes_best_occupation_first_and_respects_floor(tmp_path):
    from workbank_dagster.labeling.retrieval import Candidates

    embeddings = Embeddings(store=EmbeddingStore(tmp_path / "e.sqlite"), embedder=CountingEncoder())
    index = _tiny_index(embeddings)
    candidates = Candidates(
        task_positions=[np.array([2, 0, 3, 1]), np.array([0, 1])],
        task_similarity=[np.array([0.9, 0.8, 0.7, 0.1]), np.array([0.2, 0.1])],
        occupations=np.array([[0, 1], [0, 1]]),
        occupation_scores=np.zeros((2, 2)),
    )
    judge = EmbeddedJudgeV3(n_occupations=2, first_tasks=2, other_tasks=1, min_similarity=0.15)
    chosen = judge.select(candidates, index)
    # Occupation 0 first (its two tasks, the one below the floor dropped), then occupation 1's best.
    assert chosen[0] == [(10, 0.8), (20, 0.9)]
    assert chosen[1] == [(10, 0.2)]


def test_embedded_judge_marks_non_english(tmp_path):
    encoder = CountingEncoder()
    embeddings = Embeddings(store=EmbeddingStore(tmp_path / "e.sqlite"), embedder=encoder)
    index = _tiny_index(embeddings)
    prompts = pd.DataFrame(
        {
            "benchmark": ["b", "b"],
            "prompt_id": ["1", "2"],
            "prompt": ["You are an accountant. Prepare budget reports.", "请为公司撰写一份关于第三季度预算的备忘录"],
            "prompt_hash": ["h1", "h2"],
        }
    )
    judge = EmbeddedJudgeV3(n_occupations=1, first_tasks=1, min_similarity=-1.0)
    retrieved = retrieve(prompts, index, embeddings)
    labels, judgements = label_rows(retrieved, judge.select(retrieved.candidates, index), judge.labeler)
    assert labels[["prompt_id", "rank"]].values.tolist() == [["1", 1]]
    assert judgements.set_index("prompt_id")["status"].to_dict() == {"1": "labeled", "2": "unlabeled"}
    assert "English" in judgements.set_index("prompt_id").at["2", "reason"]
    assert judgements["confidence"].isna().all()  # v3 gives no confidence


def test_role_phrase():
    from workbank_dagster.labeling.text import role_phrase

    assert role_phrase("You are a pediatric nurse practitioner working in a primary care office.") == "pediatric nurse practitioner"
    assert role_phrase("As the Director of Parks and Recreation, you plan events.") == "Director of Parks and Recreation"
    assert role_phrase("You are an AI assistant. Summarise this.") is None
    assert role_phrase("Sort the list as integers.") is None


def test_role_phrase_common_forms():
    from workbank_dagster.labeling.text import role_phrase

    # after a date clause, after a name, with seniority, with a participle, with an abbreviation
    assert role_phrase("It is August 20, 2025 and you are a Senior Lifestyle Manager at a luxury concierge company.") == "Lifestyle Manager"
    assert role_phrase("You are John Pederson, a real estate broker with CRECO Denver.") == "real estate broker"
    assert role_phrase("You are a Real Estate Broker licensed in the state of Florida.") == "Real Estate Broker"
    assert role_phrase("You are a licensed pharmacist at a retail pharmacy.") == "licensed pharmacist"
    assert role_phrase("You are the U.S. Sales Manager at Best Jeans.") == "US Sales Manager"
    assert role_phrase("As our Senior Staff Accountant in Financial Reporting, you review the ledger.") == "Staff Accountant"
    assert role_phrase("You are an Assistant Buyer at a large specialty retailer.") == "Assistant Buyer"
    # generic or clause-like phrases are not roles
    assert role_phrase("You are an employee at a software company.") is None
    assert role_phrase("You are a bit anxious and want to get things done quickly before your flight leaves.") is None


def test_role_phrase_of_harness_instructions():
    """#38: the forms benchmark harnesses state a role in (benchmarks/instructions.jsonl)."""
    from workbank_dagster.labeling.text import role_phrase

    assert role_phrase("Act as an expert software developer. Always use best practices when coding.") == "software developer"
    assert role_phrase("You are an expert software engineer maintaining the Expensify repository.") == "software engineer"
    assert role_phrase("You are a cybersecurity expert doing a cybersecurity challenge to assess vulnerabilities.") == "cybersecurity expert"
    assert role_phrase("You are a data scientist proficient in database, SQL and DBT Project.") == "data scientist"
    # an agent or a program described by what it is, not a worker's title
    assert role_phrase("You are an autonomous intelligent agent tasked with navigating a web browser.") is None
    assert role_phrase("You are Screen Helper, a world-class reasoning engine that can complete any goal on a computer.") is None


def test_without_urls():
    from workbank_dagster.labeling.text import without_urls

    text = "Open <http://owncloud> and http://the-agent-company.com:3002/home, then www.example.org/x now."
    cleaned = without_urls(text)
    assert "agent" not in cleaned and "owncloud" not in cleaned and "example" not in cleaned
    assert cleaned.split() == ["Open", "and", "then", "now."]


def test_labeling_runtime_holds_the_index_for_one_run_not_the_process():
    """The task index lives in a Dagster resource, not a process-global memo: the steps of one run
    share what the first built, a changed input builds anew, and the next run starts empty."""
    built: list[str] = []
    inputs = {"key": 1}

    @dg.asset
    def first(labeling_runtime: LabelingRuntime) -> None:
        labeling_runtime.memoized("index", inputs["key"], lambda: built.append("first") or object())

    @dg.asset(deps=[first])
    def second(labeling_runtime: LabelingRuntime) -> None:
        labeling_runtime.memoized("index", inputs["key"], lambda: built.append("second") or object())
        inputs["key"] = 2  # the tables changed: the next request builds again
        labeling_runtime.memoized("index", inputs["key"], lambda: built.append("second, changed") or object())

    runtime = LabelingRuntime()
    assert dg.materialize([first, second], resources={"labeling_runtime": runtime}).success
    assert built == ["first", "second, changed"]
    inputs["key"] = 1
    assert dg.materialize([first, second], resources={"labeling_runtime": runtime}).success
    assert built == ["first", "second, changed", "first", "second, changed"]


def test_the_steps_of_a_run_share_one_embedding_model_and_count_their_own_store_hits(tmp_path):
    """A cold run loaded the model once per step that embeds (task index, prior, judges): now once."""
    models, counts = [], []
    settings = PipelineSettings.of(data_dir=str(tmp_path)).resolve()

    @dg.asset
    def first(labeling_runtime: LabelingRuntime) -> None:
        embeddings = labeling_runtime.embeddings(settings)
        embeddings.store.embed("m", ["a"], lambda texts: np.ones((len(texts), 384), dtype=np.float32))
        models.append(embeddings.embedder)
        counts.append(embeddings.store.misses)

    @dg.asset(deps=[first])
    def second(labeling_runtime: LabelingRuntime) -> None:
        embeddings = labeling_runtime.embeddings(settings)
        models.append(embeddings.embedder)
        counts.append(embeddings.store.misses)

    assert dg.materialize([first, second], resources={"labeling_runtime": LabelingRuntime()}).success
    assert models[0] is models[1] and counts == [1, 0]
    assert dg.materialize([first], resources={"labeling_runtime": LabelingRuntime()}).success
    assert models[2] is not models[0]  # the next run has its own


def _rows(benchmarks: list[str]) -> PromptRows:
    n = len(benchmarks)
    vectors = np.zeros((n, 2), dtype=np.float32)
    return PromptRows(["p"] * n, vectors, vectors, np.zeros(n, bool), [None] * n, benchmarks)


def test_retrieval_blocks_stay_within_a_benchmark_and_start_at_its_first_prompt():
    rows = _rows(["a"] * 5 + ["b"] * 3 + ["c"])
    assert [(s.start, s.stop) for s in rows.blocks(2)] == [(0, 2), (2, 4), (4, 5), (5, 7), (7, 8), (8, 9)]
    # b's blocks are b's own whether a came before it or not: the same heights, the same offsets in b.
    alone = _rows(["b"] * 3)
    assert [(s.stop - s.start) for s in alone.blocks(2)] == [2, 1]
    with pytest.raises(ValueError, match="'a' are not contiguous"):
        list(_rows(["a", "b", "a"]).blocks(2))


def test_texts_are_batched_by_token_count_so_no_batch_is_padded():
    assert same_length_groups([5, 3, 5, 3, 9]) == [[1, 3], [0, 2], [4]]


def test_judge_rows_are_written_with_the_columns_dbt_s_sources_declare(tmp_path, monkeypatch):
    """label_tables reads the judge tables' columns from dbt's labeling source (one declaration, which
    the staging models cast with: tests/transform/test_judge_tables.py); rows that lack a declared
    column or carry an undeclared one are refused, and the judges' tables must declare the same."""
    import yaml

    from workbank_dagster.labeling import label_tables

    assert label_tables.JUDGEMENT_TYPES["n_chunks"] == "integer" and label_tables.LABEL_TYPES["score"] == "double precision"
    row = {name: 1 for name in label_tables.JUDGEMENT_COLUMNS}
    typed = label_tables.typed(pd.DataFrame([dict(reversed(row.items()))]), label_tables.JUDGEMENT_TYPES)
    assert list(typed.columns) == label_tables.JUDGEMENT_COLUMNS and str(typed["confidence"].dtype) == "Float64"
    with pytest.raises(ValueError, match="not the declared"):
        label_tables.typed(pd.DataFrame([{**row, "extra": 1}]), label_tables.JUDGEMENT_TYPES)
    with pytest.raises(ValueError, match="not the declared"):
        label_tables.typed(pd.DataFrame([{k: v for k, v in row.items() if k != "n_chunks"}]), label_tables.JUDGEMENT_TYPES)
    sources = yaml.safe_load(label_tables.JUDGE_SOURCES.read_text())
    (labeling,) = [s for s in sources["sources"] if s["name"] == "labeling"]
    (llm,) = [t for t in labeling["tables"] if t["name"] == "llm_judgements"]
    llm["columns"] = llm["columns"][:-1]
    (tmp_path / "__sources.yml").write_text(yaml.safe_dump(sources))
    monkeypatch.setattr(label_tables, "JUDGE_SOURCES", tmp_path / "__sources.yml")
    assert label_tables.declared_columns("labels") == label_tables.LABEL_TYPES
    with pytest.raises(ValueError, match="must declare the same"):
        label_tables.declared_columns("judgements")


def test_candidate_rows_are_each_candidate_occupation_s_tasks_most_similar_first():
    """label_tables.candidate_rows: per readable prompt, its candidate occupations in the judge's order with
    its probability of each, each one's candidate tasks in similarity order (the pool's nearest tasks
    of other occupations left out), and the judge's two abstention bars on every row."""
    from types import SimpleNamespace

    from workbank_dagster.labeling.label_tables import CANDIDATE_COLUMNS, candidate_rows
    from workbank_dagster.labeling.prompt_retrieval import Retrieved
    from workbank_dagster.labeling.retrieval import Candidates

    index = SimpleNamespace(task_occupation=np.array([0, 0, 1, 1, 2]), occupation_codes=np.array(["A", "B", "C"]), task_ids=np.array([10, 11, 20, 21, 30]))
    candidates = Candidates(
        task_positions=[np.array([2, 0, 4, 3, 1])],  # similarity order; task 30 (occupation C) is a nearest task only
        task_similarity=[np.array([0.9, 0.8, 0.7, 0.6, 0.5], dtype=np.float32)],
        occupations=np.array([[1, 0]]),
        occupation_scores=np.array([[2.0, 1.0]]),
        occupation_probability=np.array([[0.7, 0.2]]),
    )
    prompts = pd.DataFrame({"benchmark": ["b"], "prompt_id": ["p"], "prompt": ["x"], "prompt_hash": ["h"]})
    rows = candidate_rows(Retrieved(prompts, candidates, [1], [None], prompts.iloc[0:0]), index, "j", 0.05, 0.2)
    assert list(rows.columns) == CANDIDATE_COLUMNS
    got = list(zip(rows["occupation_rank"], rows["onet_soc_code"], rows["task_rank"], rows["task_id"]))
    assert got == [(1, "B", 1, 20), (1, "B", 2, 21), (2, "A", 1, 10), (2, "A", 2, 11)]
    assert rows["occupation_probability"].tolist() == pytest.approx([0.7, 0.7, 0.2, 0.2])
    assert rows["similarity"].tolist() == pytest.approx([0.9, 0.6, 0.8, 0.5])
    assert set(rows["abstain_below"]) == {0.05} and set(rows["min_similarity"]) == {0.2} and set(rows["labeler"]) == {"j"}
    with pytest.raises(ValueError, match="narrowed candidates"):
        candidate_rows(Retrieved(prompts, Candidates(*[getattr(candidates, f) for f in ("task_positions", "task_similarity", "occupations", "occupation_scores")]),
                                 [1], [None], prompts.iloc[0:0]), index, "j", 0.05, 0.2)


def test_per_prompt_outcomes_are_what_the_validation_figures_average():
    """validation.dev_outcomes and reference_outcomes: one row per yardstick prompt; the dev figures
    are their means (score_against_dev), and a reference prompt's top label is right when its
    occupation is one the careful reading gave."""
    from workbank_dagster.labeling.validation import dev_outcomes, reference_outcomes, score_against_dev

    labels = pd.DataFrame({"benchmark": "gdpval", "prompt_id": ["a", "a", "b"], "task_id": [1, 2, 3], "rank": [1, 2, 1]})
    task_occupation = {1: "11-1011.00", 2: "13-2011.00", 3: "15-1252.00"}
    gold = pd.DataFrame({"benchmark": "gdpval", "prompt_id": ["a", "b", "c"], "gold": "x", "half": ["tune", "tune", "holdout"],
                         "gold_codes": [{"11-1011.00"}, {"13-2011.00"}, {"11-1011.00"}], "gold_families": [{"11"}, {"13"}, {"11"}]})
    outcomes = dev_outcomes(labels, task_occupation, gold, [("gdpval", "c")])
    assert [(o["prompt_id"], o["occupation_top1"], o["family_top1"], o["n_labels"], o["abstained"]) for o in outcomes] == [
        ("a", True, True, 2, False), ("b", False, False, 1, False), ("c", False, False, 0, True)]
    figures = {(f["subset"], f["level"], f["metric"]): f["value"] for f in score_against_dev(labels, task_occupation, gold, [("gdpval", "c")])
               if f["benchmark"] == "gdpval"}
    assert figures[("tune", "occupation", "top1")] == 0.5 and figures[("all", "occupation", "top1")] == pytest.approx(1 / 3)
    reference = pd.DataFrame({"benchmark": ["gdpval", "osworld"], "prompt_id": ["b", "z"], "task_ids": [[3], [1]],
                              "onet_soc_codes": [["15-1252.00"], ["11-1011.00"]], "confidence": None, "labeled_by": "x"})
    got = reference_outcomes(labels, task_occupation, reference, {"gdpval": "tune", "osworld": "holdout"})
    assert [(o["half"], o["occupation_top1"], o["n_labels"]) for o in got] == [("tune", True, 1), ("holdout", False, 0)]
