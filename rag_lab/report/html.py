"""One self-contained HTML file per run: inline CSS, figures as inline SVG, no script, no font,
no image or stylesheet from any network location (a test opens it in Chromium with the network
blocked and checks that nothing was requested).
"""

from __future__ import annotations

import html
import json
from datetime import datetime, timezone
from pathlib import Path

from rag_lab.report import eval_sections as E
from rag_lab.report import sections as S
from rag_lab.report.page import Section

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d232a;background:#fafbfc}
main{max-width:1180px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:34px 0 10px;border-bottom:2px solid #dde3ea;padding-bottom:4px}
h3{font-size:16px;margin:22px 0 8px}.sub{color:#5b6672;margin:0 0 18px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:12.5px;background:#fff}
th,td{border:1px solid #dde3ea;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef2f6;font-weight:600}tr:nth-child(even) td{background:#f8fafc}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.sig-up{color:#0a7c2f;font-weight:600}.sig-down{color:#b3261e;font-weight:600}
figure{margin:12px 0 22px;background:#fff;border:1px solid #dde3ea;padding:8px;display:inline-block;max-width:100%}
figure svg{max-width:100%;height:auto}figcaption{font-size:12px;color:#5b6672;margin-top:4px}
.ok{color:#0a7c2f;font-weight:600}.bad{color:#b3261e;font-weight:600}
.note{background:#fff8e1;border-left:4px solid #f0b400;padding:8px 12px;margin:10px 0}
details{margin:6px 0}summary{cursor:pointer}pre{white-space:pre-wrap;font-size:12px;background:#f3f5f7;padding:8px}
.answer{background:#fff;border:1px solid #dde3ea;padding:8px 12px;margin:6px 0 14px}
nav a{margin-right:12px;color:#2457a6;text-decoration:none}
.verdict{font-size:17px;font-weight:600;margin:6px 0 10px}.def{color:#5b6672;font-size:11.5px;font-weight:400}
td .def{display:inline-block;max-width:320px}
section#run-manifest summary{color:#2457a6}
"""


def render_document(title: str, subtitle: str, sections: list[Section]) -> str:
    nav = " ".join(f'<a href="#{s.anchor}">{html.escape(s.title)}</a>' for s in sections)
    body = "\n".join(f'<section id="{s.anchor}"><h2>{html.escape(s.title)}</h2>\n{_body(s)}\n</section>'
                     for s in sections)
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n<body><main>"
        f"<h1>{html.escape(title)}</h1><p class=\"sub\">{html.escape(subtitle)} · generated {generated}</p>"
        f"<nav>{nav}</nav>\n{body}\n</main></body></html>\n"
    )


def _body(section: Section) -> str:
    if not section.folded:
        return section.body
    return f"<details><summary>{html.escape(section.folded)}</summary>\n{section.body}\n</details>"


def build_report(run_dir: Path) -> str:
    """The HTML of a run folder: an ablation (``rag-lab ablate``), an evaluation run (``rag-lab eval``)
    or an IR mode comparison (``rag-lab ir --out``)."""
    from rag_lab.errors import DatasetError

    run_dir = Path(run_dir)
    manifest_path = run_dir / "manifest.json"
    if not manifest_path.exists():
        raise DatasetError(f"{run_dir} is not a finished run folder (no manifest.json)",
                           "pass the --out folder of `rag-lab ablate`, `rag-lab eval` or `rag-lab ir`")
    try:
        manifest = json.loads(manifest_path.read_text())
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{manifest_path}: line {exc.lineno} is not JSON ({exc.msg})",
                           "re-run the command that wrote it") from None
    if not isinstance(manifest, dict):
        raise DatasetError(f"{manifest_path}: line 1: expected a JSON object, got {type(manifest).__name__} "
                           "(the run manifest is damaged)", "re-run the command that wrote it")
    if manifest.get("kind") == "ablation":
        from rag_lab.evaluate.ablation import load_ablation

        result = load_ablation(run_dir)
        return render_document(f"rag-lab ablation: {manifest['dataset']}",
                               f"{manifest['n_configs']} configurations × {manifest['n_queries']} questions",
                               S.ablation_sections(result))
    if manifest.get("kind") == "ir":
        data = json.loads((run_dir / "ir.json").read_text())
        return render_document(f"rag-lab mode comparison: {data['dataset']}",
                               f"{data['queries']['evaluated']} of {data['queries']['available']} judged queries, "
                               f"ranx, document level", S.ir_sections(data, manifest))
    from rag_lab.evaluate.store.run_folder import read_manifest

    # an evaluation run: its manifest's sections checked (a list where an object belongs is named, not a traceback)
    manifest = read_manifest(manifest_path, hint="re-run the command that wrote it")
    return render_document(f"rag-lab run: {run_dir.name}", run_subtitle(manifest), E.generic_sections(run_dir, manifest))


def run_subtitle(manifest: dict) -> str:
    """One readable line for an evaluation run: dataset, questions × modes, generator, judge."""
    dataset = manifest.get("dataset")
    name = dataset.get("name", "?") if isinstance(dataset, dict) else str(dataset or "?")
    config, models = manifest.get("config") or {}, manifest.get("models") or {}
    parts = [name]
    modes = [str(m) for m in config.get("modes") or []]
    if modes:
        count = config.get("questions")
        parts.append((f"{count} questions × " if count else "") + f"{len(modes)} mode{'s' if len(modes) != 1 else ''} "
                     f"({', '.join(modes)})")
        parts.append(f"split: {config.get('split') or 'all'}")  # which questions the tables average (eval --split)
    if models.get("llm"):
        parts.append(f"generator {models['llm']}")
    parts.append(f"judge {models['judge']}" if models.get("judge") else "no judge")
    return " · ".join(parts)


def write_report(run_dir: Path, out: Path) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = build_report(run_dir)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    return out
