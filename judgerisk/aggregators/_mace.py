"""MACE (Multi-Annotator Competence Estimation) for binary verdicts, vectorised EM / VB.

Implemented in numpy rather than wrapped from crowd-kit 1.4.2 (see
:mod:`judgerisk.aggregators.aggregate` for the measured reasons). Book chapter "Aggregators and
retention".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import digamma, expit

from judgerisk.aggregators._base import BaseAggregator, register_aggregator
from judgerisk.options import check_count
from judgerisk.validation import binary_indicators

__all__ = ["MACE"]


@register_aggregator("mace", label="MACE", color="#55a868")
class MACE(BaseAggregator):
    r"""MACE (Multi-Annotator Competence Estimation) for binary verdicts, vectorised EM / VB.

    Parameters
    ----------
    n_restarts : int, default 10
        Random restarts; the run with the highest marginal log-likelihood is kept.
    n_iter : int, default 50
        Iterations per restart (Hovy et al.'s and crowd-kit's default; no early stop).
    method : {"vb", "em"}, default "vb"
        ``"vb"``: variational Bayes with Beta(``alpha``, ``beta``) priors on the spamming state and
        a symmetric Dirichlet(``strategy_prior``) on the guessing distribution (crowd-kit's default);
        ``"em"``: maximum likelihood with additive ``smoothing``.
    smoothing : float, optional
        Pseudo-count of the ``"em"`` M-step; default 0.01 / K = 0.005 (Hovy et al., crowd-kit).
    alpha, beta : float, default 0.5
        Beta prior parameters (spamming, knowing) of the ``"vb"`` M-step.
    strategy_prior : float, default 10.0
        Dirichlet prior of the guessing distribution (``"vb"``).
    default_noise : float, default 0.5
        Random initial parameters are normalised draws of :math:`U(1, 2 + \text{noise})`
        (crowd-kit's initialisation).
    random_state : int, optional
        Seed of :func:`numpy.random.default_rng` for the restarts.

    Attributes
    ----------
    competence_ : pandas.Series
        :math:`\theta_j`, probability that judge j knows (copies the true label); VB values are the
        sub-normalised :math:`\exp E[\log\theta_j]` used by the E-step.
    strategy_ : pandas.DataFrame
        :math:`\xi_j`, judge x ("A", "B"): the guessing distribution.
    posterior_ : pandas.Series
        P(true label = A) for the fitted items.
    log_likelihood_ : float
        Marginal log-likelihood of the kept restart.

    Notes
    -----
    Generative model (uniform class prior): :math:`T_i \sim U\{A, B\}`, :math:`S_{ij} \sim
    \text{Bernoulli}(1 - \theta_j)` (spamming); a non-spamming judge answers :math:`T_i`, a
    spamming judge draws from :math:`\xi_j`. So :math:`P(y_{ij} = l \mid T_i = k) = \theta_j
    1[l = k] + (1 - \theta_j)\xi_{jl}`. The E-step gives :math:`P(T_i \mid y_i)` and the expected
    knowing count :math:`E[1 - S_{ij}] = P(T_i = y_{ij} \mid y_i)\,\theta_j / (\theta_j +
    (1 - \theta_j)\xi_{j y_{ij}})`; the M-step normalises the expected counts (plus smoothing for
    EM, or :math:`\exp\psi(\cdot)` with the priors for VB). All products are taken in log space.

    References
    ----------
    D. Hovy, T. Berg-Kirkpatrick, A. Vaswani, E. Hovy (2013). Learning whom to trust with MACE.
    NAACL-HLT, 1120–1130. crowd-kit ``crowdkit.aggregation.MACE`` (same updates).
    """

    def __init__(
        self,
        n_restarts: int = 10,
        n_iter: int = 50,
        method: str = "vb",
        smoothing: float | None = None,
        alpha: float = 0.5,
        beta: float = 0.5,
        strategy_prior: float = 10.0,
        default_noise: float = 0.5,
        random_state: int | None = None,
    ) -> None:
        self.n_restarts = n_restarts
        self.n_iter = n_iter
        self.method = method
        self.smoothing = smoothing
        self.alpha = alpha
        self.beta = beta
        self.strategy_prior = strategy_prior
        self.default_noise = default_noise
        self.random_state = random_state

    def _init_params(self, rng: np.random.Generator, m: int) -> tuple[np.ndarray, ...]:
        spam = rng.uniform(1.0, 2.0 + self.default_noise, size=(m, 2))
        xi = rng.uniform(1.0, 2.0 + self.default_noise, size=(m, 2))
        spam /= spam.sum(axis=1, keepdims=True)
        xi /= xi.sum(axis=1, keepdims=True)
        return spam[:, 1], spam[:, 0], xi  # P(knowing), P(spamming); xi columns (A, B)

    @staticmethod
    def _e_step(y1, y0, theta, spam_p, xi):
        r"""Posterior P(A), marginal log-likelihood, knowing and spamming expected counts.

        ``theta`` = P(knowing), ``spam_p`` = P(spamming) (``1 - theta`` for EM; VB keeps the two
        sub-normalised :math:`\exp E[\log \cdot]` weights, as crowd-kit does).
        """
        p_aa = np.log(theta + spam_p * xi[:, 0])  # vote A | true A
        p_ba = np.log(spam_p * xi[:, 1])  # vote B | true A
        p_ab = np.log(spam_p * xi[:, 0])  # vote A | true B
        p_bb = np.log(theta + spam_p * xi[:, 1])  # vote B | true B
        ll_a = y1 @ p_aa + y0 @ p_ba
        ll_b = y1 @ p_ab + y0 @ p_bb
        log_marg = np.logaddexp(ll_a, ll_b) + np.log(0.5)
        rho = expit(ll_a - ll_b)
        know_a = theta / (theta + spam_p * xi[:, 0])  # P(knowing | vote A, true A)
        know_b = theta / (theta + spam_p * xi[:, 1])
        k1 = know_a * (rho @ y1)  # expected knowing count on each judge's A votes
        k0 = know_b * ((1 - rho) @ y0)
        know = k1 + k0
        spam = np.stack([y1.sum(axis=0) - k1, y0.sum(axis=0) - k0], axis=1)
        return rho, float(log_marg.sum()), know, spam

    def _m_step(self, know, spam):
        n_j = know + spam.sum(axis=1)
        if self.method == "em":
            s = 0.01 / 2 if self.smoothing is None else self.smoothing
            theta = (know + s) / (n_j + 2 * s)
            xi = (spam + s) / (spam.sum(axis=1, keepdims=True) + 2 * s)
            return theta, 1.0 - theta, xi
        if self.method == "vb":
            a = np.stack([self.alpha + n_j - know, self.beta + know], axis=1)  # (spam, know)
            log_norm = digamma(a.sum(axis=1))
            theta = np.exp(digamma(a[:, 1]) - log_norm)
            spam_p = np.exp(digamma(a[:, 0]) - log_norm)
            b = spam + self.strategy_prior
            xi = np.exp(digamma(b) - digamma(b.sum(axis=1, keepdims=True)))
            return theta, spam_p, xi
        raise ValueError(f"method must be 'vb' or 'em', got {self.method!r}")

    def _run(self, y1, y0, theta, spam_p, xi):
        """One restart: E-step, then n_iter (M-step, E-step) rounds; returns (params, ll)."""
        _, ll, know, spam = self._e_step(y1, y0, theta, spam_p, xi)
        for _ in range(self.n_iter):
            params = self._m_step(know, spam)
            _, ll, know, spam = self._e_step(y1, y0, *params)
        return params if self.n_iter else (theta, spam_p, xi), ll

    def _fit(self, arr: np.ndarray, table: pd.DataFrame) -> np.ndarray:
        y1, y0 = binary_indicators(arr)
        check_count("n_restarts", self.n_restarts)
        rng = np.random.default_rng(self.random_state)
        best: tuple[tuple[np.ndarray, ...], float] | None = None
        for _ in range(self.n_restarts):
            params, ll = self._run(y1, y0, *self._init_params(rng, y1.shape[1]))
            if best is None or ll > best[1]:
                best = (params, ll)
        assert best is not None
        self._set_params(table, y1, y0, best[0])
        return self.posterior_.to_numpy()

    def _set_params(
        self, votes: pd.DataFrame, y1: np.ndarray, y0: np.ndarray, params: tuple[np.ndarray, ...]
    ) -> None:
        """Store fitted parameters and the fit items' posterior (``votes`` gives the labels)."""
        self.judges_ = pd.Index(votes.columns)
        self._params = params
        theta, _, xi = params
        rho, ll, _, _ = self._e_step(y1, y0, *params)
        self.log_likelihood_ = ll
        self.posterior_ = pd.Series(rho, index=votes.index.copy(), name="posterior")
        self.competence_ = pd.Series(theta, index=self.judges_, name="competence")
        self.strategy_ = pd.DataFrame(xi, index=self.judges_, columns=["A", "B"])

    def _posterior(self, arr: np.ndarray) -> np.ndarray:
        return self._e_step(*binary_indicators(arr), *self._params)[0]
