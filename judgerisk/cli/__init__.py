"""The ``judgerisk`` command line: one module per command, one set of rules.

========================  ===========================================================
module                    command
========================  ===========================================================
:mod:`._simulate`         ``judgerisk simulate``: a simulated panel
:mod:`._extract`          ``judgerisk extract``: a judge's verdict log-probabilities
:mod:`._perturb`          ``judgerisk perturb``: the items as the judge is shown them
:mod:`._score`            ``judgerisk score``: the per-item risk table
:mod:`._select`           ``judgerisk select``: certified accept / abstain
:mod:`._report`           ``judgerisk report``: the HTML report
:mod:`._run`              ``judgerisk run``: a chapter of the book on your data
:mod:`._import`           ``judgerisk import``: another tool's judgments as a panel
:mod:`._bpe`              ``judgerisk bpe``: one judge in both orders
:mod:`.verify`            ``judgerisk verify``: does an output reproduce?
========================  ===========================================================

:mod:`.common` holds what they share (the exit codes, the list syntax, the ``--overwrite`` rule, the provenance
record, argument types, progress flags and the :class:`~judgerisk.cli.common.Command` base),
:mod:`._scoring` the scoring options of ``score`` and ``report``;
:mod:`._app` assembles the parser; its ``console`` (:func:`main`, then a prompt exit) is the
console script.
"""

from judgerisk.cli._app import build_parser, main
from judgerisk.cli.common import (
    EXIT_CANNOT_TELL,
    EXIT_CODES,
    EXIT_DEPENDENCY,
    EXIT_DIFFERS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RUNTIME,
    EXIT_USAGE,
)

__all__ = [
    "EXIT_CANNOT_TELL",
    "EXIT_CODES",
    "EXIT_DEPENDENCY",
    "EXIT_DIFFERS",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_RUNTIME",
    "EXIT_USAGE",
    "build_parser",
    "main",
]
