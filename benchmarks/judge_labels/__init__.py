"""The judge's labelled answers, built and scored by the judge-validation benchmarks only: the
validation set (``validation_set``, ``validation_kinds``), the silver label of the generator's own
answers (``silver``) and how well a judge's scores separate the labels (``agreement``)."""
