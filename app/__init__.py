"""NestScope: IBM Z CPU MF analyzer for SMF 113 and z/VM MONWRITE data."""

import sys

__version__ = "0.1.0"


def _pin_string_storage() -> None:
    """pandas 3 stores ``str`` columns in pyarrow when pyarrow is installed (the workspace cache needs it);
    keep NestScope's string columns on the python storage it was written and tested with."""
    try:
        import pandas as pd
        pd.set_option("mode.string_storage", "python")
    except Exception:  # noqa: BLE001 - pandas missing or an older pandas without the option: nothing to pin
        pass


class _PinLoader:
    """pandas's own loader, pinning the string storage right after pandas has run (before any caller uses it)."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def __getattr__(self, name: str):
        return getattr(self._inner, name)      # get_code, get_resource_reader, ...: the real loader's

    def create_module(self, spec):
        create = getattr(self._inner, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module) -> None:
        self._inner.exec_module(module)
        _pin_string_storage()


class _PinOnImport:
    """A finder that only acts on ``pandas``: the package imports without pandas (1 s of the window's start,
    issue 23), and pandas, whenever something imports it, has the storage pinned before it is used."""

    def find_spec(self, name, path=None, target=None):
        if name != "pandas":
            return None
        for finder in [f for f in sys.meta_path if f is not self]:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _PinLoader(spec.loader)
                return spec
        return None


if "pandas" in sys.modules:
    _pin_string_storage()
elif not any(isinstance(f, _PinOnImport) for f in sys.meta_path):
    sys.meta_path.insert(0, _PinOnImport())
