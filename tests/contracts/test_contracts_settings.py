"""Graph settings: optional integers within their ranges, defaults filled in."""

from __future__ import annotations

import pytest
from contracts_kit import check, errors, prompt_chain

from contracts.registry import SETTINGS_RANGES

BOUNDS = [(name, lo, hi) for name, (lo, hi, _default) in SETTINGS_RANGES.items()]


def test_it_has_the_reference_ranges() -> None:
    assert SETTINGS_RANGES == {"max_steps": (1, 200, 50), "timeout_seconds": (1, 300, 60),
                               "max_tokens": (1, 1_000_000, 50_000)}


@pytest.mark.parametrize(("name", "lo", "hi"), BOUNDS)
def test_it_accepts_both_ends_of_each_range(name: str, lo: int, hi: int) -> None:
    for value in (lo, hi):
        report = check(prompt_chain(settings={name: value}))
        assert report.runnable, report.issues
        assert report.graph is not None and report.graph["settings"][name] == value


@pytest.mark.parametrize(("name", "lo", "hi"), BOUNDS)
def test_it_refuses_values_just_outside_each_range(name: str, lo: int, hi: int) -> None:
    for value in (lo - 1, hi + 1, -5):
        assert errors(check(prompt_chain(settings={name: value}))) == [
            ("invalid_setting", f"settings.{name}")]


@pytest.mark.parametrize("value", [True, False, 50.0, 50.5, "50", [50], {"v": 50}, 10**30])
def test_it_refuses_values_that_are_not_integers(value: object) -> None:
    assert errors(check(prompt_chain(settings={"max_steps": value}))) == [
        ("invalid_setting", "settings.max_steps")]


def test_it_refuses_unknown_settings() -> None:
    report = check(prompt_chain(settings={"max_steps": 5, "retries": 3}))
    assert errors(report) == [("invalid_setting", "settings.retries")]
    assert report.graph is not None and "retries" not in report.graph["settings"]


@pytest.mark.parametrize("settings", [[], "fast", 5])
def test_it_refuses_settings_that_are_not_an_object(settings: object) -> None:
    assert errors(check(prompt_chain(settings=settings))) == [("invalid_setting", "settings")]


def test_it_fills_in_defaults_for_absent_and_null_settings() -> None:
    for settings in (None, {}, {"max_steps": None}):
        doc = prompt_chain() if settings is None else prompt_chain(settings=settings)
        report = check(doc)
        assert report.runnable
        assert report.graph is not None
        assert report.graph["settings"] == {"max_steps": 50, "timeout_seconds": 60,
                                            "max_tokens": 50_000}


def test_it_reports_every_bad_setting() -> None:
    doc = prompt_chain(settings={"max_steps": 0, "timeout_seconds": 301, "max_tokens": "lots"})
    assert [p for _, p in errors(check(doc))] == [
        "settings.max_steps", "settings.timeout_seconds", "settings.max_tokens"]
