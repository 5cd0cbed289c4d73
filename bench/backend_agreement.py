"""Do the embedder's two backends label alike? Compares the labels of two finished runs, one per backend.

    python bench/backend_agreement.py TORCH_WAREHOUSE ONNX_WAREHOUSE [--output bench/results.json]

For every benchmark prompt and each embedded judge: the same top-1 task, occupation and family
(rank 1; an abstained prompt has none, and agrees only with another abstention), and the same set
of labelled tasks. The issue's gate for a faster labeler is ≥ 97% of prompts on the family and
≥ 95% on the occupation. The result is written as `backend_agreement` into bench/results.json
(other keys kept), and the README's speed table shows it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import duckdb
from run import commit

GATE = {"family_top1": 0.97, "occupation_top1": 0.95}

TOP1 = """
SELECT j.labeler, j.benchmark, j.prompt_id, l.task_id, t.onet_soc_code, left(t.onet_soc_code, 2) AS family,
       (SELECT string_agg(CAST(task_id AS VARCHAR), ',' ORDER BY task_id) FROM {db}.labeling.embedded_labels a
        WHERE a.labeler = j.labeler AND a.benchmark = j.benchmark AND a.prompt_id = j.prompt_id) AS task_set
FROM {db}.labeling.embedded_judgements j
LEFT JOIN {db}.labeling.embedded_labels l USING (labeler, benchmark, prompt_id)
LEFT JOIN {db}.raw.onet_task_statements t USING (task_id)
WHERE l.rank IS NULL OR l.rank = 1
"""


def agreement(torch_db: Path, onnx_db: Path) -> dict:
    con = duckdb.connect()
    con.execute(f"ATTACH '{torch_db}' AS torch_run (READ_ONLY)")
    con.execute(f"ATTACH '{onnx_db}' AS onnx_run (READ_ONLY)")
    rows = con.execute(
        f"""
        WITH a AS ({TOP1.format(db="torch_run")}), b AS ({TOP1.format(db="onnx_run")})
        SELECT labeler, count(*) AS prompts,
               avg(CASE WHEN a.task_id IS NOT DISTINCT FROM b.task_id THEN 1 ELSE 0 END) AS task_top1,
               avg(CASE WHEN a.onet_soc_code IS NOT DISTINCT FROM b.onet_soc_code THEN 1 ELSE 0 END) AS occupation_top1,
               avg(CASE WHEN a.family IS NOT DISTINCT FROM b.family THEN 1 ELSE 0 END) AS family_top1,
               avg(CASE WHEN a.task_set IS NOT DISTINCT FROM b.task_set THEN 1 ELSE 0 END) AS same_task_set
        FROM a JOIN b USING (labeler, benchmark, prompt_id)
        GROUP BY labeler ORDER BY labeler
        """
    ).fetchall()
    judges = {
        labeler: {"prompts": n, "task_top1": round(t, 4), "occupation_top1": round(o, 4), "family_top1": round(f, 4), "same_task_set": round(s, 4)}
        for labeler, n, t, o, f, s in rows
    }
    return {
        "compared": {"torch": str(torch_db), "onnx": str(onnx_db)},
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "gate": GATE,
        "judges": judges,
        "gate_met": all(judge[key] >= bar for judge in judges.values() for key, bar in GATE.items()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("torch_warehouse", type=Path)
    parser.add_argument("onnx_warehouse", type=Path)
    parser.add_argument("--output", type=Path, default=Path(__file__).resolve().parent / "results.json")
    args = parser.parse_args()
    result = agreement(args.torch_warehouse, args.onnx_warehouse)
    results = json.loads(args.output.read_text()) if args.output.exists() else {}
    results["backend_agreement"] = {**result, "commit": commit()}
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
