"""Direction sentences that cannot contradict their numbers: "A beats / ties with / trails B".

The book's rule (:data:`judgerisk._book.studies.paired.BEATS_RULE`): a score *beats* another when the
95 % paired bootstrap interval of their AUROC difference lies above 0, *trails* it when the
interval lies below 0, and *ties with* it otherwise. A chapter states a direction in one of
two ways, and the build fails when either disagrees with the interval:

* glued: :func:`direction_word` computes the verb and the prose pastes it
  (``{glue:md}`ch04_c_vs_ucs```), so it cannot contradict the table;
* typed: the prose says "C+S beats U+C+S on every subset" and a hidden cell calls
  :func:`check_direction` with that sentence and the intervals; a contradiction raises
  :class:`ClaimError`, the chapter fails to run and the book does not build.

``tests/test_book.py`` checks that every typed direction word next to a glued number is
backed by such a check (or by an ``assert`` whose comment quotes the sentence).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from judgerisk._book.studies.paired import verdict

__all__ = ["DIRECTIONS", "ClaimError", "check_direction", "direction_word"]

#: The three verbs of the rule, in the book's wording.
DIRECTIONS: tuple[str, ...] = ("beats", "ties with", "trails")
_ALIASES = {"beat": "beats", "tie": "ties with", "ties": "ties with", "trail": "trails"}


class ClaimError(AssertionError):
    """A sentence of the book says what its numbers do not show."""


def direction_word(low: float, high: float) -> str:
    """The verb of the rule for one interval ``[low, high]`` of a difference (A minus B).

    >>> direction_word(0.01, 0.08), direction_word(-0.02, 0.05), direction_word(-0.09, -0.01)
    ('beats', 'ties with', 'trails')
    """
    if not np.isfinite(low) or not np.isfinite(high) or low > high:
        raise ValueError(f"not an interval: [{low}, {high}]")
    return verdict(low, high)


def check_direction(
    stated: str,
    low: float | npt.ArrayLike,
    high: float | npt.ArrayLike,
    sentence: str,
    labels: Iterable[str] | None = None,
) -> str:
    """Raise :class:`ClaimError` unless every interval has the direction the sentence states.

    Parameters
    ----------
    stated : {"beats", "ties with", "trails"}
        The verb the prose types (``"beat"``, ``"tie"``, ``"trail"`` are accepted).
    low, high : float or array-like
        The interval(s) of the difference the sentence is about (one per subset, e.g.).
    sentence : str
        The sentence as it stands in the chapter (quoted in the error, and found in the
        prose by the book's tests).
    labels : iterable of str, optional
        A name per interval for the error message (e.g. the subsets).

    Returns
    -------
    str
        ``stated``, normalised.
    """
    verb = _ALIASES.get(stated.strip(), stated.strip())
    if verb not in DIRECTIONS:
        raise ValueError(f"stated must be one of {DIRECTIONS}, got {stated!r}")
    lows, highs = np.atleast_1d(low).astype(float), np.atleast_1d(high).astype(float)
    names = list(labels) if labels is not None else [str(k) for k in range(len(lows))]
    wrong = [
        f"{name}: [{lo:+.3f}, {hi:+.3f}] {direction_word(lo, hi)}"
        for name, lo, hi in zip(names, lows, highs, strict=True)
        if direction_word(lo, hi) != verb
    ]
    if wrong:
        raise ClaimError(f"the sentence {sentence!r} says {verb!r}, but {'; '.join(wrong)}")
    return verb
