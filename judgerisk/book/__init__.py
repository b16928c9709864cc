"""The book's tooling: run its chapters, rerun one on your data, render a page.

- :mod:`~judgerisk.book.runbook`: execute the chapters with papermill and build the book
  (``python -m judgerisk.book.runbook``, what ``make book`` runs);
- :mod:`~judgerisk.book.rerun`: one chapter on the reader's parameters (``judgerisk run``);
- :mod:`~judgerisk.book.render`: an executed chapter as the book's page, and the chapter times;
- :mod:`~judgerisk.book.claims`: direction sentences ("beats / ties with / trails") that cannot
  contradict their numbers.
"""
