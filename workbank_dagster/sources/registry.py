"""What the pipeline ingests: one entry per raw table, naming its files, its parser and its origin."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import bls, exposure, onet, timeshare, workbank


@dataclass(frozen=True)
class Source:
    table: str  # raw.<table> in the warehouse, asset key ["raw", table]
    path: str  # relative to the source directory
    read: Callable[[Path], pd.DataFrame]
    keys: tuple[str, ...]
    description: str
    origin: str  # one line of provenance; the folder's SOURCES.md has the rest
    licence: str


SOURCES: tuple[Source, ...] = (
    Source(
        "onet_task_statements",
        onet.TASK_STATEMENTS,
        onet.read_task_statements,
        ("task_id",),
        "O*NET 29.3 task statements: one row per task (task_id is the key end to end).",
        "O*NET 29.3 Database (May 2025), Task Statements; TSV converted from the Excel edition",
        "CC BY 4.0 (O*NET, USDOL/ETA)",
    ),
    Source(
        "onet_occupations",
        onet.OCCUPATIONS,
        onet.read_occupations,
        ("onet_soc_code",),
        "O*NET 29.3 occupation titles and descriptions (1,016 codes; 923 have tasks).",
        "O*NET 29.3 Database, Occupation Data",
        "CC BY 4.0 (O*NET, USDOL/ETA)",
    ),
    Source(
        "onet_task_importance",
        onet.IMPORTANCE,
        onet.read_importance,
        ("onet_soc_code", "task_id"),
        "O*NET task importance (IM scale, 1-5); analyst-written tasks have no rating.",
        "O*NET 29.0 Task Ratings, IM rows (covers every rated 29.3 task)",
        "CC BY 4.0 (O*NET, USDOL/ETA)",
    ),
    Source(
        "onet_alternate_titles",
        onet.ALTERNATE_TITLES,
        onet.read_alternate_titles,
        (),  # (onet_soc_code, alternate_title, short_title): 2 titles of 21-1014.00 are listed with and without a short title
        "O*NET 29.3 alternate (lay and industry) job titles per occupation, short title where O*NET gives one; "
        "2 titles of 21-1014.00 appear twice (without and with a short title), both rows kept.",
        "O*NET 29.3 Database, Alternate Titles (Excel edition)",
        "CC BY 4.0 (O*NET, USDOL/ETA)",
    ),
    Source(
        "onet_reported_titles",
        onet.REPORTED_TITLES,
        onet.read_reported_titles,
        ("onet_soc_code", "reported_title"),
        "O*NET 29.3 sample of job titles reported by incumbents, flagged when shown in My Next Move.",
        "O*NET 29.3 Database, Sample of Reported Titles (Excel edition)",
        "CC BY 4.0 (O*NET, USDOL/ETA)",
    ),
    Source(
        "onet_technology_skills",
        onet.TECHNOLOGY_SKILLS,
        onet.read_technology_skills,
        ("onet_soc_code", "example", "commodity_code"),
        "O*NET 29.3 technology skills: software examples per occupation with UNSPSC commodity, hot-technology and in-demand flags.",
        "O*NET 29.3 Database, Technology Skills (Excel edition)",
        "CC BY 4.0 (O*NET, USDOL/ETA)",
    ),
    Source(
        "onet_related_occupations",
        onet.RELATED_OCCUPATIONS,
        onet.read_related_occupations,
        ("onet_soc_code", "related_onet_soc_code"),
        "O*NET 29.3 related occupations: 20 ranked neighbours per occupation in tiers Primary-Short, Primary-Long, Supplemental.",
        "O*NET 29.3 Database, Related Occupations (Excel edition)",
        "CC BY 4.0 (O*NET, USDOL/ETA)",
    ),
    Source(
        "onet_task_dwas",
        onet.TASK_DWAS,
        onet.read_task_dwas,
        ("onet_soc_code", "task_id", "dwa_id"),
        "O*NET 29.3 task statements linked to the detailed work activities (DWAs) they perform.",
        "O*NET 29.3 Database, Tasks to DWAs (Excel edition)",
        "CC BY 4.0 (O*NET, USDOL/ETA)",
    ),
    Source(
        "onet_dwa_reference",
        onet.DWA_REFERENCE,
        onet.read_dwa_reference,
        ("dwa_id",),
        "O*NET 29.3 detailed work activities with their intermediate work activity (IWA) and work activity element.",
        "O*NET 29.3 Database, DWA Reference (Excel edition)",
        "CC BY 4.0 (O*NET, USDOL/ETA)",
    ),
    Source(
        "onet_telework",
        onet.TELEWORK,
        onet.read_telework,
        ("onet_soc_code",),
        "Dingel & Neiman (2020) teleworkability per O*NET-SOC code (O*NET-SOC 2010 taxonomy).",
        "jdingel/DingelNeiman-workathome @ 3ebab4f6",
        "GPL-3.0 repository; scores derive from O*NET (CC BY 4.0)",
    ),
    Source(
        "oews_national",
        bls.OEWS_NATIONAL,
        bls.read_oews_national,
        ("occ_code", "o_group"),
        "BLS OEWS May 2024 national employment and wages, every row; BLS symbols parsed (* -> NULL, # -> top code, flagged).",
        "BLS OEWS May 2024, national_M2024_dl",
        "Public domain (U.S. Government work, BLS)",
    ),
    Source(
        "soc_major_groups",
        bls.SOC_MAJOR_GROUPS,
        bls.read_soc_major_groups,
        ("family_code",),
        "SOC 2018 major groups (22 civilian families plus 55-0000 Military).",
        "BLS/OMB 2018 SOC structure",
        "Public domain (U.S. Government work)",
    ),
    Source(
        "onet_oews_crosswalk",
        bls.ONET_OEWS_CROSSWALK,
        bls.read_onet_oews_crosswalk,
        ("onet_soc_code",),
        "BLS O*NET-SOC -> National Employment Matrix (OEWS) crosswalk, resolving OEWS aggregate codes.",
        "BLS Employment Projections, O*NET-SOC to NEM crosswalk as of 9/6/2023",
        "Public domain (U.S. Government work, BLS)",
    ),
    Source(
        "soc_2010_2018_crosswalk",
        bls.SOC_2010_2018_CROSSWALK,
        bls.read_soc_2010_2018_crosswalk,
        ("soc_2010_code", "soc_2018_code"),
        "BLS SOC 2010 -> SOC 2018 crosswalk, many-to-many (840 2010 codes, 867 2018 codes); remaps the Dingel-Neiman telework scores.",
        "BLS 2010 SOC to 2018 SOC crosswalk; CSV copy from sidsatya/ailabor @ 59360056",
        "Public domain (U.S. Government work, BLS)",
    ),
    Source(
        "eloundou_task_exposure",
        exposure.FULL_LABELSET,
        exposure.read_full_labelset,
        ("task_id",),
        "Eloundou et al. (2023) task exposure labels E0/E1/E2, human aggregate and GPT-4 (O*NET 27.2 IDs).",
        "openai/GPTs-are-GPTs @ 0471612f, data/full_labelset.tsv",
        "MIT (OpenAI)",
    ),
    Source(
        "eloundou_occupation_exposure",
        exposure.OCC_LEVEL,
        exposure.read_occ_level,
        ("onet_soc_code",),
        "Eloundou et al. (2023) occupation exposure scores (alpha/beta/gamma, human and GPT-4).",
        "openai/GPTs-are-GPTs @ 0471612f, data/occ_level.csv",
        "MIT (OpenAI)",
    ),
    Source(
        "task_time_shares",
        timeshare.TIME_SHARES,
        timeshare.read_time_shares,
        ("onet_soc_code", "task_id"),
        "Hatgis-Kessell et al. (2026) hours per day per (occupation, task), O*NET 30.2 IDs.",
        "Stephanehk/Estimating-Time-Spent-On-Work @ c71f6e55",
        "none stated",
    ),
    Source(
        "workbank_worker_desires",
        workbank.WORKER_DESIRES,
        workbank.read_worker_desires,
        (),
        "WORKBank worker ratings: automation desire (1-5) and desired Human Agency Scale, one row per worker x task.",
        "SALT-NLP WORKBank (HF dataset), byte-identical copy",
        "none stated",
    ),
    Source(
        "workbank_expert_ratings",
        workbank.EXPERT_RATINGS,
        workbank.read_expert_ratings,
        (),
        "WORKBank expert ratings: automation capacity (1-5) and feasible Human Agency Scale; exact duplicates dropped.",
        "SALT-NLP WORKBank (HF dataset), byte-identical copy",
        "none stated",
    ),
    Source(
        "workbank_task_metadata",
        workbank.TASK_METADATA,
        workbank.read_task_metadata,
        ("task_id",),
        "WORKBank task pool with O*NET metadata (2,131 tasks, 287 occupations).",
        "SALT-NLP WORKBank (HF dataset), byte-identical copy",
        "none stated",
    ),
)

SOURCES_BY_TABLE = {source.table: source for source in SOURCES}
