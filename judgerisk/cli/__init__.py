"""The ``judgerisk`` command line: one module per command, one set of rules.

========================  ===========================================================
module                    command
========================  ===========================================================
:mod:`.simulate`          ``judgerisk simulate``: a simulated panel
:mod:`.extract`           ``judgerisk extract``: a judge's verdict log-probabilities
:mod:`.perturb`           ``judgerisk perturb``: the items as the judge is shown them
:mod:`.score`             ``judgerisk score``: the per-item risk table
:mod:`.select`            ``judgerisk select``: certified accept / abstain
:mod:`.report`            ``judgerisk report``: the HTML report
:mod:`.run`               ``judgerisk run``: a chapter of the book on your data
:mod:`.import_`           ``judgerisk import``: another tool's judgments as a panel
:mod:`.bpe`               ``judgerisk bpe``: one judge in both orders
:mod:`.verify`            ``judgerisk verify``: does an output reproduce?
========================  ===========================================================

:mod:`.common` holds what they share (the exit codes, the list syntax, the ``--overwrite`` rule, the provenance
record, argument types, progress flags and the :class:`~judgerisk.cli.common.Command` base),
:mod:`.scoring` the scoring options of ``score`` and ``report``;
:mod:`.app` assembles the parser. ``judgerisk.cli:main`` is the console script.
"""

from judgerisk.cli.app import build_parser, main
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
