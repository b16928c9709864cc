"""Vote tables with planted judge accuracies, shared by the aggregator and Dawid–Skene tests."""

import numpy as np
import pandas as pd


def planted_votes(n, acc=(0.9, 0.85, 0.8, 0.5, 0.5), missing=0.1, seed=0):
    """Votes of judges with known accuracies (0.5 = spammer) on items with known labels."""
    rng = np.random.default_rng(seed)
    z = rng.random(n) < 0.5
    correct = rng.random((n, len(acc))) < np.asarray(acc)
    v = np.where(correct, z[:, None], ~z[:, None]).astype(float)
    v[rng.random(v.shape) < missing] = np.nan
    v[:, 0] = np.where(np.isnan(v).all(axis=1), 1.0 * z, v[:, 0])
    votes = pd.DataFrame(v, columns=[f"J{j + 1}" for j in range(len(acc))])
    votes.index = pd.Index(np.arange(n) * 7 + 3, name="item")  # non-trivial item ids
    return votes, pd.Series(z.astype(int), index=votes.index)


def crowdkit_long(votes):
    """The item x judge votes as crowd-kit's long ``task, worker, label`` table."""
    long = votes.stack().dropna().rename("label").reset_index()
    long.columns = ["task", "worker", "label"]
    long["label"] = long["label"].astype(int)
    return long
