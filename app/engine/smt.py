"""SMT (multithreading) helpers, metrics.md section 5.

IBM definitions: capacity factor (CF) = work done with MT / work without MT;
maximum capacity factor (mCF) = maximum work with all threads active / work
without MT; productivity = CF / mCF; MT utilization = core busy x
productivity (RMF "MT % UTIL").  Thread density from the MT-diagnostic
counters: TD = (M448 + 2*M449) / (M448 + M449), one CPU per core.
"""

from __future__ import annotations

import numpy as np

__all__ = ["productivity", "mt_utilization", "thread_density"]


def _f(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def productivity(cf, mcf):
    """Productivity = CF / mCF (fractions or percentages alike); NaN when mCF is 0 or missing.

    Parameters
    ----------
    cf, mcf : float or array-like
        Capacity factor and maximum capacity factor in the same unit.

    Returns
    -------
    float or numpy.ndarray
        Fraction (0..1).
    """
    with np.errstate(all="ignore"):
        c, m = _f(cf), _f(mcf)
        r = np.where(m > 0, c / m, np.nan)
    return float(r) if r.ndim == 0 else r


def mt_utilization(core_busy, prod):
    """MT utilization = core busy x productivity (same unit as ``core_busy``)."""
    with np.errstate(all="ignore"):
        r = _f(core_busy) * _f(prod)
    return float(r) if r.ndim == 0 else r


def thread_density(m448, m449):
    """Average active threads per dispatched core from counters M448 (one thread active) and
    M449 (two threads active): (M448 + 2*M449) / (M448 + M449); NaN when both are 0."""
    with np.errstate(all="ignore"):
        a, b = _f(m448), _f(m449)
        d = a + b
        r = np.where(d > 0, (a + 2 * b) / d, np.nan)
    return float(r) if r.ndim == 0 else r
