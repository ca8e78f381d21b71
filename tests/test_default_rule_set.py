"""The default rule set (ruff's model): opt-in rules run only when their code or "ALL" is selected."""
from dataclasses import replace

import pytest

from tritonify.diagnostics import registry
from tritonify.diagnostics.settings import Settings, from_table


@pytest.fixture
def one_opt_in(monkeypatch):
    """Pretend TRI013 is outside the default set (the real set changes as the study does)."""
    monkeypatch.setattr(registry, "opt_in_codes", lambda: frozenset({"TRI013"}))
    return "TRI013"


def test_default_settings_run_default_rules_only(one_opt_in):
    s = Settings()
    assert s.enabled("TRI001")
    assert not s.enabled(one_opt_in)


def test_all_and_own_code_turn_an_opt_in_rule_on(one_opt_in):
    assert Settings(select=("ALL",)).enabled(one_opt_in)
    assert Settings(select=(one_opt_in,)).enabled(one_opt_in)
    assert Settings(extend_select=(one_opt_in,)).enabled(one_opt_in)
    assert Settings(extend_select=(one_opt_in,)).enabled("TRI001")  # extend keeps the default set


def test_a_prefix_does_not_turn_an_opt_in_rule_on(one_opt_in):
    s = Settings(select=("TRI",))
    assert s.enabled("TRI001")
    assert not s.enabled(one_opt_in)


def test_ignore_beats_all_for_an_opt_in_rule(one_opt_in):
    assert not Settings(select=("ALL",), ignore=(one_opt_in,)).enabled(one_opt_in)


def test_explicit_select_replaces_the_default_set(one_opt_in):
    s = Settings(select=("TRI002",))
    assert s.enabled("TRI002") and not s.enabled("TRI001")


def test_pyproject_without_select_is_the_default_set(one_opt_in):
    s = from_table({})
    assert s.enabled("TRI001") and not s.enabled(one_opt_in)
    assert from_table({"select": ["ALL"]}).enabled(one_opt_in)


def test_every_opt_in_rule_says_so_on_its_page():
    for r in registry.all_rules():
        if not r.rule.default:
            text = r.rule.page.read_text(encoding="utf-8").lower()
            assert "opt-in" in text, f"{r.code} is outside the default set but its page does not say opt-in"
