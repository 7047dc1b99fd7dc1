"""XLSX export (being written): see app/export/__init__.py for the API."""

from __future__ import annotations


def write_xlsx(request, path: str, steps) -> dict[str, int]:
    from app.export import ExportError

    raise ExportError(f"{path}: .xlsx export is not available yet")
