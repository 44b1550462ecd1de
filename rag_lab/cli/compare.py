"""`rag-lab compare RUN_A RUN_B` (two runs paired by question, what changed, flips, the regression
gate) and `rag-lab runs [DIR]` (the history of a runs folder)."""

from __future__ import annotations

import sys


def _names(text: str | None) -> list[str] | None:
    return [n.strip() for n in text.split(",") if n.strip()] if text else None


def add_compare(sub, common) -> None:
    from rag_lab.cli.options import add_json_option

    p = sub.add_parser("compare", help="two eval runs paired by question: what changed, paired differences with "
                                       "the lab's significance policy, per-question flips; a regression gate for CI")
    p.add_argument("run_a", metavar="RUN_A", help="the earlier run folder (the reference)")
    p.add_argument("run_b", metavar="RUN_B", help="the later run folder (the change under test)")
    p.add_argument("--modes", default=None, metavar="M1,M2", help="modes to compare (default: every mode both runs hold)")
    p.add_argument("--metrics", default=None, metavar="M1,M2", help="metrics to compare (default: every metric scored)")
    p.add_argument("--flips", default=None, metavar="METRIC",
                   help="the metric whose per-question flips are listed (default the headline: ndcg@10)")
    p.add_argument("--out", default=None, metavar="FILE.html", help="also write the comparison as one HTML page")
    add_json_option(p, "the comparison (differences, what changed, every flip)")
    p.add_argument("--intersect", action="store_true",
                   help="compare only the question ids both runs hold (runs of different question sets or datasets)")
    p.add_argument("--allow-judge-change", action="store_true",
                   help="compare judged metrics even when the two runs' judges differ")
    p.add_argument("--fail-on-regression", nargs="?", const="", default=None, metavar="METRIC[:DELTA],…",
                   help="exit 1 when B is significantly worse than A (on these metrics, by more than DELTA); "
                        "alone: on any compared metric")
    common(p)
    p.set_defaults(handler=run_compare)


def render_table(result) -> str:
    lines = [f"{'mode':<10}{'metric':<30}{'A':>8}{'B':>8}  {'B − A [95% CI]':<28}{'p adj':>8}  mark"]
    for _, r in result.table.iterrows():
        if r["note"] or r["delta"] != r["delta"]:
            lines.append(f"{r['mode']:<10}{r['metric']:<30}  {r['note'] or 'no scored pair'}")
            continue
        mark = ("▲ sig." if r["delta"] > 0 else "▼ sig.") if r["significant"] else ""
        ci = f"{r['delta']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"
        basis = f"  ({r['basis']})" if r["basis"] else ""
        lines.append(f"{r['mode']:<10}{r['metric']:<30}{r['mean_a']:>8.3f}{r['mean_b']:>8.3f}  {ci:<28}"
                     f"{r['p_adjusted']:>8.3f}  {mark}{basis}")
    return "\n".join(lines)


def run_compare(args) -> int:
    from rag_lab.api import compare
    from rag_lab.evaluate.compare import gate

    rules = gate.parse_rules(args.fail_on_regression) if args.fail_on_regression is not None else None
    result = compare(args.run_a, args.run_b, modes=_names(args.modes), metrics=_names(args.metrics),
                     intersect=args.intersect, allow_judge_change=args.allow_judge_change, flip_metric=args.flips)
    verdict = None
    if rules is not None:
        named = [r.metric for r in rules if r.metric and r.metric not in set(result.table["metric"])]
        if named:
            from rag_lab.errors import ConfigError

            raise ConfigError(f"--fail-on-regression: metric {', '.join(named)} is not compared",
                              f"choose from {', '.join(dict.fromkeys(result.table['metric']))}")
        verdict = gate.check(result.table, rules)
    say = sys.stderr if args.json == "-" else sys.stdout  # stdout: the JSON alone
    print(result.verdict(), file=say)
    for note in result.notes():
        print(f"  {note}", file=say)
    print(render_table(result), file=say)
    print(f"flips on {result.flip_metric}: {len(result.better)} better, {len(result.worse)} worse in B", file=say)
    if args.out:
        from rag_lab.report.compare_page import write_compare_report

        print(f"wrote {write_compare_report(result, args.out)}", file=say)
    if args.json:
        from rag_lab.cli.options import emit_json

        data = result.to_json()
        if verdict is not None:
            data["gate"] = {"failed": verdict.failed, "lines": list(verdict.lines)}
        emit_json(args.json, data)
    if verdict is None:
        return 0
    for line in verdict.lines:
        print(line, file=say)
    blind = " (it could not fail: too few questions to tell, see the notes)" if result.too_few_questions else ""
    print("regression gate: FAILED" if verdict.failed else f"regression gate: passed{blind}", file=say)
    return verdict.exit_code


def add_runs(sub, common) -> None:
    from rag_lab.cli.options import add_json_option

    p = sub.add_parser("runs", help="the runs under runs/ (or DIR), newest first: dataset, questions, modes, n, "
                                    "headline metrics, what differs from the previous run of the dataset")
    p.add_argument("dir", nargs="?", default="runs", metavar="DIR", help="the folder holding run folders (default runs)")
    add_json_option(p, "the runs")
    common(p)
    p.set_defaults(handler=run_runs)


def render_runs(rows) -> str:
    if not rows:
        return "(no run folders)"
    lines = []
    for row in rows:
        metrics = "; ".join(f"{metric} " + ", ".join(f"{mode} {mean:.3f}" for mode, mean in means.items())
                            for metric, means in row.headline.items()) or "—"
        differs = ("first run of its dataset" if row.differs is None else
                   "differs from the previous in: " + ", ".join(row.differs) if row.differs else "same set-up as the previous")
        lines.append(f"{row.created_at[:19]:<20}{row.path}\n    {row.dataset} · {row.question_set} · modes "
                     f"{','.join(row.modes) or '—'} · n {row.n} · {metrics}\n    {differs}"
                     + ("" if row.state == "finished" else f" · {row.state}"))
    return "\n".join(lines)


def run_runs(args) -> int:
    from rag_lab.evaluate.compare.history import list_runs

    rows = list_runs(args.dir)
    if args.json:
        from rag_lab.cli.options import emit_json

        emit_json(args.json, [r.to_json() for r in rows])
    if args.json != "-":
        print(render_runs(rows))
    return 0
