"""GLAD (Generative model of Labels, Abilities and Difficulties), binary, vectorised EM.

Implemented in numpy rather than wrapped from crowd-kit 1.4.2 (see
:mod:`judgerisk.aggregators.aggregate` for the measured reasons). Book chapter "Aggregators and
retention".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit, log_expit

from judgerisk.aggregators._base import BaseAggregator, register_aggregator
from judgerisk.validation import binary_indicators

__all__ = ["GLAD"]


@register_aggregator("glad", label="GLAD", color="#8172b2")
class GLAD(BaseAggregator):
    r"""GLAD (Generative model of Labels, Abilities and Difficulties), binary, vectorised EM.

    Parameters
    ----------
    n_iter : int, default 100
        Maximum EM iterations.
    tol : float, default 1e-5
        Stop when the expected complete log-posterior per observed vote rises by less than ``tol``
        (crowd-kit's rule).
    m_step_max_iter : int, default 25
        Conjugate-gradient iterations per M-step (as crowd-kit), warm-started from the last M-step.
    alpha_prior_mean, beta_prior_mean : float, default 1.0
        Means of the unit-variance Gaussian priors on :math:`\alpha_j` and on
        :math:`b_i = \log\beta_i` (Whitehill et al.; crowd-kit).
    prior_a : float, default 0.5
        Fixed class prior P(A) (crowd-kit and Whitehill et al. use a fixed uniform prior).

    Attributes
    ----------
    ability_ : pandas.Series
        :math:`\alpha_j` (negative = adversarial judge).
    difficulty_ : pandas.Series
        :math:`\beta_i = e^{b_i}` of the fitted items (larger = easier).
    posterior_ : pandas.Series
        P(A) for the fitted items.
    n_iter_ : int
        EM iterations run.

    Notes
    -----
    :math:`P(y_{ij} = T_i) = \sigma(\alpha_j \beta_i)`, so the E-step is
    :math:`\operatorname{logit} P(T_i = A \mid y) = \operatorname{logit}\pi_A +
    \beta_i \sum_{j \in O_i} \alpha_j (2 y_{ij} - 1)`. The M-step maximises
    :math:`Q = \sum_{O} [r_{ij}\log\sigma(\alpha_j\beta_i) + (1 - r_{ij})\log\sigma(-\alpha_j\beta_i)]
    - \tfrac12\sum_j(\alpha_j - \mu_\alpha)^2 - \tfrac12\sum_i(b_i - \mu_b)^2`, with :math:`r_{ij}`
    the posterior probability that vote :math:`y_{ij}` is correct, by conjugate gradient on the analytic
    gradient. Items scored with frozen abilities (:meth:`posterior`) get their own difficulty by
    the same EM with :math:`\alpha` held fixed (the difficulties are separable across items).

    References
    ----------
    J. Whitehill, P. Ruvolo, T. Wu, J. Bergsma, J. Movellan (2009). Whose vote should count more:
    optimal integration of labels from labelers of unknown expertise. NeurIPS 22.
    crowd-kit ``crowdkit.aggregation.GLAD`` (same model and priors).
    """

    def __init__(
        self,
        n_iter: int = 100,
        tol: float = 1e-5,
        m_step_max_iter: int = 25,
        alpha_prior_mean: float = 1.0,
        beta_prior_mean: float = 1.0,
        prior_a: float = 0.5,
    ) -> None:
        self.n_iter = n_iter
        self.tol = tol
        self.m_step_max_iter = m_step_max_iter
        self.alpha_prior_mean = alpha_prior_mean
        self.beta_prior_mean = beta_prior_mean
        self.prior_a = prior_a

    def _em(self, y1, y0, alpha, b, fit_alpha: bool):
        sign = y1 - y0  # +1 vote A, -1 vote B, 0 missing
        obs = y1 + y0
        n_obs = max(obs.sum(), 1.0)
        m = alpha.size
        prior_logit = np.log(self.prior_a) - np.log1p(-self.prior_a)

        def e_step(alpha, b):
            return expit(prior_logit + np.exp(b) * (sign @ alpha))

        def q_and_grad(x, r):
            a = x[:m] if fit_alpha else alpha
            bb = x[m:] if fit_alpha else x
            beta = np.exp(bb)
            z = beta[:, None] * a[None, :]
            q = (obs * (r * log_expit(z) + (1 - r) * log_expit(-z))).sum()
            q -= 0.5 * np.sum((bb - self.beta_prior_mean) ** 2)
            resid = obs * (r - expit(z))
            g_b = (resid * z).sum(axis=1) - (bb - self.beta_prior_mean)
            if fit_alpha:
                q -= 0.5 * np.sum((a - self.alpha_prior_mean) ** 2)
                g_a = resid.T @ beta - (a - self.alpha_prior_mean)
                return -q, -np.concatenate([g_a, g_b])
            return -q, -g_b

        from scipy.optimize import minimize  # scipy.optimize loads slowly: only for GLAD

        rho = e_step(alpha, b)
        q_old = -np.inf
        n_iter = 0
        for n_iter in range(1, self.n_iter + 1):  # noqa: B007
            r = y1 * rho[:, None] + y0 * (1 - rho)[:, None]  # P(vote correct)
            x0 = np.concatenate([alpha, b]) if fit_alpha else b
            res = minimize(
                q_and_grad,
                x0,
                args=(r,),
                jac=True,
                method="CG",
                options={"maxiter": self.m_step_max_iter},
            )
            if fit_alpha:
                alpha, b = res.x[:m], res.x[m:]
            else:
                b = res.x
            rho = e_step(alpha, b)
            q = -res.fun / n_obs
            if q - q_old < self.tol:
                break
            q_old = q
        return alpha, b, rho, n_iter

    def _fit(self, arr: np.ndarray, table: pd.DataFrame) -> np.ndarray:
        if not 0.0 < self.prior_a < 1.0:
            raise ValueError(f"prior_a must be in (0, 1), got {self.prior_a}")
        y1, y0 = binary_indicators(arr)
        alpha0 = np.full(y1.shape[1], 1.0)
        b0 = np.full(y1.shape[0], 1.0)
        alpha, b, rho, n_iter = self._em(y1, y0, alpha0, b0, fit_alpha=True)
        self._alpha = alpha
        self.ability_ = pd.Series(alpha, index=self.judges_, name="ability")
        self.difficulty_ = pd.Series(np.exp(b), index=table.index.copy(), name="difficulty")
        self.n_iter_ = n_iter
        return rho

    def _posterior(self, arr: np.ndarray) -> np.ndarray:
        """Abilities frozen, each item's difficulty fitted by EM."""
        y1, y0 = binary_indicators(arr)
        b0 = np.full(y1.shape[0], 1.0)
        return self._em(y1, y0, self._alpha, b0, fit_alpha=False)[2]
