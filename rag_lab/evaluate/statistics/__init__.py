"""Statistics over per-query scores: paired significance tests, multiple-comparison
corrections, bootstrap intervals, and judged means corrected by a person's labels (PPI++,
agreement). numpy/scipy only. A new statistical test goes here."""
