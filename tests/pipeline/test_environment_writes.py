"""The package reads the environment and never writes it: a subprocess gets what it needs in `env`, a Dagster instance is opened from its folder, a model folder is loaded with
`local_files_only`, dbt gets a profiles folder written for its warehouse (transform/project.py
`profiles_dir_for`).

And it reads the environment in a few named places only: the project's own variables (`WORKBANK_*`)
through the settings classes, so each is a typed, described, launchpad-visible setting."""

from __future__ import annotations

import ast
from collections.abc import Container, Iterator

from workbank_dagster.settings import REPO_ROOT

PACKAGE = REPO_ROOT / "workbank_dagster"
ALLOWED: set[tuple[str, str]] = set()
# Where the package may read os.environ / os.getenv, and why.
READERS = {
    ("settings.py", "from_env"): "the settings resources: every WORKBANK_* pipeline setting",
    ("labeling/chat_model.py", "from_env"): "ChatModelResource: the WORKBANK_LLM_* settings and the API key",
    ("transform/project.py", "ensure_manifest"): "a copy of the environment for dbt's parse subprocess",
    ("dagster_instance.py", "dagster_home"): "DAGSTER_HOME, Dagster's own variable",
    ("dagster_instance.py", "yaml_value"): "a dagster.yaml value given as {env: NAME}, read as Dagster reads it",
    ("labeling/embedder.py", "_load"): "HF_HUB_OFFLINE, Hugging Face's own variable",
    ("team_instance.py", "postgres_bin"): "a copy of the environment for apt-get",
    ("team_instance.py", "_run"): "PATH, for PostgreSQL's programs run as their own user",
    ("team_instance.py", "ui"): "a copy of the environment for dagster dev, with DAGSTER_HOME set",
}
WRITING_METHODS = {"setdefault", "update", "pop", "popitem", "clear", "__setitem__", "__delitem__"}


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name) and node.value.id == "os"


def nodes_in_functions(source: str) -> Iterator[tuple[ast.AST, str]]:
    """Every node of `source`, in order, with the function it is in ('<module>' outside any)."""

    def visit(node: ast.AST, function: str) -> Iterator[tuple[ast.AST, str]]:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        yield node, function
        for child in ast.iter_child_nodes(node):
            yield from visit(child, function)

    yield from visit(ast.parse(source), "<module>")


def _writes(node: ast.AST) -> bool:
    if isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
        targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
        return any(isinstance(t, ast.Subscript) and _is_environ(t.value) for t in targets)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        func = node.func
        return (_is_environ(func.value) and func.attr in WRITING_METHODS) or (
            isinstance(func.value, ast.Name) and func.value.id == "os" and func.attr in ("putenv", "unsetenv")
        )
    return False


def _reads(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" and node.attr in ("environ", "getenv")


def environment_writes(source: str) -> list[tuple[str, int]]:
    """(enclosing function, line) of every write of os.environ (or call of os.putenv/unsetenv) in `source`."""
    return [(function, node.lineno) for node, function in nodes_in_functions(source) if _writes(node)]


def environment_reads(source: str) -> list[tuple[str, int]]:
    """(enclosing function, line) of every use of os.environ or os.getenv in `source`."""
    return [(function, node.lineno) for node, function in nodes_in_functions(source) if _reads(node)]


def outside(detector, allowed: Container[tuple[str, str]]) -> list[str]:
    """`file:line (function)` of every place in the package `detector` finds that `allowed` does not name."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        found += [f"{relative}:{line} ({function})" for function, line in detector(path.read_text(encoding="utf-8")) if (relative, function) not in allowed]
    return found


def test_the_detector_finds_each_kind_of_write():
    source = (
        "import os\n"
        "os.environ['A'] = '1'\n"
        "def f():\n    os.environ.setdefault('B', '1')\n"
        "def g():\n    del os.environ['C']\n    os.putenv('D', '1')\n"
        "def h():\n    return os.environ.get('E'), {**os.environ}\n"
    )
    assert environment_writes(source) == [("<module>", 2), ("f", 4), ("g", 6), ("g", 7)]


def test_nothing_in_the_package_writes_the_environment():
    assert outside(environment_writes, ALLOWED) == []


def test_the_environment_is_read_only_where_readers_says():
    """fetch.py read WORKBANK_UPSTREAM_BASE itself, outside the settings: no type check, no launchpad
    field, no line in the settings table. It is now the setting `upstream_base`."""
    assert environment_reads("import os\ndef f():\n    return os.getenv('A'), os.environ['B']\n") == [("f", 3), ("f", 3)]
    assert outside(environment_reads, READERS) == []
