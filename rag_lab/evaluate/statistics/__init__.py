"""Statistics over per-query scores: paired significance tests, multiple-comparison
corrections, bootstrap intervals. A new statistical test goes here."""
