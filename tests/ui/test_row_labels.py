"""Rows of two CECs with the same LPAR name never read the same (issue 10): CEC and generation are added."""

from __future__ import annotations

import pandas as pd

from app.ui.frames import node_texts, system_texts


def test_same_name_on_two_cecs_is_qualified():
    df = pd.DataFrame({"system": ["ZOSA", "ZOSA", "ZOSB"], "lpar": ["ZOSA", "ZOSA", "ZOSB"],
                       "cec": ["8561-45A12", "3931-123F5", "3931-123F5"], "generation": ["z15", "z16", "z16"],
                       "_by": ["lpar_interval"] * 3})
    assert system_texts(df) == ["ZOSA (8561-45A12 z15)", "ZOSA (3931-123F5 z16)", "ZOSB"]
    assert node_texts(df)[:2] == ["ZOSA (8561-45A12 z15)", "ZOSA (3931-123F5 z16)"]


def test_one_cec_keeps_plain_names():
    df = pd.DataFrame({"system": ["ZOSA", "ZOSB"], "lpar": ["ZOSA", "ZOSB"], "cec": ["3931-123F5"] * 2,
                       "generation": ["z16"] * 2})
    assert system_texts(df) == ["ZOSA", "ZOSB"]
