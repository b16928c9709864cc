"""The package version, read from the installed metadata (``pyproject.toml`` is its one source)."""

from __future__ import annotations

from functools import cache

__all__ = ["package_version"]


@cache
def package_version() -> str:
    """The installed judgerisk's version (``"0+unknown"`` for a source tree never installed)."""
    from importlib import metadata  # on first use: judgerisk --help reads no metadata

    try:
        return metadata.version("judgerisk")
    except metadata.PackageNotFoundError:
        return "0+unknown"
