"""Finds an interval called a confidence interval ("CI", "confidence") that has not earned the name.

Only a Wilson interval or a cluster-robust Wald interval may be called one, and the text must name
its method (report/intervals.py); a bootstrap spread says it is "not a confidence interval". A
mention is the text around an interval `a–b` (en dash) on the same line or table cell.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

INTERVAL = re.compile(r"\d[\d.,]*\s*[%×]?\s*–\s*\d[\d.,]*\s*[%×]?")
CLAIM = re.compile(r"\bCI\b|confidence", re.IGNORECASE)
DENIAL = re.compile(r"\**not\**( as)? a confidence interval", re.IGNORECASE)
QUALIFIED = re.compile(r"\bWilson\b|\bWald\b")
WINDOW = 90


def unqualified_claims(text: str) -> list[str]:
    """Every stretch of text where an interval is called a CI (or confidence interval) without a
    method that earns the name."""
    found = []
    for line in DENIAL.sub("", text).splitlines():
        for cell in line.split("|"):
            for match in INTERVAL.finditer(cell):
                window = cell[max(0, match.start() - WINDOW) : match.end() + WINDOW]
                if CLAIM.search(window) and not QUALIFIED.search(window):
                    found.append(window.strip())
    return found


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs) -> None:
        self._skip += tag in ("script", "style")
        self.parts.append("\n")

    def handle_endtag(self, tag) -> None:
        self._skip -= tag in ("script", "style")
        self.parts.append("\n")

    def handle_data(self, data) -> None:
        if not self._skip:
            self.parts.append(data)


def page_text(html: str) -> str:
    """The page's visible text, one element's text per line (scripts and styles left out)."""
    parser = _Text()
    parser.feed(html)
    return "".join(parser.parts)


def unqualified_ci_keys(headline: dict, methods: dict) -> list[str]:
    """headline.json fields named `_ci_` whose interval's method is neither Wilson nor Wald."""
    bad = []
    for key in headline:
        if "_ci_" in key:
            prefix = key.split("_ci_")[0]
            if prefix not in methods or not QUALIFIED.search(methods[prefix]["method"]):
                bad.append(key)
    return bad
