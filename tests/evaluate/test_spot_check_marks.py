"""Cells the live spot check could not confirm are named by the CLI and marked by the report."""

from __future__ import annotations

import pandas as pd

from rag_lab.evaluate.ablation.spot_check import (UNCONFIRMED_MARK, live_marks, spot_check_lines,
                                                  unconfirmed_values, with_live_marks)


def _check(equal_at_10: bool) -> dict:
    def one(config, axes, equal):
        return {"config": config, "mode": config.split("|")[0], "prefetch": int(config.split("|p=")[1].split("|")[0]),
                "qid": "q1", "query": "who pays?", "axes": axes, "live": ["a", "b"], "grid": ["a", "b"] if equal else ["b", "a"],
                "equal": equal}

    checks = [one("hybrid|k=60|p=100|w=1:1|top=10", [["k", "60"], ["prefetch", "100"], ["weights", "1:1"]], True),
              one("hybrid|k=60|p=10|w=1:1|top=10", [["prefetch", "10"]], equal_at_10),
              one("hybrid|k=60|p=100|w=0:1|top=10", [["weights", "0:1"]], True)]
    shown = next((c for c in checks if not c["equal"]), checks[-1])
    return {**shown, "equal": all(c["equal"] for c in checks), "checks": checks, "modes": ["hybrid"],
            "prefetch_values": [10, 100], "questions_per_value": 1, "axes_checked": ["k", "prefetch", "weights"],
            "what": "hybrid: Qdrant's own RRF"}


def _results() -> pd.DataFrame:
    rows = []
    for prefetch in (10, 100):
        for top_k in (5, 10):
            for weights in ((1.0, 1.0), (0.0, 1.0)):
                rows.append({"config": f"hybrid|k=60|p={prefetch}|w={weights[0]:g}:{weights[1]:g}|top={top_k}",
                             "baseline": "hybrid|k=60|p=100|w=1:1|top=10", "mode": "hybrid", "k": 60,
                             "prefetch": prefetch, "dense_weight": weights[0], "sparse_weight": weights[1],
                             "top_k": top_k, "max_per_doc": 0, "metric": "ndcg@top_k", "mean": 0.5 + prefetch / 1000,
                             "ci_low": 0.4, "ci_high": 0.6, "delta": 0.01, "significant": True})
    return pd.DataFrame(rows)


def test_a_differing_value_marks_every_cell_that_holds_it():
    check = _check(equal_at_10=False)
    assert unconfirmed_values(check) == {"hybrid": {"prefetch": ["10"]}}
    frame = _results()
    marks = live_marks(frame, check)
    assert [m == UNCONFIRMED_MARK for m in marks] == list(frame["prefetch"] == 10)
    shown = with_live_marks(frame[["config"]].copy(), frame, check)
    assert list(shown["live check"]) == marks
    # nothing unconfirmed: no column at all
    assert "live check" not in with_live_marks(frame[["config"]].copy(), frame, _check(equal_at_10=True)).columns


def test_the_cli_says_what_an_unconfirmed_cell_means_and_what_to_do():
    text = "\n".join(spot_check_lines(_check(equal_at_10=False), "texas_childcare_full"))
    assert "DIFFERS" in text and "1 of 3 queries" in text and "hybrid prefetch 10" in text
    assert "UNCONFIRMED" in text and "not what the engine returns" in text and "rag-lab ir texas_childcare_full" in text
    ok = "\n".join(spot_check_lines(_check(equal_at_10=True), "texas_childcare_full"))
    assert "every RRF k, prefetch, weight pair, cap and top-k" in ok and "equal the grid's" in ok and "DIFFERS" not in ok


def test_the_report_marks_unconfirmed_cells_in_text_tables_and_heatmap():
    from rag_lab.report.figures import prefetch_topk_heatmap
    from rag_lab.report.manifest_table import spot_check_html

    check = _check(equal_at_10=False)
    page = spot_check_html(check)
    assert "Unconfirmed: hybrid prefetch 10" in page and "DIFFERENT" in page
    assert "Unconfirmed" not in spot_check_html(_check(equal_at_10=True))
    fig = prefetch_topk_heatmap(_results(), "hybrid", unconfirmed=unconfirmed_values(check)["hybrid"])
    cells = [t.get_text() for t in fig.axes[0].texts]
    assert sorted(cells) == sorted(["0.510 †", "0.510 †", "0.600", "0.600"])


def test_an_older_manifest_without_axes_marks_its_prefetch():
    old = {"equal": False, "checks": [{"config": "hybrid|k=60|p=25|w=1:1|top=10", "equal": False},
                                      {"config": "hybrid|k=60|p=100|w=1:1|top=10|cap=1", "equal": False}]}
    assert unconfirmed_values(old) == {"hybrid": {"prefetch": ["25", "100"], "max_per_doc": ["1"]}}
