"""Which method settings the definitions an asset reaches read (code_reach.py finds them).

An asset's code version (code_version.py) also covers the values of the settings the reached
definitions read, as the settings were when the definitions loaded (`settings_at_load`, the
`WORKBANK_*` environment), so that a changed setting makes stale exactly the assets whose
computation reads it (`settings_read` lists them, `code_version.reached` names them as
`setting:<field>`):

- a definition reads a setting when it names a setting (a field of `MethodSettings` or
  `EmbeddedJudgeSettings`) as an attribute, whatever holds it (`pipeline_settings.method.cluster_level`,
  `settings.coverage_threshold` after `resolve()`, `s.hours_per_day`): `Settings` (the resolved
  settings) has the resources' fields under the same names. A property or method of `Settings`
  that reads fields on its caller's behalf (`settings.dbt_vars`, `settings.describe()`: every field
  but the locations) reads what its body reads, when it is called on a settings value (a parameter
  annotated `Settings`, `PipelineSettings` or one of its three resources, `x.resolve()`,
  `settings_at_load()`, or a name bound to one of those); `describe` is also a judge's method
  name, and a judge's `describe()` reads no setting. The settings classes' own bodies (`resolve`
  copies every field) read nothing by being reached;
- only the method counts, not where files live: the path fields (`data_dir`, `duckdb_path`,
  `cache_dir`, ..., the ones `Settings` types as `Path`, as `Settings.describe` leaves them out)
  and the download hosts (`upstream_base`, `pypi_base`: every pinned file is checked against its
  SHA-256, whichever host served it) move no version, so a checkout in another folder, another
  data folder or a mirror leaves every asset fresh (the page's own key holds `describe()` with the
  hosts, so a changed host redraws the page while Dagster calls it fresh);
- a setting at its default adds nothing: the default is in its resource's text (`MethodSettings`,
  `EmbeddedJudgeSettings`), which every asset that takes `pipeline_settings` reaches, so at the
  defaults the versions are the code's alone (those of before settings counted), and
  `WORKBANK_CLUSTER_LEVEL=major` is the same version as leaving it unset. A value other than the
  default adds `field=value` to the digest.

What this cannot see: a value the launchpad gives one run (the definitions loaded with the
environment's). dbt's models read the settings through `var()`; their versions cover the values
of the vars they read, by the same rule (transform/translator.py, `model_code_version`).
"""

from __future__ import annotations

import ast
import functools
import typing
from collections.abc import Callable
from pathlib import Path

from .code_reach import PACKAGE, Definition, closure, parsed_module, resolve, root_of
from .settings import CONCERNS, FIELDS, Settings

SETTINGS_MODULE = f"{PACKAGE}.settings"
# The classes that hold the settings: their own methods read fields for their callers (`resolve`
# copies all of them), so reaching a class reads nothing; a call of an accessor does.
SETTINGS_CLASSES = tuple((SETTINGS_MODULE, name) for name in ("PipelineSettings", "Settings", *(concern.__name__ for concern in CONCERNS.values())))
# Where the pinned files are downloaded from: each is checked against its SHA-256, so the host is
# where files come from, not the method (beside the path fields, see the module docstring).
DOWNLOAD_HOSTS = frozenset({"upstream_base", "pypi_base"})


@functools.cache
def method_settings() -> frozenset[str]:
    """The settings that are the method (their values can change what an asset computes): every
    field but the paths (typed `Path` in `Settings`) and the download hosts."""
    paths = {name for name, kind in typing.get_type_hints(Settings).items() if kind in (Path, Path | None)}
    return frozenset(FIELDS) - paths - DOWNLOAD_HOSTS


def _is_settings_class(module: str, node: ast.AST | None) -> bool:
    """Whether an annotation names a settings class (bare, quoted or `Settings | None`)."""
    if node is None:
        return False
    for child in ast.walk(node):
        name = child.id if isinstance(child, ast.Name) else child.value if isinstance(child, ast.Constant) and isinstance(child.value, str) else None
        if name is not None and name.isidentifier() and resolve(module, name) in SETTINGS_CLASSES:
            return True
    return False


def _is_settings_value(module: str, node: ast.AST, names: set[str]) -> bool:
    """Whether an expression is a settings object: a name bound to one, `x.resolve()` of one,
    `PipelineSettings.from_env(...)` or `settings_at_load()`."""
    if isinstance(node, ast.Name):
        return node.id in names or resolve(module, node.id) in SETTINGS_CLASSES
    if isinstance(node, ast.Call):
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr in ("resolve", "from_env"):
            return _is_settings_value(module, function.value, names)
        if isinstance(function, ast.Name):
            return resolve(module, function.id) == (SETTINGS_MODULE, "settings_at_load")
    return False


def _settings_names(module: str, node: ast.AST) -> set[str]:
    """The local names of a definition that hold settings: parameters annotated with a settings
    class, and names assigned a settings value (`settings = pipeline_settings.resolve()`)."""
    names: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.arg) and _is_settings_class(module, child.annotation):
            names.add(child.arg)
    assignments = [child for child in ast.walk(node) if isinstance(child, ast.Assign | ast.AnnAssign) and child.value is not None]
    grown = True
    while grown:
        grown = False
        for assignment in assignments:
            targets = assignment.targets if isinstance(assignment, ast.Assign) else [assignment.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id not in names and _is_settings_value(module, assignment.value, names):
                    names.add(target.id)
                    grown = True
    return names


@functools.cache
def _accessors() -> dict[str, frozenset[str]]:
    """Each property and method of `Settings` that reads fields for its caller, and the method
    settings it reads: `self.<field>` in its body, every field for `asdict(self)`."""
    found = parsed_module(SETTINGS_MODULE)
    fields = method_settings()
    out: dict[str, frozenset[str]] = {}
    for statement in found.definitions["Settings"].body:
        if not isinstance(statement, ast.FunctionDef) or statement.name.startswith("__"):
            continue
        read: set[str] = set()
        for child in ast.walk(statement):
            if isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name) and child.value.id == "self":
                read.add(child.attr)
            elif isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id == "asdict":
                read.update(fields)
        if read & fields:
            out[statement.name] = frozenset(read & fields)
    return out


@functools.cache
def settings_read_by(definition: Definition) -> frozenset[str]:
    """The method settings one definition reads itself (see the module docstring)."""
    if definition in SETTINGS_CLASSES:
        return frozenset()
    module, name = definition
    node = parsed_module(module).definitions[name]
    fields, accessors = method_settings(), _accessors()
    names: set[str] | None = None
    read: set[str] = set()
    for child in ast.walk(node):
        if not isinstance(child, ast.Attribute):
            continue
        if child.attr in fields:
            read.add(child.attr)
        elif child.attr in accessors:
            names = _settings_names(module, node) if names is None else names
            if _is_settings_value(module, child.value, names):
                read.update(accessors[child.attr])
    return frozenset(read)


def settings_read(*targets: Callable | type | Definition) -> list[str]:
    """The method settings the targets' versions cover, sorted."""
    return sorted({field for definition in closure(root_of(t) for t in targets) for field in settings_read_by(definition)})


def clear_cache() -> None:
    """Forget what each definition reads (a test that edits a source file asks again)."""
    settings_read_by.cache_clear()
    _accessors.cache_clear()
