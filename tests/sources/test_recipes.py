"""The recipe converters' rules, on small made-up upstream files (their real upstream files are
checked in test_fetch.py, through the mirror, against the pinned SHA-256 of what they write)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from workbank_dagster.sources import recipes


def _lines(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def test_prompts_are_normalised_cut_stripped_sorted_and_written_as_utf8_lines():
    text = "  Un  café\n\tpour\r\n deux " + "x" * 7000
    out = recipes.prompts_jsonl("b", [("z", "last"), ("a", text)])
    assert out.endswith(b"\n") and out.count(b"\n") == 2
    first, second = _lines(out)
    assert first == {"benchmark": "b", "prompt_id": "a", "prompt": ("Un café pour deux " + "x" * 7000)[:6000]}
    assert second["prompt_id"] == "z"
    assert "café".encode() in out  # not escaped
    # Cut at 6,000 then stripped: a space at the cut is not kept.
    assert recipes.normalized("y" * 5999 + " tail") == "y" * 5999
    # Ids that are numbers sort as numbers, and are written as text.
    assert [r["prompt_id"] for r in _lines(recipes.prompts_jsonl("b", [(10, "t"), (9, "t"), (100, "t")]))] == ["9", "10", "100"]
    # At most 1,500 prompts, the first by id.
    many = _lines(recipes.prompts_jsonl("b", [(i, "t") for i in range(1600)]))
    assert len(many) == 1500 and many[-1]["prompt_id"] == "1499"
    with pytest.raises(ValueError, match="'a' appears more than once"):
        recipes.prompts_jsonl("b", [("a", "x"), ("a", "y")])


def test_legalbench_joins_the_readme_heading_and_the_base_prompt():
    files = {
        "tasks/alpha/README.md": b"# alpha\n\n### Decide the alpha.\n---\n**Source**: x\n",
        "tasks/alpha/base_prompt.txt": b"Q: one?\nA: yes\n",
        "tasks/beta/README.MD": b"# beta\n\n**Task summary**: not a heading\n",
        "tasks/beta/base_prompt.txt": b"Beta's own words.",
    }
    rows = _lines(recipes.legalbench_tasks(files, "legalbench"))
    assert rows == [
        {"benchmark": "legalbench", "prompt_id": "alpha", "prompt": "Decide the alpha. Q: one? A: yes"},
        {"benchmark": "legalbench", "prompt_id": "beta", "prompt": "Beta's own words."},
    ]
    with pytest.raises(ValueError, match="tasks without both files"):
        recipes.legalbench_tasks({"tasks/alpha/README.md": b"### x"}, "legalbench")
    with pytest.raises(ValueError, match="unexpected file"):
        recipes.legalbench_tasks({"tasks/alpha/train.tsv": b""}, "legalbench")


def test_the_cube_ports_and_writingbench_read_their_fields():
    tasks = json.dumps([{"id": "b-2", "instruction": "Open  it", "abstract_description": "A"}, {"id": "a-1", "instruction": "Close", "abstract_description": "B"}])
    assert [r["prompt"] for r in _lines(recipes.osworld_instructions({"w.whl": tasks.encode()}, "osworld"))] == ["Close", "Open it"]
    assert [r["prompt"] for r in _lines(recipes.waa_descriptions({"w.whl": tasks.encode()}, "waa"))] == ["B", "A"]
    queries = b'{"index": 10, "query": "ten"}\n{"index": 2, "query": "two"}\n'
    assert [r["prompt_id"] for r in _lines(recipes.writingbench_queries({"q.jsonl": queries}, "writingbench"))] == ["2", "10"]
    with pytest.raises(ValueError, match="expected one upstream file"):
        recipes.waa_descriptions({"a": b"[]", "b": b"[]"}, "waa")


def test_gdpval_reads_the_parquet_columns():
    import pandas as pd

    out = io.BytesIO()
    pd.DataFrame({"task_id": ["u2", "u1"], "sector": ["s", "s"], "prompt": ["Second\n\ntask", "First"]}).to_parquet(out)
    assert _lines(recipes.gdpval_tasks({"data/tasks.parquet": out.getvalue()}, "gdpval")) == [
        {"benchmark": "gdpval", "prompt_id": "u1", "prompt": "First"},
        {"benchmark": "gdpval", "prompt_id": "u2", "prompt": "Second task"},
    ]


def test_financebench_results_score_the_authors_labels():
    files = {
        "results/m_b.jsonl": b'{"financebench_id": "q2", "model_name": "m", "eval_mode": "b", "label": "Refusal"}\n',
        "results/m_a.jsonl": b'{"financebench_id": "q1", "model_name": "m", "eval_mode": "a", "label": "Correct Answer"}\n'
        b'{"financebench_id": "q0", "model_name": "m", "eval_mode": "a", "label": "Incorrect Answer"}\n',
    }
    assert recipes.financebench_results(files, "financebench").decode() == (
        "benchmark,model,prompt_id,score,source_run,date\r\n"
        "financebench,m (a),q0,0,results/m_a.jsonl,2023-11\r\n"
        "financebench,m (a),q1,1,results/m_a.jsonl,2023-11\r\n"
        "financebench,m (b),q2,0,results/m_b.jsonl,2023-11\r\n"
    )


def test_cybench_runs_rename_drop_and_combine_repeated_tasks():
    run = "published/benchmarks/cybench/openai_x_20250629_153245"
    lines = [
        {"task_id": "emaze", "model": "openai/x", "score_binarized": 0},
        {"task_id": "motp", "model": "openai/x", "score_binarized": 1},
        {"task_id": "avatar", "model": "openai/x", "score_binarized": 0},
        {"task_id": "avatar", "model": "openai/x", "score_binarized": 1},
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    assert recipes.cybench_runs({f"{run}/runs.jsonl": data}, "cybench").decode() == (
        "benchmark,model,prompt_id,score,source_run,date,n_trials\r\n"
        f"cybench,openai/x,avatar,1,{run},2025-06-29,2\r\n"
        f"cybench,openai/x,ezmaze,0,{run},2025-06-29,1\r\n"
    )
    with pytest.raises(ValueError, match="no _YYYYMMDD_HHMMSS suffix"):
        recipes.cybench_runs({"published/benchmarks/cybench/undated/runs.jsonl": data}, "cybench")


def test_every_converter_is_used_by_the_catalog_and_a_wheel_member_is_read(tmp_path):
    from workbank_dagster.sources.benchmark_set import read_catalog
    from workbank_dagster.sources.fetch import _member

    assert {e.converter for e in read_catalog().values() if e.reaches_clone == "fetched"} == set(recipes.CONVERTERS)
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("pkg/data.json", b"[1]")
    assert _member(wheel, "pkg/data.json") == b"[1]"
    assert _member(wheel, "") == wheel.read_bytes()
