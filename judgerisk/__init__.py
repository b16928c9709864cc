"""judgerisk."""
