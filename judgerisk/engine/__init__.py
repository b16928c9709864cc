"""The engine: score a panel's items, select them, certify decisions, and evaluate risk scores.

- :mod:`~judgerisk.engine.certified`: :func:`~judgerisk.engine.certified.score_panel` (the
  cross-fitted risk table ``judgerisk score`` writes),
  :func:`~judgerisk.engine.certified.select_items` (``judgerisk select``) and
  :func:`~judgerisk.engine.certified.certify_panel` (the report's certified decisions);
- :mod:`~judgerisk.engine.analysis`: :func:`~judgerisk.engine.analysis.evaluate_risk`, the
  risk scores' AUROC / AUPRC on the evaluation subsets;
- :mod:`~judgerisk.engine.retention`: accuracy and error rate of an aggregate as the riskiest
  items are set aside;
- :mod:`~judgerisk.engine.describe`: a panel's judges, consensus and flip rates.

The package imports none of them eagerly (``judgerisk score`` loads only what it runs).
"""
