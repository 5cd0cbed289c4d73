"""The judge's confidence, calibrated: the first step of the label-uncertainty band (uncertainty.py).

The raw confidence is a softmax output, not a probability of being right. A logistic regression of
"the top label is in the authors' occupation" on logit(confidence), fitted on labels_dev's `tune`
half, gives q = Λ(a + b·logit(c)) (`fit_calibration`); a `Calibration` carries (a, b) and their
covariance, from which the re-drawing (label_draws.py) takes each draw's pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPS = 1e-6


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), EPS, 1 - EPS)
    return np.log(p / (1 - p))


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


@dataclass(frozen=True)
class Calibration:
    """q = Λ(intercept + slope · logit(confidence)), with the covariance of (intercept, slope).

    `n` prompts were fitted, `n_correct` of them right; `fitted` is False when they could not be
    (fewer than MIN_CALIBRATION prompts, or all right or all wrong): the raw confidence is then used
    as it is (intercept 0, slope 1, no covariance), and the band says so."""

    intercept: float
    slope: float
    cov: np.ndarray
    n: int
    n_correct: int
    fitted: bool

    def probability(self, confidence) -> np.ndarray:
        return calibrated_probability(confidence, self.intercept, self.slope)


IDENTITY = Calibration(0.0, 1.0, np.zeros((2, 2)), 0, 0, False)
MIN_CALIBRATION = 10


def calibrated_probability(confidence, intercept: float, slope: float) -> np.ndarray:
    """Λ(intercept + slope · logit(confidence)); confidence clipped to [1e-6, 1 − 1e-6]."""
    return _expit(intercept + slope * _logit(confidence))


def fit_calibration(confidence, correct, *, max_iter: int = 50) -> Calibration:
    """Logistic regression of `correct` (0/1) on logit(confidence), by Newton's method; its covariance
    is the inverse of the information matrix at the estimate."""
    x = _logit(confidence)
    y = np.asarray(correct, dtype=float)
    n, n_correct = len(y), int(y.sum())
    if n < MIN_CALIBRATION or n_correct in (0, n):
        return Calibration(0.0, 1.0, np.zeros((2, 2)), n, n_correct, False)
    X = np.column_stack([np.ones(n), x])
    beta = np.zeros(2)
    for _ in range(max_iter):
        p = _expit(X @ beta)
        information = (X * (p * (1 - p))[:, None]).T @ X
        step = np.linalg.solve(information, X.T @ (y - p))
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    if not np.all(np.isfinite(beta)) or np.max(np.abs(beta)) > 50:  # separation: the fit ran away
        return Calibration(0.0, 1.0, np.zeros((2, 2)), n, n_correct, False)
    p = _expit(X @ beta)
    cov = np.linalg.inv((X * (p * (1 - p))[:, None]).T @ X)
    return Calibration(float(beta[0]), float(beta[1]), cov, n, n_correct, True)
