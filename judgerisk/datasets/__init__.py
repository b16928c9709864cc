"""Loaders that turn public judge data into panels, read by path (never copied).

The folder is given as an argument or by the ``JUDGERISK_DATA`` environment variable;
see :func:`judgerisk.datasets._paths.data_dir`.
"""
