"""Job titles: O*NET's titles, alternate titles and reported titles, and the titles a prompt states.

A prompt that says "You are a staff accountant…" names its occupation better than any similarity
can. O*NET lists, for each occupation, its own title, about 60 alternate (lay and industry) titles
and titles that incumbents reported. `TitleIndex` normalises all of them the same way (case,
plurals, seniority words, "director of sales" = "sales director") and maps a normalised title to
the occupations that carry it, weighted by how often and how authoritatively they do.

`match` looks a stated role up: first the whole phrase, then its conjuncts ("retail sales manager
and buyer"), then ever shorter tails ("green hydrogen project manager" → "project manager"), each
step less confident. The answer is a distribution over occupations and a confidence; a confident
match decides the occupation (judges.py).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import pandas as pd

# Words that say how senior or how new a person is, not what work they do. They are removed from
# the front of a title on both sides (O*NET's "Senior Accountant" and the prompt's "senior accountant").
SENIORITY = frozenset(
    "senior sr junior jr lead principal staff associate assistant-to entry-level entry level experienced seasoned new newly "
    "hired appointed promoted recently current mid-level mid us u.s. us-based based american licensed certified".split()
)
# A title reduced to one of these words alone says too little to decide anything.
GENERIC = frozenset(
    "manager director head officer specialist analyst coordinator consultant lead supervisor administrator executive "
    "associate assistant representative agent worker technician operator engineer professional expert leader partner "
    "owner president vp chief member staff employee clerk advisor adviser strategist planner".split()
)
_STOP = frozenset({"of", "the", "a", "an", "and", "for", "in", "at", "to", "&"})
_PARENTHESES = re.compile(r"\(([^()]*)\)")
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
# Plurals that a trailing-s rule would get wrong.
_IRREGULAR = {"sales": "sales", "analysis": "analysis", "series": "series", "news": "news", "physics": "physics",
              "economics": "economics", "logistics": "logistics", "statistics": "statistics", "operations": "operations",
              "business": "business", "services": "service", "boss": "boss", "class": "class", "press": "press",
              "glass": "glass", "chassis": "chassis", "people": "person", "men": "man", "women": "woman", "children": "child",
              "alumni": "alumnus", "us": "us", "gas": "gas"}

# How much a title source says about an occupation (per listing).
SOURCE_WEIGHTS = {"title": 4.0, "alternate": 1.0, "short": 1.0, "reported": 1.0}


def singular(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses", "zes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Lower-case word tokens, '&' read as 'and', possessives and punctuation dropped, plurals singular."""
    text = text.lower().replace("&", " and ").replace("’", "'")
    return [singular(w.split("'")[0]) for w in _WORD.findall(text)]


def normalise(title: str) -> tuple[str, ...]:
    """The key a title is looked up by: singular words, no seniority words in front, no 'of'-inversion.

    "Senior Directors of Sales" → ("sales", "director"); "Nurse Practitioners" → ("nurse", "practitioner").
    """
    tokens = words(title)
    while tokens and tokens[0] in SENIORITY:
        tokens = tokens[1:]
    if "of" in tokens[1:-1] and tokens.count("of") == 1:
        # "director of sales" and "sales director" are one title; O*NET writes both forms.
        at = tokens.index("of")
        head, tail = tokens[:at], tokens[at + 1 :]
        if tail and tail[0] == "the":
            tail = tail[1:]
        tokens = tail + head
    return tuple(t for t in tokens if t not in ("the", "a", "an"))


@dataclass(frozen=True)
class TitleMatch:
    """Where a stated role points: occupation code → probability, how sure, and what matched."""

    distribution: dict[str, float]
    confidence: float  # 0..1: exact whole-phrase match of an unambiguous title is 1
    matched: str  # the normalised title that matched, for the judgement record

    @property
    def best(self) -> tuple[str, float]:
        return max(self.distribution.items(), key=lambda kv: (kv[1], kv[0]))


class TitleIndex:
    """Normalised title → {occupation code: weight}, over occupations that have tasks.

    `titles`: onet_soc_code, title, source (one of SOURCE_WEIGHTS). A title listed for a code that
    has no tasks ("Managers, All Other") is moved to the codes of the same detailed SOC occupation
    that have tasks, or dropped when there are none.
    """

    def __init__(self, titles: pd.DataFrame, codes_with_tasks: set[str]) -> None:
        by_detailed: dict[str, list[str]] = defaultdict(list)
        for code in sorted(codes_with_tasks):
            by_detailed[code[:7]].append(code)
        weights: dict[tuple[str, ...], dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for code, title, source in zip(titles["onet_soc_code"], titles["title"], titles["source"]):
            targets = [code] if code in codes_with_tasks else by_detailed.get(code[:7], [])
            if not targets:
                continue
            # "CEO (Chief Executive Officer)": the abbreviation and the spelled-out title, each a title.
            outside, inside = _PARENTHESES.sub(" ", str(title)), _PARENTHESES.findall(str(title))
            for variant in {outside, *inside}:
                key = normalise(variant)
                if key:
                    for target in targets:
                        weights[key][target] += SOURCE_WEIGHTS[source] / len(targets)
        self._weights = {key: dict(value) for key, value in weights.items()}
        # Head nouns ("sergeant" of "Police Sergeant", "Detective Sergeant"): the last resort for a
        # one-word role that is not itself a listed title.
        heads: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for key, value in self._weights.items():
            if len(key) >= 2 and key[-1] not in GENERIC and key[-1] not in _STOP:
                for code, weight in value.items():
                    heads[key[-1]][code] += weight
        self._heads = {head: dict(value) for head, value in heads.items()}

    def __len__(self) -> int:
        return len(self._weights)

    def lookup(self, key: tuple[str, ...]) -> dict[str, float] | None:
        return self._weights.get(key)

    def match(self, phrase: str) -> TitleMatch | None:
        """The occupations a stated role names, or None when no part of it is a known title."""
        attempts = [(normalise(phrase), 1.0)]
        lowered = phrase.lower().replace("&", " and ")
        parts = [p for p in re.split(r"\s+and\s+|\s*/\s*|,\s*", lowered) if p.strip()]
        if len(parts) > 1:
            attempts += [(normalise(p), 0.8) for p in parts]
        for key, certainty in attempts:
            found = self._match_key(key, certainty)
            if found is not None:
                return found
        return None

    def _match_key(self, key: tuple[str, ...], certainty: float) -> TitleMatch | None:
        # Whole key first, then ever shorter tails: the head noun of an English title comes last.
        for dropped in range(len(key)):
            tail = key[dropped:]
            if not tail or (len(tail) == 1 and tail[0] in GENERIC):
                break
            weights = self._weights.get(tail)
            if weights:
                total = sum(weights.values())
                distribution = {code: w / total for code, w in weights.items()}
                top = max(distribution.values())
                confidence = certainty * top * (0.85**dropped)
                return TitleMatch(distribution, confidence, " ".join(tail))
        head = key[-1] if key else None
        weights = self._heads.get(head) if head and head not in GENERIC else None
        if weights:
            total = sum(weights.values())
            distribution = {code: w / total for code, w in weights.items()}
            return TitleMatch(distribution, certainty * 0.5 * max(distribution.values()), f"… {head}")
        return None


def title_rows(occupations: pd.DataFrame, alternate: pd.DataFrame | None, reported: pd.DataFrame | None) -> pd.DataFrame:
    """One frame of (onet_soc_code, title, source) from the O*NET title tables that are present."""
    frames = [pd.DataFrame({"onet_soc_code": occupations["onet_soc_code"], "title": occupations["title"], "source": "title"})]
    if alternate is not None:
        frames.append(pd.DataFrame({"onet_soc_code": alternate["onet_soc_code"], "title": alternate["alternate_title"], "source": "alternate"}))
        short = alternate.dropna(subset=["short_title"])
        frames.append(pd.DataFrame({"onet_soc_code": short["onet_soc_code"], "title": short["short_title"], "source": "short"}))
    if reported is not None:
        frames.append(pd.DataFrame({"onet_soc_code": reported["onet_soc_code"], "title": reported["reported_title"], "source": "reported"}))
    return pd.concat(frames, ignore_index=True).astype({"onet_soc_code": "string", "title": "string", "source": "string"})
