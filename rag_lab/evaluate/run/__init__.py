"""Running an evaluation: the runner, the per-sample worker (answer + score), the scorer that
applies the registered metrics to one record, and the multi-turn conversations."""
