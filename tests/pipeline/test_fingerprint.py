"""One fingerprint for every 'skip if unchanged' cache: its step's code, every project module that
code imports, and its declared inputs. Editing any of them must rebuild."""

from __future__ import annotations

import pandas as pd
import pytest

from workbank_dagster import fingerprint as fp
from workbank_dagster.fingerprint import PACKAGE_DIR, code_sha256, fingerprint, project_modules

# The cached steps and the module that defines each one.
CACHED_STEPS = {
    "analysis steps (inputs_sha256 in their materializations)": "workbank_dagster.analysis.assets",
    "source loads (source_loads per partition in their materializations)": "workbank_dagster.sources.load_memo",
    "occupation prior (inputs_sha256 in its materializations)": "workbank_dagster.labeling.prior",
    "embedded labels (inputs_sha256 per benchmark in their materializations)": "workbank_dagster.labeling.assets",
    "dbt docs for the data dictionary, and the report page (inputs_sha256 in their materializations)": "workbank_dagster.report.assets",
}


def _names(module: str) -> set[str]:
    return {str(p.relative_to(PACKAGE_DIR)) for p in project_modules(module)}


def test_the_dictionary_covers_the_column_descriptions_it_prints():
    """The old dictionary fingerprint hashed exports.py and the manifest only: an edited
    analysis/columns.py never reached DATA_DICTIONARY.md."""
    assert "analysis/columns.py" in _names("workbank_dagster.report.assets")


def test_each_step_covers_what_it_imports():
    assert {"labeling/titles.py", "labeling/prior.py", "labeling/retrieval.py", "settings.py", "warehouse.py"} <= _names("workbank_dagster.labeling.assets")
    loaders = set().union(*(_names(m) for m in ("workbank_dagster.sources.assets", "workbank_dagster.sources.benchmark_assets", "workbank_dagster.sources.load_memo")))
    assert {"sources/onet.py", "sources/validate.py", "sources/benchmarks.py", "warehouse.py", "fingerprint.py"} <= loaders
    assert {"report/page.py", "report/figures.py", "report/static_figures.py", "report/tables.py"} <= _names("workbank_dagster.report.assets")
    assert {"analysis/regressions.py", "analysis/coverage.py", "analysis/scores.py", "analysis/zones.py"} <= _names("workbank_dagster.analysis.assets")


@pytest.mark.parametrize("step", sorted(CACHED_STEPS))
def test_editing_any_module_of_a_cached_step_changes_its_key(step, monkeypatch):
    module = CACHED_STEPS[step]
    files = project_modules(module)
    before = code_sha256(module)
    original = type(files[0]).read_bytes
    for target in files:
        monkeypatch.setattr(type(target), "read_bytes", lambda self, target=target: original(self) + (b"# edited\n" if self == target else b""))
        assert code_sha256(module) != before, f"{step}: editing {target.relative_to(PACKAGE_DIR)} would not rebuild it"
        monkeypatch.setattr(type(target), "read_bytes", original)
    assert code_sha256(module) == before


def test_inputs_change_the_key_and_equal_inputs_do_not(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text("{}")
    key = fingerprint(modules=["workbank_dagster.report.exports"], inputs=[path, pd.DataFrame({"a": [1]}), {"threshold": 5}])
    assert key == fingerprint(modules=["workbank_dagster.report.exports"], inputs=[path, pd.DataFrame({"a": [1]}), {"threshold": 5}])
    path.write_text('{"x": 1}')
    assert key != fingerprint(modules=["workbank_dagster.report.exports"], inputs=[path, pd.DataFrame({"a": [1]}), {"threshold": 5}])


def test_relative_and_absolute_imports_are_followed(tmp_path):
    assert fp.module_path("workbank_dagster.labeling") == PACKAGE_DIR / "labeling" / "__init__.py"
    assert fp.module_path("pandas") is None
    assert {"warehouse.py"} <= _names("workbank_dagster.sources.catalog")  # `from .. import warehouse`
