"""landing_rows sums each benchmark's families in one pass, to the last bit as one pandas groupby per
benchmark did (the bit can order two families)."""

import numpy as np
import pandas as pd

from workbank_dagster.report.landing import landing_rows

FAMILIES = [("11-0000", "Management Occupations"), ("15-0000", "Computer and Mathematical Occupations"), ("19-0000", "Science Occupations")]


def _per_benchmark(landing: pd.DataFrame, benchmark: str) -> list[tuple[str, float]]:
    mine = landing[landing["benchmark"] == benchmark].sort_values("occupation_rank")
    sums = mine.groupby(["family_code", "family_title"], as_index=False)["share_of_labeled"].sum()
    top = sums.sort_values(["share_of_labeled", "family_code"], ascending=[False, True])
    return [(t.removesuffix(" Occupations"), float(s)) for t, s in zip(top["family_title"][:2], top["share_of_labeled"][:2])]


def test_families_are_summed_as_one_groupby_per_benchmark_summed_them():
    rng = np.random.default_rng(0)
    rows = []
    for b in range(300):
        counts = rng.integers(1, 100, rng.integers(1, 40))
        # Half the benchmarks with their families in code order down the ranks (pandas then sums
        # by numpy's reduceat), half interleaved (its compensated sum).
        families = rng.integers(0, len(FAMILIES), len(counts))
        for rank, (count, family) in enumerate(zip(counts, np.sort(families) if b % 2 else families), start=1):
            code, title = FAMILIES[family]
            share = np.nan if rng.random() < 0.01 else count / counts.sum()
            rows.append({"benchmark": f"b{b:02d}", "occupation_title": f"occupation {rank}", "family_code": code, "family_title": title,
                         "share_of_labeled": share, "occupation_rank": rank})
    landing = pd.DataFrame(rows).sample(frac=1, random_state=0)
    index = pd.DataFrame({"benchmark": [f"b{b:02d}" for b in range(301)], "n_prompts": 10, "n_prompts_unlabeled": 0,
                          "n_prompts_labeled": 10, "n_prompts_abstained": 0})
    rows = landing_rows(landing, index, pd.DataFrame(), "judge")
    for row in rows.itertuples():
        assert repr(row.top_families) == repr(_per_benchmark(landing, row.benchmark)), row.benchmark
