"""The labelling page: a run's answers in, a person's blind verdicts out (``RUN/labels.jsonl``).

- :mod:`queue`: which answers, in which seeded order (``--budget N``: a stratified draw);
- :mod:`page`: the HTML form, one answer at a time, no score, no mode;
- :mod:`server`: the local server, its lock (one labelling process per run) and the session;
- :mod:`plan`: ``--plan``, the labels still needed per mode for a target interval width.
"""
