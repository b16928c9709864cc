"""Majority vote with a documented tie rule (book chapter "Aggregators and retention")."""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgerisk.aggregators._base import BaseAggregator, register_aggregator
from judgerisk.panel._cell_table import CellTable
from judgerisk.validation import check_votes, to_labels

__all__ = ["MajorityVote", "majority_tie_rule", "majority_vote"]


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
    (:meth:`fit_predict`, :attr:`labels_`, :meth:`predict`, :func:`majority_vote`,
    :func:`~judgerisk.aggregators.aggregate`; :func:`majority_tie_rule`): broken by the mean canonical probability of the
    judges who voted, :math:`\bar p_i`: A iff :math:`\bar p_i > 1/2`, otherwise B. Give the
    probabilities to :meth:`fit` / :meth:`fit_predict` / :meth:`predict` (``probs``) for the
    votes-only APIs to break ties the same way; without them a tie goes to B with a warning counting the ties (book
    page "Importing your judges"). There are no parameters: :meth:`posterior` of an item depends
    only on its own votes.
    """

    has_parameters = False
    supports_cells = True

    def __init__(self) -> None:
        pass

    def _fit(self, arr: np.ndarray | CellTable, table: pd.DataFrame) -> np.ndarray:
        return self._posterior(arr)

    def _posterior(self, arr: np.ndarray | CellTable) -> np.ndarray:
        if isinstance(arr, CellTable):
            n_obs, total = arr.row_count(), arr.row_sum()
        else:
            n_obs, total = (~np.isnan(arr)).sum(axis=1), np.nansum(arr, axis=1)
        if (n_obs == 0).any():
            raise ValueError(f"items with no vote: rows {np.flatnonzero(n_obs == 0)[:10].tolist()}")
        return total / n_obs

    def decide(
        self, posterior: np.ndarray, probs: pd.DataFrame | CellTable | None = None
    ) -> np.ndarray:
        """A iff the vote share exceeds 1/2; ties by :func:`majority_tie_rule`."""
        return majority_tie_rule(posterior, probs)


def majority_tie_rule(
    share: npt.ArrayLike, probs: pd.DataFrame | CellTable | None = None
) -> np.ndarray:
    r"""The majority verdicts: A iff :math:`\bar y_i > 1/2`; a tie goes to A iff :math:`\bar p_i > 1/2`.

    The one tie rule behind :attr:`MajorityVote.labels_`, :meth:`MajorityVote.predict`,
    :func:`majority_vote` and :func:`~judgerisk.aggregators.aggregate`.

    Parameters
    ----------
    share : array-like
        Vote share for A per item, :math:`\bar y_i`.
    probs : pandas.DataFrame, optional
        Item x judge canonical probabilities of the judges who voted (NaN elsewhere; see
        :func:`~judgerisk.aggregators._base.voted_probs`). Without them a tie goes to B, with a
        warning counting the ties.
    """
    share = np.asarray(share, dtype=np.float64)
    tie = share == 0.5
    if probs is None:
        if n_tie := int(tie.sum()):
            warnings.warn(
                f"{n_tie} item(s) tie in the majority vote with no probabilities to break the "
                "tie: they go to B (pass probs to break ties by the mean probability)",
                UserWarning,
                stacklevel=3,
            )
        return to_labels(share > 0.5)
    if isinstance(probs, CellTable):
        with np.errstate(invalid="ignore", divide="ignore"):
            pbar = np.round(probs.row_sum() / probs.row_count(), 12)
        return to_labels(np.where(tie, pbar > 0.5, share > 0.5))
    p = probs.to_numpy(dtype=np.float64, na_value=np.nan)
    seen = ~np.isnan(p)
    # rounded so that the same multiset of probabilities in another judge order gives the same
    # mean (otherwise last-bit noise decides ties of smoothed 0/1 verdicts)
    with np.errstate(invalid="ignore", divide="ignore"):
        pbar = np.round(np.where(seen, p, 0.0).sum(axis=1) / seen.sum(axis=1), 12)
    return to_labels(np.where(tie, pbar > 0.5, share > 0.5))


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
    n_obs = arr.row_count() if isinstance(arr, CellTable) else (~np.isnan(arr)).sum(axis=1)
    if (n_obs == 0).any():
        raise ValueError(f"items with no vote: {votes.index[n_obs == 0][:10].tolist()}")
    est = MajorityVote().fit(votes, probs)
    share = est.posterior_.to_numpy()
    return pd.DataFrame(
        {"verdict": est.labels_.to_numpy(), "posterior": share, "tie": share == 0.5},
        index=votes.index.copy(),
    )
