"""Simulated judge panels: the embedded default data of the book and the tests.

The generative story extends the latent measurement model (Methods reference §2) with the
mechanisms that make real panels wrong, so that every analysis in judgerisk can be
demonstrated end to end without downloading anything. Simulated data demonstrate
*mechanics*; they are not evidence about real judges.

For item i, judge j and condition c (canonical orientation, ``s_c = +1`` when answer A
is shown first and ``-1`` after an order swap)::

    m_ijc = a_j q_i + b_j + delta_c + kappa_jc          (the LMM part)
            + s_c tau_ij                                 (item-level order sensitivity)
            + eta_{i, r(c)}                              (item-level rubric sensitivity)
            + xi^F_{ij, k(c)}                            (item x judge sensitivity to family F)
            + sigma_j * w_i * eps_ijc,   eps ~ N(0, 1)   (judge noise, boosted on hard items)

``xi^F`` is drawn for every other perturbation family F present in the conditions (label,
format, verbosity, a plug-in's; :mod:`judgerisk.families`): zero except on the items sensitive
to F, where it is ``N(0, sd_F^2)`` per judge and variant ``k``, or, for a family whose variants
push in opposite directions (verbosity pads A in odd variants and B in even ones),
``sign_k |N(0, sd_F^2)|`` with one magnitude per item and judge. Each family draws from its own
random stream (seeded by the seed and the family's name), so a panel of the paper's six
conditions is drawn exactly as without any family, and adding one family changes no other's
draws.

``kappa`` includes each judge's position bias ``beta_j`` (first-shown answer favoured),
which the LMM absorbs as ``b_j + beta_j`` and ``kappa_jc = -2 beta_j`` on swapped
conditions. ``q_i`` has the sign of the gold answer except on *consensus-wrong* items,
where the whole panel leans the wrong way.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgerisk.families import FAMILIES, get_family, parse_condition
from judgerisk.options import SIMULATE, check_count
from judgerisk.panel import ORIGINAL, order_pairs, validate_panel
from judgerisk.validation import to_labels

__all__ = [
    "Panel",
    "SimulationTruth",
    "simulate_panel",
    "simulate_pairs",
    "calibration_labels",
    "DEFAULT_KNOBS",
    "KNOB_DOCS",
    "knob_table",
]

#: Default values of every knob of :func:`simulate_panel` (documented there).
DEFAULT_KNOBS: dict[str, float] = {
    "gold_a_rate": 0.5,
    "q_location": 1.0,
    "q_spread": 0.6,
    "ambiguous_rate": 0.15,
    "ambiguous_max": 0.6,
    "consensus_wrong_rate": 0.08,
    "wrong_strength": 0.7,
    "order_sensitive_rate": 0.15,
    "order_sensitivity": 2.0,
    "rubric_sensitive_rate": 0.12,
    "rubric_sensitivity": 2.0,
    "hard_item_boost": 3.0,
    "hard_noise_boost": 1.6,
    "judge_scale_sd": 0.35,
    "judge_bias_sd": 0.25,
    "judge_noise_low": 1.0,
    "judge_noise_high": 3.2,
    "position_bias_mean": 0.3,
    "position_bias_sd": 0.3,
    "condition_effect_sd": 0.2,
    "kappa_sd": 0.15,
    "n_spammers": 0,
    "spammer_sd": 2.5,
    "missing_rate": 0.0,
    "label_sensitive_rate": 0.12,
    "label_sensitivity": 2.0,
    "format_sensitive_rate": 0.12,
    "format_sensitivity": 2.0,
    "verbosity_sensitive_rate": 0.12,
    "verbosity_sensitivity": 2.0,
}
#: The perturbation families simulated by the ``xi`` term (every family but order and rubric,
#: which have their own mechanisms).
_OWN_MECHANISM = ("order", "rubric")


#: One line per knob: what it controls (shown in chapter 1 by :func:`knob_table`).
KNOB_DOCS: dict[str, str] = {
    "gold_a_rate": "share of items whose gold answer is A",
    "q_location": "typical items: |q| ~ LogNormal(q_location, q_spread)",
    "q_spread": "spread of log |q| for typical items",
    "ambiguous_rate": "share of ambiguous items",
    "ambiguous_max": "ambiguous items: |q| ~ U(0, ambiguous_max)",
    "consensus_wrong_rate": "share of items whose latent preference points to the wrong answer",
    "wrong_strength": "|q| multiplier on consensus-wrong items",
    "order_sensitive_rate": "share of items with an item x judge order effect tau_ij",
    "order_sensitivity": "sd of tau_ij (its sign flips with the order swap)",
    "rubric_sensitive_rate": "share of items whose preference shifts under each rubric",
    "rubric_sensitivity": "sd of the rubric shift eta_ir",
    "hard_item_boost": "ambiguous / consensus-wrong items are this much likelier to be sensitive",
    "hard_noise_boost": "noise multiplier w_i on consensus-wrong items",
    "judge_scale_sd": "log a_j ~ N(0, sd^2), re-centred so that the a_j have geometric mean 1",
    "judge_bias_sd": "b_j ~ N(0, sd^2)",
    "judge_noise_low": "sigma_j ~ U(low, high)",
    "judge_noise_high": "sigma_j ~ U(low, high)",
    "position_bias_mean": "first-shown answer bonus beta_j ~ N(mean, sd^2)",
    "position_bias_sd": "spread of the position bias beta_j",
    "condition_effect_sd": "delta_c ~ N(0, sd^2) for c != original",
    "kappa_sd": "kappa_jc ~ N(0, sd^2) for c != original (position bias added)",
    "n_spammers": "the last n judges ignore the item: m ~ N(b_j, spammer_sd^2)",
    "spammer_sd": "noise sd of spammer judges",
    "missing_rate": "share of cells dropped at random (every item keeps an original cell)",
    "label_sensitive_rate": "share of items whose verdict moves with the answer labels",
    "label_sensitivity": "sd of the item x judge label shift xi (label1, label2, ...)",
    "format_sensitive_rate": "share of items whose verdict moves with the answers' layout",
    "format_sensitivity": "sd of the item x judge layout shift xi (format1, ...)",
    "verbosity_sensitive_rate": "share of items on which padding an answer helps it",
    "verbosity_sensitivity": "sd of the padding shift |xi| (+ for verbosity1, - for verbosity2)",
}


def knob_table(**knobs: float) -> pd.DataFrame:
    """Every simulation knob: its default, the value used (with overrides) and its meaning."""
    used = _resolve_knobs(knobs)
    return pd.DataFrame(
        {
            "default": pd.Series(DEFAULT_KNOBS),
            "used": pd.Series(used),
            "meaning": pd.Series(KNOB_DOCS),
        }
    ).rename_axis("knob")


@dataclass(frozen=True)
class SimulationTruth:
    """The parameters a simulated panel was drawn from.

    Attributes
    ----------
    q : pandas.Series
        True latent preference by item (``q > 0`` favours the original answer A).
    a, b, sigma : pandas.Series
        Judge scale, bias (position bias on the original order included) and noise sd,
        by judge, in the LMM's parametrisation.
    delta : pandas.Series
        Condition effect by condition (0 for ``original``).
    kappa : pandas.DataFrame
        Judge x condition interaction (0 for ``original``), position bias included.
    items : pandas.DataFrame
        By item: ``gold`` and the mechanism flags ``ambiguous``, ``consensus_wrong``,
        ``order_sensitive``, ``rubric_sensitive``, and ``<family>_sensitive`` for each other
        perturbation family simulated (``label_sensitive``, ...).
    spammers : tuple of str
        Judges whose logits ignore the item (their ``a`` is 0).
    knobs : dict
        Every knob value used.
    """

    q: pd.Series
    a: pd.Series
    b: pd.Series
    sigma: pd.Series
    delta: pd.Series
    kappa: pd.DataFrame
    items: pd.DataFrame
    spammers: tuple[str, ...]
    knobs: dict


@dataclass(frozen=True)
class Panel:
    """A simulated panel: the long table (``data``) and what it was drawn from (``truth``)."""

    data: pd.DataFrame
    truth: SimulationTruth


def _family_knobs() -> dict[str, float]:
    """The sensitivity knobs of the registered families beyond the built-in knobs (plug-ins)."""
    out = {}
    for name, family in FAMILIES.items():
        if name not in _OWN_MECHANISM and f"{name}_sensitive_rate" not in DEFAULT_KNOBS:
            out[f"{name}_sensitive_rate"] = float(family.sensitive_rate)
            out[f"{name}_sensitivity"] = float(family.sensitivity)
    return out


def _resolve_knobs(knobs: dict) -> dict:
    defaults = {**DEFAULT_KNOBS, **_family_knobs()}
    unknown = sorted(set(knobs) - set(defaults))
    if unknown:
        raise TypeError(f"unknown simulation knob(s) {unknown}; known: {sorted(defaults)}")
    out = {**defaults, **knobs}
    for name in (
        "ambiguous_rate",
        "consensus_wrong_rate",
        "order_sensitive_rate",
        "rubric_sensitive_rate",
        "missing_rate",
        "gold_a_rate",
        *(k for k in out if k.endswith("_sensitive_rate")),
    ):
        if not 0.0 <= out[name] <= 1.0:
            raise ValueError(f"knob {name}={out[name]!r} must lie in [0, 1]")
    if out["ambiguous_rate"] + out["consensus_wrong_rate"] > 1:
        raise ValueError("ambiguous_rate + consensus_wrong_rate must not exceed 1")
    if out["judge_noise_low"] <= 0 or out["judge_noise_high"] < out["judge_noise_low"]:
        raise ValueError("need 0 < judge_noise_low <= judge_noise_high")
    return out


def _is_swapped(condition: str) -> bool:
    return condition.startswith("swap")


def _rubric_of(condition: str) -> str | None:
    for rubric in ("rubric1", "rubric2"):
        if condition.endswith(rubric):
            return rubric
    return None


def simulate_panel(
    n_items: int = SIMULATE.n_items,
    n_judges: int = SIMULATE.n_judges,
    conditions: tuple[str, ...] = SIMULATE.conditions,
    seed: int = SIMULATE.seed,
    **knobs: float,
) -> Panel:
    """Draw a judge panel from the latent measurement model plus failure mechanisms.

    Parameters
    ----------
    n_items, n_judges : int
        Panel size. Items are ``0 .. n_items-1``; judges ``"J1" .. "J<n>"``.
    conditions : tuple of str
        Conditions to simulate; must include ``"original"``. Names starting with
        ``swap`` are order-swapped; names ending in ``rubric1`` / ``rubric2`` use that
        alternative rubric; ``F<k>`` / ``swap_F<k>`` of another perturbation family F
        (``label1``, ``format2``, ``verbosity1``, ...) carry F's shift ``xi``.
    seed : int
        Seed of the only random generator used; same seed, same panel.
    **knobs
        Overrides of :data:`DEFAULT_KNOBS`:

        - ``gold_a_rate``: share of items whose gold answer is A.
        - ``q_location``, ``q_spread``: typical items have ``|q| ~ LogNormal(q_location,
          q_spread)`` (median e^1 ≈ 2.7 logits at the default).
        - ``ambiguous_rate``, ``ambiguous_max``: share of ambiguous items, whose
          ``|q| ~ U(0, ambiguous_max)``.
        - ``consensus_wrong_rate``, ``wrong_strength``: share of items where the latent
          preference points to the wrong answer, with ``|q|`` scaled by
          ``wrong_strength`` (many still reach high consensus).
        - ``order_sensitive_rate``, ``order_sensitivity``: share of items with an
          item x judge order effect ``tau_ij ~ N(0, order_sensitivity²)``.
        - ``rubric_sensitive_rate``, ``rubric_sensitivity``: share of items whose
          preference shifts under each alternative rubric by ``eta ~ N(0, .²)``.
        - ``hard_item_boost``: consensus-wrong and ambiguous items are this many times
          more likely to be order- or rubric-sensitive (capped at 1).
        - ``hard_noise_boost``: noise multiplier on consensus-wrong items.
        - ``judge_scale_sd``: ``log a_j ~ N(0, .²)``, re-centred so ``Σ log a_j = 0``.
        - ``judge_bias_sd``: ``b_j ~ N(0, .²)``.
        - ``judge_noise_low``, ``judge_noise_high``: ``sigma_j ~ U(low, high)``.
        - ``position_bias_mean``, ``position_bias_sd``: first-shown answer bonus
          ``beta_j ~ N(mean, sd²)``.
        - ``condition_effect_sd``, ``kappa_sd``: ``delta_c`` and ``kappa_jc`` spreads.
        - ``n_spammers``, ``spammer_sd``: the last judges ignore the item
          (``m ~ N(b_j, spammer_sd²)``).
        - ``missing_rate``: share of cells dropped at random (each item keeps at least one
          original-condition cell).
        - ``label_sensitive_rate``, ``label_sensitivity``, ``format_sensitive_rate``,
          ``format_sensitivity``, ``verbosity_sensitive_rate``, ``verbosity_sensitivity``
          (and ``<family>_sensitive_rate``, ``<family>_sensitivity`` of a plug-in family):
          for each perturbation family other than order and rubric, the share of items
          sensitive to it (times ``hard_item_boost`` on hard items) and the sd of their
          shift ``xi`` (module docstring). They act only when the family's conditions
          (``label1``, ``swap_label1``, ...) are simulated.

    Returns
    -------
    Panel
        ``.data`` is the validated long panel with ``gold``; ``.truth`` the parameters.
    """
    k = _resolve_knobs(knobs)
    conditions = tuple(conditions)
    if not all(isinstance(c, str) for c in conditions):
        raise ValueError(f"conditions must be names (strings), got {list(conditions)!r}")
    if ORIGINAL not in conditions:
        raise ValueError(f"conditions must include {ORIGINAL!r}, got {conditions}")
    check_count("n_items", n_items)
    check_count("n_judges", n_judges)
    if not 0 <= k["n_spammers"] <= n_judges:
        raise ValueError(f"n_spammers={k['n_spammers']} must lie in [0, n_judges]")
    rng = np.random.default_rng(seed)
    judges = [f"J{j + 1}" for j in range(n_judges)]
    items = np.arange(n_items)

    # --- items: gold, latent strength, mechanisms -------------------------------------
    gold_a = rng.random(n_items) < k["gold_a_rate"]
    kind = rng.random(n_items)
    ambiguous = kind < k["ambiguous_rate"]
    wrong = (kind >= k["ambiguous_rate"]) & (kind < k["ambiguous_rate"] + k["consensus_wrong_rate"])
    strength = rng.lognormal(k["q_location"], k["q_spread"], n_items)
    strength = np.where(ambiguous, rng.uniform(0, k["ambiguous_max"], n_items), strength)
    strength = np.where(wrong, k["wrong_strength"] * strength, strength)
    sign = np.where(gold_a, 1.0, -1.0) * np.where(wrong, -1.0, 1.0)
    q = sign * strength

    hard = ambiguous | wrong
    boost = np.where(hard, k["hard_item_boost"], 1.0)
    order_sensitive = rng.random(n_items) < np.minimum(1, k["order_sensitive_rate"] * boost)
    rubric_sensitive = rng.random(n_items) < np.minimum(1, k["rubric_sensitive_rate"] * boost)
    noise_mult = np.where(wrong, k["hard_noise_boost"], 1.0)

    # --- judges and conditions ----------------------------------------------------------
    log_a = rng.normal(0, k["judge_scale_sd"], n_judges)
    a = np.exp(log_a - log_a.mean())
    n_spam = int(k["n_spammers"])
    if n_spam:
        a[n_judges - n_spam :] = 0.0
    b = rng.normal(0, k["judge_bias_sd"], n_judges)
    sigma = rng.uniform(k["judge_noise_low"], k["judge_noise_high"], n_judges)
    sigma[a == 0] = k["spammer_sd"]
    beta = rng.normal(k["position_bias_mean"], k["position_bias_sd"], n_judges)
    n_cond = len(conditions)
    swapped = np.array([_is_swapped(c) for c in conditions])
    s_c = np.where(swapped, -1.0, 1.0)
    delta = rng.normal(0, k["condition_effect_sd"], n_cond)
    kappa_raw = rng.normal(0, k["kappa_sd"], (n_judges, n_cond))
    is_orig = np.array([c == ORIGINAL for c in conditions])
    delta[is_orig] = 0.0
    kappa_raw[:, is_orig] = 0.0
    # position bias in the LMM parametrisation: b_j + beta_j, kappa_jc - 2 beta_j if swapped
    kappa = kappa_raw - 2.0 * beta[:, None] * swapped[None, :]
    b_lmm = b + beta

    rubric_names = ("rubric1", "rubric2")
    eta = rng.normal(0, k["rubric_sensitivity"], (n_items, len(rubric_names)))
    eta[~rubric_sensitive] = 0.0
    rubric_col = np.array(
        [rubric_names.index(r) if (r := _rubric_of(c)) else -1 for c in conditions]
    )
    tau = rng.normal(0, k["order_sensitivity"], (n_items, n_judges))
    tau[~order_sensitive] = 0.0

    # --- cells (item x judge x condition) ------------------------------------------------
    eps = rng.standard_normal((n_items, n_judges, n_cond))
    m = (
        a[None, :, None] * q[:, None, None]
        + b_lmm[None, :, None]
        + delta[None, None, :]
        + kappa[None, :, :]
        + s_c[None, None, :] * tau[:, :, None]
        + np.where(rubric_col >= 0, eta[:, np.maximum(rubric_col, 0)], 0.0)[:, None, :]
        + sigma[None, :, None] * noise_mult[:, None, None] * eps
    )
    family_flags = _add_family_shifts(m, conditions, hard, k, seed)
    keep = np.ones(m.shape, dtype=bool)
    if k["missing_rate"] > 0:
        keep = rng.random(m.shape) >= k["missing_rate"]
        orig = int(np.flatnonzero(is_orig)[0])
        none_left = ~keep[:, :, orig].any(axis=1)
        rescue = rng.integers(0, n_judges, n_items)
        keep[np.flatnonzero(none_left), rescue[none_left], orig] = True

    ii, jj, cc = np.nonzero(keep)
    gold = to_labels(gold_a)
    data = pd.DataFrame(
        {
            "item": items[ii],
            "judge": np.array(judges, dtype=object)[jj],
            "condition": np.array(conditions, dtype=object)[cc],
            "logit": m[ii, jj, cc],
            "gold": gold[ii],
        }
    )
    data = validate_panel(data, conditions=None)

    truth = SimulationTruth(
        q=pd.Series(q, index=pd.Index(items, name="item"), name="q"),
        a=pd.Series(a, index=pd.Index(judges, name="judge"), name="a"),
        b=pd.Series(b_lmm, index=pd.Index(judges, name="judge"), name="b"),
        sigma=pd.Series(sigma, index=pd.Index(judges, name="judge"), name="sigma"),
        delta=pd.Series(delta, index=pd.Index(conditions, name="condition"), name="delta"),
        kappa=pd.DataFrame(
            kappa,
            index=pd.Index(judges, name="judge"),
            columns=pd.Index(conditions, name="condition"),
        ),
        items=pd.DataFrame(
            {
                "gold": gold,
                "ambiguous": ambiguous,
                "consensus_wrong": wrong,
                "order_sensitive": order_sensitive,
                "rubric_sensitive": rubric_sensitive,
                **{f"{name}_sensitive": flag for name, flag in family_flags.items()},
            },
            index=pd.Index(items, name="item"),
        ),
        spammers=tuple(judges[n_judges - n_spam :]) if n_spam else (),
        knobs=k,
    )
    return Panel(data=data, truth=truth)


def _add_family_shifts(
    m: np.ndarray, conditions: tuple[str, ...], hard: np.ndarray, knobs: dict, seed: int
) -> dict[str, np.ndarray]:
    """Add each simulated family's shift ``xi`` to the logits ``m`` (in place).

    Returns ``family -> sensitive-item flags`` for the families present (module docstring).
    """
    n_items, n_judges, _ = m.shape
    by_family: dict[str, list[tuple[int, int]]] = {}
    for col, cond in enumerate(conditions):
        spec = parse_condition(cond)
        if spec is not None and spec.family and spec.family not in _OWN_MECHANISM:
            by_family.setdefault(spec.family, []).append((col, int(spec.variant or 0)))
    flags = {}
    for name in [f for f in FAMILIES if f in by_family]:  # registration order
        family = get_family(name)
        rng = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])
        boost = np.where(hard, knobs["hard_item_boost"], 1.0)
        sensitive = rng.random(n_items) < np.minimum(1, knobs[f"{name}_sensitive_rate"] * boost)
        sd = knobs[f"{name}_sensitivity"]
        variants = sorted({v for _, v in by_family[name]})
        signs = {v: family.simulation_sign(v) for v in variants}
        if all(sign is not None for sign in signs.values()):
            size = np.abs(rng.normal(0, sd, (n_items, n_judges)))
            shift = {v: signs[v] * size for v in variants}
        else:
            draws = rng.normal(0, sd, (len(variants), n_items, n_judges))
            shift = {v: draws[i] for i, v in enumerate(variants)}
        for col, v in by_family[name]:
            m[:, :, col] += np.where(sensitive[:, None], shift[v], 0.0)
        flags[name] = sensitive
    return flags


def calibration_labels(
    panel: pd.DataFrame, n_labelled: int | None = None, seed: int = 0
) -> pd.DataFrame:
    """The gold labels of a random calibration sample of a panel's items.

    A certificate needs labelled items to calibrate on *and* unlabelled items to decide
    (the book's chapter "Certified panel decisions"); labelling every item leaves nothing to
    decide. The sample is uniform without replacement, so calibration and test items are
    exchangeable, which SCOPE's guarantee assumes.

    Parameters
    ----------
    panel : pandas.DataFrame
        A panel with a ``gold`` column (e.g. :func:`simulate_panel` ``.data``).
    n_labelled : int, optional
        Items to label, at most the number of items; ``None`` labels every item.
    seed : int, default 0
        Seed of the sample (independent of the panel's own draw).

    Returns
    -------
    pandas.DataFrame
        Columns ``item, gold``, one row per labelled item, sorted by item.
    """
    labels = panel.drop_duplicates("item")[["item", "gold"]].sort_values("item")
    if n_labelled is None:
        return labels.reset_index(drop=True)
    if not 0 <= n_labelled <= len(labels):
        raise ValueError(f"n_labelled={n_labelled} must lie in [0, {len(labels)}] (the items)")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x1A8E1]))
    rows = np.sort(rng.choice(len(labels), size=n_labelled, replace=False))
    return labels.iloc[rows].reset_index(drop=True)


def simulate_pairs(
    n: int = SIMULATE.n_items, seed: int = SIMULATE.seed, **knobs: float
) -> pd.DataFrame:
    """One judge queried in both answer orders, drawn from the same model as the panels.

    Parameters
    ----------
    n : int
        Number of pairwise items.
    seed : int
        Random seed.
    **knobs
        As in :func:`simulate_panel` (a one-judge panel with conditions
        ``original`` and ``swap``).

    Returns
    -------
    pandas.DataFrame
        :func:`judgerisk.panel.order_pairs` of the simulated one-judge panel (conditions
        ``original`` and ``swap``), with the true label as ``gold``:
        ``item, logit_fwd, logit_rev, gold``; ``logit_fwd`` is the canonical log-odds
        that A wins with A shown first, ``logit_rev`` the canonical log-odds after the
        swap (log P(original A wins) - log P(original B wins), i.e. the judge's
        ``log P("B") - log P("A")`` on the swapped prompt).
    """
    if knobs.get("missing_rate", 0):
        raise ValueError("simulate_pairs needs both orders of every item: missing_rate must be 0")
    panel = simulate_panel(
        n_items=n, n_judges=1, conditions=("original", "swap"), seed=seed, **knobs
    )
    pairs = order_pairs(panel.data)  # the one-judge contract's view (judgerisk.panel)
    gold = panel.truth.items["gold"].reindex(pairs.index).to_numpy()
    return pairs[["logit_fwd", "logit_rev"]].assign(gold=gold).reset_index()
