"""What ``rag-lab tune`` prints: the selection, the confirmation, the answers, what each step cost."""

from __future__ import annotations

from rag_lab.evaluate.tune.select import cost_order

STEP_NAMES = {"split_s": "split", "dev_legs_s": "dev legs (retrieval)", "dev_grid_s": "dev grid + metric",
              "select_s": "selection", "confirm_s": "rest legs + confirmation", "answers_s": "answers (dev)"}


def render_tune(result) -> str:
    sel, conf = result.selection, result.confirmation
    lines = [f"{result.dataset}: tuned on {result.n_dev} dev questions, confirmed on {result.n_rest} rest questions",
             f"split: {result.split_note}",
             "",
             f"selection (dev, {result.metric}; one-standard-error rule, ties to the cheaper):",
             f"  best       {sel.best.config.id}: {sel.best.mean:.4f} (SE {sel.best.standard_error:.4f})",
             f"  threshold  best − 1 SE = {sel.threshold:.4f}: {len(sel.within):,} configuration(s) within",
             f"  chosen     {sel.chosen.config.id}: {sel.chosen.mean:.4f} (the cheapest within one SE)",
             f"  cost order (cheapest first): {'; '.join(cost_order())}",
             *([f"  note: {note}"] if (note := sel.separation(result.metric)) else []),
             "",
             f"confirmation (rest, {conf.n} questions never seen by the selection; {conf.metric}, 95 % bootstrap CI):",
             f"  this rest split has been looked at by {result.rest_looks} tune run(s), this one included"
             + ("" if result.rest_looks <= 1 else " — a procedure changed after an earlier look is no longer "
                                                  "confirmed on unseen questions")]
    for scored in (conf.chosen, *conf.defaults):
        label = "dev pick" if scored is conf.chosen else f"default {scored.config.mode}"
        lines.append(f"  {label:<16} {scored.mean:.4f} [{scored.ci[0]:.4f}, {scored.ci[1]:.4f}]  {scored.config.id}")
    verdict = confirmation_verdict(conf)
    lines.append(f"  Δ vs default {conf.against.config.mode}: {conf.delta:+.4f} [{conf.delta_ci[0]:+.4f}, "
                 f"{conf.delta_ci[1]:+.4f}]; p = {conf.p_value:.3g} ({conf.decided_by}; the lab's decision test; "
                 f"exploratory: Student's t p = {conf.p_student:.3g}, Wilcoxon p = {conf.p_wilcoxon:.3g}): "
                 f"{verdict} at α = {conf.alpha}")
    lines.append(f"  recommendation: the dev pick, confirmed — {result.config.describe()}" if conf.significant else
                 f"  recommendation: KEEP THE DEFAULT — {result.config.describe()}: "
                 + ("the metric cannot separate the configurations on dev (see the note above), and "
                    if note else "the dev pick was not significantly better on the rest split, and ")
                 + "an unconfirmed change is not recommended")
    if result.rewrites:
        r = result.rewrites
        lines += ["", f"query rewrites (num_queries={r['num_queries']}, QueryFusionRetriever's generation; "
                      f"cost {r['cost']}): " + ("KEPT" if r["kept"] else "dropped (not better by one SE)")]
        lines += [f"  {d['config']}: {d['mean']:.4f} with rewrites, {d['without_rewrites']:.4f} without"
                  for d in r["dev"]]
    if result.answers is not None:
        lines += ["", f"answers on dev ({result.answer_cost}):",
                  result.answers.to_string(index=False, float_format=lambda v: f"{v:.3f}")]
    total = sum(result.timing.values())
    lines += ["", "cost: " + ", ".join(f"{STEP_NAMES.get(k, k)} {v:.1f}s" for k, v in result.timing.items())
              + f"; total {total:.1f}s",
              f"wrote {result.config_path} ({result.config.describe()}) and {result.run_dir / 'tune.json'}",
              f"reproduce: rag-lab ir {result.dataset} --config {result.config_path} --split rest "
              f"--modes {result.config.mode}"
              # a drawn split stays in the run folder: the command reads it there, writing nothing into the dataset
              + ("" if result.split_declared else f" --dev-split {result.run_dir / 'dev_split.txt'}")]
    return "\n".join(lines)


def confirmation_verdict(conf) -> str:
    """The paired test's reading of the rest split: a lower mean is WORSE only when the test says so
    (SciFact's pick: −0.005, p = 0.49, is no different)."""
    if conf.significant:
        return "significantly better"
    if conf.delta < 0:
        return "significantly WORSE" if conf.p_value < conf.alpha else "not significantly different (lower mean)"
    return "NOT significantly better"
