"""The numeric rule of the local judge: values normalised, then compared."""

from __future__ import annotations

from rag_lab.evaluate.judge.numeric import missing_values, values_of


def test_money_percent_and_counts_are_normalised():
    assert values_of("The limit is $4,106 per month.") == {"money:4106"}
    assert values_of("It costs $4106.00.") == {"money:4106"}
    assert values_of("a grant of $1.2 million") == {"money:1200000"}
    assert values_of("4.26% of income, or 85 percent of SMI") == {"percent:4.26", "percent:85"}
    assert values_of("a family of 4 with three children") == {"count:4", "count:3"}
    assert values_of("one of the rules, (1) first") == set()  # 0 and 1 say nothing checkable


def test_program_years_and_ranges_are_one_form():
    assert values_of("BCY 2026") == values_of("BCY-26") == values_of("BCY26") == {"year:2026"}
    assert values_of("FFY 2025–2027") == values_of("FFY 2025-27") == values_of("2025 through 2027") \
        == {"year:2025", "year:2027"}
    assert values_of("October 1, 2023") == values_of("10/1/2023") == {"date:10-01", "year:2023"}


def test_a_value_missing_from_the_evidence_is_named():
    evidence = "Family of 4 | BCY 2026 | annual $92,041 | monthly 7,670"
    assert missing_values("In BCY-26 a family of four may earn $92,041 a year.", evidence) == []
    assert missing_values("In BCY 2026 a family of 4 earns up to $7,670 a month.", evidence) == []  # bare cell
    assert missing_values("In BCY 2027 a family of 4 may earn $92,041.", evidence) == ["year:2027"]
    assert missing_values("A family of 4 may earn $115,052 a year.", evidence) == ["money:115052"]
    assert missing_values("A family of 5 may earn $92,041 a year.", evidence) == ["count:5"]
    assert missing_values("The plan covers FFY 2025-2027.", "for FFY 2025–27") == []
    assert missing_values("The plan covers FFY 2026-2027.", "for FFY 2025–27") == ["year:2026"]


def test_negation_and_name_rules():
    from rag_lab.evaluate.judge.rules import negation_mismatch, unstated_names

    assert negation_mismatch("The CCS program is not run by the boards.", "The CCS program is run by the boards.")
    assert not negation_mismatch("Parents cannot appeal late.", "Parents may not appeal after 15 days.")
    assert not negation_mismatch("The boards run the program.", "The boards run the program.")
    context = "The Harris County Board and TWC run Child Care Services."
    assert unstated_names("The Gulf Coast Board runs it with TWC.", context) == ["Gulf Coast Board"]
    assert unstated_names("The Harris County Board runs CCS services.", context) == ["CCS"]
    assert unstated_names("TWC runs Child Care Services.", context) == []  # every word appears
    # a name spelled out from an acronym the context states is the context's name (dev: CCDF, SMI) ...
    acronyms = "The CCDF plan sets limits at 85% of SMI; LH rates apply."
    assert unstated_names("The Child Care and Development Fund plan is due.", acronyms) == []
    assert unstated_names("Limits are 85% of State Median Income.", acronyms) == []
    # ... but not another name with other initials, nor two-letter initials (chance matches)
    assert unstated_names("The Child Care Workforce Strategic Plan is due.", acronyms) == [
        "Child Care Workforce Strategic Plan"]
    assert unstated_names("Licensed Homes rates apply.", acronyms) == ["Licensed Homes"]


def test_a_verdict_is_not_reused_for_another_context_with_the_same_evidence():
    """The numbers rule reads the whole context: the same statement and premise under a context that
    states the number elsewhere must not be served the first context's 'numbers' verdict."""
    from rag_lab.evaluate.judge.probability import ProbabilityNLIPrompt

    verdicts = ProbabilityNLIPrompt(evidence=1, numbers="code")
    statement = "The weekly income limit is $1,770."
    without = verdicts.verdict(None, "The weekly income limit depends on family size.", statement)
    assert without["rule"] == "numbers"
    with_number = "The weekly income limit depends on family size.\nTable: family of 4 | $1,770"
    try:
        again = verdicts.verdict(None, with_number, statement)
    except TypeError:  # reached the model (no local judge given here): the cached rule was not reused
        again = {"rule": "model"}
    assert again["rule"] != "numbers"
