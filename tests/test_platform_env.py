"""The one strict environment reader (runner.env), shared by gateway and runner settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runner.env import Env, EnvError

NAME = "KIONGA_TEST_VALUE"
env = Env()  # the process environment, read at each call as the settings modules do


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv(NAME, raising=False)
    monkeypatch.delenv(f"{NAME}_FILE", raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", True), ("true", True), ("YES", True), ("0", False), ("false", False), ("No", False)],
)
def test_it_reads_booleans(clean_env: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    clean_env.setenv(NAME, raw)
    assert env.boolean(NAME, not expected) is expected


@pytest.mark.parametrize("raw", ["ture", "2", "y", "enabled", "-1"])
def test_it_refuses_a_bad_boolean(clean_env: pytest.MonkeyPatch, raw: str) -> None:
    clean_env.setenv(NAME, raw)
    with pytest.raises(EnvError, match=NAME):
        env.boolean(NAME, False)


def test_it_uses_defaults_when_unset() -> None:
    assert env.boolean(NAME, True) is True
    assert env.integer(NAME, 8) == 8
    assert env.text(NAME, "x") == "x"
    assert env.strings(NAME, ["a"]) == ["a"]


def test_it_reads_integers(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv(NAME, " 42 ")
    assert env.integer(NAME, 0) == 42


def test_it_refuses_a_bad_integer_naming_the_variable(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv(NAME, "eight")
    with pytest.raises(EnvError, match=NAME):
        env.integer(NAME, 8)


def test_it_reads_comma_lists(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv(NAME, "a, b,,c,")
    assert env.strings(NAME) == ["a", "b", "c"]


def test_it_reads_json_lists_so_items_may_contain_commas(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv(NAME, r'["\\d{3,5}", "x"]')
    assert env.strings(NAME) == [r"\d{3,5}", "x"]


def test_it_refuses_a_bad_json_list(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv(NAME, "[1, 2]")
    with pytest.raises(EnvError, match=NAME):
        env.strings(NAME)


def test_it_reads_a_secret_from_a_file(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    clean_env.setenv(NAME, "ignored")
    clean_env.setenv(f"{NAME}_FILE", str(secret))
    assert env.text(NAME) == "s3cret"


def test_it_reads_typed_values_from_files(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "flag").write_text("yes\n")
    clean_env.setenv(f"{NAME}_FILE", str(tmp_path / "flag"))
    assert env.boolean(NAME, False) is True


def test_it_refuses_a_missing_secret_file(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv(f"{NAME}_FILE", str(tmp_path / "absent"))
    with pytest.raises(EnvError, match=f"{NAME}_FILE"):
        env.text(NAME)


def test_it_reads_one_item_per_line_so_items_may_contain_commas(
        clean_env: pytest.MonkeyPatch) -> None:
    # The gateway once read this as one item with a newline in it while the runner
    # read two: the same KIONGA_SECRET_PATTERNS meant two things on the two sides.
    clean_env.setenv(NAME, "\\d{3,5}\nsecret-[0-9]+\n")
    assert env.strings(NAME) == [r"\d{3,5}", "secret-[0-9]+"]


_ITEM = st.text(st.characters(codec="utf-8", exclude_characters="\n\r"),
                min_size=1).map(str.strip).filter(lambda item: item and item[0] != "[")


@given(st.lists(_ITEM, max_size=5))
def test_any_list_reads_back_from_json_and_from_lines(items: list[str]) -> None:
    for written in (json.dumps(items), "\n".join(items) + "\n"):
        assert Env({NAME: written}).strings(NAME) == items


def test_it_bounds_integers_naming_the_variable() -> None:
    with pytest.raises(EnvError, match=f"{NAME} must be between 1 and 9, got 10"):
        Env({NAME: "10"}).integer(NAME, 1, within=(1, 9))
