"""Intervals are named for what they are: "CI" or "confidence" only beside a Wilson or a
cluster-robust Wald interval that names its method; the bootstrap interval of the uncovered
work-time share (67% coverage) is a spread, on the page, in headline.json and in the README.
(tests/e2e/test_e2e.py scans the page and headline.json of the session's full run.)"""

from __future__ import annotations

import json

from interval_names import page_text, unqualified_ci_keys, unqualified_claims

from workbank_dagster.report import intervals, page
from workbank_dagster.settings import REPO_ROOT


def _headline() -> dict:
    h = {"work_time_share_uncovered": 0.914, "exposure_coverage_ratio": 2.65, "importance_top_bottom_ratio": 1.72,
         "n_occupations": 923, "n_families": 22, "n_tasks": 18000, "coverage_threshold": 5}
    h |= intervals.headline_fields("work_time_share_uncovered", 0.912, 0.929)
    h |= intervals.headline_fields("exposure_coverage_ratio", 1.9, 3.4)
    h |= intervals.headline_fields("importance_top_bottom_ratio", 1.2, 2.5)
    return h | {"intervals": intervals.headline_methods()}


def test_the_scanner_finds_a_ci_without_a_method_that_earns_it():
    assert unqualified_claims("91.4%\n95% CI 91.2%–92.9%\n") == ["95% CI 91.2%–92.9%"]  # the old headline card
    assert unqualified_claims("an interval 91.2%–92.9%, a 95% confidence interval") != []
    assert unqualified_claims("95% CI 1.90–3.40, cluster-robust Wald, delta method") == []
    assert unqualified_claims("0.80 (95% CI 0.72–0.86, Wilson)") == []
    assert unqualified_claims("resampling spread 91.2%–92.9% (basic bootstrap; not a confidence interval)") == []
    assert unqualified_claims("reports the basic interval 91.2%–92.9% as a spread, **not** as a confidence interval") == []
    assert unqualified_claims("| 91.4% (spread 91.2%–92.9%) | 95% CI 1.9–3.4, cluster-robust Wald |") == []  # cells apart


def test_headline_cards_name_each_interval_for_what_it_is():
    text = page_text(page.headline_cards(_headline()))
    assert "resampling spread 91.2%–92.9%" in text and "not a confidence interval" in text
    assert "95% CI 1.90×–3.40×, cluster-robust Wald" in text
    assert unqualified_claims(text) == []


def test_headline_fields_say_ci_only_for_wilson_and_wald_intervals():
    h = _headline()
    assert {"work_time_share_uncovered_spread_low", "work_time_share_uncovered_spread_high"} <= set(h)
    assert "work_time_share_uncovered_ci_low" not in h
    for prefix in intervals.HEADLINE_INTERVALS:
        h |= intervals.headline_fields(prefix, 0.1, 0.2)
    assert unqualified_ci_keys(h, h["intervals"]) == []
    assert unqualified_ci_keys({"work_time_share_uncovered_ci_low": 0.912}, h["intervals"]) == ["work_time_share_uncovered_ci_low"]


def test_the_bootstrap_is_a_spread_because_its_measured_coverage_says_so():
    coverage = json.loads((REPO_ROOT / "bench" / "interval_coverage.json").read_text())
    measured = coverage["coverage"][coverage["reported"]]
    assert intervals.bootstrap_kind(measured) == intervals.HEADLINE_INTERVALS["work_time_share_uncovered"]
    assert intervals.bootstrap_kind(0.6725).kind == "spread" and intervals.bootstrap_kind(0.95).kind == "ci"
    assert intervals.bootstrap_kind(0.91).kind == "spread" and intervals.bootstrap_kind(0.99).kind == "spread"


def test_the_readme_and_docs_call_no_interval_a_ci_that_is_not_one(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO_ROOT / "tools"))
    from readme import documents

    pages = documents(REPO_ROOT)
    assert REPO_ROOT / "docs" / "analysis.md" in pages  # where the interval is explained
    assert {page.name: unqualified_claims(page.read_text(encoding="utf-8")) for page in pages} == {page.name: [] for page in pages}
