"""pyarrow (needed by the workspace cache) must not change how pandas stores NestScope's strings."""

import pandas as pd

import app  # noqa: F401 - importing the package pins the string storage


def test_string_storage_pinned_to_python():
    # pandas 3 would pick 'pyarrow' storage for str columns once pyarrow is installed
    s = pd.Series(["ZOSA", "ZOSB"])
    assert s.dtype == "str"
    assert s.dtype.storage == "python"
    assert s.astype("category").cat.categories.dtype.storage == "python"
