"""The run store: a run folder's files (samples.jsonl, manifest.json), its lock, its manifest
and the tidy frames read back from it."""
