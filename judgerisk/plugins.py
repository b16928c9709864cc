"""Plug-ins: the entry-point groups judgerisk reads, and the registry that loads them.

A package adds a method to judgerisk by declaring an entry point in one of
:data:`ENTRY_POINT_GROUPS` (CONTRIBUTING, "Plug-ins"); each registry built on :class:`Registry`
with ``group=`` loads its group the first time it is read. A new extension point needs only
``Registry(what, builtins={...}, group="judgerisk.<kind>", adopt=...)``.
"""

from judgerisk._util.registry import (
    ENTRY_POINT_GROUPS,
    NameView,
    PluginError,
    Registry,
    load_entry_points,
)

__all__ = ["ENTRY_POINT_GROUPS", "NameView", "PluginError", "Registry", "load_entry_points"]
