"""The reports: a panel file in, one self-contained HTML page out.

- :mod:`~judgerisk.report.build`: run the packaged report notebook (``templates/``) with
  papermill and write the page (:func:`~judgerisk.report.build.render_report`), and the table it
  embeds (:func:`~judgerisk.report.build.report_table`);
- :mod:`~judgerisk.report._content`: the panel report's sentences and tables;
- :mod:`~judgerisk.report._one_judge`: the one-judge report's (one judge in both orders);
- :mod:`~judgerisk.report._check`: a report's visible words and figures against a regenerated one;
- :mod:`~judgerisk.report._record_checks`: a provenance record's checks before ``judgerisk verify``
  recomputes anything.
"""
