"""Majority vote with a documented tie rule (book chapter "Aggregators and retention")."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from judgerisk.aggregators.base import BaseAggregator, register_aggregator
from judgerisk.cells import CellTable
from judgerisk.validation import check_votes, to_labels

__all__ = ["MajorityVote", "majority_vote"]


@register_aggregator("majority", label="Majority vote", color="#4c72b0")
class MajorityVote(BaseAggregator):
    r"""Majority vote: the posterior is the vote share for A, ties broken by the mean probability.

    Attributes
    ----------
    posterior_ : pandas.Series
        Vote share for A, :math:`\bar y_i`, of the fitted items.

    Notes
    -----
    :math:`\hat y_i = A` iff :math:`\bar y_i > 1/2`; a judge's tie (:math:`m = 0`) is half a vote
    for each answer. **Item ties** (:math:`\bar y_i = 1/2`) have one rule in every API
    (:meth:`fit_predict`, :attr:`labels_`, :func:`majority_vote`,
    :func:`~judgerisk.aggregators.aggregate`): broken by the mean canonical probability of the
    judges who voted, :math:`\bar p_i`: A iff :math:`\bar p_i > 1/2`, otherwise B. Give the
    probabilities to :meth:`fit` / :meth:`fit_predict` (``probs``) for the votes-only APIs to
    break ties the same way; without them a tie goes to B with a warning counting the ties (book
    page "Importing your judges"). There are no parameters: :meth:`posterior` of an item depends
    only on its own votes.
    """

    has_parameters = False
    supports_cells = True

    def __init__(self) -> None:
        pass

    def _fit(self, arr: np.ndarray | CellTable, table: pd.DataFrame) -> np.ndarray:
        self._probs: pd.DataFrame | CellTable | None = None
        return self._posterior(arr)

    def _fit_with(
        self, arr: np.ndarray | CellTable, table: pd.DataFrame, probs: pd.DataFrame
    ) -> np.ndarray:
        post = self._fit(arr, table)
        if isinstance(arr, CellTable):  # the probabilities of the voted cells
            p = probs if isinstance(probs, CellTable) else CellTable.from_frame(probs)
            self._probs = p.reindex(table.index).align_columns(table.columns, "probs").on(arr)
            return post
        p = probs.reindex(index=table.index, columns=table.columns)
        self._probs = p.where(~np.isnan(arr))
        return post

    @property
    def labels_(self) -> pd.Series:
        """Verdicts ("A"/"B") of the fitted items, ties broken by the ``probs`` given to ``fit``."""
        self._check_fitted()
        post = self.posterior_
        labels = self.decide(post.to_numpy(), getattr(self, "_probs", None))
        return pd.Series(labels, index=post.index, name="verdict")

    def _posterior(self, arr: np.ndarray | CellTable) -> np.ndarray:
        if isinstance(arr, CellTable):
            n_obs, total = arr.row_count(), arr.row_sum()
        else:
            n_obs, total = (~np.isnan(arr)).sum(axis=1), np.nansum(arr, axis=1)
        if (n_obs == 0).any():
            raise ValueError(f"items with no vote: rows {np.flatnonzero(n_obs == 0)[:10].tolist()}")
        return total / n_obs

    def decide(self, posterior: np.ndarray, probs: pd.DataFrame | None = None) -> np.ndarray:
        """A iff the vote share exceeds 1/2; ties go to A iff the judges' mean P(A) > 1/2."""
        share = np.asarray(posterior, dtype=np.float64)
        win_a = share > 0.5
        if probs is None and (n_tie := int((share == 0.5).sum())):
            warnings.warn(
                f"{n_tie} item(s) tie in the majority vote with no probabilities to break the "
                "tie: they go to B (pass probs to break ties by the mean probability)",
                UserWarning,
                stacklevel=2,
            )
        if isinstance(probs, CellTable):
            with np.errstate(invalid="ignore", divide="ignore"):
                pbar = np.round(probs.row_sum() / probs.row_count(), 12)
            win_a = np.where(share == 0.5, pbar > 0.5, win_a)
        elif probs is not None:
            p = probs.to_numpy(dtype=np.float64, na_value=np.nan)
            seen = ~np.isnan(p)
            # rounded so that the same multiset of probabilities in another judge order gives
            # the same mean (otherwise last-bit noise decides ties of smoothed 0/1 verdicts)
            with np.errstate(invalid="ignore", divide="ignore"):
                pbar = np.round(np.where(seen, p, 0.0).sum(axis=1) / seen.sum(axis=1), 12)
            win_a = np.where(share == 0.5, pbar > 0.5, win_a)
        return to_labels(win_a)


def majority_vote(votes: pd.DataFrame, probs: pd.DataFrame | None = None) -> pd.DataFrame:
    r"""Majority vote of an item x judge table, with the tie rule of :class:`MajorityVote`.

    Parameters
    ----------
    votes : pandas.DataFrame
        Item x judge verdicts, 1.0 = A, 0.0 = B, NaN = missing.
    probs : pandas.DataFrame, optional
        Item x judge canonical probabilities P(A) (same shape), used only to break ties.

    Returns
    -------
    pandas.DataFrame
        Indexed like ``votes``: ``verdict`` ("A"/"B"), ``posterior`` (the vote share for A,
        :math:`\bar y_i`) and ``tie`` (bool).

    Examples
    --------
    >>> import pandas as pd
    >>> votes = pd.DataFrame({"J1": [1.0, 1.0], "J2": [1.0, 0.0]}, index=["x", "y"])
    >>> majority_vote(votes)["verdict"].tolist()
    ['A', 'B']
    """
    arr: np.ndarray | CellTable = check_votes(votes)
    if isinstance(arr, CellTable):  # a crowd's table, by its cells (judgerisk.cells)
        observed, n_obs = None, arr.row_count()
    else:
        observed = ~np.isnan(arr)
        n_obs = observed.sum(axis=1)
    if (n_obs == 0).any():
        raise ValueError(f"items with no vote: {votes.index[n_obs == 0][:10].tolist()}")
    est = MajorityVote().fit(votes)
    share = est.posterior_.to_numpy()
    voted: pd.DataFrame | CellTable | None = None
    if probs is not None and isinstance(arr, CellTable):
        p = probs if isinstance(probs, CellTable) else CellTable.from_frame(probs)
        voted = p.reindex(votes.index).align_columns(votes.columns, "probs").on(arr)
        if len(voted.values) < len(arr.values):
            raise ValueError("probs is missing where votes are observed")
    elif probs is not None:
        p = probs.reindex(index=votes.index, columns=votes.columns)
        if np.isnan(p.to_numpy(dtype=np.float64)[observed]).any():
            raise ValueError("probs is missing where votes are observed")
        voted = p.where(observed)
    return pd.DataFrame(
        {"verdict": est.decide(share, voted), "posterior": share, "tie": share == 0.5},
        index=votes.index.copy(),
    )
