"""The book's own code (private: outside the documented API, shipped so ``judgerisk run`` works).

- :mod:`~judgerisk._book.runbook`: execute the chapters with papermill and build the book
  (``python -m judgerisk._book.runbook``, what ``make book`` runs);
- :mod:`~judgerisk._book.rerun`: one chapter on the reader's parameters (``judgerisk run``);
- :mod:`~judgerisk._book.render`: an executed chapter as the book's page, and the chapter times;
- :mod:`~judgerisk._book.claims`: direction sentences ("beats / ties with / trails") that cannot
  contradict their numbers;
- :mod:`~judgerisk._book.checks`: what no page of the book may show;
- :mod:`~judgerisk._book.studies`: the chapters' studies; :mod:`~judgerisk._book.figures`: their
  figures.

A wheel also carries the chapters' sources here, in ``sources/`` (see ``pyproject.toml``).
"""
