"""The import rules between the packages of workbank_dagster (docs/layout.md), enforced.

Each package of the project may import only what `ALLOWED` lists beside the shared foundation;
the entry points (definitions, automation, runner, cli) may import anything and nothing imports
them. A package never imports another package's asset modules: its dependencies on other assets are
declared by asset key. The imports are read from the source (AST).
"""

from __future__ import annotations

import ast

import dagster as dg

from workbank_dagster.code_reach import module_path

PACKAGE = "workbank_dagster"
# Modules every package may import: no project import of their own but each other.
FOUNDATION = {"common", "environment", "settings", "warehouse", "partitions", "partition_files", "progress", "fingerprint", "resources", "pools", "atomic", "code_reach", "settings_reads", "code_version", "code_version_memo", "staleness"}
ENTRY_POINTS = {"definitions", "automation", "runner", "dagster_instance", "cli", "team_instance", "migrate"}
# Domain package -> the modules of other packages it may import (beyond the foundation).
ALLOWED: dict[str, set[str]] = {
    "sources": set(),
    "labeling": set(),
    "transform": set(),
    "analysis": set(),  # never labeling: analysis reads the marts
    "audits": {"labeling.matching", "analysis.zones", "sources.validate", "sources.benchmarks"},
    # The report reads analysis.* and marts.* tables; of the packages' code it uses only their
    # public catalogues and constants, never their assets.
    "report": {"analysis.columns", "analysis.history", "transform.project", "sources.registry"},
}


def _imports(path, module: str) -> set[str]:
    """Project modules that `module` (at `path`) imports, absolute or relative."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            found.add(stem)
            found.update(f"{stem}.{alias.name}" for alias in node.names)  # `from . import warehouse`
    return {name for name in found if module_path(name) is not None}


def project_module_names() -> list[str]:
    root = module_path(PACKAGE).parent
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def violations(imports: dict[str, set[str]]) -> list[str]:
    """`imports`: module -> the project modules it imports (names without the package prefix)."""
    found = []
    for module, targets in sorted(imports.items()):
        top = module.split(".")[0]
        for target in sorted(targets):
            head = target.split(".")[0]
            if head == top or target == "":
                continue
            if head in ENTRY_POINTS and top not in ENTRY_POINTS:
                found.append(f"{module} imports the entry point {target}")
            elif top in ENTRY_POINTS:
                continue
            elif top in FOUNDATION:
                if head not in FOUNDATION:
                    found.append(f"{module} (foundation) imports the package module {target}")
            elif head in FOUNDATION:
                continue
            elif target not in ALLOWED.get(top, set()):
                found.append(f"{module} imports {target}, which {top} may not import")
    return found


# Within labeling, a prompt's vectors go one way (docs/layout.md): each module of a path reaches
# (imports, directly or through other modules) none that comes after it. The LLM judge's modules
# likewise: its request and answer, its Batch API, its run loop. The narrowing (its weights, the
# benchmark's evidence) is what the task index applies, and never reaches it; the yardsticks are
# what validation scores against, and never reach the scoring.
ONE_WAY = (
    ("labeling.embeddings", "labeling.retrieval", "labeling.prompt_retrieval", "labeling.label_tables"),
    ("labeling.narrowing", "labeling.retrieval"),
    ("labeling.yardsticks", "labeling.validation"),
    ("labeling.llm_protocol", "labeling.llm_batch", "labeling.llm_judge"),
)
# Asset modules that no module but an entry point imports: what their steps share lives in helper
# modules (label_files, occupation_knowledge, llm_labels), never in an asset module.
LEAF_ASSET_MODULES = {"labeling.judge_assets", "labeling.onet_assets"}


def reached(imports: dict[str, set[str]], module: str) -> set[str]:
    """The modules `module` imports, directly or through others."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        for target in imports.get(todo.pop(), set()) - seen:
            seen.add(target)
            todo.append(target)
    return seen


def one_way_violations(imports: dict[str, set[str]]) -> list[str]:
    found = [
        f"{module} reaches {later}, which comes after it"
        for path in ONE_WAY
        for i, module in enumerate(path)
        for later in path[i + 1 :]
        if later in reached(imports, module)
    ]
    found += [
        f"{module} imports the asset module {target}"
        for module, targets in sorted(imports.items())
        if module.split(".")[0] not in ENTRY_POINTS
        for target in sorted(targets & LEAF_ASSET_MODULES)
    ]
    return found


def package_imports() -> dict[str, set[str]]:
    out = {}
    for name in project_module_names():
        path = module_path(name)
        targets = {t.removeprefix(PACKAGE + ".") for t in _imports(path, name) if t.startswith(PACKAGE + ".")}
        # `from .. import warehouse` also yields its package; keep modules only.
        out[name.removeprefix(PACKAGE + ".")] = {t for t in targets if t and t != PACKAGE}
    out.pop(PACKAGE, None)
    return out


def test_every_package_imports_only_what_the_layout_allows():
    imports = package_imports()
    assert {"analysis.assets", "audits.assets", "report.assets", "labeling.matching", "automation"} <= set(imports)
    assert violations(imports) == []


def test_the_rules_catch_a_forbidden_import():
    """Each rule, broken once on purpose, is reported."""
    assert violations({"analysis.assets": {"labeling.judge_assets"}}) == ["analysis.assets imports labeling.judge_assets, which analysis may not import"]
    assert violations({"report.page": {"analysis.assets"}}) == ["report.page imports analysis.assets, which report may not import"]
    assert violations({"audits.assets": {"labeling.retrieval"}}) == ["audits.assets imports labeling.retrieval, which audits may not import"]
    assert violations({"labeling.judge_assets": {"automation"}}) == ["labeling.judge_assets imports the entry point automation"]
    assert violations({"common": {"sources.registry"}}) == ["common (foundation) imports the package module sources.registry"]
    assert violations({"resources": {"labeling.llm_judge"}}) == ["resources (foundation) imports the package module labeling.llm_judge"]
    assert violations({"definitions": {"analysis.assets", "report.assets"}, "audits.assets": {"labeling.matching", "common"}}) == []


def test_a_prompt_s_vectors_go_one_way_through_labeling():
    """embeddings → retrieval → prompt_retrieval → label_tables, narrowing → retrieval, yardsticks →
    validation, and llm_protocol → llm_batch → llm_judge: no step imports a later one, even through
    another module; no module but an entry point imports the judges' or O*NET's asset modules."""
    imports = package_imports()
    assert {module for path in ONE_WAY for module in path} | LEAF_ASSET_MODULES <= set(imports)
    assert one_way_violations(imports) == []
    # The check sees a step back through another module, and an asset module imported for a constant.
    back = {"labeling.embeddings": {"labeling.matching"}, "labeling.matching": {"labeling.label_tables"}}
    assert one_way_violations(back) == ["labeling.embeddings reaches labeling.label_tables, which comes after it"]
    assert one_way_violations({"labeling.catalog": {"labeling.judge_assets"}}) == ["labeling.catalog imports the asset module labeling.judge_assets"]
    assert one_way_violations({"definitions": {"labeling.judge_assets", "labeling.onet_assets"}}) == []

def test_dependencies_declared_by_key_match_the_definitions():
    """The report declares its dependencies by key (analysis/columns.py's tables, the manifest's
    marts): they are exactly the analysis assets (and the coverage history, which the headline's
    step appends to) and the dbt marts of the definitions."""
    from workbank_dagster.analysis.assets import analysis_assets
    from workbank_dagster.report.assets import ANALYSIS_KEYS, HISTORY, MART_KEYS, headline
    from workbank_dagster.transform.assets import dbt_models

    assert set(headline.keys) == {HISTORY, dg.AssetKey(["report", "headline"])}
    assert set(ANALYSIS_KEYS) == {key for asset in analysis_assets for key in asset.keys} | {HISTORY}
    assert set(MART_KEYS) == {key for key in dbt_models.keys if key.path[0] == "marts"}
    assert all(isinstance(key, dg.AssetKey) for key in [*ANALYSIS_KEYS, *MART_KEYS])


def compute_calls_inside_connections(source: str, compute: set[str]) -> list[str]:
    """Calls of `compute` functions made inside a `with ….connect() as con:` block."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.With) and any(
            isinstance(item.context_expr, ast.Call) and getattr(item.context_expr.func, "attr", None) == "connect" for item in node.items
        ):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id in compute:
                    found.append(f"line {inner.lineno}: {inner.func.id}")
    return found


def test_analysis_assets_read_close_compute_write():
    """No analysis asset holds a DuckDB connection while it fits a model or bootstraps: every call of
    the analysis package's pure functions happens after the reading connection is closed."""
    import ast

    from workbank_dagster.analysis import assets, label_steps, step

    seen = set()
    for module in (assets, label_steps, step):
        source = module_path(module.__name__).read_text()
        compute = {
            alias.name
            for node in ast.parse(source).body
            if isinstance(node, ast.ImportFrom) and node.level == 1
            and node.module in {"coverage", "regressions", "scores", "telework", "zones", "uncertainty", "history", "near_duplicates", "comparison"}
            for alias in node.names
        } | {"judge_ratios"}
        seen |= compute
        assert compute_calls_inside_connections(source, compute) == [], module.__name__
    assert {"coverage_logit", "bootstrap_uncovered_share", "telework_split", "task_zones", "uncertainty_tables"} <= seen
    # The check sees a fit inside a connection.
    held = "with warehouse_db.connect() as con:\n    fit = coverage_logit(task_frame(con))\n"
    assert compute_calls_inside_connections(held, {"coverage_logit"}) == ["line 2: coverage_logit"]


# The warehouse schemas a package's SQL may read (FROM / JOIN), beside the ones it writes itself.
SCHEMAS = {"raw", "labeling", "staging", "intermediate", "marts", "analysis"}
READS: dict[str, set[str]] = {"analysis": {"marts", "analysis"}, "report": {"marts", "analysis"}}


def schemas_read(source: str) -> set[str]:
    """The warehouse schemas a module's SQL names after FROM or JOIN (`from marts.dim_task`)."""
    import re

    return {m.group(1).lower() for m in re.finditer(r"\b(?:from|join)\s+([a-z_]+)\.[a-z_]+", source, re.IGNORECASE)} & SCHEMAS


def test_analysis_and_report_read_only_marts_and_analysis():
    """What the analysis and the report read enters through dbt: their SQL names only the marts and
    the analysis tables, never raw.*, labeling.* or dbt's inner layers (published tables have
    contracts; the others may change shape without notice)."""
    found = {}
    for name in project_module_names():
        package = name.removeprefix(PACKAGE + ".").split(".")[0]
        if package in READS:
            extra = schemas_read(module_path(name).read_text()) - READS[package]
            if extra:
                found[name] = sorted(extra)
    assert found == {}
    # The check sees a read of the labeling schema.
    assert schemas_read('con.execute("select * from labeling.judge_validation")') == {"labeling"}
    assert schemas_read("from collections.abc import Iterator") == set()


def test_the_report_reads_no_source_file():
    """The report shows what the warehouse was built from (marts.dim_source_file, marts.dim_benchmark);
    it used to hash the source folder's files and read benchmarks/SOURCES.md itself at report time."""
    import ast

    reaching = {"file_sha256", "resolved_source_dir", "benchmarks_dir", "results_dir", "source_dir"}
    found = []
    for name in project_module_names():
        if name.removeprefix(PACKAGE + ".").split(".")[0] == "report":
            for node in ast.walk(ast.parse(module_path(name).read_text())):
                used = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
                if used in reaching:
                    found.append(f"{name}:{node.lineno} {used}")
    assert found == []
