"""How often the uncovered-work-time bootstrap intervals cover the truth, on a synthetic population
with a known answer (analysis.coverage.simulate_interval_coverage); writes bench/interval_coverage.json,
which the README's interval paragraph is written from (`cli readme`) and a test recomputes."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workbank_dagster.analysis.coverage import simulate_interval_coverage  # noqa: E402

if __name__ == "__main__":
    started = time.perf_counter()
    result = simulate_interval_coverage()
    result["seconds"] = round(time.perf_counter() - started, 1)
    (REPO / "bench" / "interval_coverage.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
