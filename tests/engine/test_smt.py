"""SMT helpers on IBM's worked example."""

from __future__ import annotations

import numpy as np
import pytest

from app.engine.smt import mt_utilization, productivity, thread_density


def test_ibm_example():
    # core busy 80 %, thread density 1.25, CF 113 %, mCF 156 %
    # productivity = CF / mCF = 1.13 / 1.56 = 0.724358974...  (IBM shows 72.4 %, rounded to ~73 %)
    p = productivity(113.0, 156.0)
    assert p == pytest.approx(1.13 / 1.56)
    assert round(p * 100, 1) == 72.4
    # MT utilization = core busy x productivity = 80 x 0.724358974 = 57.9487... %  (IBM: about 58-59 %)
    u = mt_utilization(80.0, p)
    assert u == pytest.approx(80 * 1.13 / 1.56)
    assert 57.9 < u < 59.0
    # with IBM's rounded productivity 73 %: 80 x 0.73 = 58.4 %
    assert mt_utilization(80.0, 0.73) == pytest.approx(58.4)


def test_thread_density_and_zero():
    # 1,000 cycles one thread active, 1,000 cycles two threads active: (1000 + 2*1000)/(2000) = 1.5
    assert thread_density(1000, 1000) == pytest.approx(1.5)
    assert np.isnan(thread_density(0, 0))
    assert np.isnan(productivity(1.0, 0.0))
    np.testing.assert_allclose(productivity(np.array([1.0, 2.0]), np.array([2.0, 2.0])), [0.5, 1.0])
