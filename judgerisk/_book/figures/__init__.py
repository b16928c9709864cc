"""The chapters' figures (private: the book's own code).

Each function draws one figure of a chapter with the shared style of
:mod:`judgerisk._plots.style`; the report's figures and tables stay in :mod:`judgerisk._plots`.
"""
