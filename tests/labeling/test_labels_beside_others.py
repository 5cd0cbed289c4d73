"""A benchmark's labels do not depend on what was labeled beside it, on any BLAS kernel, nor on its slug.

OpenBLAS, with OPENBLAS_CORETYPE=Haswell (set on some of our machines), rounds a row of a float32
matrix product differently in stacks of different heights; the embedding model rounds a text's
vector differently in batches padded to different lengths. Before the fix a benchmark labeled beside
two others got scores up to 1.5e-7 and confidences up to 4.9e-7 away from the same benchmark
labeled alone (test_removal failed on such a machine). Each environment runs in a process of its
own, since OpenBLAS reads the variable when it loads.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

SUBJECT, OTHERS = "finance-agent", ("cybench", "paperbench")  # the subject sorts between the others
KERNELS = {
    "haswell": {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_L2_SIZE": "512"},
    "default": {},
}


def _differences(alone: pd.DataFrame, beside: pd.DataFrame) -> dict:
    """Per differing column, how many rows differ (and for numbers, by how much at most)."""
    if alone.shape != beside.shape or list(alone.columns) != list(beside.columns):
        return {"shape": (alone.shape, beside.shape), "columns": (list(alone.columns), list(beside.columns))}
    out = {}
    for column in alone.columns:
        a, b = alone[column], beside[column]
        differ = ~((a == b).fillna(False) | (a.isna() & b.isna()))
        if differ.any():
            gap = (a.astype("float64") - b.astype("float64")).abs().max() if pd.api.types.is_numeric_dtype(a) else None
            out[column] = {"rows": int(differ.sum()), "max_gap": gap}
    return out


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_a_benchmark_labeled_alone_beside_two_others_or_renamed_gets_bit_identical_rows(tmp_path, reduced_source_dir, session_cache, kernel):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS_")}
    env.update(KERNELS[kernel])
    script = Path(__file__).parents[1] / "support" / "labels_beside_run.py"
    completed = subprocess.run(
        [sys.executable, str(script), str(reduced_source_dir), str(session_cache), str(tmp_path), SUBJECT, *OTHERS],
        env=env, capture_output=True, text=True, timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    for judge in ("v3", "default"):
        for what in ("labels", "judgements"):
            alone = pd.read_parquet(tmp_path / f"alone_{judge}_{what}.parquet")
            assert len(alone) > 0 and set(alone["benchmark"]) == {SUBJECT}, (judge, what)
            # Beside two others, and beside them under another slug (first in the order, not
            # between them): a judge reads what a benchmark's prompts share, never its name.
            for scenario in ("beside", "renamed"):
                other = pd.read_parquet(tmp_path / f"{scenario}_{judge}_{what}.parquet")
                assert alone.equals(other), (judge, what, kernel, scenario, _differences(alone, other))
    default = pd.read_parquet(tmp_path / "alone_default_judgements.parquet")
    assert default["confidence"].notna().any(), "the judgements carry the default judge's confidences, which must match too"
