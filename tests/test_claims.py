"""A typed direction sentence fails the run when its intervals say otherwise."""

from __future__ import annotations

import pytest

from judgerisk._book.claims import ClaimError, check_direction, direction_word


def test_direction_word_follows_the_rule():
    assert direction_word(0.001, 0.2) == "beats"
    assert direction_word(-0.1, 0.0) == "ties with"
    assert direction_word(-0.3, -0.01) == "trails"
    with pytest.raises(ValueError):
        direction_word(0.2, 0.1)


def test_check_direction_names_the_contradicting_interval():
    sentence = "C+S beats U+C+S on all three subsets"
    lows, highs = [0.01, 0.02, -0.01], [0.05, 0.06, 0.03]
    with pytest.raises(ClaimError, match="matched: \\[-0.010, \\+0.030\\] ties with"):
        check_direction("beats", lows, highs, sentence, labels=["all", "hc", "matched"])
    assert check_direction("beat", lows[:2], highs[:2], sentence) == "beats"
    with pytest.raises(ValueError, match="stated must be one of"):
        check_direction("wins", 0.1, 0.2, sentence)
