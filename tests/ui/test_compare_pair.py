"""Issue 21: per processor class, the waterfall and the "Timelines of" chart beside it show the same pair.

The analyst chose "CPI change of ZOSA zIIP": the waterfall showed the zIIP (2.911 -> 2.599) while the overlay
still drew the LPAR's CPI (3.56 / 3.18).  Expected values: the engine's own class-interval rows of the zIIP
(``ws.metrics(by="class_interval", nodes=[class key])``), which the overlay must draw point for point.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.ui.test_compare_polish import Z15, Z16, data, side, tab, ws  # noqa: F401 (fixtures)


def curve_values(plot) -> dict[str, np.ndarray]:
    """The finite y values of each overlay curve by its side."""
    out = {}
    for c in plot.listDataItems():
        y = np.asarray(c.yData, dtype=float)
        out[c.name().split(":")[0]] = y[np.isfinite(y)]
    return out


def test_overlay_follows_the_waterfalls_class_pair(tab, ws):  # noqa: F811
    d = data(ws, side(Z15, ("ZOSA",)), side(Z16, ("ZOSA",)), by="class")
    tab.set_data(d)
    assert tab.set_pair("ZOSA zIIP")
    assert tab.shown_pair() == "ZOSA zIIP"
    # the waterfall: the zIIP pair's CPI before and after (the engine's comparison row)
    rec = d.comparison.cpi.set_index("pair").loc["ZOSA zIIP"]
    wf = tab.waterfall_frame()
    assert wf["value"].iloc[0] == pytest.approx(float(rec["cpi_before"]), rel=1e-12)
    # the overlay: the zIIP's interval CPI on each side, not the LPAR's
    got = curve_values(tab.ov_plot)
    assert set(got) == {"before", "after"}
    for name, cec in (("before", Z15), ("after", Z16)):
        want = ws.metrics(by="class_interval", nodes=[("class", cec, "ZOSA", "zIIP")])
        want = want.sort_values("interval_end")["CPI"].to_numpy(dtype=float)
        lpar = ws.metrics(by="lpar_interval", nodes=[("lpar", cec, "ZOSA")]).sort_values("interval_end")
        assert len(got[name]) == len(want[np.isfinite(want)])
        assert np.allclose(got[name], want[np.isfinite(want)], rtol=1e-12)
        assert not np.allclose(got[name], lpar["CPI"].to_numpy(dtype=float)[:len(got[name])])   # not the LPAR's
    assert "ZOSA zIIP" in tab.ov_plot.titleLabel.text
    legend = [label.text for _, label in tab.ov_plot.legend.items]    # the legend names the class too
    assert legend and all("ZOSA zIIP" in t for t in legend), legend
    # another pair in the box: both charts follow it
    assert tab.set_pair("ZOSA GCP")
    rec = d.comparison.cpi.set_index("pair").loc["ZOSA GCP"]
    assert tab.waterfall_frame()["value"].iloc[0] == pytest.approx(float(rec["cpi_before"]), rel=1e-12)
    want = ws.metrics(by="class_interval", nodes=[("class", Z15, "ZOSA", "GCP")]).sort_values("interval_end")
    assert np.allclose(curve_values(tab.ov_plot)["before"], want["CPI"].dropna().to_numpy(dtype=float), rtol=1e-12)
    assert "ZOSA GCP" in tab.ov_plot.titleLabel.text


def test_overlay_per_lpar_shows_the_chosen_lpar_pair(tab, ws):  # noqa: F811
    d = data(ws, side(Z15), side(Z16))      # ZOSA and ZOSB on both sides
    tab.set_data(d)
    assert tab.set_pair("ZOSB")
    labels = [label.text for _, label in tab.ov_plot.legend.items]
    assert len(tab.ov_plot.listDataItems()) == 2
    assert all("ZOSB" in t and "ZOSA" not in t for t in labels), labels
