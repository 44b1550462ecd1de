"""Scale-out on Ray (optional extra: ``pip install -e .[ray]``).

The pipeline stays where it is (ingest → index → answer → evaluate); this package only moves its
per-item work onto a Ray cluster: PDF parsing as tasks, embedding and sample evaluation on actors
that load their models once. The driver keeps every write (index, run folder). ``ray`` is
imported only when ``--ray`` is used.
"""
