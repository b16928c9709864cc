"""White-box tests of the shared registry: entry-point loading (simulated) and ordering."""

from __future__ import annotations

import json
import warnings
from importlib import metadata

import pytest

from judgerisk import plugins


def test_entry_point_loading_in_process(monkeypatch):
    """load_entry_points hands each loaded object to the registry's adopt hook."""
    from importlib import metadata

    from judgerisk import plugins

    seen = {}
    ep = metadata.EntryPoint(name="toy", value="json:dumps", group="judgerisk.importers")
    monkeypatch.setattr(metadata, "entry_points", lambda group: [ep] if group == ep.group else [])
    assert plugins.load_entry_points("judgerisk.importers", seen.__setitem__) == ["toy"]
    assert seen == {"toy": json.dumps}
    reg = plugins.Registry(
        "importer", group="judgerisk.importers", adopt=lambda n, o: reg.add(n, o)
    )
    assert list(reg.names()) == ["toy"]


def test_builtins_come_first_in_their_listed_order():
    reg = plugins.Registry("thing", builtins={"b": "json", "a": "json"})
    reg.add("late", 3)
    reg.add("a", 1)
    reg.add("b", 2)
    assert list(reg.names()) == ["b", "a", "late"]
    with pytest.raises(ValueError, match="already registered"):
        reg.add("a", 5)


def test_a_failing_plugin_is_skipped_with_a_warning(monkeypatch):
    ep = metadata.EntryPoint(name="bad", value="no_such_module_xyz:f", group="judgerisk.selectors")
    monkeypatch.setattr(metadata, "entry_points", lambda group: [ep])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert plugins.load_entry_points("judgerisk.selectors") == []
    assert any("'bad'" in str(w.message) for w in caught)
