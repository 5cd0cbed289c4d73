"""The dbt models' Dagster code versions (transform/translator.py, `model_code_version`): each covers
its SQL, the macros it calls and the vars it reads, so Dagster calls a model stale when a setting
dbt reads moves, or a macro it calls is edited, and no other model."""

from __future__ import annotations

import copy
import json

import dagster as dg

from workbank_dagster.settings import PipelineSettings, settings_at_load
from workbank_dagster.transform.project import dbt_project
from workbank_dagster.transform.translator import default_dbt_vars, model_code_version, translator


def _manifest() -> dict:
    return json.loads(dbt_project.manifest_path.read_text())


def _models(manifest: dict) -> dict[str, dict]:
    return {node["name"]: node for node in manifest["nodes"].values() if node["resource_type"] == "model"}


def _versions(manifest: dict, **settings) -> dict[str, str]:
    dbt_vars = PipelineSettings.of(**settings).resolve().dbt_vars
    return {name: model_code_version(manifest, node, dbt_vars, default_dbt_vars()) for name, node in _models(manifest).items()}


def _moved(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {name for name in before if before[name] != after[name]}


def test_the_definitions_give_each_model_its_derived_version():
    """dagster-dbt's own version is the SQL file's checksum alone (the old code's)."""
    from workbank_dagster.definitions import defs

    manifest = _manifest()
    graph = defs.resolve_asset_graph()
    dbt_vars = settings_at_load().resolve().dbt_vars
    for node in _models(manifest).values():
        declared = graph.get(translator.get_asset_key(node)).code_version
        assert declared == model_code_version(manifest, node, dbt_vars, default_dbt_vars()), node["name"]
        assert declared != node["checksum"]["checksum"]


def test_a_var_moves_the_models_that_read_it_and_no_other():
    manifest = _manifest()
    default = _versions(manifest)
    assert _moved(default, _versions(manifest, coverage_threshold=3)) == {"fct_task_coverage", "fct_work_time_coverage"}
    assert _moved(default, _versions(manifest, hours_per_year=2000)) == {"int_occupation_employment", "fct_task_hours"}
    assert _moved(default, _versions(manifest, exposure_rater="gpt4")) == {"int_task_exposure"}
    # A setting no model reads (the analysis' clustering) moves none; nor do paths.
    assert _moved(default, _versions(manifest, cluster_level="minor", data_dir="/elsewhere")) == set()


def test_an_edited_macro_moves_the_models_that_call_it_directly_or_through_another():
    manifest = _manifest()
    models = _models(manifest)
    callers = {name for name, node in models.items() if "macro.workbank.benchmark_files" in node["depends_on"]["macros"]}
    through = {
        name for name, node in models.items()
        if any("macro.workbank.benchmark_files" in manifest["macros"][m]["depends_on"]["macros"] for m in node["depends_on"]["macros"] if m in manifest["macros"])
    }
    assert callers | through, "the project's incremental models read the partition files through benchmark_files"
    edited = copy.deepcopy(manifest)
    edited["macros"]["macro.workbank.benchmark_files"]["macro_sql"] += "\n-- edited"
    assert _moved(_versions(manifest), _versions(edited)) == callers | through


def test_the_version_is_stable_and_follows_the_sql():
    manifest = _manifest()
    assert _versions(manifest) == _versions(_manifest())
    edited = copy.deepcopy(manifest)
    node = next(n for n in edited["nodes"].values() if n["resource_type"] == "model" and n["name"] == "dim_task")
    node["checksum"]["checksum"] = "0" * 64
    assert _moved(_versions(manifest), _versions(edited)) == {"dim_task"}
    assert all(isinstance(v, str) and len(v) == 16 for v in _versions(manifest).values())
    assert dg.AssetKey(["marts", "dim_task"]) == translator.get_asset_key(_models(manifest)["dim_task"])


def test_the_version_follows_what_the_model_s_properties_build_not_its_documentation():
    """An edit of a model's .yml: a configuration or a declared column type (its enforced contract
    casts to it) moves that model alone; a description, an owner or a tag moves none."""
    manifest = _manifest()
    default = _versions(manifest)

    def edited(change) -> set[str]:
        changed = copy.deepcopy(manifest)
        change(next(n for n in changed["nodes"].values() if n["resource_type"] == "model" and n["name"] == "fct_task_coverage"))
        return _moved(default, _versions(changed))

    assert edited(lambda node: node["config"].update(materialized="view")) == {"fct_task_coverage"}
    assert edited(lambda node: node["columns"]["task_id"].update(data_type="bigint")) == {"fct_task_coverage"}
    assert edited(lambda node: node["columns"]["task_id"].update(description="reworded")) == set()
    assert edited(lambda node: node.update(description="reworded")) == set()
    assert edited(lambda node: node["config"]["meta"].update(owner="team:someone-else")) == set()


def test_another_dbt_core_moves_every_model():
    """The dbt-core that parsed the manifest compiles the SQL (`dbt_models`' key holds its version):
    an upgrade makes every model stale, as the step builds them all again."""
    manifest = _manifest()
    upgraded = copy.deepcopy(manifest)
    upgraded["metadata"]["dbt_version"] = "1.11.99"
    assert _moved(_versions(manifest), _versions(upgraded)) == set(_models(manifest))


def test_an_edited_test_moves_the_models_it_checks_and_no_other():
    """A model's tests are Dagster asset checks, which have no staleness; `dbt build` runs them with
    the model. An edited singular test, a generic test's argument or severity, or a unit test's
    expected rows moves the models the test depends on; its description moves none."""
    manifest = _manifest()
    default = _versions(manifest)
    models = {node["unique_id"]: node["name"] for node in _models(manifest).values()}

    def edited(unique_id: str, change) -> set[str]:
        changed = copy.deepcopy(manifest)
        change((changed.get("unit_tests") or {}).get(unique_id) or changed["nodes"][unique_id])
        return _moved(default, _versions(changed))

    def checked(test: dict) -> set[str]:
        return {models[node] for node in test["depends_on"]["nodes"] if node in models}

    singular = manifest["nodes"]["test.workbank.assert_time_shares_sum_to_one"]
    assert checked(singular) == {"dim_task"}
    assert edited(singular["unique_id"], lambda test: test.update(raw_code=test["raw_code"].replace("1e-9", "1e-6"))) == {"dim_task"}
    assert edited(singular["unique_id"], lambda test: test["config"].update(severity="warn")) == {"dim_task"}
    assert edited(singular["unique_id"], lambda test: test.update(description="reworded")) == set()
    # A relationships test checks two models: both move.
    relationships = next(node for node in manifest["nodes"].values() if (node.get("test_metadata") or {}).get("name") == "relationships")
    assert len(checked(relationships)) == 2
    assert edited(relationships["unique_id"], lambda test: test["config"].update(where="1 = 1")) == checked(relationships)
    unit = next(iter(manifest["unit_tests"].values()))
    assert edited(unit["unique_id"], lambda test: test["expect"]["rows"].pop()) == checked(unit) == {unit["model"]}
