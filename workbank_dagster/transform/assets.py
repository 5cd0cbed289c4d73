"""Every dbt model an asset, every dbt test an asset check, built by one `dbt build` per run."""


import os

import dagster as dg
from dagster_dbt import DbtCliResource, dbt_assets

from ..resources import WarehouseResource
from ..settings import load_settings
from .project import dbt_build_args, dbt_project, ensure_manifest, translator

ensure_manifest()


@dbt_assets(manifest=dbt_project.manifest_path, project=dbt_project, dagster_dbt_translator=translator, pool="warehouse", name="dbt_models")
def dbt_models(context: dg.AssetExecutionContext, dbt: DbtCliResource, warehouse_db: WarehouseResource):
    settings = load_settings()
    # dbt runs in its own process and reads the warehouse path from this variable (profiles.yml).
    os.environ["WORKBANK_DUCKDB_PATH"] = str(warehouse_db.path)
    os.environ["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    yield from dbt.cli(dbt_build_args(settings), context=context).stream()
