"""`rag-lab label`: the queue and the --budget draw, the form round-trip over real HTTP, blindness,
resume, a second labeller kept apart, the two-process refusal, bad labels files, --plan, and the
calibrated judged numbers read back from RUN/labels.jsonl."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from http.server import HTTPServer

import pytest

from rag_lab.cli.main import main
from rag_lab.evaluate.calibration import NOT_CALIBRATED, calibrated_judged
from rag_lab.evaluate.store.frames import load_run
from rag_lab.evaluate.store.labels import LABELS, Label, append_labels, read_labels, run_answers
from rag_lab.report.label.queue import answered, draw_budget, interleaved
from rag_lab.report.label.server import Session, labelling_lock, make_handler


def _session(run, labeller="ana", queue=None):
    loaded = load_run(run)
    items = answered(loaded)
    return Session(run, queue or interleaved(items), labeller, run_answers(loaded.records))


class Page:
    """The labelling server on a free local port, in a thread."""

    def __init__(self, session):
        self.server = HTTPServer(("127.0.0.1", 0), make_handler(session))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def get(self) -> str:
        return urllib.request.urlopen(self.url).read().decode()

    def post(self, fields: dict) -> tuple[int, str]:
        data = urllib.parse.urlencode(fields).encode()
        try:
            response = urllib.request.urlopen(urllib.request.Request(self.url, data=data))
            return response.status, response.read().decode()  # urllib follows the 303 to the next page
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def _token(page: str) -> str:
    return page.split('name="sample" value="')[1].split('"')[0]


def test_queue_interleaves_every_mode_in_a_seeded_order(toy_run):
    items = answered(load_run(toy_run))
    first, again = interleaved(items), interleaved(list(reversed(items)))
    assert [(i.mode, i.sample_id) for i in first] == [(i.mode, i.sample_id) for i in again]
    modes = [i.mode for i in first]
    assert set(modes[:10]) == {"bm25", "hybrid"} and modes != sorted(modes)


def test_budget_draws_per_mode_and_score_band_and_keeps_the_draw(toy_run):
    run = load_run(toy_run)
    items = answered(run)
    drawn = draw_budget(run, items, 24)
    assert sorted(i.mode for i in drawn).count("bm25") == 12 and len(drawn) == 24
    saved = json.loads((toy_run / "label_sample.json").read_text())
    assert saved["drawn_by"] == "faithfulness" and len(saved["strata"]) == 60
    band_of = {(m, s): b for m, s, b in saved["strata"]}
    for mode in ("bm25", "hybrid"):  # every populated band of the mode is in the draw
        assert {band_of[(mode, i.sample_id)] for i in drawn if i.mode == mode} == \
            {b for (m, _), b in band_of.items() if m == mode}
    assert [i.token for i in draw_budget(run, items, 24)] == [i.token for i in drawn]  # resumed: the same draw


def test_form_round_trip_blind_resume_and_a_second_labeller(toy_run):
    page = Page(_session(toy_run))
    try:
        first = page.get()
        assert "1 of 60" in first and 'name="faithful" value="1"' in first and 'name="correct" value="na"' in first
        assert 'action="/"' in first and 'name="note"' in first
        assert "bm25" not in first and "hybrid" not in first  # blind: no mode
        scores = [json.loads(line)["scores"]["faithfulness"] for line in (toy_run / "bm25" / "samples.jsonl").open()]
        assert not any(f"{s}" in first for s in scores)  # blind: no judge score
        status, nxt = page.post({"sample": _token(first), "faithful": "1", "correct": "0", "note": "fee stated"})
        assert status == 200 and "2 of 60" in nxt and _token(nxt) != _token(first)
        status, again = page.post({"sample": _token(nxt), "faithful": "maybe", "correct": "1", "note": ""})
        assert status == 400 and "choose yes, no or not applicable" in again and "2 of 60" in again
    finally:
        page.close()
    labels = read_labels(toy_run)
    assert [(x.metric, x.value, x.labeller, x.note) for x in labels] == [("faithful", 1, "ana", "fee stated"),
                                                                         ("correct", 0, "ana", "fee stated")]
    assert labels[0].time.endswith("Z") and labels[0].mode in ("bm25", "hybrid")
    assert _session(toy_run).next_item()[0] == 2  # resumed where it stopped
    assert _session(toy_run, labeller="bo").next_item()[0] == 1  # another person starts at the beginning


def test_a_second_labelling_process_is_refused_naming_the_first(toy_run, capsys):
    with labelling_lock(toy_run, "ana"):
        assert main(["label", str(toy_run), "--no-browser", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "is being labelled by another `rag-lab label` process (PID" in err and "labeller ana" in err


@pytest.mark.parametrize("line,needle", [
    ({"sample_id": "toy#Q99", "mode": "bm25", "metric": "faithful", "value": 1}, "which this run does not hold"),
    ({"sample_id": "toy#Q1", "mode": "bm25", "metric": "faithful", "value": 2}, "must be 1, 0 or na"),
    ({"sample_id": "toy#Q1", "mode": "bm25", "metric": "relevant", "value": 1}, "unknown metric 'relevant'"),
])
def test_a_bad_labels_file_is_one_line_and_rc_2(toy_run, capsys, line, needle):
    (toy_run / LABELS).write_text(json.dumps(line) + "\n")
    assert main(["label", str(toy_run), "--plan"]) == 2
    err = capsys.readouterr().err
    assert needle in err and "labels.jsonl: line 1" in err and len(err.strip().splitlines()) == 2  # message + hint


def test_a_run_with_no_answers_is_refused(tmp_path, capsys):
    from tests.label.conftest import write_toy_run

    run = write_toy_run(tmp_path / "empty", questions=0)
    assert main(["label", str(run), "--no-browser"]) == 2
    assert "holds no answers to label" in capsys.readouterr().err


def _label_all(run, labeller, flip_every=0):
    """Every answer labelled: faithful when the judge's score is ≥ 0.4 (a judge that mostly agrees)."""
    labels = []
    for mode in ("bm25", "hybrid"):
        for n, line in enumerate((run / mode / "samples.jsonl").open()):
            record = json.loads(line)
            value = int(record["scores"]["faithfulness"] >= 0.4)
            if flip_every and n % flip_every == 0:
                value = 1 - value
            labels += [Label(record["id"], mode, "faithful", value, labeller, "t"),
                       Label(record["id"], mode, "correct", "na", labeller, "t")]
    append_labels(run, labels)


def test_calibrated_judged_reads_the_labels_and_marks_the_rest_not_calibrated(toy_run, capsys):
    before = calibrated_judged(toy_run)
    assert [e.verdict() for e in before.values()] == [f"faithfulness: {NOT_CALIBRATED}",
                                                      f"factual_correctness: {NOT_CALIBRATED}"]
    _label_all(toy_run, "ana")
    _label_all(toy_run, "bo", flip_every=5)
    result = calibrated_judged(toy_run)
    faithfulness = result["faithfulness"]
    assert faithfulness.calibrated and not result["factual_correctness"].calibrated  # all "na"
    bm25 = faithfulness.by_mode["bm25"]
    truth = sum(int(json.loads(x)["scores"]["faithfulness"] >= 0.4) for x in (toy_run / "bm25" / "samples.jsonl").open()) / 30
    assert bm25.n_labelled == 30 and bm25.estimate == pytest.approx(truth)  # every answer labelled: the labels' mean
    assert faithfulness.agreement.n == 60 and faithfulness.agreement.auc > 0.9
    second, kappa, both = faithfulness.people
    assert second == "bo" and both == 60 and 0.4 < kappa < 0.9  # a fifth of bo's verdicts flipped
    assert [row["mode"] for row in faithfulness.comparisons] == ["hybrid"]
    assert "calibrated by ana's labels (PPI++): bm25" in faithfulness.verdict()
    assert main(["label", str(toy_run), "--plan", "--target-width", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "faithfulness · bm25: 30 of 30 labelled" in out


def test_report_and_eval_summary_show_the_calibration(toy_run):
    from rag_lab.report.calibration_section import summary_lines
    from rag_lab.report.html import build_report

    page = build_report(toy_run)
    assert f"faithfulness: not calibrated — `rag-lab label {toy_run}`" in page.replace("&#x27;", "'").replace("&quot;", '"')
    assert summary_lines(load_run(toy_run))[0] == f"verdict: faithfulness: not calibrated — `rag-lab label {toy_run}`"
    _label_all(toy_run, "ana")
    page = build_report(toy_run)
    section = page[page.index('id="judged-metrics-against-labels"'):]
    assert "agreement with the labels: n 60, κ" in section and "corrected (PPI++)" in section and "labels only" in section
    assert "30 of 30" in section and "Modes compared on the corrected estimates" in section
    verdict = page[page.index('id="verdict"'):page.index('id="judged-metrics-against-labels"')]
    assert "faithfulness calibrated by ana&#x27;s labels (PPI++): bm25" in verdict
    lines = summary_lines(load_run(toy_run))
    assert lines[0].startswith("verdict: faithfulness calibrated by ana's labels") and "agreement with the labels" in lines[1]


def test_a_cut_last_line_is_skipped_and_cut_before_the_next_append(toy_run):
    good = {"sample_id": "toy#Q1", "mode": "bm25", "metric": "faithful", "value": 1, "labeller": "ana", "time": "t"}
    (toy_run / LABELS).write_text(json.dumps(good) + "\n" + '{"sample_id": "toy#Q2", "mo')  # a killed writer
    assert [x.sample_id for x in read_labels(toy_run)] == ["toy#Q1"]
    append_labels(toy_run, [Label("toy#Q3", "hybrid", "correct", "na", "ana", "t")])
    assert [x.sample_id for x in read_labels(toy_run)] == ["toy#Q1", "toy#Q3"]
    assert (toy_run / LABELS).read_text().count("\n") == 2


def test_a_budget_draw_is_estimated_by_its_strata(toy_run):
    run = load_run(toy_run)
    drawn = draw_budget(run, answered(run), 40)
    labels = [Label(i.sample_id, i.mode, "faithful", int(i.record["scores"]["faithfulness"] >= 0.5), "ana", "t")
              for i in drawn]
    append_labels(toy_run, labels)
    entry = calibrated_judged(toy_run)["faithfulness"]
    bm25 = entry.by_mode["bm25"]
    assert bm25.n_labelled == 20 and bm25.lam != bm25.lam  # stratified: no single λ
    truth = sum(int(json.loads(x)["scores"]["faithfulness"] >= 0.5) for x in (toy_run / "bm25" / "samples.jsonl").open()) / 30
    assert bm25.ci[0] <= truth <= bm25.ci[1]


def test_a_verdict_on_an_answer_since_replaced_no_longer_counts(toy_run):
    page = Page(_session(toy_run))
    try:
        first = page.get()
        page.post({"sample": _token(first), "faithful": "1", "correct": "1", "note": ""})
    finally:
        page.close()
    label = read_labels(toy_run)[0]
    assert len(read_labels(toy_run, run_answers(load_run(toy_run).records))) == 2
    path = toy_run / label.mode / "samples.jsonl"
    lines = [json.loads(x) for x in path.open()]
    for record in lines:
        if record["id"] == label.sample_id:
            record["answer"] = "a new answer, from a run answered again"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert read_labels(toy_run, run_answers(load_run(toy_run).records)) == []
    assert _session(toy_run).next_item()[0] == 1  # to be labelled again


def test_modes_are_compared_on_corrected_values_by_the_policy(toy_run):
    labels = []
    for mode, verdict in (("bm25", 0), ("hybrid", 1)):  # every hybrid answer faithful, no bm25 answer
        for line in (toy_run / mode / "samples.jsonl").open():
            record = json.loads(line)
            labels.append(Label(record["id"], mode, "faithful", verdict, "ana", "t"))
            labels.append(Label(record["id"], mode, "correct", 1 - verdict, "ana", "t"))
    append_labels(toy_run, labels)
    result = calibrated_judged(toy_run)
    rows = result["faithfulness"].comparisons + result["factual_correctness"].comparisons
    assert [(r["mode"], r["baseline"], r["family"], r["significant"]) for r in rows] == [
        ("hybrid", "bm25", 2, True), ("hybrid", "bm25", 2, True)]
    assert rows[0]["delta"] == pytest.approx(1.0) and rows[1]["delta"] == pytest.approx(-1.0)
    assert rows[0]["p_adjusted"] == pytest.approx(2 * rows[0]["p_value"])  # Holm over both metrics
