"""Private helpers of :mod:`judgerisk.extract._generation`."""

import pandas as pd
import pytest

from judgerisk.extract._generation import _forced_choices


def test_forced_choices_must_cover_every_prompt():
    prompts = pd.DataFrame({"item": ["a", "b"], "condition": ["original"] * 2})
    ok = pd.DataFrame({"item": ["b", "a"], "condition": ["original"] * 2, "choice": ["B", "A"]})
    assert _forced_choices(prompts, ok) == ["A", "B"]
    with pytest.raises(ValueError, match="no 'A'/'B' for 1 prompt"):
        _forced_choices(prompts, ok.head(1))
