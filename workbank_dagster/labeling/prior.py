"""An occupation (and so family) prior learned from O*NET's own text, never from benchmark labels.

Training examples are O*NET texts, each labelled with its occupation: task statements, the titles
of the detailed work activities (DWAs) its tasks are linked to, its title, alternate and reported
titles, and the technology (software) it lists. Each text is embedded with the judge's sentence
model, and a linear discriminant analysis (shared covariance, Ledoit-Wolf shrinkage, uniform class
priors so that an occupation with many alternate titles is not favoured) maps a vector to
log P(occupation | vector). Family probabilities are the sums over each family's occupations.

LDA is a linear model with a closed-form fit: no seed, no iterations, the same weights from the same
texts. Its weights are one 384-vector and a bias per occupation (about 1.4 MB as float32).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..atomic import write_bytes
from ..code_version import code_version
from ..fingerprint import fingerprint

# Texts per occupation and kind, at most, so that a title list of 300 does not drown the tasks.
MAX_PER_KIND = 60


def training_texts(
    tasks: pd.DataFrame,
    occupations: pd.DataFrame,
    task_dwas: pd.DataFrame | None = None,
    titles: pd.DataFrame | None = None,
    technology: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """text, onet_soc_code, kind: every O*NET text that says what an occupation does or is called.

    `tasks`: task_id, onet_soc_code, task; `occupations`: onet_soc_code, title (those with tasks);
    `task_dwas`: onet_soc_code, dwa_title; `titles`: onet_soc_code, title (titles.title_rows);
    `technology`: onet_soc_code, example. Rows are sorted and capped deterministically.
    """
    codes = set(occupations["onet_soc_code"])
    frames = [
        pd.DataFrame({"text": tasks["task"], "onet_soc_code": tasks["onet_soc_code"], "kind": "task"}),
        pd.DataFrame({"text": occupations["title"], "onet_soc_code": occupations["onet_soc_code"], "kind": "title"}),
    ]
    if task_dwas is not None:
        frames.append(pd.DataFrame({"text": task_dwas["dwa_title"], "onet_soc_code": task_dwas["onet_soc_code"], "kind": "dwa"}))
    if titles is not None:
        frames.append(pd.DataFrame({"text": titles["title"], "onet_soc_code": titles["onet_soc_code"], "kind": "title"}))
    if technology is not None:
        frames.append(pd.DataFrame({"text": technology["example"], "onet_soc_code": technology["onet_soc_code"], "kind": "technology"}))
    texts = pd.concat(frames, ignore_index=True).astype({"text": "string", "onet_soc_code": "string", "kind": "string"})
    texts = texts[texts["onet_soc_code"].isin(codes) & texts["text"].notna()]
    texts = texts.assign(text=texts["text"].str.strip()).drop_duplicates(["text", "onet_soc_code"])
    texts = texts.sort_values(["onet_soc_code", "kind", "text"], kind="stable")
    texts = texts.groupby(["onet_soc_code", "kind"], sort=False).head(MAX_PER_KIND)
    return texts.reset_index(drop=True)


def prior_key(texts: pd.DataFrame, embedding: str) -> str:
    """What the prior is fitted from, as every cached step keys its work (fingerprint.py): the code
    that fits it (the code version of `OccupationPrior` and what it reaches: code_version.py), the
    embedding store's name for the vectors (model and batching: embedder.Embedder.store_key) and the
    training texts, in their sorted order."""
    return fingerprint(code=code_version(OccupationPrior), inputs=[embedding, texts[["onet_soc_code", "text"]]])


@dataclass
class OccupationPrior:
    """log P(occupation | vector) for the occupations `codes`, in that order."""

    codes: list[str]
    coef: np.ndarray  # (n_occupations, dim) float32
    intercept: np.ndarray  # (n_occupations,) float32
    inputs_sha256: str

    @classmethod
    def fit(cls, vectors: np.ndarray, labels: list[str], codes: list[str], inputs_sha256: str) -> OccupationPrior:
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

        position = {code: i for i, code in enumerate(codes)}
        y = np.array([position[c] for c in labels], dtype=np.int64)
        missing = sorted(set(range(len(codes))) - set(y.tolist()))
        if missing:
            raise ValueError(f"occupation prior: no training text for {[codes[i] for i in missing[:5]]}")
        model = LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto", priors=np.full(len(codes), 1.0 / len(codes)))
        model.fit(vectors.astype(np.float64), y)
        return cls(list(codes), model.coef_.astype(np.float32), model.intercept_.astype(np.float32), inputs_sha256)

    def log_proba(self, vectors: np.ndarray) -> np.ndarray:
        logits = vectors @ self.coef.T + self.intercept
        logits = logits - logits.max(axis=1, keepdims=True)
        return logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))

    def save(self, path: Path) -> None:
        buffer = io.BytesIO()
        np.savez_compressed(buffer, codes=np.array(self.codes), coef=self.coef, intercept=self.intercept, inputs_sha256=np.array(self.inputs_sha256))
        write_bytes(path, buffer.getvalue())  # two processes may write one cached prior: each its own temporary file

    @staticmethod
    def key_of(path: Path) -> str:
        """The key a saved prior was fitted under (`prior_key`), read without its weights."""
        with np.load(path, allow_pickle=False) as data:
            return str(data["inputs_sha256"])

    @classmethod
    def load(cls, path: Path) -> OccupationPrior:
        with np.load(path, allow_pickle=False) as data:
            return cls([str(c) for c in data["codes"]], data["coef"], data["intercept"], str(data["inputs_sha256"]))
