"""Code versions derived from what an asset's function reaches (workbank_dagster/code_version.py,
code_reach.py and settings_reads.py), and the fingerprints of the cached steps built on them
(workbank_dagster/fingerprint.py).

Edits are made in a copy of the package's source (conftest.package_copy), never in the checkout."""

from __future__ import annotations

import json

import dagster as dg
import pandas as pd
from code_versions import asset_code_versions

from workbank_dagster import code_reach, settings_reads
from workbank_dagster import code_version as cv
from workbank_dagster.fingerprint import fingerprint
from workbank_dagster.report.headline import code_stamp
from workbank_dagster.transform.project import project_digest

LABELING = "workbank_dagster.labeling.judge_assets"
EMBEDDED = (LABELING, "embedded_judge_labels")
LLM = (LABELING, "llm_judge_labels")
COVERAGE_SENSITIVITY = ("workbank_dagster.analysis.label_steps", "coverage_sensitivity_assets")
REGRESSION = ("workbank_dagster.analysis.assets", "coverage_regression")


def _definitions():
    from workbank_dagster.definitions import defs

    return defs


def test_every_python_asset_declares_the_version_of_its_function():
    defs = _definitions()
    derived = asset_code_versions(defs)
    assert len(derived) > 40
    graph = defs.resolve_asset_graph()
    # The headline's version covers the code stamp it writes (report/headline.code_stamp), which its specs show.
    stamps = {name: graph.get(dg.AssetKey.from_user_string(name)).metadata.get(cv.STAMP_METADATA) for name in derived}
    assert sorted(name for name, stamp in stamps.items() if stamp is not None) == ["analysis/coverage_history", "report/data_dictionary", "report/headline"]
    assert stamps["report/headline"].value == code_stamp()  # this checkout's: its commit, when it is a git checkout
    assert stamps["report/data_dictionary"].value == project_digest()  # every file of the dbt project, which dbt's docs show
    expected = {name: version if stamps[name] is None else cv.stamped_version(version, stamps[name].value) for name, version in derived.items()}
    assert {name: graph.get(dg.AssetKey.from_user_string(name)).code_version for name in derived} == expected


def test_a_comment_a_docstring_or_a_blank_line_moves_no_version(package_copy):
    before = {target: cv.code_version(target) for target in (EMBEDDED, LLM, COVERAGE_SENSITIVITY)}
    package_copy("settings.py", "import functools\n", "import functools\n\n# a comment\n")
    package_copy("labeling/judge_assets.py", '    """Judges v6 (the default) and v3', '\n    """Judges v6 (the default, reworded) and v3')
    package_copy("analysis/coverage.py", "def bootstrap_uncovered_share(", "# why it draws what it draws\ndef bootstrap_uncovered_share(")
    assert {target: cv.code_version(target) for target in before} == before


def test_an_edit_of_a_reached_function_moves_the_version_and_no_other(package_copy):
    before = {target: cv.code_version(target) for target in (EMBEDDED, LLM, COVERAGE_SENSITIVITY, REGRESSION)}
    assert "workbank_dagster.analysis.coverage:bootstrap_uncovered_share" in cv.reached(COVERAGE_SENSITIVITY)
    assert "workbank_dagster.analysis.coverage:bootstrap_uncovered_share" not in cv.reached(REGRESSION)
    package_copy("analysis/coverage.py", "def bootstrap_uncovered_share(", "def bootstrap_uncovered_share_unused():\n    return 1\n\n\ndef bootstrap_uncovered_share(")
    assert {target: cv.code_version(target) for target in before} == before  # a new function no one calls
    text = (code_reach.PACKAGE_DIR / "analysis" / "coverage.py").read_text()
    body_start = text.index("def bootstrap_uncovered_share(")
    signature_end = text.index(":\n", text.index(")", body_start)) + 2
    package_copy("analysis/coverage.py", text[body_start:signature_end], text[body_start:signature_end] + "    _edited = True\n")
    after = {target: cv.code_version(target) for target in before}
    assert after[COVERAGE_SENSITIVITY] != before[COVERAGE_SENSITIVITY]
    assert {t: after[t] for t in (EMBEDDED, LLM, REGRESSION)} == {t: before[t] for t in (EMBEDDED, LLM, REGRESSION)}


def test_the_llm_prompt_is_the_llm_judge_s_code_and_not_the_embedded_judge_s(package_copy):
    assert "workbank_dagster.labeling.llm_protocol:SYSTEM_PROMPT" in cv.reached(LLM)
    assert not [name for name in cv.reached(EMBEDDED) if name.startswith("workbank_dagster.labeling.llm_")]
    before = {target: cv.code_version(target) for target in (EMBEDDED, LLM)}
    package_copy("labeling/llm_protocol.py", "You map AI benchmark prompts", "You map AI benchmark prompts, carefully,")
    assert cv.code_version(EMBEDDED) == before[EMBEDDED] and cv.code_version(LLM) != before[LLM]


def test_a_constant_a_class_method_and_a_module_attribute_are_followed(package_copy):
    reached = set(cv.reached(COVERAGE_SENSITIVITY))
    # `from .coverage import bootstrap_uncovered_share` (a function), `coverage.prompts_per_task`
    # (a module's attribute, in near_duplicates.py), a class named by an annotation and its methods.
    assert {"workbank_dagster.analysis.coverage:prompts_per_task", "workbank_dagster.resources:WarehouseResource",
            "workbank_dagster.settings:PipelineSettings"} <= reached
    before = cv.code_version(COVERAGE_SENSITIVITY)
    package_copy("warehouse.py", "def connect(", "def connect_unused():\n    return 2\n\n\ndef connect(")
    assert cv.code_version(COVERAGE_SENSITIVITY) == before
    package_copy("settings.py", '("major", "minor")', '("major", "minor", "detailed")')
    assert cv.code_version(COVERAGE_SENSITIVITY) != before


def test_a_step_built_by_a_factory_is_versioned_with_the_factory():
    from workbank_dagster.sources import assets

    oews, occupations = (next(a for a in assets.raw_assets if a.key.path[-1] == table) for table in ("oews_national", "onet_occupations"))
    assert oews.code_versions_by_key[oews.key] == cv.code_version(("workbank_dagster.sources.assets", "_raw_asset"), ("workbank_dagster.sources.bls", "read_oews_national"))
    # Each source's own reader counts: BLS's parser is not O*NET's.
    assert oews.code_versions_by_key[oews.key] != occupations.code_versions_by_key[occupations.key]


def test_versions_are_read_once_per_process_and_quickly():
    import time

    cv.clear_cache()
    started = time.perf_counter()
    assert all(asset_code_versions(_definitions()).values())
    assert time.perf_counter() - started < 10  # about 1 s on this machine (bench/, not here, keeps speed)


def test_inputs_change_the_key_and_equal_inputs_do_not(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text("{}")
    key = fingerprint(code="v1", inputs=[path, pd.DataFrame({"a": [1]}), {"threshold": 5}])
    assert key == fingerprint(code="v1", inputs=[path, pd.DataFrame({"a": [1]}), {"threshold": 5}])
    assert key != fingerprint(code="v2", inputs=[path, pd.DataFrame({"a": [1]}), {"threshold": 5}])
    assert key != fingerprint(code="v1", inputs=[path, pd.DataFrame({"a": [2]}), {"threshold": 5}])
    path.write_text('{"x": 1}')
    assert key != fingerprint(code="v1", inputs=[path, pd.DataFrame({"a": [1]}), {"threshold": 5}])


def test_relative_and_absolute_imports_are_followed():
    assert code_reach.module_path("workbank_dagster.labeling") == code_reach.PACKAGE_DIR / "labeling" / "__init__.py"
    assert code_reach.module_path("pandas") is None
    # sources/catalog.py: `from .. import warehouse`, then `warehouse.table_exists(...)`
    assert any(name.startswith("workbank_dagster.warehouse:") for name in cv.reached(("workbank_dagster.sources.catalog", "benchmark_catalog")))


def test_a_setting_moves_the_versions_of_the_assets_that_read_it_and_no_other():
    from code_versions import asset_targets

    from workbank_dagster.settings import CONCERNS, FIELDS, PipelineSettings

    defs = _definitions()
    targets = asset_targets(defs)
    read = {name: set(settings_reads.settings_read(*t)) for name, t in targets.items()}
    defaults = asset_code_versions(defs, settings=PipelineSettings.of())
    assert defaults == asset_code_versions(defs)  # this process runs at the defaults (paths aside)
    # The clustering level of the standard errors: the regressions and what reports them, which
    # read it, and nothing that labels.
    minor = asset_code_versions(defs, settings=PipelineSettings.of(cluster_level="minor"))
    moved = {name for name in defaults if minor[name] != defaults[name]}
    assert moved == {name for name, fields in read.items() if "cluster_level" in fields}
    assert {"analysis/coverage_logit_ratio", "analysis/importance_logit", "analysis/ratios_by_threshold", "report/html_report"} <= moved
    assert {name.split("/")[0] for name in moved} == {"analysis", "report"}, sorted(moved)
    assert "report/data_dictionary" not in moved and "report/headline" not in moved
    assert "setting:cluster_level" in cv.reached(REGRESSION) and "setting:cluster_level" not in cv.reached(EMBEDDED)
    # A setting the judges read moves the labels and not the regressions.
    judge = asset_code_versions(defs, settings=PipelineSettings.of(candidates_nearest=11))
    moved = {name for name in defaults if judge[name] != defaults[name]}
    assert {"labeling/embedded_labels", "labeling/embedded_judgements", "report/html_report"} <= moved
    assert "analysis/coverage_logit_ratio" not in moved and "analysis/ratios_by_threshold" not in moved
    # A value equal to the default is the default: the version moves with what is computed.
    assert asset_code_versions(defs, settings=PipelineSettings.of(cluster_level="major")) == defaults
    # Every asset whose version covers a setting reaches the resource whose text holds that
    # setting's default (a setting at its default adds nothing to the version).
    holders = {name: f"workbank_dagster.settings:{CONCERNS[FIELDS[name]].__name__}" for name in FIELDS}
    assert all(holders[field] in cv.reached(*targets[name]) for name, fields in read.items() for field in fields)


def test_where_files_live_moves_no_version(tmp_path):
    from workbank_dagster.settings import PipelineSettings

    defs = _definitions()
    defaults = asset_code_versions(defs, settings=PipelineSettings.of())
    elsewhere = PipelineSettings.of(
        source_dir=str(tmp_path), benchmarks_dir=str(tmp_path), data_dir=str(tmp_path / "data"), duckdb_path=str(tmp_path / "w.duckdb"),
        partitions_dir=str(tmp_path / "p"), cache_dir=str(tmp_path / "c"), judgement_cache_path=str(tmp_path / "j.sqlite"),
        output_dir=str(tmp_path / "o"), download_dir=str(tmp_path / "d"), audits_dir=str(tmp_path / "a"),
        benchmark_instructions=str(tmp_path / "i.jsonl"), upstream_base="http://127.0.0.1:9", pypi_base="http://127.0.0.1:9",
    )
    assert asset_code_versions(defs, settings=elsewhere) == defaults
    assert not {"data_dir", "duckdb_path", "cache_dir", "output_dir", "upstream_base"} & set(settings_reads.method_settings())


def test_settings_are_read_through_dbt_vars_and_describe_but_not_a_judge_s_describe():
    data_dictionary_asset, html_report = (("workbank_dagster.report.assets", name) for name in ("data_dictionary_asset", "html_report"))
    # data_dictionary keys dbt's docs on `settings.dbt_vars`: the dbt variables, not the regressions'.
    dictionary = set(settings_reads.settings_read(data_dictionary_asset))
    assert {"coverage_threshold", "employment_split", "hours_per_year"} <= dictionary and "cluster_level" not in dictionary
    # The page shows `settings.describe()`: every setting that is the method.
    assert set(settings_reads.settings_read(html_report)) == settings_reads.method_settings()
    # The embedded judges call their own `describe()`: it reads the judges' settings, not the analysis'.
    embedded = set(settings_reads.settings_read(EMBEDDED))
    assert {"embedding_model", "candidates_nearest", "min_label_similarity"} <= embedded
    assert not {"cluster_level", "coverage_threshold", "exposure_rater"} & embedded


def test_versions_come_from_the_memo_of_this_text_of_the_package_and_equal_those_derived(tmp_path):
    """A process derives the versions once for a text of the package and keeps them in the cache
    folder (code_version_memo.py): read back, they are the derived ones; the memo is what answers
    (a version planted in it comes back); another text of the package names another memo file."""
    from workbank_dagster import code_version_memo as memo
    from workbank_dagster.settings import PipelineSettings

    settings = PipelineSettings.of(cache_dir=str(tmp_path / "cache"))
    cv.clear_cache()
    derived = {target: cv.code_version(target, settings=settings) for target in (EMBEDDED, COVERAGE_SENSITIVITY, REGRESSION)}
    memo.save_all()
    (written,) = (tmp_path / "cache" / "code_versions").glob("*.json")
    assert written.stem == memo.package_digest(code_reach.PACKAGE_DIR)[:24]
    cv.clear_cache()
    assert {target: cv.code_version(target, settings=settings) for target in derived} == derived

    entries = json.loads(written.read_text())
    key = json.dumps([list(REGRESSION)])
    assert entries[key]["fields"] and entries[key]["versions"] == {"[]": derived[REGRESSION]}
    entries[key]["versions"]["[]"] = "planted"
    written.write_text(json.dumps(entries))
    cv.clear_cache()
    assert cv.code_version(REGRESSION, settings=settings) == "planted"
    # A setting read at another value is another entry, derived (not the planted one).
    minor = PipelineSettings.of(cache_dir=str(tmp_path / "cache"), cluster_level="minor")
    assert cv.code_version(REGRESSION, settings=minor) not in ("planted", derived[REGRESSION])
    cv.clear_cache()


def test_an_edit_of_the_package_names_another_memo(package_copy, tmp_path):
    from workbank_dagster import code_version_memo as memo
    from workbank_dagster.settings import PipelineSettings

    settings = PipelineSettings.of(cache_dir=str(tmp_path / "cache"))
    before = cv.code_version(COVERAGE_SENSITIVITY, settings=settings)
    digest = memo.package_digest(code_reach.PACKAGE_DIR)
    package_copy("analysis/coverage.py", "def bootstrap_uncovered_share(", "def _unused():\n    return 1\n\n\ndef bootstrap_uncovered_share(")
    assert memo.package_digest(code_reach.PACKAGE_DIR) != digest
    assert cv.code_version(COVERAGE_SENSITIVITY, settings=settings) == before  # a function nothing reaches
    package_copy("analysis/coverage.py", "def bootstrap_uncovered_share(", "def bootstrap_uncovered_share_(")
    package_copy("analysis/label_steps.py", "bootstrap_uncovered_share(pairs", "bootstrap_uncovered_share_(pairs")
    assert cv.code_version(COVERAGE_SENSITIVITY, settings=settings) != before  # a renamed function it calls
