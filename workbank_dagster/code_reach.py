"""Which project definitions a function reaches, read statically from the package's source.

An asset's code version (code_version.py) covers its function and every project definition the
function reaches, found here:

- the functions it calls, the classes it names (all of a class's methods and its project bases, so
  a method called on an argument annotated with that class counts) and the constants it reads;
  followed transitively, through `from .x import y`, `import`ed modules and their attributes
  (`coverage.prompts_per_task`);
- a definition is read as Python's syntax tree of its source, without docstrings, so a comment, a
  docstring or a blank line moves nothing; a function's decorators are how it is wired into Dagster
  (its key, its description), not what it computes, and are left out;
- only this package is followed: the pinned libraries are the environment's, not the asset's code.

What is not reached does not count: editing a function no asset calls, a comment in settings.py,
or the LLM judge's prompt (which the embedded judge never reads) leaves every other asset's version
as it was.

The walk is static (source files, not live objects), so a decorator can ask for the version of
the function it is decorating before the module has finished loading. `PACKAGE_DIR` is read at
each call: a test points it at a copy of the package's source.
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

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
class ParsedModule:
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
def parsed_module(name: str) -> ParsedModule | None:
    """A project module's top-level definitions and imports, or None outside the project."""
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
    return ParsedModule(name, definitions, imports)


def resolve(module: str, name: str, seen: frozenset = frozenset()) -> Definition | str | None:
    """What `name` means in `module`: a project definition (module, name), a project module (its
    name), or None (a builtin, a library, a local)."""
    found = parsed_module(module)
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
    return resolve(source, attribute, seen | {(module, name)})


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
            target = resolve(module, child.id)
            if target is not None:
                yield target
        elif isinstance(child, ast.Attribute):
            chain = _attribute_chain(child)
            if chain is None:
                continue
            target = resolve(module, chain[0])
            for attribute in chain[1:]:
                if not isinstance(target, str):  # only a module's attributes are followed
                    break
                target = resolve(target, attribute)
                if target is not None:
                    yield target
        elif isinstance(child, ast.Constant) and isinstance(child.value, str) and child.value.isidentifier():
            # A quoted annotation ("LabelingRuntime") names a class as surely as a bare one; any other
            # string that happens to be a project name only makes the version cover a little more.
            target = resolve(module, child.value)
            if target is not None:
                yield target


@functools.cache
def definition_of(definition: Definition) -> tuple[str, tuple[Definition | str, ...]]:
    """A definition's canonical text (its syntax tree without docstrings or decorators) and what it names."""
    module, name = definition
    found = parsed_module(module)
    if found is None or name not in found.definitions:
        raise ValueError(f"{module}:{name} is not a top-level definition of the {PACKAGE} package: it has no derived code version")
    node = found.definitions[name]
    # A function names what its signature (annotations, defaults) and its body name; its decorators
    # are left out, as in its text.
    parts = [node.args, *([node.returns] if node.returns else []), *node.body] if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else [node]
    references = {r for part in parts for r in _references(module, part) if r != definition}
    return _canonical(node, top=True), tuple(sorted(references, key=str))


def closure(roots: Iterable[Definition]) -> list[Definition]:
    """The roots and every project definition they reach, sorted."""
    seen: set[Definition] = set()
    todo = list(roots)
    while todo:
        definition = todo.pop()
        if definition in seen:
            continue
        seen.add(definition)
        for reference in definition_of(definition)[1]:
            if isinstance(reference, tuple) and reference not in seen:
                todo.append(reference)
    return sorted(seen)


def root_of(target: Callable | type | Definition) -> Definition:
    """The top-level definition a function or class is versioned as."""
    if isinstance(target, tuple):
        return target
    target = inspect.unwrap(target)
    module, qualname = target.__module__, target.__qualname__
    # A function defined inside another (a step built by a factory) is versioned with its outer function.
    return (module, qualname.split(".")[0])


def clear_cache() -> None:
    """Forget the parsed modules and definitions (a test that edits a source file asks again)."""
    parsed_module.cache_clear()
    definition_of.cache_clear()
