"""Software and tools named in a prompt, as evidence for the occupations that use them.

O*NET's Technology Skills list, per occupation, the software its workers use ("Intuit QuickBooks",
"Python", "Epic Systems"). A prompt that names QuickBooks says something about bookkeeping work; one
that names Excel says almost nothing (nearly every occupation lists it). So each tool found in a
prompt votes for the occupations that list it with its inverse document frequency,
log(occupations / occupations listing it), and the votes are normalised to [0, 1].

Names are matched as whole words. A tool is found by its full name (case-insensitive) or by the
name without its vendor ("Excel" for "Microsoft Excel"); a one-word name must appear with the
capitalisation O*NET gives it, so the verb "excel" or the noun "word" are not tools.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict

import numpy as np
import pandas as pd

VENDORS = (
    "microsoft", "adobe", "oracle", "sap", "ibm", "google", "apple", "autodesk", "intuit", "amazon", "atlassian",
    "salesforce", "corel", "sage", "the mathworks", "mathworks", "apache", "cisco", "vmware", "red hat", "hp", "dassault systemes",
)
# One-word names that are ordinary words in a prompt ("a Word document" is still Word, but "access to",
# "the project", "teams" are not tools).
COMMON_WORDS = frozenset(
    "access project teams office outlook windows edge go notes mail paint calendar maps sheets docs drive forms slides "
    "dynamics publisher chrome safari word keynote pages numbers photos music tv files contacts reminders health wallet "
    "unity spark hive pig flash shockwave acrobat reader explorer bridge live sketch analyze software square world "
    "facebook google act".split()
)
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9+#.]*[A-Za-z0-9+#]|[A-Za-z0-9]")
MAX_WORDS = 4


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


class TechnologyIndex:
    """Tool names → the occupations (positions in `codes`) that list them, with their IDF."""

    def __init__(self, technology: pd.DataFrame, codes: list[str]) -> None:
        """`technology`: onet_soc_code, example; `codes`: the occupations of the task index, in order."""
        position = {code: i for i, code in enumerate(codes)}
        users: dict[str, set[int]] = defaultdict(set)
        for code, example in zip(technology["onet_soc_code"], technology["example"]):
            if code in position:
                users[str(example).strip()].add(position[code])
        self.n_occupations = len(codes)
        self._exact: dict[tuple[str, ...], set[str]] = defaultdict(set)  # lower-cased word tuples → tool names
        self._cased: dict[str, set[str]] = defaultdict(set)  # one-word names, as O*NET capitalises them
        for name in users:
            for alias in self._aliases(name):
                words = tuple(_tokens(alias))
                if not words or len(words) > MAX_WORDS:
                    continue
                if len(words) == 1:
                    if len(words[0]) >= 2 and words[0].lower() not in COMMON_WORDS:
                        self._cased[words[0]].add(name)
                        if words[0].isupper() or not words[0][1:].islower():
                            # "JIRA", "GitLab", "PostgreSQL": written in lower case in prompts too.
                            self._cased[words[0].lower()].add(name)
                else:
                    self._exact[tuple(w.lower() for w in words)].add(name)
        self.users = {name: np.fromiter(sorted(s), dtype=np.int64) for name, s in users.items()}
        self.idf = {name: math.log(self.n_occupations / len(s)) for name, s in users.items()}

    @staticmethod
    def _aliases(name: str) -> set[str]:
        """The name, and the name without its vendor when what is left is itself a name: it has a
        capital or a digit ("Excel", "Dynamics 365"), not a plain word ("software", "analyze")."""
        aliases = {name}
        lowered = name.lower()
        for vendor in VENDORS:
            if lowered.startswith(vendor + " ") and len(name) > len(vendor) + 2:
                rest = name[len(vendor) + 1 :]
                if rest[0].isupper() or any(c.isdigit() for c in rest):
                    aliases.add(rest)
        return aliases

    def find(self, text: str) -> set[str]:
        """The tool names (as O*NET writes them) that the text mentions."""
        tokens = _tokens(text)
        lowered = [t.lower() for t in tokens]
        found: set[str] = set()
        for i, token in enumerate(tokens):
            found |= self._cased.get(token, set())
            for n in range(2, MAX_WORDS + 1):
                if i + n <= len(tokens):
                    found |= self._exact.get(tuple(lowered[i : i + n]), set())
        return found

    def evidence(self, text: str) -> tuple[np.ndarray, list[str]]:
        """Per occupation, the IDF-weighted share of the prompt's tools it uses (0..1), and the tools."""
        tools = sorted(self.find(text))
        out = np.zeros(self.n_occupations, dtype=np.float32)
        total = sum(self.idf[t] for t in tools)
        if total <= 0:
            return out, tools
        for tool in tools:
            out[self.users[tool]] += self.idf[tool]
        return out / total, tools
