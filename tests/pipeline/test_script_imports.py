"""The Python that bench and test scripts run as text (a subprocess's `-c`, a template formatted
before it runs) imports names that exist: ruff reads no string, so a name moved to another module
(runner.dagster_home went to dagster_instance.py) broke bench/run.py's sensor tick unseen."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re

import pytest

from workbank_dagster.settings import REPO_ROOT

IMPORT = re.compile(r"^\s*from (workbank_dagster[\w.]*) import ([\w, ]+?)(?:\s*#.*)?$", re.MULTILINE)


def script_imports() -> list[tuple[str, str, str]]:
    """(file, module, name) of every `from workbank_dagster... import name` inside a string of a
    bench, tools or tests file; a templated name (`{getter}`) is left out."""
    found = []
    files = [*REPO_ROOT.glob("bench/*.py"), *REPO_ROOT.glob("tools/*.py"), *REPO_ROOT.glob("tests/**/*.py")]
    for path in sorted(files):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "from workbank_dagster" in node.value:
                for module, names in IMPORT.findall(node.value):
                    for name in (part.strip().split(" as ")[0] for part in names.split(",")):
                        if name:
                            found.append((str(path.relative_to(REPO_ROOT)), module, name))
    return found


def test_scripts_are_found():
    files = {file for file, _, _ in script_imports()}
    assert {"bench/run.py", "tests/transform/test_incremental.py"} <= files, sorted(files)


@pytest.mark.parametrize(("file", "module", "name"), script_imports())
def test_a_script_imports_names_that_exist(file, module, name):
    """A name of the module, or a submodule of the package (`from workbank_dagster.sources import onet`)."""
    found = hasattr(importlib.import_module(module), name) or importlib.util.find_spec(f"{module}.{name}") is not None
    assert found, f"{file}: `from {module} import {name}`: no such name"
