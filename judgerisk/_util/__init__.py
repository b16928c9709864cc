"""Private helpers every layer may use: the method registries, progress bars, one-thread BLAS,
atomic writing, hashing and the package version.

- :mod:`~judgerisk._util.registry`: the one registry class and the entry-point loader (its
  public face for plug-in authors is :mod:`judgerisk.plugins`);
- :mod:`~judgerisk._util.progress`: progress bars (the one place that imports tqdm);
- :mod:`~judgerisk._util.determinism`: BLAS on one thread, so numbers do not depend on it;
- :mod:`~judgerisk._util.safe_write`: every file judgerisk writes goes through it;
- :mod:`~judgerisk._util.hashing`: the one file hash and the one text hash;
- :mod:`~judgerisk._util.version`: the installed version, from the package metadata.

Nothing here imports another judgerisk module (the bottom layer).
"""
