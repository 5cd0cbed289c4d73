"""What labeling needs of O*NET, read once from the warehouse and handed to partition runs as files.

The task index and judge v4's knowledge (titles, technology) are built from O*NET's task statements,
occupations, titles and technology skills. The unpartitioned step `labeling/task_index` reads them
from `raw.*` and writes them as shared files (partition_files.SHARED); the per-benchmark labeling
steps read those files, so a partition run never opens the warehouse (#18).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..partition_files import PartitionFiles
from ..resources import WarehouseResource
from .titles import title_rows

FILES = {"tasks": "onet_tasks", "occupations": "onet_occupations", "titles": "onet_titles", "technology": "onet_technology"}


def title_frame(warehouse_db: WarehouseResource) -> pd.DataFrame:
    """Every title of every occupation (title_rows): O*NET's own, alternate and reported titles."""
    occupations = warehouse_db.query("SELECT onet_soc_code, title FROM raw.onet_occupations")
    alternate = warehouse_db.query_if_exists("raw", "onet_alternate_titles", "SELECT onet_soc_code, alternate_title, short_title FROM {table}")
    reported = warehouse_db.query_if_exists("raw", "onet_reported_titles", "SELECT onet_soc_code, reported_title FROM {table}")
    return title_rows(occupations, alternate, reported)


@dataclass(frozen=True)
class OnetTables:
    """task_id, onet_soc_code, task (by task_id); onet_soc_code, title, description (by code); the
    titles (title_rows); the technology examples (None where that table was not loaded)."""

    tasks: pd.DataFrame
    occupations: pd.DataFrame
    titles: pd.DataFrame
    technology: pd.DataFrame | None

    @classmethod
    def from_warehouse(cls, warehouse_db: WarehouseResource) -> OnetTables:
        return cls(
            tasks=warehouse_db.query("SELECT task_id, onet_soc_code, task FROM raw.onet_task_statements ORDER BY task_id"),
            occupations=warehouse_db.query("SELECT onet_soc_code, title, description FROM raw.onet_occupations ORDER BY onet_soc_code"),
            titles=title_frame(warehouse_db),
            technology=warehouse_db.query_if_exists("raw", "onet_technology_skills", "SELECT onet_soc_code, example FROM {table} ORDER BY onet_soc_code, example"),
        )

    @classmethod
    def from_files(cls, files: PartitionFiles) -> OnetTables:
        technology = files.shared_path(FILES["technology"])
        return cls(
            tasks=files.read_shared(FILES["tasks"]),
            occupations=files.read_shared(FILES["occupations"]),
            titles=files.read_shared(FILES["titles"]),
            technology=files.read_shared(FILES["technology"]) if technology.is_file() else None,
        )

    def write(self, files: PartitionFiles) -> dict[str, int]:
        """Write the shared files (each whole, then renamed); rows per file."""
        written = {}
        for field, name in FILES.items():
            frame = getattr(self, field)
            if frame is None:
                files.shared_path(name).unlink(missing_ok=True)
                continue
            files.write_shared(name, frame)
            written[name] = len(frame)
        return written
