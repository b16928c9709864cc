"""Binary Dawid–Skene model fitted by EM on an item x judge table of verdicts.

One implementation shared by the Dawid–Skene aggregator (:mod:`judgerisk.aggregators.aggregate`) and the
DS-entropy baseline (:mod:`judgerisk.risk.baselines`). See Methods reference §5.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import expit

from judgerisk.aggregators._base import BaseAggregator, register_aggregator
from judgerisk.options import check_count
from judgerisk.panel._cell_table import CellTable, is_sparse
from judgerisk.validation import binary_indicators, check_votes

__all__ = ["DawidSkene", "check_votes"]

#: Floor on confusion/prior counts before normalising (only matters when ``smoothing=0``;
#: the same floor crowd-kit uses, so the unsmoothed model can be compared with it).
_COUNT_FLOOR = 1e-10


def _log_likelihoods(
    y1: np.ndarray, y0: np.ndarray, log_conf: np.ndarray, log_prior: np.ndarray
) -> np.ndarray:
    """Log joint of the votes and each class: (n_items, 2) with column 0 = A, 1 = B.

    ``log_conf[j, k, l]`` = log P(judge j votes l | true class k), classes/labels ordered (A, B).
    """
    # votes for A contribute log P(vote A | k); votes for B contribute log P(vote B | k).
    ll = y1 @ log_conf[:, :, 0] + y0 @ log_conf[:, :, 1]
    return ll + log_prior[None, :]


def _indicators(arr: np.ndarray | CellTable):
    """The vote matrices (for A, for B): dense arrays, or sparse ones for a :class:`CellTable`."""
    if isinstance(arr, CellTable):
        return arr.matrix(arr.values), arr.matrix(1.0 - arr.values)
    return binary_indicators(arr)


def _posterior_a(ll: np.ndarray) -> np.ndarray:
    """P(class A | votes) from the two log joints, stably (logistic of their difference)."""
    return expit(ll[:, 0] - ll[:, 1])


@register_aggregator("dawid_skene", label="Dawid–Skene", color="#937860")
class DawidSkene(BaseAggregator):
    r"""Binary Dawid–Skene model (two classes: "A" wins / "B" wins), fitted by EM.

    Parameters
    ----------
    smoothing : float, default 0.5
        Pseudo-count :math:`s` added to every confusion count and to both class counts of the
        prior (Methods reference §5, **[R: prior]**). ``0`` gives the unsmoothed maximum-likelihood EM
        (counts are then floored at 1e-10, as in crowd-kit).
    max_iter : int, default 200
        Maximum number of EM iterations (one iteration = M-step then E-step).
    tol : float, default 1e-7
        Stop when :math:`\max_i |\Delta\rho_i| <` ``tol``.

    Attributes
    ----------
    posterior_ : pandas.Series
        :math:`\rho_i = P(z_i = A \mid \text{votes})` for every fitted item (name ``"posterior"``).
    confusion_ : pandas.DataFrame
        Index (judge, true class in {"A", "B"}), columns the vote ("A", "B"):
        P(judge votes column | true class). Rows sum to 1.
    prior_ : pandas.Series
        Class prior, index ("A", "B").
    n_iter_ : int
        EM iterations run.
    converged_ : bool
        Whether the tolerance was reached before ``max_iter``.
    flipped_ : bool
        Whether the classes were swapped at the end to agree with the majority votes.
    judges_ : pandas.Index
        Judges seen in ``fit`` (the columns of ``votes``).

    Notes
    -----
    With votes :math:`y_{ij} \in \{0, 1\}` (1 = A) over the observed cells, class weights
    :math:`w_{iA} = \rho_i`, :math:`w_{iB} = 1 - \rho_i`, one iteration is

    * M-step: :math:`\pi_k = (\sum_i w_{ik} + s) / (n + 2s)`,
      :math:`\theta_{jkl} = (\sum_{i: y_{ij}=l} w_{ik} + s) / (\sum_{i \in O_j} w_{ik} + 2s)`;
    * E-step: :math:`\log P(z_i = k, y_i) = \log \pi_k + \sum_{j \in O_i} \log \theta_{j k y_{ij}}`,
      :math:`\rho_i = \sigma(\log P(z_i{=}A, y_i) - \log P(z_i{=}B, y_i))`.

    Initialisation (Methods reference §5): :math:`\rho_i = \mathrm{clip}(\bar y_i, 10^{-3}, 1 - 10^{-3})`, the
    item's vote share for A, and the first step is an M-step. Iterate until
    :math:`\max_i |\Delta \rho_i| < \text{tol}` or ``max_iter`` iterations. Label switching is
    resolved by orientation: if the hard DS labels :math:`1[\rho_i > .5]` disagree with the strict
    fit-set majority (items whose vote share is not exactly .5) more often than they agree, the
    classes are swapped (:math:`\rho \to 1 - \rho`, confusion rows and prior swapped).
    Everything is vectorised: the E-step is two matrix products in log space.

    References
    ----------
    A. P. Dawid and A. M. Skene (1979). Maximum likelihood estimation of observer error-rates
    using the EM algorithm. JRSS C 28(1), 20–28.
    "Can We Trust This Evaluation? Instance-Level Reliability of LLM-as-a-Judge", the "DS
    entropy" baseline (book: Methods reference).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> votes = pd.DataFrame({"J1": [1, 1, 0, 0], "J2": [1, 0, 0, np.nan], "J3": [1, 1, 0, 1]})
    >>> ds = DawidSkene().fit(votes)
    >>> ds.posterior_.round(2).tolist()
    [0.87, 0.72, 0.16, 0.51]
    >>> ds.predict(votes).tolist()
    ['A', 'A', 'B', 'A']
    """

    supports_cells = True

    def __init__(self, smoothing: float = 0.5, max_iter: int = 200, tol: float = 1e-7) -> None:
        self.smoothing = smoothing
        self.max_iter = max_iter
        self.tol = tol

    # ------------------------------------------------------------------ fitting
    def fit(self, votes: pd.DataFrame, probs: pd.DataFrame | None = None) -> DawidSkene:
        """Fit the model by EM.

        Parameters
        ----------
        votes : pandas.DataFrame
            Item x judge table: 1.0 = A, 0.0 = B, NaN = missing (see
            :func:`judgerisk.validation.check_votes`). Every item needs at least one vote.
        probs : pandas.DataFrame, optional
            Unused (the interface of :class:`~judgerisk.aggregators._base.BaseAggregator`).

        Returns
        -------
        DawidSkene
            ``self``, fitted.
        """
        super().fit(votes, probs)
        return self

    def _fit(self, arr: np.ndarray | CellTable, table: pd.DataFrame) -> np.ndarray:
        if self.smoothing < 0:
            raise ValueError(f"smoothing must be >= 0, got {self.smoothing}")
        check_count("max_iter", self.max_iter)
        if isinstance(arr, CellTable):
            n_obs, n_a = arr.row_count(), arr.row_sum()
        else:
            n_obs, n_a = (~np.isnan(arr)).sum(axis=1), None
        if (n_obs == 0).any():
            empty = table.index[n_obs == 0][:10].tolist()
            raise ValueError(
                f"{int((n_obs == 0).sum())} items have no vote to fit on; first: {empty}"
            )
        y1, y0 = _indicators(arr)
        share = (y1.sum(axis=1) if n_a is None else n_a) / n_obs
        rho = np.clip(share, 1e-3, 1 - 1e-3)
        if isinstance(arr, np.ndarray) and is_sparse(int(n_obs.sum()), arr.size):
            # a crowdsourced table: EM costs what its votes cost
            y1, y0 = sparse.csr_array(y1), sparse.csr_array(y0)

        converged = False
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):  # noqa: B007
            log_conf, log_prior = self._m_step(rho, y1, y0)
            new_rho = _posterior_a(_log_likelihoods(y1, y0, log_conf, log_prior))
            delta = np.max(np.abs(new_rho - rho))
            rho = new_rho
            if delta < self.tol:
                converged = True
                break
        # rho is the E-step of (log_conf, log_prior): posterior(votes) on the fit set == posterior_.

        strict = share != 0.5
        hard = rho > 0.5
        agree = int(np.sum(hard[strict] == (share[strict] > 0.5)))
        disagree = int(strict.sum()) - agree
        flipped = disagree > agree
        if flipped:
            rho = 1.0 - rho
            log_conf = log_conf[:, ::-1, :].copy()
            log_prior = log_prior[::-1].copy()

        self._log_conf = log_conf
        self._log_prior = log_prior
        conf = np.exp(log_conf).reshape(-1, 2)
        self.confusion_ = pd.DataFrame(
            conf,
            index=pd.MultiIndex.from_product([self.judges_, ["A", "B"]], names=["judge", "true"]),
            columns=pd.Index(["A", "B"], name="vote"),
        )
        self.prior_ = pd.Series(np.exp(log_prior), index=["A", "B"], name="prior")
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.flipped_ = bool(flipped)
        return rho

    def _m_step(
        self, rho: np.ndarray, y1: np.ndarray, y0: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Smoothed M-step: log confusion (judge, true, vote) and log prior (A, B)."""
        s = self.smoothing
        w = np.stack([rho, 1.0 - rho], axis=1)  # (n, 2): class weights A, B
        # counts[j, k, l] = sum_i w_ik 1[y_ij = l] + s
        counts = np.stack([y1.T @ w, y0.T @ w], axis=2) + s  # (m, 2 classes, 2 votes)
        counts = np.maximum(counts, _COUNT_FLOOR)
        log_conf = np.log(counts) - np.log(counts.sum(axis=2, keepdims=True))
        prior_counts = np.maximum(w.sum(axis=0) + s, _COUNT_FLOOR)
        log_prior = np.log(prior_counts) - np.log(prior_counts.sum())
        return log_conf, log_prior

    # -------------------------------------------------------------- prediction
    def _posterior(self, arr: np.ndarray | CellTable) -> np.ndarray:
        """Posterior P(A) with the parameters frozen; items with no vote get ``prior_["A"]``."""
        y1, y0 = _indicators(arr)
        return _posterior_a(_log_likelihoods(y1, y0, self._log_conf, self._log_prior))

    def __repr__(self) -> str:
        return f"DawidSkene(smoothing={self.smoothing}, max_iter={self.max_iter}, tol={self.tol})"
