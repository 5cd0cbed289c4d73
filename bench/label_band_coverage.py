"""How often the label-uncertainty band covers the true uncovered share, with known labels
(analysis.uncertainty.simulate_band_coverage), in two worlds: one where the truth is where the band
assumes it, one where it is not. Writes bench/label_band_coverage.json, which docs/analysis.md's
paragraph on the band is written from (`tools/readme.py`) and a test recomputes."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workbank_dagster.analysis.uncertainty import simulate_band_coverage  # noqa: E402

SCENARIOS = {
    "as_assumed": {"truth_model": "band", "samples": 100, "draws": 100},
    "not_as_assumed": {"truth_model": "ahead", "samples": 100, "draws": 100},
}

if __name__ == "__main__":
    out = {"scenarios": {}}
    for name, arguments in SCENARIOS.items():
        started = time.perf_counter()
        result = simulate_band_coverage(**arguments)
        out["scenarios"][name] = {"arguments": arguments, **result, "seconds": round(time.perf_counter() - started, 1)}
    (REPO / "bench" / "label_band_coverage.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
