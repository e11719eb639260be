"""Profile files and parameter values: misspelled notebook keys, invalid YAML, YAML 1.2 scalars,
self-referencing anchors, NaN and infinities. All refused before anything runs, naming file and line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from conftest import cli
from transformer_theory.pipeline.parameters import check_parameters, parse_list, parse_value
from transformer_theory.pipeline.profiles import load_profile
from transformer_theory.pipeline.runner import prepare_run


def write_profile(root: Path, text: str) -> Path:
    path = root / "params" / "smoke.yaml"
    path.write_text(text)
    return path


def test_misspelled_notebook_key_in_a_profile_is_an_error_naming_it(tiny_project: Path) -> None:
    write_profile(tiny_project, "# smoke\n01_tiny:\n  scale: 2.0\n01_tinny:\n  x: 3\n")
    with pytest.raises(ValueError) as info:
        load_profile("smoke")
    message = str(info.value)
    assert "smoke.yaml, line 4: unknown notebook '01_tinny'. Did you mean '01_tiny'?" in message
    out = cli("run", "01_tiny", "--profile", "smoke")
    assert out.returncode == 2 and "unknown notebook '01_tinny'" in out.stderr
    assert not (tiny_project / "build").exists()


@pytest.mark.parametrize("text, line", [("01_tiny:\n  x: [1, 2\n  scale: 2.0\n", 3), ("01_tiny:\n\tx: 1\n", 2),
                                        ("01_tiny:\n  x: 1\n x: 2\n", 3)])
def test_invalid_yaml_gives_one_line_naming_file_and_line(tiny_project: Path, text: str, line: int) -> None:
    path = write_profile(tiny_project, text)
    with pytest.raises(ValueError) as info:
        load_profile("smoke")
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}, line {line}")


@pytest.mark.parametrize("text, line, key", [("01_tiny:\n  x: 2\n  x: 3\n", 3, "x"),
                                             ("01_tiny:\n  x: 2\n01_tiny:\n  scale: 1.0\n", 3, "01_tiny"),
                                             ("01_tiny: {x: 2, x: 3}\n", 1, "x")])
def test_a_key_given_twice_is_an_error_naming_file_and_line(tiny_project: Path, text: str, line: int, key: str) -> None:
    path = write_profile(tiny_project, text)
    with pytest.raises(ValueError) as info:
        load_profile("smoke")
    assert str(info.value).startswith(f"{path}, line {line}") and f"duplicate key '{key}'" in str(info.value)
    out = cli("run", "01_tiny", "--profile", "smoke")
    assert out.returncode == 2 and f"duplicate key '{key}'" in out.stderr
    with pytest.raises(ValueError, match="duplicate key 'a'"):
        parse_value("{a: 1, a: 2}")


def test_merged_keys_may_be_overridden() -> None:
    assert parse_value("{<<: {a: 1, b: 2}, a: 3}") == {"a": 3, "b": 2}


@pytest.mark.parametrize("text", ["", "# nothing but a comment\n"])
def test_an_empty_profile_is_an_error_naming_the_file(tiny_project: Path, text: str) -> None:
    path = write_profile(tiny_project, text)
    with pytest.raises(ValueError, match="the profile is empty") as info:
        load_profile("smoke")
    assert str(info.value).startswith(f"{path}, line 1")
    out = cli("run", "01_tiny", "--profile", "smoke")
    assert out.returncode == 2 and "the profile is empty" in out.stderr and not (tiny_project / "build").exists()


def test_invalid_yaml_on_the_command_line_is_one_line(tiny_project: Path) -> None:
    path = write_profile(tiny_project, "01_tiny:\n  x: [1, 2\n")
    out = cli("run", "01_tiny", "--profile", "smoke")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and f"error: {path}, line 3" in out.stderr


@pytest.mark.parametrize(
    "text, expected",
    [("010", 10), ("1:30", "1:30"), ("0o17", 15), ("0x1F", 31), ("1e3", 1000.0), ("-2.5E-1", -0.25), ("yes", "yes"),
     ("off", "off"), ("True", True), ("1_000", "1_000"), ("2001-12-14", "2001-12-14"), ("~", None), ("[010, 1e-3]", [10, 0.001])],
)
def test_values_are_read_as_yaml_1_2(text: str, expected: object) -> None:
    value = parse_value(text)
    assert value == expected and type(value) is type(expected)


def test_sweep_values_are_read_as_yaml_1_2() -> None:
    assert parse_list("010,1:30,0o17,yes") == [10, "1:30", 15, "yes"]


def test_profile_values_are_read_as_yaml_1_2(tiny_project: Path) -> None:
    write_profile(tiny_project, "01_tiny:\n  x: 010\n  label: 1:30\n")
    assert prepare_run("01_tiny", "smoke").parameters == {"x": 10, "label": "1:30"}


@pytest.mark.parametrize("text", ["01_tiny: &a\n  x: *a\n", "01_tiny:\n  label: &b [1, *b]\n"])
def test_self_referencing_anchors_are_a_clear_error(tiny_project: Path, text: str) -> None:
    path = write_profile(tiny_project, text)
    with pytest.raises(ValueError, match=r"line \d+, column \d+: alias '\*[ab]' refers to its own anchor") as info:
        load_profile("smoke")
    assert str(info.value).startswith(str(path))
    with pytest.raises(ValueError, match="refers to its own anchor"):
        parse_value("&c [1, *c]")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, [1.0, math.nan]])
def test_nan_and_inf_are_refused(value: object) -> None:
    with pytest.raises(ValueError, match=r"parameter 'p(\[1\])?' of notebook 'nb' \(from -p\) must be a finite real number"):
        check_parameters("nb", {"p": [0.5] if isinstance(value, list) else 0.5}, {"p": value}, source="-p")


def test_nan_and_inf_are_accepted_where_the_default_is_not_finite() -> None:
    assert check_parameters("nb", {"p": 1e999}, {"p": -math.inf}) == {"p": -math.inf}
    assert math.isnan(check_parameters("nb", {"p": [1e999]}, {"p": [math.nan]})["p"][0])


def test_nan_on_the_command_line_is_refused_before_running(tiny_project: Path) -> None:
    out = cli("run", "01_tiny", "--profile", "smoke", "-p", "scale", ".nan")
    assert out.returncode == 2 and "parameter 'scale' of notebook '01_tiny' (from -p) must be a finite" in out.stderr
    assert not (tiny_project / "build").exists()


def test_only_a_chapters_optional_parts_may_be_empty() -> None:
    from transformer_theory.pipeline.parameters import check_parameters

    defaults = {"tl_heads": [1, 2], "seeds": [0, 1]}
    assert check_parameters("13_training_recipe", defaults, {"tl_heads": []}, may_be_empty=("tl_heads",)) == {
        "tl_heads": []}
    with pytest.raises(ValueError, match="'seeds' of notebook '13_training_recipe' expects a non-empty list"):
        check_parameters("13_training_recipe", defaults, {"seeds": []}, may_be_empty=("tl_heads",))
