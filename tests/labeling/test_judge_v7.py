"""Judge v7 (#38): each benchmark's instruction read as evidence of the work, and personal errands."""

from __future__ import annotations

import numpy as np
import pandas as pd
from test_judge_v4 import _tiny_index

from workbank_dagster.labeling.embeddings import NO_INSTRUCTIONS, EmbeddedInstructions, EmbeddedPrompts
from workbank_dagster.labeling.evidence import OccupationEvidence
from workbank_dagster.labeling.judges import EmbeddedJudgeV6, EmbeddedJudgeV7
from workbank_dagster.labeling.narrowing import InstructionEvidence
from workbank_dagster.labeling.prompt_retrieval import OccupationKnowledge, instruction_evidence, personal_errands, retrieve_narrowed


def _embedded(index, instructions=NO_INSTRUCTIONS, texts=None, roles=None, benchmarks=None) -> EmbeddedPrompts:
    """Four prompts near the tasks of different occupations, the last stating a role."""
    vectors = index.task_vectors[[0, 4, 7, 10]]
    roles = roles or [None, None, None, "sales manager"]
    has_role = np.array([r is not None for r in roles])
    role_vectors = np.zeros_like(vectors)
    role_vectors[has_role] = index.title_vectors[1]
    prompts = pd.DataFrame(
        {
            "benchmark": benchmarks or ["b"] * 4,
            "prompt_id": list("pqrs"),
            "prompt": texts or ["plan the lead task", "sell number 4", "bill the task", "sell number 4"],
            "prompt_hash": list("hijk"),
        }
    )
    unreadable = pd.DataFrame(columns=["benchmark", "prompt_id", "prompt_hash", "reason"])
    return EmbeddedPrompts(prompts, vectors, [1] * 4, roles, role_vectors, has_role, unreadable, instructions)


def _knowledge(index) -> OccupationKnowledge:
    return OccupationKnowledge(OccupationEvidence(list(index.occupation_codes), None, None), None)


def _instruction(index, benchmark="b", role=None) -> EmbeddedInstructions:
    vector = index.task_vectors[[2]]  # near the Chief's tasks
    role_vector = index.title_vectors[[0]] if role else np.zeros_like(vector)
    return EmbeddedInstructions([benchmark], ["plan everything"], vector, [role], role_vector)


def _retrieve(judge, embedded, index):
    return retrieve_narrowed(embedded, index, _knowledge(index), judge.narrowing, judge.evidence, n_occupations=4, per_occupation=3, n_nearest=2)


def _v6_as_v7_weighs_the_context() -> EmbeddedJudgeV6:
    """Judge v6 with v7's benchmark-context weight for a prompt that states no role (2 ×, v6: 4 ×)."""
    from dataclasses import replace

    v6, v7 = EmbeddedJudgeV6(), EmbeddedJudgeV7()
    return replace(v6, narrowing=replace(v6.narrowing, context_without_role=v7.narrowing.context_without_role))


def test_a_benchmark_without_an_instruction_is_labeled_as_by_v6_to_the_bit():
    """v7 = v6 (with its own context weight) + the instruction's terms: where a benchmark has no
    instruction, its scores, candidates and judgements are v6's to the bit."""
    index = _tiny_index()
    v6, v7 = _v6_as_v7_weighs_the_context(), EmbeddedJudgeV7()
    # The instruction belongs to another benchmark: these prompts have none.
    for embedded in (_embedded(index), _embedded(index, _instruction(index, benchmark="other"))):
        old, new = _retrieve(v6, embedded, index), _retrieve(v7, embedded, index)
        assert np.array_equal(old.candidates.occupations, new.candidates.occupations)
        assert np.array_equal(old.candidates.occupation_scores, new.candidates.occupation_scores)
        assert np.array_equal(old.candidates.occupation_probability, new.candidates.occupation_probability)
        assert all(np.array_equal(a, b) for a, b in zip(old.candidates.task_similarity, new.candidates.task_similarity))
        groups = ["b"] * 4
        assert v6.select(old.candidates, index, groups) == v7.select(new.candidates, index, groups, new.errands)


def test_the_instruction_moves_every_prompt_of_its_benchmark_by_its_weight():
    from dataclasses import replace

    index = _tiny_index()
    v7 = EmbeddedJudgeV7()
    assert v7.narrowing.instruction_without_role > v7.narrowing.instruction > 0
    assert v7.narrowing.instruction_weights(np.array([False, True])).ravel().tolist() == [
        v7.narrowing.instruction_without_role, v7.narrowing.instruction
    ]
    told = _embedded(index, _instruction(index))
    plain = _embedded(index)
    with_it, without = _retrieve(v7, told, index), _retrieve(v7, plain, index)
    # With both weights at 0 (and no task blend) the instruction changes nothing, to the bit.
    off = replace(v7, narrowing=replace(v7.narrowing, instruction=0.0, instruction_without_role=0.0, instruction_tasks=0.0))
    assert np.array_equal(_retrieve(off, told, index).candidates.occupation_scores, without.candidates.occupation_scores)
    evidence = instruction_evidence(told, index, _knowledge(index), v7.narrowing, v7.evidence)
    assert np.array_equal(evidence.groups, [0, 0, 0, 0])
    chief = 0  # the instruction is about the Chief's work: the Chief gains on every prompt stating no role
    assert evidence.scores[0, chief] == evidence.scores[0].max()
    for row in range(4):  # every prompt, the one that states a role too (at its smaller weight)
        before = dict(zip(without.candidates.occupations[row], without.candidates.occupation_probability[row]))
        after = dict(zip(with_it.candidates.occupations[row], with_it.candidates.occupation_probability[row]))
        assert after[chief] > before[chief], row


def test_instruction_evidence_blends_task_similarity_only_where_there_is_an_instruction():
    sims = np.array([[0.2, 0.4], [0.6, 0.0]])
    told = InstructionEvidence(np.array([0, -1]), np.zeros((1, 3)), np.array([[1.0, 0.0]]))
    out = told.blend(sims, slice(0, 2), 1.0)
    assert np.allclose(out[0], [0.6, 0.2]) and np.array_equal(out[1], sims[1])
    assert told.blend(sims, slice(0, 2), 0.0) is sims


def test_a_personal_errand_abstains_with_its_reason_outside_the_confidence_cap():
    index = _tiny_index()
    texts = ["Add this product to my wish list", "sell number 4", "Change my default shipping address", "sell number 4"]
    roles = [None, None, None, "sales manager"]
    embedded = _embedded(index, texts=texts, roles=roles)
    errands = personal_errands(embedded)
    assert errands[0] == "Add this product to my wish list" and errands[2] == "my default shipping address"
    assert errands[1] is None and errands[3] is None  # a prompt that states a role is never an errand
    retrieved = _retrieve(EmbeddedJudgeV7(), embedded, index)
    decided = EmbeddedJudgeV7().select(retrieved.candidates, index, ["b"] * 4, retrieved.errands)
    assert [d.status for d in decided] == ["abstained", "labeled", "abstained", "labeled"]
    assert decided[0].reason.startswith("personal errand: the agent acts as a customer or private person")
    # v6 does not read errands: the same prompts are labeled.
    assert [d.status for d in EmbeddedJudgeV6().select(retrieved.candidates, index, ["b"] * 4, retrieved.errands)] == ["labeled"] * 4


def test_an_instruction_that_gives_the_agent_a_worker_s_role_makes_no_prompt_an_errand():
    index = _tiny_index()
    texts = ["Add this product to my wish list"] * 4
    roles = [None] * 4
    worker = _embedded(index, _instruction(index, role="customer service agent"), texts=texts, roles=roles)
    agent = _embedded(index, _instruction(index), texts=texts, roles=roles)
    assert personal_errands(worker) == [None] * 4
    assert personal_errands(agent) == ["Add this product to my wish list"] * 4


def test_the_rule_in_words_is_made_from_the_judge_s_own_parameters():
    from dataclasses import replace

    v7 = EmbeddedJudgeV7()
    text = v7.summary()
    assert f"its benchmark's instruction text {v7.narrowing.instruction_without_role:g} ×" in text
    assert f"{v7.narrowing.instruction:g} × where it states one" in text
    assert "personal errand" in text and f"{v7.max_abstain_share:.0%}" in text
    changed = replace(v7, max_labels=2, narrowing=replace(v7.narrowing, instruction_without_role=1.5), personal_errands=False)
    assert "with 1 to 2 of their tasks" in changed.summary() and "instruction text 1.5 ×" in changed.summary()
    assert "personal errand" not in changed.summary()
