"""Would an int8 model pass the gate for a faster labeler? A probe before a full labeled run.

    python bench/quantized_probe.py [--per-benchmark 45] [--output bench/quantized_probe.json]

It quantizes the embedder's fp32 ONNX export with onnxruntime's dynamic quantization (int8
weights, per channel, MatMul nodes only: the setting that kept the vectors closest among those
tried, see docs/speed.md), embeds every O*NET task statement and a fixed sample of each
benchmark's prompts with both models, and compares what retrieval builds on:

- the time each model takes for the same texts (one run each; the ratio is what matters);
- the cosine between a text's two vectors;
- for each prompt, whether the two models agree on its nearest task statement, that task's
  occupation and family, and the occupation and family of a vote of its 10 nearest tasks
  (similarity-weighted).

The gate (bench/backend_agreement.py) is on the labels of a full run: ≥ 97% of prompts with the
same family and ≥ 95% with the same occupation. The judges add evidence that does not depend on the
vectors (words, titles), so the labels may agree more than the nearest tasks do; a probe far below
the gate says a full run is not worth its hour. The result is written as `quantized_probe` into
bench/results.json (other keys kept), and the README's speed table shows it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from run import commit  # noqa: E402

from workbank_dagster.labeling.embedder import MODEL_NAME, Embedder, encode_unpadded, packaged_model_dir  # noqa: E402
from workbank_dagster.labeling.onnx_model import OnnxEncoder, exported_model  # noqa: E402
from workbank_dagster.settings import PipelineSettings  # noqa: E402


def quantize(fp32: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"])


def sample_prompts(paths: list[Path], per_benchmark: int) -> list[str]:
    """`per_benchmark` prompts of each benchmark file (in the order given), drawn with seed 0."""
    from workbank_dagster.sources.benchmarks import read_benchmark_prompts

    rng = np.random.default_rng(0)
    texts = []
    for path in paths:
        prompts = read_benchmark_prompts(path)["prompt"].tolist()
        texts.extend(prompts[i] for i in sorted(rng.permutation(len(prompts))[:per_benchmark]))
    return texts


def neighbours(prompts: np.ndarray, tasks: np.ndarray, occupation: np.ndarray) -> dict[str, np.ndarray]:
    sims = prompts @ tasks.T
    top = np.argsort(-sims, axis=1, kind="stable")[:, :10]
    vote_occupation, vote_family = [], []
    for row, s in zip(top, sims):
        by_occupation: dict[str, float] = {}
        by_family: dict[str, float] = {}
        for j in row:
            by_occupation[occupation[j]] = by_occupation.get(occupation[j], 0.0) + float(s[j])
            by_family[occupation[j][:2]] = by_family.get(occupation[j][:2], 0.0) + float(s[j])
        vote_occupation.append(max(by_occupation, key=by_occupation.get))
        vote_family.append(max(by_family, key=by_family.get))
    nearest = top[:, 0]
    return {
        "task": nearest,
        "occupation": occupation[nearest],
        "family": np.array([c[:2] for c in occupation[nearest]]),
        "vote_occupation": np.array(vote_occupation),
        "vote_family": np.array(vote_family),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-benchmark", type=int, default=45)
    parser.add_argument("--output", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args()
    from workbank_dagster.sources.assets import source_path
    from workbank_dagster.sources.benchmark_set import benchmark_set
    from workbank_dagster.sources.onet import TASK_STATEMENTS, read_task_statements

    settings = PipelineSettings.of().resolve()
    tasks = read_task_statements(source_path(TASK_STATEMENTS, settings))
    task_texts = tasks["task"].tolist()
    occupation = tasks["onet_soc_code"].to_numpy(dtype=str)
    prompts = sample_prompts([b.prompts.path() for _, b in sorted(benchmark_set(settings).items())], args.per_benchmark)
    folder = packaged_model_dir()
    fp32 = exported_model(folder, MODEL_NAME)
    vectors, seconds = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        int8 = Path(tmp) / "int8.onnx"
        quantize(fp32, int8)
        for name, path in (("fp32", fp32), ("int8", int8)):
            encoder = OnnxEncoder(path, folder)
            started = time.perf_counter()
            # Batched exactly as the pipeline's embedder batches (labeling/embedder.py).
            vectors[name] = tuple(encode_unpadded(encoder, texts, Embedder().batch_size) for texts in (task_texts, prompts))
            seconds[name] = round(time.perf_counter() - started, 1)
    cosine = np.concatenate([(vectors["fp32"][i] * vectors["int8"][i]).sum(axis=1) for i in (0, 1)])
    a, b = (neighbours(vectors[name][1], vectors[name][0], occupation) for name in ("fp32", "int8"))
    result = {
        "commit": commit(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"cpu": next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")), None)},
        "quantization": "onnxruntime quantize_dynamic: QInt8 weights, per channel, MatMul nodes",
        "texts": {"task_statements": len(task_texts), "prompts": len(prompts)},
        "seconds": seconds,
        "speedup": round(seconds["fp32"] / seconds["int8"], 2),
        "cosine": {"mean": round(float(cosine.mean()), 4), "min": round(float(cosine.min()), 4)},
        "prompts_agreeing": {key: round(float(np.mean(a[key] == b[key])), 3) for key in a},
        "gate": {"family_top1": 0.97, "occupation_top1": 0.95},
    }
    results = json.loads(args.output.read_text()) if args.output.is_file() else {}
    results["quantized_probe"] = result
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
