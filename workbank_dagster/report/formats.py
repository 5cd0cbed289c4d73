"""How the report writes a number: one place for the page, its Limitations and its like-for-like rows."""

from __future__ import annotations

import math

import pandas as pd


def isnan(value) -> bool:
    """None, pandas' NA or a float NaN: a figure the run did not produce."""
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def pct(value, digits: int = 1) -> str:
    return "—" if isnan(value) else f"{100 * value:.{digits}f}%"


def num(value, digits: int = 0) -> str:
    return "—" if isnan(value) else f"{value:,.{digits}f}"
