"""The "Run it yourself" box: the command it prints runs, and its profile rows follow params/*.yaml."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from transformer_theory.pipeline.parameters import parse_value
from transformer_theory.pipeline.rerun import cli_value, run_command, run_it_yourself
from transformer_theory.storage.results import write_json_atomic
from transformer_theory.pipeline.runner import prepare_run


@pytest.mark.parametrize("value", [3, 0.001, 1e-7, 1000000.0, [2, 16], [0.1, 0.01], "abc", "a b", True])
def test_cli_value_reads_back(value) -> None:
    (text,) = shlex.split(cli_value(value))
    assert parse_value(text) == value


def test_box_command_profiles_and_times(tiny_project: Path) -> None:
    assert run_command("01_tiny", ["x", "scale"]) == "python -m transformer_theory run 01_tiny -p x 1 -p scale 2.0"
    box = run_it_yourself("01_tiny", ["x", "scale"]).data  # the book profile's values, one parameter a line:
    assert box.startswith("````{admonition} Run it yourself")
    assert ("```bash\nsource .venv/bin/activate  # once per shell, after make book (or write .venv/bin/python for "
            "python)\npython -m transformer_theory run 01_tiny \\\n    -p x 1 \\\n    -p scale 2.0\n```") in box
    assert box.count("| `scale=2.0` | not measured |") == 3

    spec = prepare_run("01_tiny", "book")
    write_json_atomic(tiny_project / "results" / "book" / "01_tiny.json",
                      {"status": "ok", "parameters_hash": spec.parameters_hash, "wall_time_s": 3.2, "values": {}})
    (tiny_project / "params" / "paper.yaml").write_text("01_tiny:\n  x: 5\n")
    box = run_it_yourself("01_tiny", ["x"]).data
    assert "| `smoke` | `scale=2.0` | 3 s |" in box  # same parameters as the committed book run
    assert "| `paper` | `x=5` | not measured |" in box


def test_box_refuses_unknown_parameters(tiny_project: Path) -> None:
    with pytest.raises(ValueError, match="unknown parameter 'y'.*Valid parameters: gate, label, scale, x"):
        run_it_yourself("01_tiny", ["x", "y"])
