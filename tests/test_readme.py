"""The README's quickstart runs as written: every ```python block in a fresh interpreter, and its ``predict``
commands; it keeps the two commands and the activation of the virtual environment."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
PYTHON_BLOCKS = re.findall(r"^```python\n(.*?)^```", README, re.MULTILINE | re.DOTALL)
BASH = "\n".join(re.findall(r"^```bash\n(.*?)^```", README, re.MULTILINE | re.DOTALL))
PREDICT_COMMANDS = [line for line in BASH.splitlines() if line.startswith("python -m transformer_theory predict ")]


def test_quickstart_uses_the_library_and_the_venv() -> None:
    assert len(PYTHON_BLOCKS) >= 2
    code = "\n".join(PYTHON_BLOCKS)
    for name in ("build_interpolator(", "to_torch(", "predict(", ".reason"):
        assert name in code, f"the quickstart does not call {name}"
    assert "source .venv/bin/activate" in BASH.splitlines()
    assert "## Two commands" in README and "make book" in README and "make test" in README
    assert PREDICT_COMMANDS, "the quickstart shows the predict command"
    assert "(book/running.md)" in README and (ROOT / "book" / "running.md").is_file()


@pytest.mark.parametrize("code", PYTHON_BLOCKS, ids=[f"block{i + 1}" for i in range(len(PYTHON_BLOCKS))])
def test_python_block_runs_as_written(code: str, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, f"README block failed:\n{code}\n--- stderr:\n{out.stderr}"
    assert out.stdout.strip(), "a quickstart block prints what it shows"


@pytest.mark.parametrize("command", PREDICT_COMMANDS)
def test_predict_commands_run_as_written(command: str) -> None:
    argv = shlex.split(command)
    out = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^verdict +(efficient|inefficient)$", out.stdout, re.MULTILINE), out.stdout
