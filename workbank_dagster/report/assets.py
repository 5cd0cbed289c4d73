"""Report assets: headline.json, the table exports, the data dictionary, the HTML report.

Thin wrappers: the numbers come from headline.py and tables.py, the drawing from figures.py and
static_figures.py, the page from page.py, the files from exports.py.
"""


import json
import time
from pathlib import Path

import dagster as dg
import pandas as pd
from dagster_dbt import DbtCliResource

from .. import warehouse
from ..analysis.columns import BENCHMARK_VERSIONS_METADATA, HEADLINE_NUMBERS_METADATA, analysis_table_metadata
from ..analysis.columns import TABLES as ANALYSIS_TABLES
from ..analysis.history import HISTORY_CONTRACT, ContractError, enforce_contract, history_frame, next_row
from ..code_version import step_code_version, versioned_asset, versioned_multi_asset
from ..common import asset_attributes, warehouse_step
from ..fingerprint import INPUTS_METADATA, RECOMPUTED_METADATA, content_version, fingerprint, last_fingerprint
from ..resources import WarehouseResource
from ..settings import PipelineSettings
from ..transform.project import dbt_for, dbt_project, dbt_vars_args, model_keys, project_digest, project_inputs
from .attribution import reference_sources
from .exports import ROW_LIMIT, column_types, data_dictionary, dbt_descriptions, export_tables, write_json_atomic, write_text_atomic
from .figures import available_figures
from .headline import benchmark_versions, code_stamp, headline_numbers, rejected_files
from .page import TEMPLATE_DIR, render_report
from .static_figures import write_static_figures
from .tables import report_frames

# Dependencies by asset key: the analysis tables as analysis/columns.py names them, the marts as the
# dbt manifest does (a test checks both against the definitions).
ANALYSIS_KEYS = sorted((dg.AssetKey(["analysis", name]) for name in ANALYSIS_TABLES), key=lambda k: k.to_user_string())
MART_KEYS = sorted(model_keys("marts"), key=lambda k: k.to_user_string())
HEADLINE_DEPS = [
    *[
        dg.AssetKey(["analysis", n])
        for n in ("coverage_logit_ratio", "importance_logit_ratio", "work_time_uncovered_interval", "work_time_uncovered_band", "ratios_by_threshold")
    ],
    *MART_KEYS,
]
HEADLINE = dg.AssetKey(["report", "headline"])
HISTORY = dg.AssetKey(["analysis", "coverage_history"])
EXPORTS = dg.AssetKey(["report", "table_exports"])
DICTIONARY = dg.AssetKey(["report", "data_dictionary"])


def _asset_descriptions() -> dict[str, str]:
    return {f"analysis.{name}": description for name, description in ANALYSIS_TABLES.items()}


def kept(context: dg.AssetExecutionContext, key: str, *outputs: Path) -> bool:
    """True when this asset's last materialization recorded `key` (metadata `inputs_sha256`, as the
    analysis steps and dbt models record theirs) and every output file it wrote is still there: the
    last build had the same code and inputs, so its files still hold."""
    return last_fingerprint(context.instance, context.asset_key)[0] == key and all(path.exists() for path in outputs)


HISTORY_TABLE = ("analysis", "coverage_history")


def append_refresh(con, record: dict) -> pd.DataFrame:
    """Append this refresh's row to the coverage history (its contract checked), computed against
    the last row there; return the whole history. A history written by an older checkout (other
    columns) is an error that says how to bring it up to date, not a silent reshape."""
    schema, table = HISTORY_TABLE
    name = f"{schema}.{table}"
    previous = None
    if warehouse.table_exists(con, schema, table):
        columns = [row[0] for row in con.execute(f"describe {name}").fetchall()]
        if columns != list(HISTORY_CONTRACT):
            raise ContractError(f"{name}: columns {columns} are an older checkout's; run `python -m workbank_dagster.cli migrate` once")
        last = con.execute(f"select * from {name} order by refresh desc limit 1").df()
        previous = last.iloc[0].to_dict() if len(last) else None
    row = enforce_contract(history_frame([next_row(previous, record)]), HISTORY_CONTRACT, name)
    warehouse.append_rows(con, schema, table, row)
    return con.execute(f"select * from {name} order by refresh").df()


@versioned_multi_asset(
    specs=[
        dg.AssetSpec(HEADLINE, deps=HEADLINE_DEPS, description="data/outputs/headline.json: the numbers the report leads with, from the marts.",
                     **asset_attributes("report", "team:analysis", "json")),
        dg.AssetSpec(HISTORY, deps=HEADLINE_DEPS, description=ANALYSIS_TABLES["coverage_history"], **asset_attributes("analysis", "team:analysis")),
    ],
    name="headline",
    pool="warehouse",
    # headline.json names the code that made it: its version covers the stamp, read when the definitions load.
    stamp=code_stamp(),
)
def headline(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings):
    """The numbers, and the row of the coverage history they make: this step knows both, so it
    writes both (the history in the warehouse, where it outlasts the Dagster instance)."""
    settings = pipeline_settings.resolve()
    with warehouse_db.connect() as con:
        numbers = headline_numbers(con, settings)
        versions = benchmark_versions(con)
        record = {"materialized_at": time.time(), "run_id": context.run_id, "numbers": numbers, "benchmarks": versions}
        history = append_refresh(con, record)
    # Key order is the reading order of the numbers (not sorted).
    path = write_text_atomic(settings.output_dir / "headline.json", json.dumps(numbers, indent=2) + "\n")
    yield dg.MaterializeResult(
        asset_key=HEADLINE,
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            HEADLINE_NUMBERS_METADATA: dg.MetadataValue.json(numbers),
            BENCHMARK_VERSIONS_METADATA: dg.MetadataValue.json(versions),
        },
        data_version=content_version(numbers),
    )
    yield dg.MaterializeResult(
        asset_key=HISTORY, metadata={**analysis_table_metadata("coverage_history", history), "refreshes": len(history)},
        data_version=content_version(history),
    )


@versioned_asset(
    key=EXPORTS,
    deps=[*MART_KEYS, *ANALYSIS_KEYS],
    description="Every mart and analysis table as data/outputs/tables/<schema>.<table>.parquet and .csv (a table of more than "
    f"{ROW_LIMIT:,} rows with a benchmark column: the folder <schema>.<table>/, one benchmark=<slug>/ subfolder each), written only where its rows changed.",
    **warehouse_step("report", "team:analysis", "parquet", "csv"),
)
def table_exports(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
    folder = pipeline_settings.resolve().output_dir / "tables"
    listing = folder / "exports.json"
    # The last export's listing says which tables (and which benchmarks of a long table) still hold.
    previous = json.loads(listing.read_text()) if listing.exists() else []
    with warehouse_db.connect() as con:
        listed = export_tables(con, folder, previous)
    # The listing says what the tables hold, not what this run wrote: the same tables, the same bytes.
    write_json_atomic(listing, [{k: v for k, v in row.items() if k != "written"} for row in listed])
    written = pd.DataFrame(listed, columns=["table", "rows", "written"])
    return dg.MaterializeResult(
        metadata={
            "folder": dg.MetadataValue.path(str(folder)),
            "n_tables": len(written),
            "n_written": int(written["written"].sum()) if len(written) else 0,
            "dagster/row_count": int(written["rows"].sum()) if len(written) else 0,
            "tables": dg.MetadataValue.md(written[["table", "rows"]].to_markdown(index=False) if len(written) else "(none)"),
        },
        data_version=content_version(listing),  # what the tables hold (the listing names each one's rows and digest)
    )


def _dbt_docs(dbt: DbtCliResource, settings, warehouse_path: Path, target: Path) -> Path:
    """`dbt docs generate --static` into `target` (manifest.json, catalog.json): its one-file docs site."""
    args = ["docs", "generate", "--static", *dbt_vars_args(settings)]
    invocation = dbt_for(dbt, settings, warehouse_path).cli(args, manifest=dbt_project.manifest_path, target_path=target, raise_on_error=True)
    invocation.wait()
    static = target / "static_index.html"
    if not static.exists():
        raise RuntimeError(f"`dbt docs generate --static` wrote no static_index.html in {target}")
    return static


@versioned_asset(
    key=DICTIONARY,
    deps=[EXPORTS],
    description="data/outputs/tables/DATA_DICTIONARY.md (+ .csv, + dbt_docs.html): every exported table and column, from `dbt docs generate`.",
    **warehouse_step("report", "team:analysis", "dbt", "markdown"),
    # dbt's docs show every file of the dbt project (descriptions, SQL, tests): its version covers them all.
    stamp=project_digest(),
)
def data_dictionary_asset(context: dg.AssetExecutionContext, dbt: DbtCliResource, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
    settings = pipeline_settings.resolve()
    folder = settings.output_dir / "tables"
    with warehouse_db.connect() as con:
        types = column_types(con)
    listing = folder / "exports.json"
    exports = pd.DataFrame(json.loads(listing.read_text())) if listing.exists() else pd.DataFrame({"table": list(types), "rows": [None] * len(types)})
    outputs = [folder / "DATA_DICTIONARY.md", folder / "data_dictionary.csv", folder / "dbt_docs.html"]
    # dbt's docs (manifest and catalog) depend on the dbt project, the --vars and the tables'
    # columns, not on their rows (DuckDB's catalog has no statistics): with those unchanged, the
    # last `dbt docs generate` (10-20 s) still holds. The dictionary adds the row counts and is
    # written again every time (milliseconds).
    docs = settings.data_dir / "dbt_docs"
    key = fingerprint(code=step_code_version(context), inputs=[*project_inputs(), types, settings.dbt_vars])
    rebuilt = not kept(context, key, docs / "manifest.json", docs / "catalog.json", outputs[2])
    if rebuilt:
        static = _dbt_docs(dbt, settings, Path(warehouse_db.path), docs)
        write_text_atomic(outputs[2], static.read_text(encoding="utf-8"))
    manifest, catalog = (json.loads((docs / name).read_text()) for name in ("manifest.json", "catalog.json"))
    markdown, records = data_dictionary(types, dbt_descriptions(manifest, catalog), _asset_descriptions(), exports)
    write_text_atomic(outputs[0], markdown)
    frame = pd.DataFrame(records)
    write_text_atomic(outputs[1], frame.to_csv(index=False))
    undocumented = sorted(set(frame.loc[frame["description"] == "", "table"]))
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(outputs[0])),
            "n_tables": len(types),
            "n_columns": len(frame),
            RECOMPUTED_METADATA: rebuilt,  # dbt docs generated again (the dictionary itself is written every time)
            INPUTS_METADATA: key,
            "tables_with_undocumented_columns": dg.MetadataValue.json(undocumented),
        },
        data_version=content_version(*outputs),
    )


DOWNLOADS = [
    ("../tables/DATA_DICTIONARY.md", "Data dictionary (Markdown)"),
    ("../tables/data_dictionary.csv", "Data dictionary (CSV)"),
    ("../tables/dbt_docs.html", "dbt docs (one file; `make docs` serves the same)"),
    ("../headline.json", "headline.json"),
]


@versioned_asset(
    key=["report", "html_report"],
    deps=[HEADLINE, EXPORTS, DICTIONARY, *ANALYSIS_KEYS],
    description="data/outputs/report/index.html (self-contained, works from disk) and an SVG of each figure in report/figures/.",
    **warehouse_step("report", "team:analysis", "html", "plotly"),
)
def html_report(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
    settings = pipeline_settings.resolve()
    folder = settings.output_dir / "report"
    headline_path = settings.output_dir / "headline.json"
    with warehouse_db.connect() as con:
        frames = report_frames(con)
        numbers = json.loads(headline_path.read_text()) if headline_path.exists() else headline_numbers(con, settings)
    tables_dir = settings.output_dir / "tables"
    downloads = list(DOWNLOADS)
    # The tables this run exported (exports.json), not whatever CSV files lie in the folder.
    listing = tables_dir / "exports.json"
    exported = sorted(row["csv"] for row in json.loads(listing.read_text())) if listing.exists() else []
    # A long table is a folder of one CSV per benchmark (the link opens the folder).
    downloads += [(f"../tables/{name}", f"{name} (one folder per benchmark)" if name.endswith("/") else name) for name in exported]
    downloads += [(f"figures/{name}.svg", f"figure: {name}.svg") for name in available_figures(frames)]
    inputs = (
        frames,
        numbers,
        settings.describe(),
        frames["data_versions"],
        reference_sources(),
        frames["benchmark_sources"],
        downloads,
    )
    path = folder / "index.html"
    # Drawing and rendering take seconds; with identical inputs and code the files would be identical.
    # The page's templates are not modules: their files are inputs of the key.
    key = fingerprint(code=step_code_version(context), inputs=[*inputs[0].values(), *inputs[1:], *sorted(TEMPLATE_DIR.glob("*.j2"))])
    rebuilt = not kept(context, key, path)
    if rebuilt:
        write_static_figures(frames, folder / "figures")
        write_text_atomic(path, render_report(*inputs))
    svgs = sorted(str(p) for p in (folder / "figures").glob("*.svg"))
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            "url": dg.MetadataValue.url(path.resolve().as_uri()),
            "bytes": path.stat().st_size,
            "n_occupation_tiles": len(frames["occupations"]),
            RECOMPUTED_METADATA: rebuilt,
            INPUTS_METADATA: key,
            "figures": dg.MetadataValue.json(svgs),
        },
        data_version=content_version(path),
    )


@versioned_asset(
    key=["report", "benchmark_files_check"],
    deps=[dg.AssetKey(["report", "html_report"])],
    description="Fails the run, at its very end, when a benchmark file was rejected, naming the file, line and column: every other "
    "benchmark has been refreshed through the marts and the report by then, and the report says which file failed and why.",
    **warehouse_step("report", "team:analysis", "python"),
)
def benchmark_files_check(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    with warehouse_db.connect() as con:
        rejected = rejected_files(con)
    if rejected:
        listing = "; ".join(f"{benchmark}: {error}" for benchmark, error in rejected.items())
        raise dg.Failure(
            description=f"{len(rejected)} benchmark file(s) rejected (their previous rows kept; every other benchmark refreshed): {listing}",
            metadata={"rejected": dg.MetadataValue.json(rejected)},
        )
    return dg.MaterializeResult(metadata={"rejected": dg.MetadataValue.json({})}, data_version=content_version({}))


report_assets = [headline, table_exports, data_dictionary_asset, html_report, benchmark_files_check]
