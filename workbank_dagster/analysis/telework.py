"""Uncovered work time split by teleworkability (Dingel & Neiman 2020), docs/method.md §7.

Dingel-Neiman scores use the O*NET-SOC 2010 taxonomy; O*NET 29.3 occupations use O*NET-SOC 2019,
whose six-digit prefix (`onet_soc_code[:7]`) is a SOC 2018 code. Matching, in order:

1. exact: the same O*NET-SOC code in both taxonomies (e.g. 29-1141.00 Registered Nurses).
2. crosswalk: the occupation's SOC 2018 code through the BLS SOC 2010 -> 2018 crosswalk
   (marts.dim_soc_2010_2018_crosswalk). A Dingel-Neiman O*NET-SOC 2010 code is first reduced
   to its six-digit SOC 2010 code (several O*NET codes of one SOC code, e.g. 15-1199.01 ... .12,
   give their plain mean, so no SOC code weighs more for having more O*NET sub-codes); each SOC 2010
   code then feeds every SOC 2018 code the crosswalk maps it to.
   - A 2010 code that was split into several 2018 codes (BLS title marked '(#)', e.g. 11-2031 ->
     11-2032 Public Relations Managers and 11-2033 Fundraising Managers) gives its full score to each
     of them: the crosswalk says which 2018 codes took part of it, not how much, and a split carves
     out part of the same work, so the parts inherit the whole's score.
   - A 2018 code fed by several 2010 codes (title marked '(##)', e.g. 15-1252 Software Developers
     <- 15-1132 and 15-1133) gets the unweighted AVERAGE of their scores: SOC 2010 employment to
     weight them by is not in the warehouse. 2010 codes without a Dingel-Neiman score are left out
     of the average; the 2018 code is matched if at least one of its 2010 codes has a score.
   Dingel-Neiman codes whose six-digit code is not a SOC 2010 detailed code (19-1020.01 Biologists,
   under O*NET's broad 19-1020) do not reach the crosswalk; they are listed in the matching report.
3. otherwise the occupation stays unmatched and its hours are reported apart (group `unmatched`).

The crosswalk replaces the earlier fallback "mean of the Dingel-Neiman codes with the same six-digit
code": wherever a 2010 code kept its number, the crosswalk maps it to itself, so that fallback's
matches are all among the crosswalk's, and a renumbered code (15-1132 -> 15-1252) is found only by
the crosswalk. A fractional score t splits an occupation's hours: t to teleworkable, 1 - t to not.
"""

from __future__ import annotations

import pandas as pd

METHODS = ("exact", "crosswalk", "unmatched")
AVERAGING = (
    "A SOC 2018 code fed by several SOC 2010 codes gets the unweighted average of their Dingel-Neiman scores "
    "(each SOC 2010 code's score is the mean of its O*NET-SOC 2010 codes); a 2010 code split into several "
    "2018 codes gives its full score to each of them."
)


def soc_2018_scores(telework: pd.DataFrame, crosswalk: pd.DataFrame) -> pd.DataFrame:
    """Teleworkability per SOC 2018 code through the SOC 2010 -> 2018 crosswalk (rules in the module docstring).

    `telework`: onet_soc_code (O*NET-SOC 2010), teleworkable; `crosswalk`: soc_2010_code, soc_2018_code.
    Index soc_2018_code; columns teleworkable (the average) and n_soc_2010 (how many scored 2010 codes fed it).
    """
    by_2010 = telework.assign(soc_2010_code=telework["onet_soc_code"].str[:7]).groupby("soc_2010_code")["teleworkable"].mean()
    pairs = crosswalk[["soc_2010_code", "soc_2018_code"]].drop_duplicates()
    fed = pairs.merge(by_2010.rename("teleworkable"), left_on="soc_2010_code", right_index=True, how="inner")
    return fed.groupby("soc_2018_code").agg(teleworkable=("teleworkable", "mean"), n_soc_2010=("soc_2010_code", "nunique"))


def match_telework(occupations: pd.Series, telework: pd.DataFrame, crosswalk: pd.DataFrame) -> tuple[pd.Series, pd.Series, dict]:
    """Score each O*NET 29.3 code: exact O*NET-SOC match first, then its SOC 2018 code through the crosswalk.

    Returns the scores (index onet_soc_code; unmatched codes absent), the method per code
    ('exact' | 'crosswalk' | 'unmatched') and counts of occupations per method.
    """
    exact = telework.set_index("onet_soc_code")["teleworkable"]
    by_2018 = soc_2018_scores(telework, crosswalk)
    scores: dict[str, float] = {}
    method: dict[str, str] = {}
    averaged = 0
    for code in occupations.unique():
        if code in exact.index:
            scores[code] = float(exact[code])
            method[code] = "exact"
        elif code[:7] in by_2018.index:
            scores[code] = float(by_2018.at[code[:7], "teleworkable"])
            method[code] = "crosswalk"
            averaged += int(by_2018.at[code[:7], "n_soc_2010"] > 1)
        else:
            method[code] = "unmatched"
    methods = pd.Series(method, name="method", dtype="object")
    how: dict = {name: int((methods == name).sum()) for name in METHODS}
    how["crosswalk_averaged"] = averaged  # occupations whose 2018 code averages several scored 2010 codes
    known_2010 = set(crosswalk["soc_2010_code"])
    how["telework_codes_outside_crosswalk"] = sorted(c for c in telework["onet_soc_code"] if c[:7] not in known_2010)
    return pd.Series(scores, name="teleworkable", dtype="float64"), methods, how


def telework_split(tasks: pd.DataFrame, telework: pd.DataFrame, crosswalk: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """`tasks`: onet_soc_code, hours, covered. Rows: teleworkable, not_teleworkable, unmatched (always present).

    The matching report (second value) counts occupations per method, the share of work hours per method
    (`hours_share`), `hours_unmatched_share` (the share of all work hours with no score) and, in `averaging`,
    the rule for 2018 codes fed by several 2010 codes.
    """
    scores, methods, how = match_telework(tasks["onet_soc_code"], telework, crosswalk)
    frame = tasks.dropna(subset=["hours"]).copy()
    frame["t"] = frame["onet_soc_code"].map(scores)
    rows = []
    for group, weight in (("teleworkable", frame["t"]), ("not_teleworkable", 1 - frame["t"])):
        w = weight.fillna(0)
        total = float((frame["hours"] * w).sum())
        uncovered = float((frame["hours"] * w)[~frame["covered"]].sum())
        rows.append((group, total, uncovered))
    unmatched = frame["t"].isna()
    rows.append(("unmatched", float(frame.loc[unmatched, "hours"].sum()), float(frame.loc[unmatched & ~frame["covered"], "hours"].sum())))
    out = pd.DataFrame(rows, columns=["group", "hours_total", "hours_uncovered"])
    out["share_uncovered"] = out["hours_uncovered"] / out["hours_total"].where(out["hours_total"] > 0)
    out["share_of_all_uncovered_hours"] = out["hours_uncovered"] / out["hours_uncovered"].sum()
    all_hours = float(frame["hours"].sum())
    by_method = frame["hours"].groupby(frame["onet_soc_code"].map(methods)).sum()
    how["hours_share"] = {name: float(by_method.get(name, 0.0) / all_hours) if all_hours else None for name in METHODS}
    how["hours_unmatched_share"] = float(frame.loc[unmatched, "hours"].sum() / all_hours) if all_hours else None
    how["averaging"] = AVERAGING
    return out, how
