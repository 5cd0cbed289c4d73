"""The fingerprint of a frame (workbank_dagster/fingerprint.py): numeric columns are fed as their
bytes, the others through pandas' hash of each value; either way equal frames give equal keys and
any change of a value, a column's name, order or type gives another."""

import numpy as np
import pandas as pd
import pytest

from workbank_dagster.fingerprint import content_version, fingerprint


def _key(frame: pd.DataFrame) -> str:
    return fingerprint(code="v", inputs=[frame])


def _frame() -> pd.DataFrame:
    return pd.DataFrame({
        "benchmark": ["a", "a", "b"], "prompt": np.array([0, 1, 2], dtype=np.int64), "rank": np.array([1, 2, 1], dtype=np.int32),
        "p": [0.5, 0.25, np.nan], "kept": [True, False, True], "n": pd.array([1, pd.NA, 3], dtype="Int64"),
    })


def test_equal_frames_give_equal_keys_whatever_their_memory():
    frame = _frame()
    # A column that is a strided view (every other row of a larger array) holds the same values.
    strided = frame.copy()
    strided["p"] = np.array([0.5, 9.0, 0.25, 9.0, np.nan, 9.0])[::2]
    assert _key(frame) == _key(frame.copy()) == _key(strided)
    assert _key(frame.iloc[::-1].iloc[::-1]) == _key(frame)


@pytest.mark.parametrize(
    "change",
    [
        lambda f: f.assign(prompt=f["prompt"].replace(2, 3)),  # an integer
        lambda f: f.assign(p=f["p"].fillna(0.0)),  # a float (NaN to 0)
        lambda f: f.assign(kept=~f["kept"]),  # a boolean
        lambda f: f.assign(benchmark=["a", "b", "b"]),  # a string
        lambda f: f.assign(n=pd.array([1, 2, 3], dtype="Int64")),  # a nullable integer
        lambda f: f.assign(rank=f["rank"].astype(np.int64)),  # a type, the values equal
        lambda f: f[["prompt", "benchmark", "rank", "p", "kept", "n"]],  # the columns' order
        lambda f: f.rename(columns={"rank": "task_rank"}),  # a name
        lambda f: f.iloc[:2],  # a row fewer
        lambda f: f.iloc[[1, 0, 2]].reset_index(drop=True),  # the rows' order
    ],
)
def test_any_change_gives_another_key(change):
    assert _key(change(_frame())) != _key(_frame())


def test_the_same_bytes_in_another_shape_give_another_key():
    # Fed column by column, [1, 2, 3, 4] in one column and [1, 2] | [3, 4] in two are the same
    # bytes: the shape and the columns, fed first, tell them apart.
    assert _key(pd.DataFrame({"a": [1, 2, 3, 4]})) != _key(pd.DataFrame({"a": [1, 2], "b": [3, 4]}))
    assert _key(pd.DataFrame({"a": [1, 2], "b": [3, 4]})) != _key(pd.DataFrame({"b": [1, 2], "a": [3, 4]}))
    assert content_version(pd.DataFrame({"a": [1, 2]})) != content_version(pd.DataFrame({"a": [2, 1]}))


def test_a_data_version_follows_the_values_not_the_types():
    """A step that keeps its tables reports them as read back from the warehouse, with other types
    than the frames it wrote: the same content must keep its data version (test_idempotency)."""
    written = pd.DataFrame({"n": np.array([1, 2], dtype=np.int64), "name": pd.Series(["a", "b"], dtype=object)})
    read_back = pd.DataFrame({"n": np.array([1, 2], dtype=np.int32), "name": pd.Series(["a", "b"], dtype="string")})
    assert content_version(written) == content_version(read_back)
    assert content_version(written) != content_version(written.assign(n=[1, 3]))
    assert _key(written) != _key(read_back)  # a step's own inputs are read the same way each run: their types count
