"""JudgeBench: gold-labelled hard pairs with reward-model scores and LLM-judge verdicts.

Where to get the data
---------------------
JudgeBench (Tan et al., 2025, arXiv:2410.12784) is public at https://github.com/ScalerLab/JudgeBench
(commit ``e2c52c284e735e139b3daa61c206ee208f36c461`` was used by judgerisk; the same pairs are on
Hugging Face as ``ScalerLab/JudgeBench``, MIT). The loaders read one flat table::

    <root>/judgebench/judgments_long.csv

``<root>`` is the ``data_dir`` argument, else ``$JUDGERISK_DATA``; with neither, an error names
``JUDGERISK_DATA`` (:func:`judgerisk.datasets.data_root`); ``data_dir`` may also be the ``judgebench`` folder
itself. ``judgments_long.csv`` was derived by the judgerisk team from the repository's
``outputs/*.jsonl`` judge runs (one row per pair, judge and game; the derivation and the list of
source files are in the folder's ``PROVENANCE.md``). Its columns: ``response_model, pair_id,
source, gold_label ("A>B"/"B>A"), judge_name, judge_model, game, score_first_shown,
score_second_shown, decision_presented_frame, verdict_5level_presented_frame``.

Games and orientation
---------------------
Game 1 shows the pair as (A, B); game 2 shows it swapped, (B, A). Scores and verdicts are in the
*presented* frame, so game 2 is mapped back to the original frame (the repository's
``flip_judgment``): the canonical reward logit of game 2 is ``score_second_shown −
score_first_shown``, and a game-2 verdict ``"A>>B"`` means original B ≫ original A.

Reward models
-------------
Five reward models score both answers of the 350 pairs of the gpt-4o split. The canonical logit is
:math:`m = r_A - r_B` (a Bradley–Terry log-odds, :math:`p = \\sigma(r_A - r_B)`). **Rewards are
order-invariant by construction** — game 2 holds the same two numbers swapped — so
``logit_rev == logit_fwd`` exactly, BPE equals the single-pass predictive probability and
swap-and-aggregate always agrees. These pairs test SCOPE's guarantee on real labels; they say
nothing about position bias. Eight rows have tied rewards (logit 0).

LLM judges
----------
o1-mini (gpt-4o split, 350 pairs) and claude-3-haiku (claude split, 270 pairs) answered with the
Arena-Hard prompt; only their parsed 5-level verdict exists (no probabilities). The tidy frame of
:func:`load_judgebench_verdicts` maps each verdict to the original frame and to a signed strength:

=========  ========  =========
canonical  strength  winner
=========  ========  =========
``A>>B``   +2        ``A``
``A>B``    +1        ``A``
``A=B``     0        ``tie``
``B>A``    −1        ``B``
``B>>A``   −2        ``B``
=========  ========  =========

References
----------
Tan et al. (2025), "JudgeBench: A Benchmark for Evaluating LLM-based Judges"; SCOPE paper,
Appendix C (JudgeBench); Methods reference §1 and §7.
"""

from __future__ import annotations

import ast
import json
import os
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgerisk.datasets._paths import data_root
from judgerisk.datasets._registry import register_dataset
from judgerisk.panel import validate_panel

__all__ = [
    "REWARD_MODELS",
    "model_name",
    "LLM_JUDGES",
    "SOURCE_FILES",
    "build_judgments_table",
    "source_name",
    "VERDICT_STRENGTH",
    "judgebench_dir",
    "load_judgebench_judgments",
    "judgebench_reward_judges",
    "load_judgebench_reward_pairs",
    "load_judgebench_panel",
    "load_judgebench_verdicts",
]

FILE = "judgments_long.csv"
REWARD_MODELS: tuple[str, ...] = (
    "Skywork_Skywork-Reward-Gemma-2-27B",
    "Skywork_Skywork-Reward-Llama-3.1-8B",
    "internlm_internlm2-20b-reward",
    "internlm_internlm2-7b-reward",
    "Ray2333_GRM-Gemma-2B-rewardmodel-ft",
)


def model_name(key: str) -> str:
    """A reward model's name without its organisation: ``"internlm_internlm2-20b-reward"`` ->
    ``"internlm2-20b-reward"``.

    JudgeBench's output files spell a Hugging Face id ``org/model`` as ``org_model``
    (:data:`REWARD_MODELS`). The panels this module returns name each reward model by its
    model name alone; every function taking a judge accepts either spelling. Any other name is
    returned as it is.
    """
    return key.split("_", 1)[1] if key in REWARD_MODELS else key


def _reward_key(name: str) -> str:
    """The :data:`REWARD_MODELS` key of a reward model given by its key or its model name."""
    return {model_name(k): k for k in REWARD_MODELS}.get(name, name)


LLM_JUDGES: tuple[str, ...] = ("o1-mini-2024-09-12", "claude-3-haiku-20240307")
#: Canonical 5-level verdict -> signed strength (positive = original A wins).
VERDICT_STRENGTH: dict[str, int] = {"A>>B": 2, "A>B": 1, "A=B": 0, "B>A": -1, "B>>A": -2}
_COLUMNS = (
    "response_model",
    "pair_id",
    "source",
    "gold_label",
    "judge_name",
    "judge_model",
    "game",
    "score_first_shown",
    "score_second_shown",
    "decision_presented_frame",
    "verdict_5level_presented_frame",
)
_GOLD = {"A>B": "A", "B>A": "B"}
#: A presented-frame verdict of game 2 mapped back to the original frame.
_FLIP = {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B", "B>A": "A>B", "B>>A": "A>>B"}


#: The upstream ``outputs/`` files ``judgments_long.csv`` is built from, (response model, judge
#: name, judge model) as the file names spell them.
SOURCE_FILES: tuple[tuple[str, str, str], ...] = (
    ("claude-3-5-sonnet-20240620", "arena_hard", "claude-3-haiku-20240307"),
    ("gpt-4o-2024-05-13", "arena_hard", "o1-mini-2024-09-12"),
    *(("gpt-4o-2024-05-13", "reward_model", judge) for judge in REWARD_MODELS),
)
_VERDICT_TAG = re.compile(r"\[\[(A>>B|A>B|A=B|B>A|B>>A)\]\]")


def source_name(response_model: str, judge_name: str, judge_model: str) -> str:
    """The file name of one upstream judge run under ``outputs/``."""
    return (
        f"dataset=judgebench,response_model={response_model},judge_name={judge_name},"
        f"judge_model={judge_model}.jsonl"
    )


def _game_rows(record: dict, judge_name: str, judge_model: str) -> list[dict]:
    games = record["judgments"]
    rows = []
    for game, entry in enumerate(games, start=1):
        judgment = entry.get("judgment") or {}
        if isinstance(judgment, str):  # some judge runs store the dict's repr
            try:
                judgment = ast.literal_eval(judgment)
            except (ValueError, SyntaxError):
                judgment = {"response": judgment}
        scores = judgment.get("scores") if isinstance(judgment, dict) else None
        text = str(judgment.get("response", "")) if isinstance(judgment, dict) else ""
        tags = _VERDICT_TAG.findall(text)
        rows.append(
            {
                "response_model": record["response_model"],
                "pair_id": record["pair_id"],
                "source": record["source"],
                "gold_label": record["label"],
                "judge_name": judge_name,
                "judge_model": judge_model,
                "game": game,
                "score_first_shown": scores[0] if scores else np.nan,
                "score_second_shown": scores[1] if scores else np.nan,
                "decision_presented_frame": entry.get("decision"),
                "verdict_5level_presented_frame": (
                    tags[-1] if tags and judge_name != "reward_model" else np.nan
                ),
            }
        )
    return rows


def build_judgments_table(
    repository: str | os.PathLike, output: str | os.PathLike | None = None
) -> pd.DataFrame:
    """Build ``judgments_long.csv`` from a clone of the JudgeBench repository.

    Reads the seven ``outputs/*.jsonl`` judge runs of :data:`SOURCE_FILES` (five reward models
    and o1-mini on the gpt-4o split, claude-3-haiku on the claude split; the repository's other
    runs are not read), one row per pair, judge and game. Scores and verdicts stay in the frame
    the game *presented* (game 2 shows the pair swapped); the loaders map game 2 back. The
    5-level verdict is the last ``[[A>B]]``-style tag of the judge's answer.

    Parameters
    ----------
    repository : path-like
        The clone (the folder holding ``outputs/``), e.g. at commit
        ``e2c52c284e735e139b3daa61c206ee208f36c461``.
    output : path-like, optional
        Where to write the CSV (never over an existing file; written atomically). Usually
        ``<data root>/judgebench/judgments_long.csv``.

    Returns
    -------
    pandas.DataFrame
        The table, with the columns the loaders read.
    """
    from judgerisk._util.safe_write import atomic_write

    outputs = Path(repository) / "outputs"
    rows: list[dict] = []
    for response_model, judge_name, judge_model in SOURCE_FILES:
        path = outputs / source_name(response_model, judge_name, judge_model)
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: clone https://github.com/ScalerLab/JudgeBench (with its "
                "outputs/ folder) and pass the clone's folder"
            )
        with path.open(encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    rows.extend(_game_rows(record, judge_name, judge_model))
                except (json.JSONDecodeError, KeyError, TypeError, IndexError) as exc:
                    raise ValueError(
                        f"{path}, line {line_no}: not a judge record ({exc})"
                    ) from None
    table = pd.DataFrame(rows, columns=list(_COLUMNS))
    if output is not None:
        atomic_write(Path(output), lambda tmp: table.to_csv(tmp, index=False), exclusive=True)
    return table


def judgebench_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder holding ``judgments_long.csv`` (``<root>/judgebench`` or ``data_dir`` itself)."""
    if data_dir is not None and (Path(data_dir) / FILE).is_file():
        return Path(data_dir)
    folder = data_root(data_dir) / "judgebench"
    if not (folder / FILE).is_file():
        raise FileNotFoundError(
            f"{folder / FILE} not found; download JudgeBench (github.com/ScalerLab/JudgeBench) and "
            "see judgerisk.datasets.judgebench for the expected layout"
        )
    return folder


def load_judgebench_judgments(data_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """The raw long table, with its columns and values checked.

    Raises
    ------
    ValueError
        Naming the column and up to ten rows on a missing column, an unknown gold label, a game
        other than 1/2, or a duplicated (judge, pair, game).
    """
    path = judgebench_dir(data_dir) / FILE
    df = pd.read_csv(path)
    missing = [c for c in _COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path} lacks columns {missing}")
    for col, ok in (
        ("gold_label", df["gold_label"].isin(list(_GOLD))),
        ("game", df["game"].isin([1, 2])),
    ):
        if not ok.all():
            raise ValueError(
                f"{path}: bad {col} at rows {np.flatnonzero(~ok)[:10].tolist()}: "
                f"{df.loc[~ok, col].head(10).tolist()}"
            )
    dup = df.duplicated(["judge_model", "response_model", "pair_id", "game"], keep=False)
    if dup.any():
        raise ValueError(
            f"{path}: duplicated (judge, pair, game) at rows {np.flatnonzero(dup)[:10].tolist()}"
        )
    return df


def judgebench_reward_judges(data_dir: str | os.PathLike | None = None) -> list[str]:
    """Reward models present in the table (judge_name == "reward_model")."""
    df = load_judgebench_judgments(data_dir)
    return sorted(df.loc[df["judge_name"] == "reward_model", "judge_model"].unique().tolist())


def _reward_rows(df: pd.DataFrame, judges) -> pd.DataFrame:
    rm = df[df["judge_name"] == "reward_model"]
    judges = [_reward_key(str(j)) for j in judges]
    available = set(rm["judge_model"])
    unknown = [j for j in judges if j not in available]
    if unknown:
        raise ValueError(f"unknown reward model(s) {unknown}; available: {sorted(available)}")
    rm = rm[rm["judge_model"].isin(list(judges))]
    bad = rm[["score_first_shown", "score_second_shown"]].isna().any(axis=1)
    if bad.any():
        raise ValueError(f"missing reward scores at rows {rm.index[bad][:10].tolist()}")
    diff = rm["score_first_shown"] - rm["score_second_shown"]
    return rm.assign(logit=np.where(rm["game"] == 1, diff, -diff))


def load_judgebench_reward_pairs(
    judge: str, data_dir: str | os.PathLike | None = None
) -> pd.DataFrame:
    """One reward model's pairs in the :func:`judgerisk.simulate.simulate_pairs` shape.

    Parameters
    ----------
    judge : str
        A reward model: its key (:data:`REWARD_MODELS`, :func:`judgebench_reward_judges`) or
        its model name (:func:`model_name`).
    data_dir : path-like, optional
        Data root or the ``judgebench`` folder.

    Returns
    -------
    pandas.DataFrame
        ``item`` (pair id), ``logit_fwd`` (game 1, :math:`r_A - r_B`), ``logit_rev`` (game 2
        mapped back to the original frame), ``gold`` ("A"/"B"), ``source``. Raw rewards, not
        clipped. ``logit_rev == logit_fwd`` for every reward model (order-invariant scores).
    """
    rows = _reward_rows(load_judgebench_judgments(data_dir), [judge])
    wide = rows.pivot(index="pair_id", columns="game", values="logit")
    lost = wide.index[wide.isna().any(axis=1)]
    if len(lost):
        raise ValueError(f"{judge}: pairs without both games: {lost[:10].tolist()}")
    meta = rows[rows["game"] == 1].set_index("pair_id").loc[wide.index]
    return pd.DataFrame(
        {
            "item": wide.index.astype(str).to_numpy(),
            "logit_fwd": wide[1].to_numpy(np.float64),
            "logit_rev": wide[2].to_numpy(np.float64),
            "gold": meta["gold_label"].map(_GOLD).to_numpy(),
            "source": meta["source"].to_numpy(),
        }
    )


@register_dataset("judgebench", markers=("judgments_long.csv",))
def load_judgebench_panel(
    data_dir: str | os.PathLike | None = None, judges: Any = "reward_models"
) -> pd.DataFrame:
    """A validated panel of the reward models: conditions ``original`` (game 1), ``swap`` (game 2).

    Parameters
    ----------
    data_dir : path-like, optional
    judges : "reward_models" or sequence of str
        Reward models to include (all five by default), by key or model name. The LLM judges
        have no probabilities; see :func:`load_judgebench_verdicts`.

    Returns
    -------
    pandas.DataFrame
        A panel (:func:`judgerisk.panel.validate_panel`): ``item`` (pair id), ``judge`` (the
        model name, :func:`model_name`),
        ``condition``, ``logit`` (:math:`r_A - r_B`, clipped to [−20, 20] by validation), ``p``,
        ``verdict``, ``gold``, plus ``source``.
    """
    df = load_judgebench_judgments(data_dir)
    names = REWARD_MODELS if isinstance(judges, str) and judges == "reward_models" else judges
    if isinstance(names, str):
        raise ValueError(
            f"judges must be 'reward_models' or a list of reward models, got {names!r}"
        )
    rows = _reward_rows(df, list(names))
    panel = pd.DataFrame(
        {
            "item": rows["pair_id"].astype(str).to_numpy(),
            "judge": rows["judge_model"].astype(str).map(model_name).to_numpy(),
            "condition": np.where(rows["game"].to_numpy() == 1, "original", "swap"),
            "logit": rows["logit"].to_numpy(np.float64),
            "gold": rows["gold_label"].map(_GOLD).to_numpy(),
            "source": rows["source"].to_numpy(),
        }
    )
    return validate_panel(panel)


def load_judgebench_verdicts(
    data_dir: str | os.PathLike | None = None, judges: Any = "llm_judges"
) -> pd.DataFrame:
    """The LLM judges' 5-level verdicts as a tidy frame in the original frame.

    Parameters
    ----------
    data_dir : path-like, optional
    judges : "llm_judges" or sequence of str
        Judge models (default: o1-mini and claude-3-haiku).

    Returns
    -------
    pandas.DataFrame
        ``item, response_model, source, judge, game, condition`` ("original"/"swap"),
        ``verdict_presented`` (as parsed, presented frame), ``verdict`` (canonical 5-level),
        ``strength`` (+2 … −2, see the module table; NaN when unparsed), ``winner``
        ("A"/"B"/"tie", missing when unparsed) and ``gold``. Unparsed verdicts are kept as
        missing values and reported with a warning.
    """
    df = load_judgebench_judgments(data_dir)
    names = LLM_JUDGES if isinstance(judges, str) and judges == "llm_judges" else list(judges)
    lj = df[(df["judge_name"] != "reward_model") & df["judge_model"].isin(names)]
    unknown = sorted(set(names) - set(lj["judge_model"]))
    if unknown:
        raise ValueError(
            f"unknown LLM judge(s) {unknown}; available: "
            f"{sorted(set(df.loc[df['judge_name'] != 'reward_model', 'judge_model']))}"
        )
    presented = lj["verdict_5level_presented_frame"].astype("string")
    bad = presented.notna() & ~presented.isin(list(VERDICT_STRENGTH))
    if bad.any():
        raise ValueError(
            f"unknown 5-level verdicts at rows {lj.index[bad][:10].tolist()}: "
            f"{presented[bad].head(10).tolist()}"
        )
    swapped = (lj["game"] == 2).to_numpy()
    canonical = presented.where(~swapped, presented.map(_FLIP))
    strength = canonical.map(VERDICT_STRENGTH).astype("Float64")
    winner = pd.Series(
        np.select([strength > 0, strength < 0], ["A", "B"], "tie"), index=lj.index, dtype="string"
    ).where(strength.notna())
    if presented.isna().any():
        warnings.warn(
            f"{int(presented.isna().sum())} JudgeBench verdicts were not parsed; kept as missing",
            UserWarning,
            stacklevel=2,
        )
    return pd.DataFrame(
        {
            "item": lj["pair_id"].astype(str),
            "response_model": lj["response_model"],
            "source": lj["source"],
            "judge": lj["judge_model"],
            "game": lj["game"].astype(np.int8),
            "condition": np.where(swapped, "swap", "original"),
            "verdict_presented": presented,
            "verdict": canonical,
            "strength": strength,
            "winner": winner,
            "gold": lj["gold_label"].map(_GOLD),
        }
    ).reset_index(drop=True)
