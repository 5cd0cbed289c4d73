"""Uncovered work time split by teleworkability (Dingel & Neiman 2020), METHOD.md §7.

Dingel-Neiman scores use the O*NET-SOC 2010 taxonomy. Matching, in order: (1) the same O*NET-SOC
code; (2) otherwise the mean score of the Dingel-Neiman codes with the same six-digit SOC code
(e.g. 15-1252.00 has no 2010 twin, so its 15-1252 siblings, if any, stand in); (3) otherwise the
occupation stays unmatched and its hours are reported apart. A fractional score t splits an
occupation's hours: t to teleworkable, 1 - t to not.
"""

from __future__ import annotations

import pandas as pd


def match_telework(occupations: pd.Series, telework: pd.DataFrame) -> tuple[pd.Series, dict]:
    exact = telework.set_index("onet_soc_code")["teleworkable"]
    by_soc = telework.assign(soc=telework["onet_soc_code"].str[:7]).groupby("soc")["teleworkable"].mean()
    scores, how = {}, {"exact": 0, "same_soc": 0, "unmatched": 0}
    for code in occupations.unique():
        if code in exact.index:
            scores[code] = float(exact[code])
            how["exact"] += 1
        elif code[:7] in by_soc.index:
            scores[code] = float(by_soc[code[:7]])
            how["same_soc"] += 1
        else:
            how["unmatched"] += 1
    return pd.Series(scores, name="teleworkable"), how


def telework_split(tasks: pd.DataFrame, telework: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """`tasks`: onet_soc_code, hours, covered. Rows: teleworkable, not_teleworkable, unmatched."""
    scores, how = match_telework(tasks["onet_soc_code"], telework)
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
    how["hours_unmatched_share"] = float(frame.loc[unmatched, "hours"].sum() / frame["hours"].sum()) if len(frame) else None
    return out, how
