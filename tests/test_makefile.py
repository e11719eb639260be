"""The Makefile's own checks: PROFILE must name a profile, and ``make lab`` starts as root."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT

VENV = Path(sys.prefix)  # the Makefile's VENV: this interpreter's, taken as installed


def make(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(["make", "--no-print-directory", "-o", str(VENV / ".installed"), f"VENV={VENV}", *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)


def test_a_misspelled_profile_is_refused_listing_the_valid_ones() -> None:
    out, _ = make("-n", "book", "PROFILE=smok").communicate(timeout=60)
    assert "PROFILE=smok is not a profile. Valid profiles (params/*.yaml): book paper smoke" in out
    run = make("-n", "book", "PROFILE=smoke")
    out, _ = run.communicate(timeout=60)
    assert run.returncode == 0 and "--profile smoke" in out


def test_lab_starts_as_root_and_takes_lab_args(tmp_path: Path) -> None:
    """As root, ``make lab`` passes --allow-root (Jupyter refuses to start otherwise); LAB_ARGS are appended."""
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path)}
    lab = make("lab", "LAB_ARGS=--no-browser --port=0 --ServerApp.token=test", env=env, start_new_session=True)
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any("is running at" in line for line in lines):
            line = lab.stdout.readline()
            if not line:
                break
            lines.append(line)
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        lab.communicate(timeout=60)
    output = "".join(lines)
    assert any("is running at" in line for line in lines), output
    assert ("--allow-root" in lines[0]) == (os.getuid() == 0) and lines[0].rstrip().endswith("--ServerApp.token=test")
