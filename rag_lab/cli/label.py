"""``rag-lab label RUN``: label a run's answers in a local web page (blind), or ``--plan`` the labels still needed."""

from __future__ import annotations

import os
import sys


def add_label(sub, common) -> None:
    from rag_lab.report.label.plan import DEFAULT_TARGET_WIDTH
    from rag_lab.report.label.server import DEFAULT_PORT

    p = sub.add_parser("label", help="label a run's answers blind in a local web page (faithful / correct), "
                                     "so its judged numbers get calibrated intervals")
    p.add_argument("run", help="a run folder of `rag-lab eval`, e.g. runs/<name>")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"local port of the page (default {DEFAULT_PORT}; 0: any free one)")
    p.add_argument("--no-browser", action="store_true", help="print the page's address instead of opening a browser")
    p.add_argument("--budget", type=int, metavar="N", default=None,
                   help="label N answers drawn at random, stratified by mode and judge-score band (seeded; "
                        "the draw is kept in RUN/label_sample.json); default: every answer, modes interleaved")
    p.add_argument("--labeller", metavar="NAME", default=None,
                   help="whose verdicts these are (default: $USER); a second labeller's are kept apart")
    p.add_argument("--plan", action="store_true",
                   help="print how many more labels would bring each mode's interval to --target-width, and exit")
    p.add_argument("--target-width", type=float, default=DEFAULT_TARGET_WIDTH, metavar="W",
                   help=f"with --plan: the 95 %% interval width to reach (default {DEFAULT_TARGET_WIDTH:g})")
    common(p)
    p.set_defaults(handler=run_label)


def run_label(args) -> int:
    from pathlib import Path

    from rag_lab.errors import ConfigError
    from rag_lab.evaluate.store.frames import load_run

    if args.budget is not None and args.budget < 1:
        raise ConfigError(f"--budget must be at least 1, got {args.budget}", "e.g. --budget 40")
    if not 0 < args.target_width < 1:
        raise ConfigError(f"--target-width must be between 0 and 1, got {args.target_width:g}", "e.g. --target-width 0.1")
    run = load_run(Path(args.run))
    if args.plan:
        from rag_lab.report.label.plan import plan_lines

        print("\n".join(plan_lines(run, args.target_width)))
        return 0
    from rag_lab.evaluate.store.labels import read_labels, run_answers
    from rag_lab.report.label.queue import answered, draw_budget, interleaved
    from rag_lab.report.label.server import Session, labelling_lock, serve

    from rag_lab.evaluate.calibration import METRIC_LABELS, NO_JUDGED_METRIC

    if not set(METRIC_LABELS) & set(run.samples["metric"] if not run.samples.empty else ()):
        print(f"warning: {run.path}: {NO_JUDGED_METRIC}; the verdicts are kept for when it is judged",
              file=sys.stderr)
    labeller = (args.labeller or os.environ.get("USER") or "labeller").strip()
    items = answered(run)
    known = run_answers(run.records)
    read_labels(run.path, known)  # a damaged labels file fails here, before the page opens
    with labelling_lock(run.path, labeller):
        queue = draw_budget(run, items, args.budget) if args.budget else interleaved(items)
        session = Session(run.path, queue, labeller, known)

        def ready(url: str) -> None:
            done = len(session.done & {(item.mode, item.sample_id) for item in queue})
            print(f"labelling {run.path} as {labeller} at {url} — {done} of {len(queue)} labelled; "
                  "Ctrl-C to stop (every verdict is saved as it is given)", file=sys.stdout, flush=True)

        serve(session, args.port, open_browser=not args.no_browser, ready=ready)
    return 0
