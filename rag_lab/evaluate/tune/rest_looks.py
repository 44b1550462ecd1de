"""How many tune runs have looked at a dataset's rest split.

Every confirmation on the rest split spends some of its independence: a procedure changed after
seeing a confirmation, then confirmed again on the same questions, is no longer tested on unseen
data. The count lives in the data folder (``<data_dir>/rest_looks/<dataset>.json``), per dev split
(the rest is whatever the dev split leaves, so another dev split is another rest split), and is
printed with every confirmation.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path

LOOKS_FOLDER = "rest_looks"


def split_fingerprint(dev: frozenset[str]) -> str:
    return hashlib.sha256("\n".join(sorted(dev)).encode()).hexdigest()[:16]


def record_rest_look(data_dir: Path | str, dataset: str, dev: frozenset[str], run_dir: Path | str) -> int:
    """Count one more tune run looking at ``dataset``'s rest split (the one ``dev`` leaves); returns
    how many have, this one included."""
    path = Path(data_dir) / LOOKS_FOLDER / f"{dataset}.json"
    state = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    entry = state.setdefault(split_fingerprint(dev), {"dev_questions": len(dev), "looks": 0, "runs": []})
    entry["looks"] += 1
    entry["runs"].append({"at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "run_dir": str(run_dir)})
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(state, indent=2), encoding="utf-8")
    os.replace(partial, path)  # a reader never sees half a file
    return entry["looks"]


def rest_looks(data_dir: Path | str, dataset: str, dev: frozenset[str]) -> int:
    """How many tune runs have looked at the rest split ``dev`` leaves (0: none yet)."""
    path = Path(data_dir) / LOOKS_FOLDER / f"{dataset}.json"
    if not path.exists():
        return 0
    return int(json.loads(path.read_text(encoding="utf-8")).get(split_fingerprint(dev), {}).get("looks", 0))
