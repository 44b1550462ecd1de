"""The judge's rules and prompts, each with a version, and the hash of the code behind each.

A judged score is cached by a key that must change whenever the judge would judge differently. The
rules decide many verdicts before the model is asked (numbers, negation, names), code chooses the
evidence and splits the statements: a change there changes scores as much as a new prompt does.
``RULES`` names each rule and prompt with its version and the code it is made of; the metrics carry
the versions of the rules they use (``metric.rule_versions``, read by ``Scorer.judge_key``), so a
bumped version re-scores.

``code_hash`` hashes a rule's code: each part's source (its syntax tree, without docstrings and
comments and type annotations: a reworded comment is no new rule) and, followed through its global names, the rag_lab
functions and classes it calls and the constants it reads (regular expressions, word lists);
a part of another rule counts by that rule's version (bumped on its own). tests/evaluate/
judge_rules.json records the hash of every version: the test there fails when a rule's code
changes without a new version. ``python -m rag_lab.evaluate.judge.versions`` prints the hashes.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import inspect
import re
import textwrap
import types
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Rule:
    name: str
    version: str
    parts: tuple[str, ...]  # "module:qualified.name" of the code that decides
    description: str = ""


_J = "rag_lab.evaluate.judge."
_THIS_MODULE = f"{_J}versions"  # (not ``__name__``: run as a script, it is "__main__")
RULES: tuple[Rule, ...] = (
    Rule("numbers", "numbers-v3", (f"{_J}numeric:missing_values",),
         "a statement's value its evidence does not state decides 'unsupported'"),
    Rule("negation", "negation-v3", (f"{_J}rules:negation_mismatch",),
         "a negated statement against evidence that does not negate decides 'unsupported'"),
    Rule("names", "names-v1", (f"{_J}rules:unstated_names",),
         "a name or acronym no context contains decides 'unsupported'"),
    Rule("verbatim", "verbatim-v2", (f"{_J}verbatim:copied_from",),
         "a statement a context contains word for word decides 'supported'"),
    Rule("cells", "cells-v2", (f"{_J}table_cells:misplaced_figures",),
         "a figure a table holds only in another row or column than the statement places it decides 'unsupported'"),
    Rule("evidence", "evidence-v3", (f"{_J}evidence:evidence_text", f"{_J}evidence:whole_text"),
         "the passages a statement is judged against"),
    Rule("statements", "code-split-v3", (f"{_J}code_split:split_statements", f"{_J}code_split:CodeStatementPrompt",
                                         f"{_J}code_split:CodeClaimPrompt"),
         "statements and claims split by code, refusals and citation markers left out"),
    Rule("claims_required", "claims-required-v2", (f"{_J}not_applicable:use_claims_required",),
         "faithfulness of an answer that claims nothing: NaN with its reason"),
    Rule("verdict", "prob-v8", (f"{_J}probability:ProbabilityNLIPrompt", f"{_J}probability:_mean_probability",
                                f"{_J}probability:_all_probability",
                                f"{_J}probability:_soft_verify_claims", f"{_J}probability:_soft_factual_correctness",
                                f"{_J}probability:use_probability_verdicts"),
         "rules, then the model's P(yes); the soft scores of faithfulness and factual correctness"),
    # the model's own P(yes) for a (premise, statement): the verdict store's key
    Rule("model_verdict", "prob-v1", (f"{_J}probability:ask_verdict",),
         "the prompt the model reads and how P(yes) is read from its log-probabilities"),
)
BY_NAME = {rule.name: rule for rule in RULES}

# The judge's settings, each declared as changing verdicts or not. Those that do are in the judge's
# identity (``judge_id``, and through it the manifest and the judged scores' cache keys): the designs
# chosen (``judge_nli``, ``judge_statements``, ``judge_context``, ``judge_splitter``) and the probability
# verdicts' options, spelled as below, in this order. A new ``judge_*`` setting must join one list
# (tests/evaluate/test_judge_rule_versions.py).
PROBABILITY_OPTIONS: tuple[tuple[str, Any], ...] = (
    ("judge_evidence", lambda v: f"-e{v}"),
    ("judge_numbers", lambda v: f"-n{v}"),
    ("judge_negation", lambda v: "-neg" * (v == "code")),
    ("judge_names", lambda v: "-names" * (v == "code")),
    ("judge_verbatim", lambda v: "-verb" * (v == "code")),
    ("judge_claims_evidence", lambda v: "-wholefc" * (v == "whole")),
    ("judge_contrastive", lambda v: "-contrast" * (v == "no-premise")),
    ("judge_cells", lambda v: "-cells" * (v == "code")),
    ("judge_faithfulness_score", lambda v: "-all" * (v == "all")),
)
VERDICT_SETTINGS = ("judge_nli", "judge_statements", "judge_context", "judge_splitter",
                    *(name for name, _ in PROBABILITY_OPTIONS))
# Settings of the judge that change no verdict: where its server is (named by the judge's model id
# instead) and how long a sample's judged metrics may take (a timed-out metric fails, it is not scored).
OTHER_JUDGE_SETTINGS = ("judge_base_url", "judge_deadline")


def probability_options(settings: Any) -> str:
    """The probability judge's options in its identity (``-e3-ncode-neg-names-verb-cells-all``)."""
    return "".join(spell(getattr(settings, name)) for name, spell in PROBABILITY_OPTIONS)


def version_of(name: str) -> str:
    return BY_NAME[name].version


def versions(names: list[str] | tuple[str, ...] | None = None) -> dict[str, str]:
    """``{rule: version}`` for ``names`` (every rule when None)."""
    return {rule.name: rule.version for rule in RULES if names is None or rule.name in names}


def digest(names: list[str] | tuple[str, ...] | None = None) -> str:
    """Eight hex digits naming the versions of ``names`` (every rule when None)."""
    text = ",".join(f"{k}={v}" for k, v in sorted(versions(names).items()))
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def stamp(metric: Any, *names: str) -> Any:
    """Record on ``metric`` the versions of the rules ``names`` it now uses (its judged scores'
    cache key holds them)."""
    current = dict(getattr(metric, "rule_versions", None) or {})
    metric.rule_versions = current | versions(names)
    return metric


def _resolve(part: str) -> Any:
    module, _, qualified = part.partition(":")
    obj: Any = importlib.import_module(module)
    for attribute in qualified.split("."):
        obj = getattr(obj, attribute)
    return obj


def _parts_elsewhere(rule: Rule) -> dict[int, str]:
    """id of every other rule's part → that rule's name@version."""
    return {id(_resolve(part)): f"{other.name}@{other.version}" for other in RULES if other is not rule
            for part in other.parts}


def _syntax(obj: Any) -> str:
    """The object's source as a syntax tree without docstrings and type annotations (comments and
    layout never count): what runs, not how it is described."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
        elif isinstance(node, ast.arg):
            node.annotation = None
        elif isinstance(node, ast.AnnAssign):
            node.annotation = ast.Constant(None)
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def _stable(value: Any) -> str | None:
    """A constant's text, the same in every process (sets and dicts sorted); None for other objects."""
    if isinstance(value, re.Pattern):
        return f"re:{value.flags}:{value.pattern}"
    if isinstance(value, (str, int, float, bool, bytes, type(None))):
        return repr(value)
    if isinstance(value, (set, frozenset)):
        items = [_stable(v) for v in value]
        return None if None in items else "{" + ",".join(sorted(items)) + "}"  # type: ignore[arg-type]
    if isinstance(value, (tuple, list)):
        items = [_stable(v) for v in value]
        return None if None in items else "(" + ",".join(items) + ")"  # type: ignore[arg-type]
    if isinstance(value, dict):
        items = [(_stable(k), _stable(v)) for k, v in value.items()]
        if any(None in pair for pair in items):
            return None
        return "{" + ",".join(sorted(f"{k}:{v}" for k, v in items)) + "}"
    return None


def _code_objects(obj: Any) -> list[types.CodeType]:
    functions = ([obj] if inspect.isfunction(obj) else
                 [f for f in vars(obj).values() if inspect.isfunction(f)] if inspect.isclass(obj) else [])
    found, stack = [], [f.__code__ for f in functions]
    while stack:
        code = stack.pop()
        found.append(code)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return found


def _ours(obj: Any) -> bool:
    return (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, "__module__", "").startswith("rag_lab.") \
        and obj.__module__ != _THIS_MODULE


def code_of(rule: Rule) -> dict[str, str]:
    """What the rule's hash covers: ``{"module:name": syntax tree or constant}`` (see the module)."""
    elsewhere = _parts_elsewhere(rule)
    seen: dict[str, str] = {}
    stack = [(part, _resolve(part)) for part in rule.parts]
    while stack:
        name, obj = stack.pop()
        if name in seen:
            continue
        seen[name] = _syntax(obj)
        module = inspect.getmodule(obj)
        for code in _code_objects(obj):
            spaces = [vars(module)] + [vars(importlib.import_module(n)) for n in code.co_names
                                       if n.startswith("rag_lab.")]  # names imported inside a function
            for word in code.co_names:
                if word.startswith("__"):
                    continue  # ``type(x).__name__``: an attribute, not the module's name
                space = next((s for s in spaces if word in s), None)
                if space is None:
                    continue
                value = space[word]
                key = f"{getattr(value, '__module__', module.__name__)}:{getattr(value, '__qualname__', word)}"
                if id(value) in elsewhere:
                    seen[key] = elsewhere[id(value)]
                elif _ours(value):
                    stack.append((key, value))
                elif (text := _stable(value)) is not None:
                    seen[f"{module.__name__}:{word}"] = text
    return seen


def code_hash(rule: Rule) -> str:
    """Twelve hex digits of the rule's code (:func:`code_of`)."""
    text = "\n".join(f"{k}\n{v}" for k, v in sorted(code_of(rule).items()))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def table() -> dict[str, dict[str, str]]:
    """``{rule: {version: hash}}`` of the code as it is now (what judge_rules.json records)."""
    return {rule.name: {rule.version: code_hash(rule)} for rule in RULES}


if __name__ == "__main__":
    import json

    from rag_lab.evaluate.judge import versions  # the module the judge imports, not this "__main__" copy

    print(json.dumps(versions.table(), indent=2, sort_keys=True))
