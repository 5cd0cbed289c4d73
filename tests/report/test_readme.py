"""The README's generated tables (tools/readme.py): blocks found and rewritten in place, goals judged from the figures."""

from __future__ import annotations

import sys

from workbank_dagster.settings import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tools"))

import readme  # noqa: E402  (tools/readme.py, put on the path above)

TEXT = """intro 12 typed
<!-- generated:headline -->
| old | 1 |
<!-- /generated:headline -->
middle
<!-- generated:speed -->
old speed
<!-- /generated:speed -->
end
"""


def test_blocks_are_found_and_rewritten_in_place():
    assert readme.blocks(TEXT) == {"headline": "| old | 1 |\n", "speed": "old speed\n"}
    out = readme.rewrite(TEXT, {"headline": "| new | 2 |\n"})
    assert readme.blocks(out) == {"headline": "| new | 2 |\n", "speed": "old speed\n"}
    assert out.startswith("intro 12 typed\n") and "middle\n" in out and out.endswith("end\n")
    assert readme.rewrite(out, {"headline": "| new | 2 |\n"}) == out


def test_a_block_name_lives_in_one_document():
    import pytest

    assert readme.held_blocks({"README.md": TEXT, "docs/x.md": "<!-- generated:other -->\nx\n<!-- /generated:other -->\n"}) == {
        "headline": "| old | 1 |\n", "speed": "old speed\n", "other": "x\n",
    }
    with pytest.raises(ValueError, match="'speed' is in both README.md and docs/x.md"):
        readme.held_blocks({"README.md": TEXT, "docs/x.md": "<!-- generated:speed -->\ny\n<!-- /generated:speed -->\n"})


def test_the_readme_is_the_user_s_page_and_its_links_resolve():
    """At most 300 lines (developer material is in docs/), and every relative link, from the README
    and from docs/, points at a file that exists."""
    import re

    assert len((REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 300
    broken = []
    for page in readme.documents(REPO_ROOT):
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if not (page.parent / target).exists():
                broken.append(f"{page.name}: {target}")
    assert broken == []


def _bench(**changes) -> dict:
    bench = {
        "warm_run_s": 50.6, "add_benchmark_s": 49.6, "cold_run_s": 724.2, "embed_floor_s": 659.8, "embed_floor_texts": 30768,
        "cold_over_floor": 1.1, "label_cold_s": 527.4, "peak_rss_mb_cold": 2311, "peak_rss_mb_warm": 825,
        "runs": {"warm_run_s": [50.6, 50.5, 52.5]}, "measured": {"cold": {"commit": "abc", "date": "d"}},
    }
    return {**bench, **changes}


def test_speed_goals_are_judged_from_the_figures_not_typed():
    table = readme.speed_table(_bench(warm_run_s=29.5, runs={"warm_run_s": [29.5, 30.2, 28.0]}, cold_run_s=390.0))
    assert "**29.5 s** (29.5, 30.2, 28.0) | ≤ 30 s: met" in table and "≤ 400 s: met" in table
    assert "≤ 30 s: not met" in readme.speed_table(_bench(warm_run_s=30.5))
    assert "≤ 45 s: not met" in readme.speed_table(_bench(add_benchmark_s=45.1))
    assert "≤ 400 s: not met" in readme.speed_table(_bench(cold_run_s=401.0))
    assert "≤ 3,072 MB: not met" in readme.speed_table(_bench(peak_rss_mb_cold=3100))
    # The suite's figures, in minutes, judged against 15 and 4 minutes; absent, no row.
    assert "≤ 15 min" not in table
    suite = {"suite": {"commit": "abc", "date": "d"}, "suite_ci_s": 901.0, "suite_not_e2e_s": 200.0}
    with_suite = readme.speed_table(_bench(**suite))
    assert "**15.0 min** | ≤ 15 min: not met" in with_suite and "3.3 min | ≤ 4 min: met" in with_suite
    assert "tests at abc (d)" in with_suite
    # Each phase names the machine it ran on, when the results file says (they differ between sessions).
    on_machine = readme.speed_table(_bench(**{**suite, "suite": {"commit": "abc", "date": "d", "machine": {"cpu": "Some CPU"}}}))
    assert "tests at abc (d, Some CPU)" in on_machine
    # The torch floor is compared with the ONNX floor only when both ran on one machine.
    amd, intel = {"cpu": "AMD"}, {"cpu": "Intel"}
    torch = {"embed_floor_torch_s": 1320.0, "embed_floor_torch_measured": {"commit": "t", "date": "d", "machine": amd}}
    same = readme.speed_table(_bench(**torch, measured={"cold": {"commit": "abc", "date": "d", "machine": amd}}))
    assert "ONNX 2.00× faster" in same
    other = readme.speed_table(_bench(**torch, measured={"cold": {"commit": "abc", "date": "d", "machine": intel}}))
    assert "× faster" not in other and "1320 s on AMD at t | not comparable" in other


def test_the_warm_comparison_is_written_from_its_file():
    comparison = {"this": "abc1234", "other": "d1029a6", "date": "2026-12-02 03:22",
                  "runs": {"this": [58.1, 56.4, 47.9], "d1029a6": [47.2, 46.1, 45.2]}, "median_s": {"this": 56.4, "d1029a6": 46.1}}
    text = readme.warm_comparison_text(comparison)
    assert text == ("Warm runs alternated on 2026-12-02 03:22, medians of 3: abc1234 56.4 s (58.1, 56.4, 47.9) "
                    "against d1029a6 46.1 s (47.2, 46.1, 45.2).\n")
    # Since stop 53 the comparison also names the steps whose medians differ most.
    steps = [{"step": "judge_ratios", "this": 1.25, "d1029a6": 0.0, "difference_s": 1.25}, {"step": "dbt_models", "this": 9.0, "d1029a6": 9.5, "difference_s": -0.5}]
    with_steps = readme.warm_comparison_text({**comparison, "largest_step_differences": steps})
    assert with_steps.startswith(text) and with_steps.endswith(
        "| step | abc1234 | d1029a6 | difference |\n| --- | --- | --- | --- |\n"
        "| judge_ratios | 1.25 s | 0.00 s | +1.25 s |\n| dbt_models | 9.00 s | 9.50 s | -0.50 s |\n"
    )


def test_the_postgres_overhead_is_written_from_its_file():
    overhead = {"commit": "abc1234", "date": "2026-12-03 21:00", "machine": {"cpu": "Xeon", "cores": 2},
                "runs": {"sqlite": [40.0, 42.0, 41.0], "postgres": [45.0, 44.0, 46.5]},
                "median_s": {"sqlite": 41.0, "postgres": 45.0}, "postgres_over_sqlite": 1.098}
    assert readme.postgres_overhead_text(overhead) == (
        "Warm runs at abc1234 on 2026-12-03 21:00 (Xeon, 2 cores), alternated, medians of 3: PostgreSQL 45.0 s "
        "(45.0, 44.0, 46.5) against SQLite 41.0 s (40.0, 42.0, 41.0), ×1.10 (+10%).\n"
    )
    assert "(−5%)" in readme.postgres_overhead_text({**overhead, "postgres_over_sqlite": 0.95})


def test_the_backends_compared_are_judged_against_the_gate_from_the_figures():
    judge = {"prompts": 7702, "task_top1": 0.99, "occupation_top1": 0.96, "family_top1": 0.98, "same_task_set": 0.9}
    agreement = {"judges": {"embedded:m:v3": judge, "embedded:m:v4": {**judge, "occupation_top1": 0.94}},
                 "gate": {"family_top1": 0.97, "occupation_top1": 0.95}, "gate_met": False, "commit": "abc", "date": "d"}
    table = readme.speed_table(_bench(embed_floor_torch_s=1319.6, backend_agreement=agreement))
    assert "… the same texts with the torch backend (one run) | 1320 s | ONNX 2.00× faster" in table
    assert "judges `v3` / `v4`: same top-1 family; occupation; task | 98.0% / 98.0%; 96.0% / 94.0%; 99.0% / 99.0%" in table
    assert "family ≥ 97.0%, occupation ≥ 95.0%: not met" in table and "backends compared at abc (d)" in table
    assert "torch backend" not in readme.speed_table(_bench())


def test_the_int8_probe_is_judged_against_the_gate_from_its_figures():
    probe = {"commit": "abc", "date": "d", "machine": {"cpu": "Intel"}, "texts": {"task_statements": 18796, "prompts": 1052},
             "speedup": 1.75, "gate": {"family_top1": 0.97, "occupation_top1": 0.95},
             "prompts_agreeing": {"task": 0.74, "occupation": 0.75, "family": 0.81, "vote_occupation": 0.70, "vote_family": 0.82}}
    table = readme.speed_table(_bench(quantized_probe=probe))
    assert "| 74.0%; 70.0% and 82.0%, 1.75× faster | far below the gate: fp32 stays the default |" in table
    assert "int8 probe at abc (d, Intel)" in table
    close = {**probe, "prompts_agreeing": {**probe["prompts_agreeing"], "vote_occupation": 0.96, "vote_family": 0.98}}
    assert "near the gate: worth a full labeled run" in readme.speed_table(_bench(quantized_probe=close))


def test_the_judge_variants_are_written_from_their_file():
    figures = {f"{half}:{key}": 0.5 for half in ("tune", "holdout") for key, _ in readme.JUDGE_VARIANT_FIGURES}
    recall = {half: {"task": 0.3, "occupation": 0.6} for half in ("tune", "holdout", "all")}
    variant = {"figures": {**figures, "labels_per_labeled_prompt": 2.5}, "candidate_recall": recall}
    variants = {
        "commit": "abc", "date": "d", "prompts": 3650, "benchmarks": ["a", "b"],
        "variants": {
            "v4": variant,
            "v5": {**variant, "candidate_recall": {**recall, "holdout": {"task": 0.35, "occupation": 0.7}},
                   "change_against_v4": {"holdout:reference_task_precision": [-0.01, -0.03, 0.01]}},
        },
        "stability_v4": {"share_changed_all": 0.005, "prompts_compared": 7042, "per_benchmark": {"a": 0.0, "b": 0.026}},
        "stability_v5": {"share_changed_all": 0.012, "prompts_compared": 7042, "per_benchmark": {"a": 0.031, "b": 0.002}},
    }
    text = readme.judge_variants_text(variants)
    holdout = text[text.index("`holdout` halves"):]
    assert "| reference task precision | 0.500 | 0.500 (-0.010; -0.030 to +0.010) |" in holdout
    assert "| reference candidate recall, occupation | 0.600 | 0.700 |" in holdout
    assert "| TheAgentCompany family top-1 | 0.500 | 0.500 |" in text
    assert "- `v4`: 0.5% of the 7,042 prompts labeled before change (most in b: 2.6%)" in text
    assert "- `v5`: 1.2% of the 7,042 prompts labeled before change (most in a: 3.1%)" in text


def test_a_not_e2e_figure_older_than_the_suite_run_names_its_own_commit():
    suite = {"suite": {"commit": "new", "date": "d2"}, "suite_ci_s": 901.0, "suite_not_e2e_s": 200.0}
    older = readme.speed_table(_bench(**suite, suite_not_e2e_measured={"commit": "old", "date": "d1"}))
    assert '(`-m "not e2e"`, one run at old (d1)) | 3.3 min' in older
    same = readme.speed_table(_bench(**suite, suite_not_e2e_measured={"commit": "new", "date": "d2"}))
    assert '(`-m "not e2e"`, one run) | 3.3 min' in same


def test_every_cross_reference_points_the_way_it_says():
    """A link to a section of the same page points to one before it, or its line says "below"; a
    "(validation above)" names a section that is above. The README once said "(validation above)"
    of a section below, and linked the later Speed section without a word."""
    text = "# A\n## Validation\nsee [A](#a) (validation above).\n"
    assert readme.cross_reference_problems(text) == []
    bad = "# A\nsee [later](#speed-x) and (validation above), (table rows above).\n## Validation\n## Speed (x)\n"
    problems = readme.cross_reference_problems(bad)
    assert len(problems) == 2 and "#speed-x" in problems[0] and "validation above" in problems[1]
    assert readme.cross_reference_problems("# A\nthe times are below, in [Speed](#speed-x).\n## Speed (x)\n") == []
    assert readme.cross_reference_problems("see [gone](#nowhere)\n") == ["link to #nowhere: no such section"]
    for page in readme.documents(REPO_ROOT):
        assert readme.cross_reference_problems(page.read_text(encoding="utf-8")) == [], page.name


def test_labels_per_prompt_name_their_denominator():
    """The headline table gives labels per labeled prompt (the judges' bar of 3 counts these) and per
    prompt of all prompts, each named; it once gave one figure, "(per prompt)", over all prompts."""
    import pandas as pd

    class Run:
        headline = {"n_tasks": 10, "n_occupations": 2, "n_families": 1, "n_benchmarks": 1, "n_prompts": 10, "n_duplicate_prompt_texts": 0,
                    "n_prompts_labeled": 5, "n_prompts_abstained": 1, "n_prompts_unlabeled_language": 4, "n_labels": 12, "labels_per_prompt": 1.2,
                    "labels_per_labeled_prompt": 2.4, "coverage_threshold": 5, "n_tasks_covered": 1, "n_occupations_with_covered_task": 1,
                    "n_families_without_covered_occupation": 0, "work_time_share_uncovered": 0.9, "total_employment": 100, "labeler": "x"}
        sensitivity = pd.DataFrame({"variant": ["threshold"], "threshold": [5], "work_time_share_uncovered": [0.9]})

    table = readme.headline_table(Run())
    assert "| labels (per labeled prompt; per prompt, all prompts) | 12 (2.40; 1.20) |" in table
    assert "(per prompt) |" not in table


def _growth_run(seconds: float, **phases) -> dict:
    phases = {"dbt": 0.0, "analysis": 0.0, "report": 0.0, "catalogs": 0.0, "other_steps": 0.0, **phases}
    steps = {"dbt_models": phases["dbt"], "label_uncertainty": phases["analysis"], "report__table_exports": phases["report"]}
    return {"seconds": seconds, "peak_rss_mb": 900, "load_average": [2.5, 2.0, 1.5], "phases": phases, "steps": steps}


def _growth(prompts: int, add: float, full: float = 100.0, peak: int = 900) -> dict:
    runs = {"full": [_growth_run(full, dbt=60.0)], "add_one": [_growth_run(add, dbt=10.0, analysis=5.0, report=3.0)] * 3,
            "change_one": [_growth_run(add)] * 3, "remove_one": [_growth_run(add)] * 3}
    return {"prompts": prompts, "benchmarks": prompts // 1000, "full_s": full, "add_one_s": add, "change_one_s": add, "remove_one_s": add,
            "peak_rss_mb": peak, "warehouse_mb": 50, "corpus_written_s": 3.0, "runs": runs,
            "phases": {name: values[0]["phases"] for name, values in runs.items()}}


def test_the_warehouse_growth_is_judged_against_its_bars_from_the_figures():
    stamp = {"warehouse_growth": {"commit": "abc", "date": "d", "machine": {"cpu": "cpu", "cores": 2}}}
    met = readme.warehouse_growth_text(_bench(warehouse_growth=[_growth(100_000, 30.0), _growth(1_000_000, 50.0)], measured=stamp))
    assert "| 1,000,000 | 1,000 | 100 s | 50 s (50, 50, 50) |" in met and "load average 2.5 to 2.5" in met
    assert "add one benchmark ≤ 60 s: met (50 s)" in met and "grows ×1.67 from 100,000 to 1,000,000 prompts (< 3: met)" in met
    # Time outside the steps is the run's wall time less its steps' (50 - 18), never a step's own.
    assert ("adding one (50 s): dbt 10 s, analysis 5 s, report 3 s, catalogs and judge validation 0 s, the other steps 0 s, and outside "
            "the steps (process start-up, definitions, Dagster's events) 32 s; its slowest steps `dbt_models` 10 s, `label_uncertainty` 5 s") in met
    missed = readme.warehouse_growth_text(_bench(warehouse_growth=[_growth(100_000, 30.0), _growth(1_000_000, 95.0, full=1000.0, peak=5000)], measured=stamp))
    assert "add one benchmark ≤ 60 s: not met (95 s)" in missed and "full rebuild ≤ 15 min: not met (16.7 min)" in missed
    assert "peak RSS ≤ 4,096 MB: not met (5,000 MB)" in missed and "(< 3: not met)" in missed
    row = readme.speed_table(_bench(warehouse_growth=[_growth(1_000_000, 95.0)], measured=stamp))
    assert "at 1,000,000 synthetic prompts" in row and "not met" in row.split("synthetic prompts")[1].splitlines()[0]
