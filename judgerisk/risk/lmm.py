"""Latent measurement model (LMM) of a judge panel's verdict log-odds.

The model decomposes every canonical log-odds ``m_ijc`` (item i, judge j, condition c) as

    m_ijc = a_j q_i + b_j + delta_c + kappa_jc + eps_ijc,   a_j > 0,  delta_0 = kappa_j0 = 0

and is fitted by penalised least squares with block (alternating ridge) updates, three
restarts and the paper's convergence rule (Methods reference §2). Fitted judge and condition
parameters give leave-one-judge-out (LOJO) predictions for items not used in the fit
(Methods reference §3).

The solver (sufficient statistics, block sweeps, Anderson and L-BFGS runs, the stopping rule)
lives in :mod:`judgerisk.risk._lmm_solver`; this module is the estimator.

References
----------
Methods reference §2–3 (the judgerisk methods specification), after the instance-level panel
reliability (SCUR) paper: "latent measurement model" section and its appendix on the
released estimator.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import expit
from threadpoolctl import threadpool_limits

from judgerisk.options import check_count
from judgerisk.panel import PanelArrays, PanelError, encode_panel, validate_panel
from judgerisk.panel._cell_table import is_sparse
from judgerisk.risk._lmm_solver import (
    BLOCKS,
    Design,
    Penalties,
    Rule,
    RunResult,
    margins,
    objective,
    restart_spread,
    run_lbfgs,
    run_plain,
    start_point,
)
from judgerisk.validation import DEFAULT_ACCELERATE, check_accelerate

__all__ = ["LatentMeasurementModel", "align_to_reference"]


# --------------------------------------------------------------------------------------
# the estimator
# --------------------------------------------------------------------------------------
class LatentMeasurementModel:
    r"""Latent measurement model of a judge panel, fitted by block ridge updates.

    Parameters
    ----------
    lambda_q, lambda_a, lambda_b, lambda_delta, lambda_kappa : float
        Ridge strengths. With F/2 as the negative log posterior and unit noise variance
        the priors are ``q, b, delta, kappa ~ N(0, 1/lambda)`` and
        ``a ~ N(1, 1/lambda_a)``: with the defaults ``q_i, b_j ~ N(0, 1)``,
        ``a_j ~ N(1, 1)``, ``delta_c ~ N(0, 1/5)``, ``kappa_jc ~ N(0, 1/10)``.
    n_restarts : int, default 3
        Restarts; the first starts at ``a = 1, b = delta = kappa = 0`` and ``q_i`` = mean
        of item i's logits, the others draw ``log a_j ~ N(0, 0.3^2)`` and
        ``b_j ~ N(0, 0.3^2)`` [R] (the blocks the first q update reads).
    max_iter : int, default 700
        Nominal sweeps per restart.
    max_iter_extended : int, default 2100
        The sweeps are extended up to this many while the rule is not met; ``n_iter_ >
        max_iter`` shows that the extension was used.
    tol_rms, tol_max, tol_obj : float
        Convergence rule: RMS change of the fitted margins over the fit cells
        ``< tol_rms``, max change ``< tol_max`` and relative change of the criterion
        ``< tol_obj``, for ``patience`` successive sweeps.
    patience : int, default 3
    update_order : tuple of str, default ("q", "a", "b", "delta", "kappa")
        Order of the block updates in a sweep [R: order]; any permutation of
        :data:`BLOCKS`. The scale fix follows the ``a`` update and the judge-centring of
        kappa follows the ``kappa`` update wherever they sit.
    accelerate : {"anderson", "lbfgs", "none"} or None, default "anderson"
        ``"anderson"`` (the default, :data:`judgerisk.validation.DEFAULT_ACCELERATE`, shared
        with the CLI and the report):
        Anderson acceleration (memory 6, safeguarded; plain sweeps while a discrimination
        sits at its clip) of the paper's sweep map, which has the same fixed points. The
        plain sweeps drift along ``q -> q + t, b -> b - a t`` (see Notes) and on panels
        with missing cells often never meet the stopping rule; the accelerated sweeps meet
        the same, unchanged rule in tens of sweeps. ``"none"`` (or ``None``): the literal
        plain sweeps.
        ``"lbfgs"``: 20 plain sweeps, then L-BFGS-B on F over all parameters: the exact
        minimiser of F, which differs slightly from the sweeps' fixed point (see Notes);
        the rule is applied to the L-BFGS iterates.
    random_state : int, numpy.random.Generator or None
        Seed of the restarts' draws.

    Attributes
    ----------
    q_ : pandas.Series
        Latent preference by item (``q > 0`` favours the original answer A).
    a_ : pandas.Series
        Discrimination by judge.
    b_ : pandas.Series
        Bias by judge.
    sigma_ : pandas.Series
        Residual scale by judge.
    delta_ : pandas.Series
        Condition effect by condition (0 for ``original``).
    kappa_ : pandas.DataFrame
        Judge x condition interaction (0 for ``original``).
    converged_ : bool
        Whether the kept restart met the convergence rule.
    n_iter_ : int
        Sweeps run by the kept restart (L-BFGS iterations count as sweeps).
    criterion_ : float
        ``(sum_O r^2 + lambda_q sum q^2 + lambda_b sum b^2) / |O|`` of the kept restart [R].
    objective_ : float
        The penalised objective F at the kept restart.
    history_ : pandas.Series
        Criterion after each sweep of the kept restart (index = sweep number).
    histories_ : dict of int -> pandas.Series
        The same for every restart (for convergence plots).
    restarts_ : pandas.DataFrame
        One row per restart: ``converged, n_iter, extended, criterion, objective, kept,
        max_abs_dp_hat, criterion_gap`` (see Notes).
    restart_spread_ : dict
        ``max_abs_dp_hat`` (largest pairwise ``max |Δp_hat|`` between restarts over the fit
        cells) and ``criterion_range`` (max - min criterion over the restarts).
    items_ : pandas.Index
        The fit's items.
    judges_ : pandas.Index
        The fit's judges.
    conditions_ : tuple of str
        The fit's conditions.

    Notes
    -----
    Model and objective (Methods reference §2), over the observed fit cells O:

    .. math::

        m_{ijc} = a_j q_i + b_j + \delta_c + \kappa_{jc} + \varepsilon_{ijc},

        F = {} & \sum_O (m - \mu)^2 + \lambda_q\sum_i q_i^2 + \lambda_a\sum_j (a_j-1)^2 \\
            & + \lambda_b\sum_j b_j^2 + \lambda_\delta\sum_{c\ne0}\delta_c^2
            + \lambda_\kappa\sum_{j,c\ne0}\kappa_{jc}^2.

    Each block update is the exact ridge minimiser of F given the other blocks. Two
    identifiability steps are *not* minimisers of F: after the ``a`` update,
    ``g = exp(mean_j log a_j)``, ``a <- a / g``, ``q <- g q`` (it preserves every
    ``a_j q_i`` but changes the penalties), and after the ``kappa`` update the judge-mean
    of each ``kappa_{.c}`` moves into ``delta_c``. The sweeps' fixed point is therefore
    close to, but not exactly, the minimiser of F, and near it the sweeps can move very
    slowly; ``converged_`` and a :class:`~sklearn.exceptions.ConvergenceWarning` report a
    fit that did not meet the rule.

    Residual scale per judge (not used to reweight):
    :math:`\sigma_j^2 = n_j^{-1}\sum_{O_j}(m - \hat\mu)^2`.

    Restarts [R]: restart 0 starts at ``a = 1, b = delta = kappa = 0``, ``q_i`` = mean of
    item i's logits; each later restart draws ``log a_j ~ N(0, 0.3^2)`` and
    ``b_j ~ N(0, 0.3^2)``. ``restarts_`` reports, per restart, ``max_abs_dp_hat`` (max over
    the fit cells of ``|p_hat - p_hat of the kept restart|``, ``p_hat = sigmoid(mu)``) and
    ``criterion_gap`` (criterion minus the kept restart's); ``restart_spread_`` holds the
    largest pairwise ``|Δp_hat|`` and the criterion's range over the restarts.

    The drift: ``q -> q + t``, ``b -> b - a t`` leaves every margin ``a_j q_i + b_j``
    unchanged, and neither the scale fix nor the kappa centring removes it; only the
    ridges on q and b pin ``t``, and the plain sweeps contract it by a factor close to 1
    per sweep (about ``1 - 2e-4`` on a 2,000-item panel). The stopping rule watches the
    margins and the criterion, so it cannot see ``t`` settle, and on panels with missing
    cells the plain sweeps end far from the fixed point along ``t`` (the book's appendix
    "Fitting the LMM: convergence, acceleration and restarts" shows it).

    With only the original condition, delta and kappa are absent and the model is
    ``m = a_j q_i + b_j + eps``.

    References
    ----------
    Methods reference §2–3; the SCUR paper (instance-level reliability of LLM judge panels),
    latent measurement model and appendix on the estimator.
    """

    def __init__(
        self,
        lambda_q: float = 1.0,
        lambda_a: float = 1.0,
        lambda_b: float = 1.0,
        lambda_delta: float = 5.0,
        lambda_kappa: float = 10.0,
        n_restarts: int = 3,
        max_iter: int = 700,
        max_iter_extended: int = 2100,
        tol_rms: float = 1e-6,
        tol_max: float = 1e-5,
        tol_obj: float = 1e-7,
        patience: int = 3,
        update_order: Sequence[str] = BLOCKS,
        accelerate: str | None = DEFAULT_ACCELERATE,
        random_state: int | np.random.Generator | None = None,
    ) -> None:
        self.lambda_q = lambda_q
        self.lambda_a = lambda_a
        self.lambda_b = lambda_b
        self.lambda_delta = lambda_delta
        self.lambda_kappa = lambda_kappa
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.max_iter_extended = max_iter_extended
        self.tol_rms = tol_rms
        self.tol_max = tol_max
        self.tol_obj = tol_obj
        self.patience = patience
        self.update_order = update_order
        self.accelerate = accelerate
        self.random_state = random_state

    # ---------------------------------------------------------------- checks
    def _check_params(self) -> Penalties:
        lam = Penalties(
            self.lambda_q, self.lambda_a, self.lambda_b, self.lambda_delta, self.lambda_kappa
        )
        for name, value in vars(lam).items():
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"lambda_{name}={value!r} must be a finite number >= 0")
        if sorted(self.update_order) != sorted(BLOCKS):
            raise ValueError(
                f"update_order={tuple(self.update_order)!r} must be a permutation of {BLOCKS}"
            )
        check_accelerate(self.accelerate)
        check_count("n_restarts", self.n_restarts)
        if not 1 <= int(self.max_iter) <= int(self.max_iter_extended):
            raise ValueError(
                f"need 1 <= max_iter ({self.max_iter}) <= max_iter_extended "
                f"({self.max_iter_extended})"
            )
        check_count("patience", self.patience)
        return lam

    # ---------------------------------------------------------------- fit
    def fit(
        self, panel: pd.DataFrame, y: npt.ArrayLike | None = None, check_input: bool = True
    ) -> LatentMeasurementModel:
        """Fit the model to every cell of a panel (normally the fit split's items).

        Parameters
        ----------
        panel : pandas.DataFrame
            A panel (validated here); only ``item, judge, condition, logit`` are used.
        y : ignored
            No gold label is used.
        check_input : bool, default True
            Validate the panel (:func:`judgerisk.panel.validate_panel`). ``False`` is for
            callers that pass rows of a panel they validated already (cross-fitting's folds):
            the checks are skipped, so anything else gives undefined results.

        Returns
        -------
        self
        """
        lam = self._check_params()
        if check_input:
            panel = validate_panel(panel, conditions=None)
        arr = encode_panel(panel)
        d = Design.from_arrays(arr)
        rng = np.random.default_rng(self.random_state)

        q0 = d.item_means()
        # the sweeps' products are vectors and thin matrices: one BLAS thread is as fast, and
        # avoids the threads' synchronisation cost on a busy machine (and keeps the numbers
        # independent of the thread count)
        with threadpool_limits(limits=1, user_api="blas"):
            runs = [self._run(d, lam, q0, r, rng) for r in range(int(self.n_restarts))]

        crit = np.array([r.criterion for r in runs])
        conv = np.array([r.converged for r in runs])
        pool = np.flatnonzero(conv) if conv.any() else np.arange(len(runs))
        kept = int(pool[np.argmin(crit[pool])])
        if not conv.any():
            from sklearn.exceptions import ConvergenceWarning  # scikit-learn loads slowly

            warnings.warn(
                f"LatentMeasurementModel: no restart met the convergence rule within "
                f"{self.max_iter_extended} sweeps (rms < {self.tol_rms}, max < {self.tol_max}, "
                f"relative criterion change < {self.tol_obj} for {self.patience} sweeps); "
                f"keeping the restart with the smallest criterion ({crit[kept]:.6g}); "
                "converged_ is False",
                ConvergenceWarning,
                stacklevel=2,
            )
        best = runs[kept]
        dp_kept, pairwise = restart_spread(arr, runs, kept)
        self._store(arr, d, lam, best)
        self.converged_ = bool(best.converged)
        self.n_iter_ = int(best.n_iter)
        self.criterion_ = float(best.criterion)
        self.history_ = pd.Series(
            best.history,
            index=pd.RangeIndex(1, len(best.history) + 1, name="sweep"),
            name="criterion",
        )
        self.histories_ = {
            r: pd.Series(
                run.history,
                index=pd.RangeIndex(1, len(run.history) + 1, name="sweep"),
                name="criterion",
            )
            for r, run in enumerate(runs)
        }
        self.restarts_ = pd.DataFrame(
            {
                "converged": conv,
                "n_iter": [r.n_iter for r in runs],
                "extended": [r.n_iter > self.max_iter for r in runs],
                "criterion": crit,
                "objective": [objective(d, r.params, lam, r.ssr) for r in runs],
                "kept": np.arange(len(runs)) == kept,
                "max_abs_dp_hat": dp_kept,
                "criterion_gap": crit - crit[kept],
            },
            index=pd.RangeIndex(len(runs), name="restart"),
        )
        self.restart_spread_ = {
            "max_abs_dp_hat": pairwise,
            "criterion_range": float(crit.max() - crit.min()),
        }
        return self

    def _run(self, d: Design, lam: Penalties, q0: np.ndarray, r: int, rng) -> RunResult:
        """One restart: its start point (restart 0 deterministic), then the sweeps."""
        J, C = d.n_judges, d.n_cond
        p = start_point(q0, J, C, rng if r > 0 else None)
        rule = Rule(self.tol_rms, self.tol_max, self.tol_obj, int(self.patience))
        accelerate = check_accelerate(self.accelerate)
        if accelerate == "lbfgs":
            res = run_lbfgs(d, lam, p, self.update_order, rule, int(self.max_iter_extended))
        else:
            res = run_plain(
                d,
                lam,
                p,
                self.update_order,
                rule,
                int(self.max_iter_extended),
                anderson=accelerate == "anderson",
            )
        return res

    def _store(self, arr: PanelArrays, d: Design, lam: Penalties, res: RunResult) -> None:
        p = res.params
        conds = pd.Index(arr.conditions, name="condition")
        judges = pd.Index(arr.judges, name="judge")
        self.items_ = arr.items
        self.judges_ = judges
        self.conditions_ = tuple(arr.conditions)
        self.q_ = pd.Series(p.q, index=arr.items, name="q")
        self.a_ = pd.Series(p.a, index=judges, name="a")
        self.b_ = pd.Series(p.b, index=judges, name="b")
        self.delta_ = pd.Series(p.delta, index=conds, name="delta")
        self.kappa_ = pd.DataFrame(p.kappa, index=judges, columns=conds)
        r2 = (arr.logit - margins(arr, p)) ** 2
        nj = np.bincount(arr.judge_idx, minlength=d.n_judges)
        ssr_j = np.bincount(arr.judge_idx, weights=r2, minlength=d.n_judges)
        self.sigma_ = pd.Series(np.sqrt(ssr_j / nj), index=judges, name="sigma")
        self.objective_ = objective(d, p, lam, float(r2.sum()))

    # ---------------------------------------------------------------- predictions
    def _check_fitted(self) -> None:
        if not hasattr(self, "q_"):
            raise RuntimeError("LatentMeasurementModel is not fitted yet; call fit(panel)")

    def _codes(
        self, panel: pd.DataFrame, check_input: bool = True
    ) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
        """Validate a panel and map its judges / conditions to the fit's codes."""
        self._check_fitted()
        if check_input:
            panel = validate_panel(panel, conditions=None)
        j = self.judges_.get_indexer(panel["judge"])
        c = pd.Index(self.conditions_).get_indexer(panel["condition"])
        problems = []
        if (j < 0).any():
            names = sorted(set(panel.loc[j < 0, "judge"]))
            problems.append(f"judge(s) {names} not in the fit (fit judges: {list(self.judges_)})")
        if (c < 0).any():
            names = sorted(set(panel.loc[c < 0, "condition"]))
            problems.append(
                f"condition(s) {names} not in the fit (fit conditions: {list(self.conditions_)})"
            )
        if problems:
            raise PanelError("cannot predict: " + "; ".join(problems))
        return panel, j, c

    def _assemble(self, panel, j, c, q, name: str) -> pd.DataFrame:
        a = self.a_.to_numpy()
        offsets = self.b_.to_numpy()[:, None] + self.delta_.to_numpy()[None, :]
        offsets = offsets + self.kappa_.to_numpy()
        logit_hat = a[j] * q + offsets[j, c]
        return panel.assign(**{name: q, "logit_hat": logit_hat, "p_hat": expit(logit_hat)})

    def predict_loo(self, panel: pd.DataFrame, check_input: bool = True) -> pd.DataFrame:
        r"""Leave-one-judge-out predictions for every cell of a panel (Methods reference §3).

        Parameters
        ----------
        panel : pandas.DataFrame
            A panel whose items need not be in the fit (that is the purpose); its judges
            and conditions must be.
        check_input : bool, default True
            As in :meth:`fit`.

        Returns
        -------
        pandas.DataFrame
            The validated panel's rows plus ``q_loo`` (:math:`q_i^{(-j)}`), ``logit_hat``
            and ``p_hat``.

        Notes
        -----
        .. math::

            q_i^{(-j)} = \frac{\sum_{(k,c)\in O_i, k\ne j} a_k (m_{ikc} - b_k - \delta_c
            - \kappa_{kc})}{\sum_{(k,c)\in O_i, k\ne j} a_k^2 + \lambda_q},

            \hat p_{ijc} = \sigma(a_j q_i^{(-j)} + b_j + \delta_c + \kappa_{jc}).

        Every condition of the held-out judge is excluded. An item seen by one judge only
        has no other judge, so :math:`q_i^{(-j)} = 0` (the prior mean) and
        :math:`\hat p_{ijc} = \sigma(b_j + \delta_c + \kappa_{jc})`.

        Raises
        ------
        PanelError
            When the panel has judges or conditions that the fit did not see.
        """
        panel, j, c = self._codes(panel, check_input)
        i, items = pd.factorize(panel["item"])  # codes in order of first appearance
        J = len(self.judges_)
        a = self.a_.to_numpy()
        offsets = (
            self.b_.to_numpy()[:, None] + self.delta_.to_numpy()[None, :] + self.kappa_.to_numpy()
        )
        m = panel["logit"].to_numpy(dtype=np.float64)
        num_cell = a[j] * (m - offsets[j, c])
        den_cell = a[j] ** 2
        ij = i.astype(np.int64) * J + j
        n_ij = len(items) * J
        if is_sparse(len(ij), n_ij):  # a crowd: sums over the observed (item, judge) pairs
            pairs, at = np.unique(ij, return_inverse=True)
            at = at.reshape(-1)
            num_ij = np.bincount(at, weights=num_cell, minlength=len(pairs))
            den_ij = np.bincount(at, weights=den_cell, minlength=len(pairs))
            pair_i = pairs // J
            num_i = np.bincount(pair_i, weights=num_ij, minlength=len(items))
            den_i = np.bincount(pair_i, weights=den_ij, minlength=len(items))
            n_judges_i = np.bincount(pair_i, minlength=len(items))
        else:
            at = ij
            num_ij = np.bincount(ij, weights=num_cell, minlength=n_ij)
            den_ij = np.bincount(ij, weights=den_cell, minlength=n_ij)
            seen_ij = np.bincount(ij, minlength=n_ij) > 0
            num_i = num_ij.reshape(-1, J).sum(axis=1)
            den_i = den_ij.reshape(-1, J).sum(axis=1)
            n_judges_i = seen_ij.reshape(-1, J).sum(axis=1)
        # leave judge j out: totals of the item minus judge j's own cells
        q_loo = (num_i[i] - num_ij[at]) / (den_i[i] - den_ij[at] + self.lambda_q)
        q_loo = np.where(n_judges_i[i] > 1, q_loo, 0.0)
        return self._assemble(panel, j, c, q_loo, "q_loo")

    def fitted(self, panel: pd.DataFrame) -> pd.DataFrame:
        """In-sample predictions ``a_j q_i + b_j + delta_c + kappa_jc`` for fit items.

        Returns the validated panel's rows plus ``q`` (the fitted ``q_i``), ``logit_hat``
        and ``p_hat``. Raises :class:`~judgerisk.panel.PanelError` for items, judges or
        conditions not in the fit.
        """
        panel, j, c = self._codes(panel)
        i = self.items_.get_indexer(panel["item"])
        if (i < 0).any():
            missing = list(pd.unique(panel.loc[i < 0, "item"]))
            raise PanelError(
                f"fitted() needs fit items; {len(missing)} item(s) not in the fit "
                f"(first: {missing[:10]}); use predict_loo for new items"
            )
        return self._assemble(panel, j, c, self.q_.to_numpy()[i], "q")


def align_to_reference(
    q_hat: pd.Series, a_hat: pd.Series, b_hat: pd.Series, q_ref: pd.Series
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Undo the LMM's affine non-identifiability against a reference latent scale.

    ``a_j q_i + b_j`` is unchanged by ``q -> s q + t``, ``a -> a / s``, ``b -> b - a t / s``
    (s > 0). This picks ``s, t`` by least squares of ``q_ref`` on ``q_hat`` over common
    items and returns the transformed ``(q, a, b)``; it is how recovery against a
    simulator's truth is measured (the model's own scale fix is ``prod a_j = 1``).

    Parameters
    ----------
    q_hat, a_hat, b_hat : pandas.Series
        Fitted latent preference (by item), discrimination and bias (by judge).
    q_ref : pandas.Series
        Reference latent preference by item (e.g. the simulator's truth).

    Returns
    -------
    tuple of pandas.Series
        Aligned ``q`` (on the items of ``q_hat``), ``a`` and ``b``.
    """
    common = q_hat.index.intersection(q_ref.index)
    if len(common) < 2:
        raise ValueError("need at least two common items to align the latent scale")
    x = q_hat.loc[common].to_numpy(dtype=float)
    y = q_ref.loc[common].to_numpy(dtype=float)
    s, t = np.polyfit(x, y, 1)
    if s <= 0:
        raise ValueError(f"the fitted latent scale runs against the reference (slope {s:.3g})")
    return q_hat * s + t, a_hat / s, b_hat - a_hat * t / s
