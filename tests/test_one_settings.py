"""The split fractions, the bootstrap size and the thresholds are written once.

Every function reads its default from ``judgerisk.options.ANALYSIS``; this test reads the
package's source (every signature's defaults and every text) for a literal copy.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from judgerisk.options import ANALYSIS, AnalysisSettings, OptionError

PACKAGE = Path(__file__).resolve().parents[1] / "judgerisk"
HOME = PACKAGE / "options.py"  # where the values are written, once
SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if p != HOME)
#: Parameter name -> the ANALYSIS field its default must be.
FIELDS = {
    "fractions": "fractions",
    "splits": "fractions",
    "n_boot": "n_boot",
    "hc_threshold": "hc_threshold",
    "prob_threshold": "prob_threshold",
    "level": "level",
    "min_verdict_mass": "min_verdict_mass",
}


def _defaults(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            tail = positional[len(positional) - len(args.defaults) :]
            pairs = list(zip(tail, args.defaults, strict=True))
            pairs += [
                (a, d)
                for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                if d is not None
            ]
            for arg, default in pairs:
                yield node.name, arg.arg, default


def test_no_literal_copy_of_the_analysis_defaults():
    literal = re.compile(r"0\.5,\s*0\.3,\s*0\.2|n_boot\s*(?::\s*int\s*)?=\s*2000\b")
    found = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        found += [f"{path.name}:{m.group(0)}" for m in literal.finditer(text)]
        for func, name, default in _defaults(ast.parse(text)):
            if name in FIELDS and isinstance(default, ast.Constant | ast.Tuple):
                found.append(f"{path.name}:{func}({name}={ast.unparse(default)})")
            if "threshold" in name and isinstance(default, ast.Constant):
                if isinstance(default.value, float):
                    found.append(f"{path.name}:{func}({name}={default.value})")
    assert not found, f"literal copies of judgerisk.options.ANALYSIS: {found}"


def test_the_signatures_read_the_settings():
    from judgerisk._book.studies.paired import compare_scores
    from judgerisk.engine.analysis import evaluate_risk
    from judgerisk.risk.metrics import high_consensus, probability_high_consensus
    from judgerisk.risk.scur import scur_scores
    from judgerisk.splits import split_items

    def default(func, name):
        return inspect.signature(func).parameters[name].default

    assert default(split_items, "fractions") == ANALYSIS.fractions == (0.5, 0.3, 0.2)
    assert default(scur_scores, "splits") == ANALYSIS.fractions
    assert default(evaluate_risk, "hc_threshold") == ANALYSIS.hc_threshold == 0.8
    assert default(high_consensus, "threshold") == ANALYSIS.hc_threshold
    assert default(probability_high_consensus, "threshold") == ANALYSIS.prob_threshold
    assert default(compare_scores, "n_boot") == ANALYSIS.n_boot == 2000


@pytest.mark.parametrize(
    "bad",
    [{"n_boot": 0}, {"fractions": (0.5, 0.5, 0.5)}, {"hc_threshold": 1.5}, {"level": 0.0}],
)
def test_bad_settings_are_refused(bad):
    with pytest.raises(OptionError):
        AnalysisSettings(**bad)
