"""Strict environment readers (kionga.env)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kionga.env import EnvError, env_bool, env_int, env_list, env_str

NAME = "KIONGA_TEST_VALUE"


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
    assert env_bool(NAME, not expected) is expected


@pytest.mark.parametrize("raw", ["ture", "2", "y", "enabled", "-1"])
def test_it_refuses_a_bad_boolean(clean_env: pytest.MonkeyPatch, raw: str) -> None:
    clean_env.setenv(NAME, raw)
    with pytest.raises(EnvError, match=NAME):
        env_bool(NAME, False)


def test_it_uses_defaults_when_unset() -> None:
    assert env_bool(NAME, True) is True
    assert env_int(NAME, 8) == 8
    assert env_str(NAME, "x") == "x"
    assert env_list(NAME, ["a"]) == ["a"]


def test_it_reads_integers(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv(NAME, " 42 ")
    assert env_int(NAME, 0) == 42


def test_it_refuses_a_bad_integer_naming_the_variable(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv(NAME, "eight")
    with pytest.raises(EnvError, match=NAME):
        env_int(NAME, 8)


def test_it_reads_comma_lists(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv(NAME, "a, b,,c,")
    assert env_list(NAME) == ["a", "b", "c"]


def test_it_reads_json_lists_so_items_may_contain_commas(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv(NAME, r'["\\d{3,5}", "x"]')
    assert env_list(NAME) == [r"\d{3,5}", "x"]


def test_it_refuses_a_bad_json_list(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv(NAME, "[1, 2]")
    with pytest.raises(EnvError, match=NAME):
        env_list(NAME)


def test_it_reads_a_secret_from_a_file(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    clean_env.setenv(NAME, "ignored")
    clean_env.setenv(f"{NAME}_FILE", str(secret))
    assert env_str(NAME) == "s3cret"


def test_it_reads_typed_values_from_files(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "flag").write_text("yes\n")
    clean_env.setenv(f"{NAME}_FILE", str(tmp_path / "flag"))
    assert env_bool(NAME, False) is True


def test_it_refuses_a_missing_secret_file(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv(f"{NAME}_FILE", str(tmp_path / "absent"))
    with pytest.raises(EnvError, match=f"{NAME}_FILE"):
        env_str(NAME)
