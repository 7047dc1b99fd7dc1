"""NestScope: IBM Z CPU MF analyzer for SMF 113 and z/VM MONWRITE data."""

__version__ = "0.1.0"


def _pin_string_storage() -> None:
    """pandas 3 stores ``str`` columns in pyarrow when pyarrow is installed (the workspace cache needs it);
    keep NestScope's string columns on the python storage it was written and tested with."""
    try:
        import pandas as pd
        pd.set_option("mode.string_storage", "python")
    except Exception:  # noqa: BLE001 - pandas missing or an older pandas without the option: nothing to pin
        pass


_pin_string_storage()
