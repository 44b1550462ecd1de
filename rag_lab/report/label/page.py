"""The labelling page: one answer at a time as a plain HTML form (works without JavaScript; a few
lines of script add keyboard shortcuts). Blind: it shows the question, the contexts the generator
read, the answer and the reference — never the judge's score nor the mode's name."""

from __future__ import annotations

from html import escape

from rag_lab.report.label.queue import Item

STYLE = """body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:1.5rem auto;padding:0 1rem;color:#222}
.answer,.reference{background:#f6f6f2;padding:.6rem .8rem;border-left:4px solid #888;white-space:pre-wrap}
details{margin:.3rem 0}pre{white-space:pre-wrap;font-size:13px;background:#fafafa;padding:.4rem}
fieldset{margin:.6rem 0;border:1px solid #ccc}label{margin-right:1.2rem}.progress{color:#555}
kbd{border:1px solid #aaa;border-radius:3px;padding:0 .25rem;font-size:12px}"""
# y/n/a: faithful yes/no/not applicable; j/k/l: correct yes/no/not applicable; Enter (outside the note): save
SHORTCUTS = """<script>
document.addEventListener('keydown', e => {
  if (e.target.tagName === 'TEXTAREA') return;
  const keys = {y: ['faithful', '1'], n: ['faithful', '0'], a: ['faithful', 'na'],
                j: ['correct', '1'], k: ['correct', '0'], l: ['correct', 'na']};
  const hit = keys[e.key];
  if (hit) { document.querySelector(`input[name=${hit[0]}][value="${hit[1]}"]`).checked = true; e.preventDefault(); }
  else if (e.key === 'Enter') { document.getElementById('verdict').requestSubmit(); e.preventDefault(); }
});
</script>"""
CHOICES = (("1", "yes"), ("0", "no"), ("na", "not applicable"))


def _choices(field: str, keys: str, checked: str | None) -> str:
    return "".join(f'<label><input type="radio" name="{field}" value="{value}" required'
                   f'{" checked" if checked == value else ""}> {text} <kbd>{key}</kbd></label>'
                   for (value, text), key in zip(CHOICES, keys))


def render_item(item: Item, position: int, total: int, labeller: str, message: str = "") -> str:
    r = item.record
    contexts = "".join(
        f"<details{' open' if n == 1 else ''}><summary>context {n}: {escape(str(c.get('filename') or ''))}"
        f"{', page ' + escape(str(c['page'])) if c.get('page') is not None else ''}</summary>"
        f"<pre>{escape(str(c.get('text') or ''))}</pre></details>"
        for n, c in enumerate(r.get("contexts") or [], start=1))
    reference = (f'<h2>Reference</h2><div class="reference">{escape(r["reference"])}</div>' if r.get("reference")
                 else "<h2>Reference</h2><p>none: mark <i>correct</i> not applicable.</p>")
    default_correct = None if r.get("reference") else "na"
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>label {position} of {total}</title>
<style>{STYLE}</style></head><body>
<p class="progress">{position} of {total} · labeller {escape(labeller)}</p>{f'<p><b>{escape(message)}</b></p>' if message else ''}
<h2>Question</h2><p>{escape(str(r.get("question") or ""))}</p>
<h2>Answer</h2><div class="answer">{escape(str(r.get("answer") or ""))}</div>
{reference}
<form id="verdict" method="post" action="/">
<input type="hidden" name="sample" value="{item.token}">
<fieldset><legend>Faithful: is every statement of the answer stated by the contexts below?</legend>
{_choices("faithful", "yna", None)}</fieldset>
<fieldset><legend>Correct: does the answer state the reference's facts, and nothing contradicting them?</legend>
{_choices("correct", "jkl", default_correct)}</fieldset>
<p><label>Note (optional)<br><textarea name="note" rows="2" cols="80"></textarea></label></p>
<p><button type="submit">Save and next</button> <kbd>Enter</kbd></p>
</form>
<h2>Contexts the generator read</h2>{contexts or "<p>none</p>"}
{SHORTCUTS}</body></html>"""


def render_done(total: int, labeller: str, run: str) -> str:
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>labelled</title><style>{STYLE}</style></head>
<body><p class="progress">{total} of {total} · labeller {escape(labeller)}</p><h2>All {total} answers are labelled.</h2>
<p>Close this page and stop the command (Ctrl-C); then <code>rag-lab report {escape(run)}</code> shows the calibrated
judged numbers.</p></body></html>"""
