"""Judge v5: judge v4 over retrieval that reads a prompt stating no role differently. Measured by
bench/judge_variants.py (variant `v5`, and the start of the `--search` that chose v6's weights), never
run by the pipeline (v7, and v3 beside it: labeling/judges.py), so it lives here, not in the package.

Most benchmarks state no role (SWE-bench, OSWorld, tau-bench...), and there v4 followed the domain a
prompt is dressed in (a radiology dataset, a bank's customers, an airline) rather than the work it
asks for, which its siblings share. For a prompt that states no role, decided per prompt, v5 weighs
the benchmark context 4 × (`Narrowing.context_without_role`; v4: 1 ×); a prompt that states one is
narrowed exactly as by v4. Chosen on the `tune` halves of labels_dev and the reference set; a second
option chosen with it there (the task evidence 1.5 × for such prompts) added nothing on the `holdout`
halves and was left out (docs/labeling.md). v6 keeps these weights and adds its own.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workbank_dagster.labeling.judges import EmbeddedJudgeV4  # noqa: E402
from workbank_dagster.labeling.narrowing import Narrowing  # noqa: E402

EMBEDDED_LABELER_V5 = "embedded:all-MiniLM-L6-v2:v5"


@dataclass(frozen=True)
class EmbeddedJudgeV5(EmbeddedJudgeV4):
    """Judge v4's selection, with the benchmark context of a prompt that states no role weighed 4 ×."""

    narrowing: Narrowing = Narrowing(temperature=2.0, family=2.0, prior=0.2, context=1.0, context_without_role=4.0)
    labeler: str = EMBEDDED_LABELER_V5
