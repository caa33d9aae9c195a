"""Arrow arrays from their buffers: the same arrays as `pa.array`, and no pandas import."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from spark_eos_connect.arrow_arrays import int_array, int_values, string_array


@pytest.mark.parametrize("type_", [pa.int32(), pa.int64(), pa.uint8()])
def test_int_array_holds_the_values_in_the_given_type(type_: pa.DataType) -> None:
    built = int_array([3, 0, 7], type_)

    assert built.type == type_
    assert built.equals(pa.array([3, 0, 7], type_))
    assert built.null_count == 0


def test_int_array_takes_a_numpy_array() -> None:
    assert int_array(np.arange(4, dtype=np.int64), pa.int32()).to_pylist() == [0, 1, 2, 3]


def test_int_array_takes_a_strided_view() -> None:
    runs = np.arange(12, dtype=np.int64).reshape(4, 3)

    assert int_array(runs[:, 1], pa.int32()).to_pylist() == [1, 4, 7, 10]


@pytest.mark.parametrize(
    ("values", "type_"),
    [
        (np.array([2**31 + 5], dtype=np.int64), pa.int32()),
        ([-1], pa.uint8()),
        ([2**63], pa.int64()),
    ],
)
def test_int_array_refuses_values_the_type_cannot_hold(
    values: list[int] | np.ndarray, type_: pa.DataType
) -> None:
    with pytest.raises(OverflowError):
        int_array(values, type_)


def test_int_array_refuses_what_is_no_integer() -> None:
    with pytest.raises(TypeError, match="integers"):
        int_array([1.5, 2.0], pa.int64())


def test_int_values_reads_a_slice_without_copying_its_neighbours() -> None:
    offsets = pa.array([10, 11, 12, 13, 14], pa.int64()).slice(2, 2)

    assert int_values(offsets).tolist() == [12, 13]
    assert int_values(pa.array([], pa.int32())).tolist() == []


def test_int_values_refuses_nulls_and_other_types() -> None:
    with pytest.raises(ValueError, match="nulls"):
        int_values(pa.array([1, None], pa.int64()))
    with pytest.raises(TypeError, match="integer array"):
        int_values(pa.array([1.5]))


def test_int_array_refuses_more_than_one_dimension() -> None:
    with pytest.raises(ValueError, match="one dimension"):
        int_array(np.zeros((2, 2), dtype=np.int64), pa.int64())


@pytest.mark.parametrize(
    "values",
    [
        [],
        ["topic"],
        ["topic"] * 5,
        ["a", "bb", "a", "", "ccc", "bb"],
        ["données", "日本", "données"],
    ],
)
def test_string_array_is_the_array_pa_array_builds(values: list[str]) -> None:
    built = string_array(values)

    assert built.type == pa.string()
    assert built.equals(pa.array(values, pa.string()))


def test_committed_rows_are_built_without_importing_pandas() -> None:
    """pyarrow imports pandas on its first conversion of a Python list; a fresh task host
    builds its committed rows before its first commit, and must not pay for that."""
    code = (
        "import sys\n"
        "from spark_eos_connect.source.records import committed_rows\n"
        "from spark_eos_connect.source.replay import decode_rows_header, encode_rows_header\n"
        "rows = committed_rows(['t'] * 3 + ['u'], [0, 0, 0, 1], [5, 6, 7, 2])\n"
        "assert decode_rows_header(encode_rows_header('a', rows))[1].equals(rows)\n"
        "print('pandas' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )

    assert done.stdout.strip() == "False", done.stderr
