"""Codes of equal rows for the SMF 113 reader's grouping (records of one shape, distinct text values): numbered
in first-seen order, by hashing, never by sorting the rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["row_codes", "word_codes", "firsts", "groups", "code_groups"]


def row_codes(a: np.ndarray) -> np.ndarray:
    """Code per row of a 2-D uint8 array, equal rows equal codes, numbered in first-seen order (hash-based:
    the bytes as 8-byte words, factorized word by word; no sort of the rows)."""
    m, w = a.shape
    if w == 0 or m == 0 or bool((a == a[0]).all()):    # one value in every row: the usual case, no hashing
        return np.zeros(m, np.int64)
    pad = (-w) % 8
    a = np.concatenate([a, np.zeros((m, pad), np.uint8)], axis=1) if pad else np.ascontiguousarray(a)
    words = a.view(np.uint64)
    return word_codes([words[:, j] for j in range(words.shape[1])])


def word_codes(cols: list[np.ndarray]) -> np.ndarray:
    """Code per row of equal tuples of the word columns ``cols``, numbered in first-seen order (as row_codes
    numbers equal byte rows)."""
    codes = np.zeros(len(cols[0]), np.int64)
    for j, c in enumerate(cols):
        if bool((c == c[0]).all()):
            continue
        k = pd.factorize(c)[0].astype(np.int64)
        codes = k if not codes.any() else pd.factorize(codes * (int(k.max()) + 1) + k)[0].astype(np.int64)
    return codes


def firsts(codes: np.ndarray) -> np.ndarray:
    """Row of the first occurrence of each code (codes numbered in first-seen order)."""
    if not len(codes):
        return np.zeros(0, np.int64)
    prev_max = np.maximum.accumulate(np.r_[-1, codes[:-1]])
    return np.flatnonzero(codes > prev_max)


def groups(keys: np.ndarray):
    """Yield index arrays of rows with equal byte keys (rows of a 2-D uint8 array), first-seen order."""
    if len(keys) == 0:
        return
    if keys.shape[1] == 0:
        yield np.arange(len(keys))
        return
    yield from code_groups(row_codes(keys))


def code_groups(inv: np.ndarray):
    """Yield index arrays of rows with equal codes (numbered in first-seen order), first-seen order."""
    order = np.argsort(inv, kind="stable")
    bounds = np.flatnonzero(np.diff(inv[order])) + 1
    yield from np.split(order, bounds)
