"""A server's answer at the verdict slot: strict JSON, the top-k list checked, the verdicts in it.

What is refused (:class:`AnswerError`, one line saying what is wrong):

* a body that is not JSON, that holds ``NaN`` or ``Infinity``, or that nests too deep;
* a field read here given twice in one object (``"model"`` twice: which one was meant?);
* no top-k list where it belongs, an empty list, a log-probability that is not a finite
  number;
* an impossible list: a log-probability above ``MASS_TOL`` (a probability above 1) or listed
  probabilities that sum to more than ``1 + MASS_TOL``.

A token listed more than once is kept once per listing (in the completion endpoint's object of
token -> log-probability too, where a JSON reader would keep only the last one), and
:func:`match_verdict` combines its listings by log-sum-exp: distinct vocabulary entries that
decode to the same text add their probabilities. Log-probabilities in ``(0, MASS_TOL]`` are
float rounding of a near-certain token and are stored as 0.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["AnswerError", "MASS_TOL", "match_verdict", "parse_answer", "top_list", "field"]

#: Tolerance of the probability checks: a log-probability above it, or listed probabilities
#: summing to more than ``1 + MASS_TOL``, cannot come from a normalised distribution.
MASS_TOL = 1e-3


class AnswerError(ValueError):
    """A server's answer that cannot be used (the caller adds which request it was)."""


class _Object(dict):
    """A JSON object that also keeps every (key, value) pair in order, duplicates included."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


def _no_constant(name: str) -> float:
    raise AnswerError(f"the answer holds {name}, which is not JSON")


def parse_answer(data: bytes) -> Any:
    """The JSON value of an answer body; :class:`AnswerError` when it is not strict JSON."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnswerError(f"the answer is not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text, object_pairs_hook=_Object, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        shown = text[:60].encode("unicode_escape").decode("ascii")
        raise AnswerError(
            f"the answer is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}; it "
            f"starts {shown!r})"
        ) from None
    except RecursionError:
        raise AnswerError("the answer nests too deep to read") from None


def field(obj: Any, key: str, where: str, kind: type | tuple[type, ...] | None = None) -> Any:
    """``obj[key]``, refusing a missing or repeated key, or a value not of ``kind``."""
    if not isinstance(obj, dict):
        raise AnswerError(f"{where} is not a JSON object")
    if isinstance(obj, _Object) and sum(k == key for k, _ in obj.pairs) > 1:
        raise AnswerError(f"{where} gives {key!r} more than once")
    if key not in obj:
        raise AnswerError(f"{where} has no {key!r}")
    value = obj[key]
    if kind is not None and not isinstance(value, kind):
        name = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise AnswerError(f"{where}.{key} is {type(value).__name__}, not {name}")
    return value


def _first(obj: Any, key: str, where: str) -> Any:
    items = field(obj, key, where, list)
    if not items:
        raise AnswerError(f"{where}.{key} is empty")
    return items[0]


def _entries(logprobs: dict) -> list[tuple[Any, Any]]:
    """(token, log-probability) pairs of the first generated position, in either layout."""
    where = "choices[0].logprobs"
    if "content" in logprobs:  # chat layout: [{token, logprob, top_logprobs: [...]}, ...]
        first = _first(logprobs, "content", where)
        listed = field(first, "top_logprobs", f"{where}.content[0]", list)
        pairs = []
        for i, entry in enumerate(listed):
            at = f"{where}.content[0].top_logprobs[{i}]"
            pairs.append((field(entry, "token", at), field(entry, "logprob", at)))
        return pairs
    first = _first(logprobs, "top_logprobs", where)  # completion layout: [{token: lp, ...}]
    if not isinstance(first, dict):
        raise AnswerError(f"{where}.top_logprobs[0] is not a JSON object")
    return list(first.pairs) if isinstance(first, _Object) else list(first.items())


def top_list(answer: Any) -> list[tuple[str, float]]:
    """The checked top-k list at the verdict slot: (token text, log-probability) pairs.

    Raises
    ------
    AnswerError
        See the module docstring.
    """
    choice = _first(answer, "choices", "the answer")
    logprobs = field(choice, "logprobs", "choices[0]")
    if logprobs is None:
        raise AnswerError("choices[0].logprobs is null (does the server return logprobs?)")
    if not isinstance(logprobs, dict):
        raise AnswerError("choices[0].logprobs is not a JSON object")
    pairs = _entries(logprobs)
    if not pairs:
        raise AnswerError("the top-k list is empty (no token listed at the verdict slot)")
    out: list[tuple[str, float]] = []
    for token, value in pairs:
        if not isinstance(token, str):
            raise AnswerError(f"a listed token is {type(token).__name__}, not text")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise AnswerError(f"token {token!r}: log-probability {value!r} is not a number")
        if not math.isfinite(value):
            raise AnswerError(f"token {token!r}: log-probability {value!r} is not finite")
        if value > MASS_TOL:
            raise AnswerError(
                f"token {token!r}: log-probability {value:+g} > 0 (a probability above 1)"
            )
        out.append((token, min(float(value), 0.0)))
    mass = math.fsum(math.exp(v) for _, v in out)
    if mass > 1.0 + MASS_TOL:
        raise AnswerError(
            f"the {len(out)} listed probabilities sum to {mass:.4g} > 1 (an impossible top-k list)"
        )
    return out


def match_verdict(
    top: Mapping[str, float] | Sequence[tuple[str, float]], verdict: str, exact: str | None
) -> tuple[float, bool]:
    """Log-probability of a verdict in a top-k list, and whether it is only a bound.

    Parameters
    ----------
    top : sequence of (token, log-probability) pairs, or a mapping
        The server's top-k list at the verdict slot (a token may be listed more than once).
    verdict : str
        The verdict string (``"A"``).
    exact : str or None
        The verdict token's text as the in-process path resolves it (``" A"`` for ``"ĠA"``);
        None matches leading-space and case variants.

    Returns
    -------
    (logprob, bounded)
        Every listing that matches is combined by log-sum-exp,
        :math:`\\log \\sum_{t \\text{ matches}} p_t`. ``bounded`` is True when the verdict is not
        listed; the value is then :math:`\\min_{t \\in \\text{top-}k} \\log p_t \\ge \\log
        p_{\\text{verdict}}`.
    """
    pairs = list(top.items()) if isinstance(top, Mapping) else list(top)
    if exact is not None:
        hits = [lp for tok, lp in pairs if tok == exact]
    else:
        want = verdict.strip().casefold()
        hits = [lp for tok, lp in pairs if tok.lstrip().casefold() == want]
    if hits:
        peak = max(hits)
        return min(peak + math.log(math.fsum(math.exp(h - peak) for h in hits)), 0.0), False
    if not pairs:
        raise AnswerError("the top-k list is empty (no token listed at the verdict slot)")
    return min(lp for _, lp in pairs), True
