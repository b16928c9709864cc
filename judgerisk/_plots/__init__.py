"""Figure functions: every chart in the book and the reports is drawn here."""
