"""Before a run: its resolved identity (:mod:`run_plan`), the answer cache keys (:mod:`answering`),
what it will call and cost (:mod:`estimates`, :mod:`dry_run`), what a recorded call cost
(:mod:`cost`) and what ``--resume`` runs again (:mod:`rescore`)."""
