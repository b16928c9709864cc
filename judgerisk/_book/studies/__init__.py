"""The book's studies of the panel risk estimators (private: the chapters' own code).

Pooled and paired comparisons of risk scores over items, the signal ablation, the consensus and
drift studies, convergence over repetitions, the perturbation-family study and the options
study. Nothing here is imported by a command or the report; the estimators they study live in
:mod:`judgerisk.risk`, the engine they reuse in :mod:`judgerisk.engine`.
"""
