"""Cosines of a query with many rows, the same for a row whichever call it is in.

BLAS computes a matrix-vector product a few rows at a time; the last rows of a call (when the
number of rows is not a multiple of that group) go through another code path that sums in
another order, so a row's float32 result could depend on how many rows the call held. Recall
computes cosines in one product over every fact in one process and in blocks while reading the
vector file in another, and must rank alike: every product here has a multiple of ROW_GROUP
rows (the rest padded with zeros), so each row takes the main path, whose result depends on the
row and the query alone (`tests/test_embed.py` checks it on this machine's BLAS).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

ROW_GROUP = 64   # a multiple of every row-group size BLAS kernels use


def cosines(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """`matrix @ query` (float32, one value per row of unit-stride rows), computed so that each
    row's value does not depend on the other rows."""
    import numpy as np

    rows = len(matrix)
    head = rows - rows % ROW_GROUP
    out = np.empty(rows, dtype=np.float32)
    if head:
        out[:head] = matrix[:head] @ query
    if head < rows:
        tail = np.zeros((ROW_GROUP, matrix.shape[1]), dtype=np.float32)
        tail[:rows - head] = matrix[head:]
        out[head:] = (tail @ query)[:rows - head]
    return out
