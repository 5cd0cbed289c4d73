"""Code versions of the assets, derived from the definitions each one reaches.

Dagster marks an asset stale when its `code_version` changes, so the version must change exactly
when the asset's computation does. Here it is derived, never typed by hand:

- an asset's version hashes its function and every project definition the function reaches: the
  functions it calls, the classes it names (all of a class's methods and its project bases, so a
  method called on an argument annotated with that class counts) and the constants it reads;
  followed transitively, through `from .x import y`, `import`ed modules and their attributes
  (`coverage.prompts_per_task`);
- a definition is read as Python's syntax tree of its source, without docstrings, so a comment, a
  docstring or a blank line moves nothing; a function's decorators are how it is wired into Dagster
  (its key, its description), not what it computes, and are left out;
- only this package is followed: the pinned libraries are the environment's, not the asset's code.

What is not reached does not count: editing a function no asset calls, a comment in settings.py,
or the LLM judge's prompt (which the embedded judge never reads) leaves every other asset's version
as it was. `reached` lists what an asset's version covers, for tests and for a reader who asks why
an asset went stale.

The version also covers the values of the settings the reached definitions read, as the settings
were when the definitions loaded (`settings_at_load`, the `WORKBANK_*` environment), so that a
changed setting makes stale exactly the assets whose computation reads it (`settings_read` lists
them, `reached` names them as `setting:<field>`):

- a definition reads a setting when it names a `PipelineSettings` field as an attribute, whatever
  holds it (`pipeline_settings.cluster_level`, `settings.coverage_threshold` after `resolve()`,
  `s.hours_per_day`): `Settings` (the resolved settings) has the resource's fields under the same
  names. A property or method of `Settings` that reads fields on its caller's behalf
  (`settings.dbt_vars`, `settings.describe()`: every field but the locations) reads what its body
  reads, when it is called on a settings value (a parameter annotated `Settings` or
  `PipelineSettings`, `x.resolve()`, `settings_at_load()`, or a name bound to one of those);
  `describe` is also a judge's method name, and a judge's `describe()` reads no setting. The two
  classes' own bodies (`resolve` copies every field) read nothing by being reached;
- only the method counts, not where files live: the path fields (`data_dir`, `duckdb_path`,
  `cache_dir`, ..., the ones `Settings` types as `Path`, as `Settings.describe` leaves them out)
  and the download hosts (`upstream_base`, `pypi_base`: every pinned file is checked against its
  SHA-256, whichever host served it) move no version, so a checkout in another folder, another
  data folder or a mirror leaves every asset fresh (the page's own key holds `describe()` with the
  hosts, so a changed host redraws the page while Dagster calls it fresh);
- a setting at its default adds nothing: the default is in `PipelineSettings`' text, which every
  asset that takes the resource reaches, so at the defaults the versions are the code's alone
  (those of before settings counted), and `WORKBANK_CLUSTER_LEVEL=major` is the same version as
  leaving it unset. A value other than the default adds `field=value` to the digest.

What this cannot see: a value the launchpad gives one run (the definitions loaded with the
environment's), and dbt's models, whose versions dagster-dbt derives from their SQL and which read
the settings through `var()`.

The derivation is static (source files, not live objects; only the settings' values are the
loaded ones), so a decorator can ask for the version of the function it is decorating before the
module has finished loading.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import json
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from .code_version_memo import forget as forget_memos
from .code_version_memo import memo_for
from .settings import PipelineSettings, Settings, settings_at_load

PACKAGE = "workbank_dagster"
PACKAGE_DIR = Path(__file__).resolve().parent

Definition = tuple[str, str]  # (module, top-level name)


def module_path(module: str) -> Path | None:
    """The file of a project module (`workbank_dagster.labeling.titles`), or None outside the project."""
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    parts = module.split(".")[1:]
    if not parts:
        return PACKAGE_DIR / "__init__.py"
    relative = Path(*parts)
    for candidate in (PACKAGE_DIR / relative.with_suffix(".py"), PACKAGE_DIR / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return body[1:] or [ast.Pass()]
    return body


@dataclass(frozen=True)
class _Module:
    """One project module as its syntax tree: its top-level definitions and its imports."""

    name: str
    definitions: dict[str, ast.AST]  # name -> the statement that binds it
    imports: dict[str, tuple[str, str | None]]  # local name -> (module, attribute or None for the module itself)


def _absolute(package: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


@functools.cache
def _module(name: str) -> _Module | None:
    path = module_path(name)
    if path is None:
        return None
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    definitions: dict[str, ast.AST] = {}
    imports: dict[str, tuple[str, str | None]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            definitions[statement.name] = statement
        elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        # A name bound twice (`X = ...; X = X | ...`) keeps every statement.
                        previous = definitions.get(node.id)
                        definitions[node.id] = statement if previous is None else ast.Module(body=[previous, statement], type_ignores=[])
        elif isinstance(statement, ast.ImportFrom):
            source = _absolute(package, statement)
            for alias in statement.names:
                imports[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                imports[alias.asname or alias.name.split(".")[0]] = (alias.name if alias.asname else alias.name.split(".")[0], None)
    return _Module(name, definitions, imports)


def _resolve(module: str, name: str, seen: frozenset = frozenset()) -> Definition | str | None:
    """What `name` means in `module`: a project definition (module, name), a project module (its
    name), or None (a builtin, a library, a local)."""
    found = _module(module)
    if found is None or (module, name) in seen:
        return None
    if name in found.definitions:
        return (module, name)
    if name not in found.imports:
        return None
    source, attribute = found.imports[name]
    if attribute is None:
        return source if module_path(source) is not None else None
    if module_path(f"{source}.{attribute}") is not None:
        return f"{source}.{attribute}"
    return _resolve(source, attribute, seen | {(module, name)})


def _attribute_chain(node: ast.Attribute) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None when the base is not a plain name."""
    parts = [node.attr]
    while isinstance(node.value, ast.Attribute):
        node = node.value
        parts.append(node.attr)
    if not isinstance(node.value, ast.Name):
        return None
    parts.append(node.value.id)
    return parts[::-1]


def _canonical(node: object, *, top: bool = False) -> str:
    """A definition's text as its syntax tree: no comments, no positions, no docstrings; a top-level
    function without its decorators."""
    if isinstance(node, list):
        return "[" + ",".join(_canonical(item) for item in node) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    fields = []
    for name, value in ast.iter_fields(node):
        if name == "type_comment" or (top and name == "decorator_list" and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)):
            continue
        if name == "body" and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            value = _without_docstring(value)
        fields.append(f"{name}={_canonical(value)}")
    return f"{type(node).__name__}({','.join(fields)})"


def _references(module: str, node: ast.AST) -> Iterator[Definition | str]:
    """The project definitions and modules that `node` (in `module`) names."""
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            target = _resolve(module, child.id)
            if target is not None:
                yield target
        elif isinstance(child, ast.Attribute):
            chain = _attribute_chain(child)
            if chain is None:
                continue
            target = _resolve(module, chain[0])
            for attribute in chain[1:]:
                if not isinstance(target, str):  # only a module's attributes are followed
                    break
                target = _resolve(target, attribute)
                if target is not None:
                    yield target
        elif isinstance(child, ast.Constant) and isinstance(child.value, str) and child.value.isidentifier():
            # A quoted annotation ("LabelingRuntime") names a class as surely as a bare one; any other
            # string that happens to be a project name only makes the version cover a little more.
            target = _resolve(module, child.value)
            if target is not None:
                yield target


@functools.cache
def _definition(definition: Definition) -> tuple[str, tuple[Definition | str, ...]]:
    """A definition's canonical text (its syntax tree without docstrings or decorators) and what it names."""
    module, name = definition
    found = _module(module)
    if found is None or name not in found.definitions:
        raise ValueError(f"{module}:{name} is not a top-level definition of the {PACKAGE} package: it has no derived code version")
    node = found.definitions[name]
    # A function names what its signature (annotations, defaults) and its body name; its decorators
    # are left out, as in its text.
    parts = [node.args, *([node.returns] if node.returns else []), *node.body] if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else [node]
    references = {r for part in parts for r in _references(module, part) if r != definition}
    return _canonical(node, top=True), tuple(sorted(references, key=str))


def _closure(roots: Iterable[Definition]) -> list[Definition]:
    seen: set[Definition] = set()
    todo = list(roots)
    while todo:
        definition = todo.pop()
        if definition in seen:
            continue
        seen.add(definition)
        for reference in _definition(definition)[1]:
            if isinstance(reference, tuple) and reference not in seen:
                todo.append(reference)
    return sorted(seen)


def _root(target: Callable | type | Definition) -> Definition:
    if isinstance(target, tuple):
        return target
    target = inspect.unwrap(target)
    module, qualname = target.__module__, target.__qualname__
    # A function defined inside another (a step built by a factory) is versioned with its outer function.
    return (module, qualname.split(".")[0])


def reached(*targets: Callable | type | Definition) -> list[str]:
    """Every project definition the targets' versions cover, as `module:name`, sorted, then the
    settings whose values they cover, as `setting:<field>`."""
    return [f"{module}:{name}" for module, name in _closure(_root(t) for t in targets)] + [f"setting:{field}" for field in settings_read(*targets)]


def code_version(*targets: Callable | type | Definition, settings: PipelineSettings | None = None) -> str:
    """The targets' code version: a SHA-256 (first 16 hex digits) over each reached definition's
    module, name and canonical text, and over the value of each setting they read that is not at
    its default (`settings`, a PipelineSettings; by default `settings_at_load()`)."""
    roots = sorted({_root(t) for t in targets})
    settings = settings_at_load() if settings is None else settings
    memo, key = memo_for(_cache_dir(settings), PACKAGE_DIR), json.dumps(roots)
    fields = memo.fields(key)
    if fields is not None and (found := memo.version(key, json.dumps(_settings_part(fields, settings)))) is not None:
        return found
    closure = _closure(roots)
    digest = hashlib.sha256()
    for module, name in closure:
        digest.update(f"{module}:{name}\0{_definition((module, name))[0]}\0".encode())
    fields = sorted({field for definition in closure for field in _settings_read_by(definition)})
    parts = _settings_part(fields, settings)
    for part in parts:
        digest.update(f"setting:{part}\0".encode())
    version = digest.hexdigest()[:16]
    memo.remember(key, fields, json.dumps(parts), version)
    return version


def _cache_dir(settings: PipelineSettings) -> Path | None:
    """Where the versions derived for this text of the package are kept (code_version_memo.py)."""
    try:
        return settings.resolve().cache_dir
    except Exception:  # settings that do not resolve are reported where they are used, not here
        return None


SETTINGS_MODULE = f"{PACKAGE}.settings"
# The classes that hold the settings: their own methods read fields for their callers (`resolve`
# copies all of them), so reaching a class reads nothing; a call of an accessor does.
SETTINGS_CLASSES = ((SETTINGS_MODULE, "PipelineSettings"), (SETTINGS_MODULE, "Settings"))
# Where the pinned files are downloaded from: each is checked against its SHA-256, so the host is
# where files come from, not the method (beside the path fields, see the module docstring).
DOWNLOAD_HOSTS = frozenset({"upstream_base", "pypi_base"})


@functools.cache
def method_settings() -> frozenset[str]:
    """The PipelineSettings fields that are the method (their values can change what an asset
    computes): every field but the paths (typed `Path` in `Settings`) and the download hosts."""
    paths = {name for name, kind in typing.get_type_hints(Settings).items() if kind in (Path, Path | None)}
    return frozenset(PipelineSettings.model_fields) - paths - DOWNLOAD_HOSTS


def _is_settings_class(module: str, node: ast.AST | None) -> bool:
    """Whether an annotation names PipelineSettings or Settings (bare, quoted or `Settings | None`)."""
    if node is None:
        return False
    for child in ast.walk(node):
        name = child.id if isinstance(child, ast.Name) else child.value if isinstance(child, ast.Constant) and isinstance(child.value, str) else None
        if name is not None and name.isidentifier() and _resolve(module, name) in SETTINGS_CLASSES:
            return True
    return False


def _is_settings_value(module: str, node: ast.AST, names: set[str]) -> bool:
    """Whether an expression is a settings object: a name bound to one, `x.resolve()` of one,
    `PipelineSettings.from_env(...)` or `settings_at_load()`."""
    if isinstance(node, ast.Name):
        return node.id in names or _resolve(module, node.id) in SETTINGS_CLASSES
    if isinstance(node, ast.Call):
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr in ("resolve", "from_env"):
            return _is_settings_value(module, function.value, names)
        if isinstance(function, ast.Name):
            return _resolve(module, function.id) == (SETTINGS_MODULE, "settings_at_load")
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
    found = _module(SETTINGS_MODULE)
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
def _settings_read_by(definition: Definition) -> frozenset[str]:
    """The method settings one definition reads itself (see the module docstring)."""
    if definition in SETTINGS_CLASSES:
        return frozenset()
    module, name = definition
    node = _module(module).definitions[name]
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
    """The method settings (PipelineSettings fields) the targets' versions cover, sorted."""
    return sorted({field for definition in _closure(_root(t) for t in targets) for field in _settings_read_by(definition)})


def _settings_part(fields: Iterable[str], settings: PipelineSettings | None) -> list[str]:
    """`field=value` (JSON) of each field whose value is not its default."""
    settings = settings_at_load() if settings is None else settings
    parts = []
    for field in sorted(fields):
        value = getattr(settings, field)
        if value != PipelineSettings.model_fields[field].default:
            parts.append(f"{field}={json.dumps(value, sort_keys=True, default=str)}")
    return parts


def clear_cache() -> None:
    """Forget the parsed modules (a test that edits a source file asks again)."""
    _module.cache_clear()
    _definition.cache_clear()
    forget_memos()
    _settings_read_by.cache_clear()
    _accessors.cache_clear()


def versioned_asset(*, also: Iterable[Callable] = (), **kwargs) -> Callable[[Callable], dg.AssetsDefinition]:
    """`dg.asset(**kwargs)`, its `code_version` derived from the function it decorates and from
    `also`: what it calls through a value it closes over (a factory's argument, such as a source's
    reader), which its source cannot name."""

    def decorate(fn: Callable) -> dg.AssetsDefinition:
        return dg.asset(code_version=code_version(fn, *also), **kwargs)(fn)

    return decorate


def versioned_multi_asset(*, specs: Iterable[dg.AssetSpec], **kwargs) -> Callable[[Callable], dg.AssetsDefinition]:
    """`dg.multi_asset(specs=specs, **kwargs)`, every spec's `code_version` the one derived from the
    function it decorates (one function computes all of them)."""

    def decorate(fn: Callable) -> dg.AssetsDefinition:
        version = code_version(fn)
        return dg.multi_asset(specs=[spec.replace_attributes(code_version=version) for spec in specs], **kwargs)(fn)

    return decorate


def step_code_version(context: dg.AssetExecutionContext) -> str:
    """The code version the running step's assets declare (one step, one version)."""
    (version,) = {spec.code_version for spec in context.assets_def.specs}
    assert version is not None, f"{context.assets_def.node_def.name} declares no code_version"
    return version
