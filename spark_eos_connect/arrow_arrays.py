"""Arrow arrays built from Python values through their buffers.

`pa.array(values)` on a Python list (or a NumPy array) first asks whether the values are a
pandas object, and pyarrow answers that by importing pandas: 0.3 s the first time in a process
(pandas 2.3, this machine). A source task host built its first micro-batch's committed rows
that way, before the transaction's commit, so every fresh task paid it on the way to its first
visible record. The builders here make the same arrays from NumPy buffers and never ask.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa


def int_array(values: Sequence[int] | np.ndarray, type_: pa.DataType) -> pa.Array:
    """A null-free integer array of Arrow type `type_` (int8 ... int64, signed or not); a value
    that does not fit the type raises, as with `pa.array`."""
    dtype = np.dtype(type_.to_pandas_dtype())
    given = np.asarray(values)
    if given.ndim != 1:
        raise ValueError(f"an integer array needs one dimension, got shape {given.shape}")
    if given.size and given.dtype.kind not in "iu":
        raise TypeError(f"an integer array needs integers, got {given.dtype}")
    if given.size:
        bounds = np.iinfo(dtype)
        low, high = int(given.min()), int(given.max())
        if low < bounds.min or high > bounds.max:
            raise OverflowError(f"{low}..{high} does not fit {type_}")
    data = np.ascontiguousarray(given, dtype=dtype)
    return pa.Array.from_buffers(type_, len(data), [None, pa.py_buffer(data)])


def string_array(values: Sequence[str]) -> pa.Array:
    """A null-free UTF-8 string array; each distinct value is encoded once (a topic per row)."""
    distinct = list(dict.fromkeys(values))
    if len(distinct) <= 1:
        positions = np.zeros(len(values), dtype=np.int32)
    else:
        index = {value: i for i, value in enumerate(distinct)}
        positions = np.fromiter(map(index.__getitem__, values), np.int32, len(values))
    encoded = [v.encode("utf-8") for v in distinct]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    dictionary = pa.Array.from_buffers(pa.string(), len(encoded), buffers)
    indices = int_array(positions, pa.int32())
    return pa.DictionaryArray.from_arrays(indices, dictionary).dictionary_decode()


def int_values(array: pa.Array) -> np.ndarray:
    """The values of a null-free integer array, as a read-only NumPy view of its buffer
    (`Array.to_numpy` asks pyarrow's pandas layer, which imports pandas)."""
    if not pa.types.is_integer(array.type):
        raise TypeError(f"an integer array is expected, got {array.type}")
    if array.null_count:
        raise ValueError(f"an integer array with {array.null_count} nulls has no plain values")
    dtype = np.dtype(array.type.to_pandas_dtype())
    buffer = array.buffers()[1]
    if buffer is None:  # an empty array may have no data buffer
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(
        buffer, dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize
    )
