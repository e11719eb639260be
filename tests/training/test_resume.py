"""A training process killed with SIGKILL resumes from its last checkpoint and ends with exactly the
result of an uninterrupted run (CPU, one thread)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import torch

from tiny_runs import QUIET, tiny_run, restore_threads  # noqa: F401 (autouse fixture)
from transformer_theory.training import RunStore, TrainOptions, train_runs

STEPS = 400
SCRIPT = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {str(Path(__file__).parent)!r})
    from tiny_runs import QUIET, tiny_run
    from transformer_theory.training import RunStore, TrainOptions, train_runs
    runs = [tiny_run((2, 2), 0, steps={STEPS}, train_size=256), tiny_run((1, 2), 1, steps={STEPS}, train_size=256)]
    train_runs(runs, RunStore(sys.argv[1]), n_workers=0, options=TrainOptions(**QUIET, checkpoint_every_steps=25))
""")
RUNS = [tiny_run((2, 2), 0, steps=STEPS, train_size=256), tiny_run((1, 2), 1, steps=STEPS, train_size=256)]


def start(store: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-c", SCRIPT, str(store)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_killed_run_resumes_to_the_uninterrupted_result(tmp_path: Path) -> None:
    store = tmp_path / "killed"
    process = start(store)
    checkpoints = store / "checkpoints"
    deadline = time.monotonic() + 120
    while not any(checkpoints.glob("*.pt")) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # a few more steps past the first checkpoint, then kill mid-run
    assert process.poll() is None, f"the run ended before it could be killed:\n{process.stdout.read()}"
    process.send_signal(signal.SIGKILL)
    process.wait()
    (path,) = checkpoints.glob("*.pt")
    killed_at = torch.load(path, weights_only=True)["step"]
    assert 0 < killed_at < STEPS and not list(store.glob("*.json"))

    resumed = start(store)
    assert resumed.wait(timeout=300) == 0, resumed.stdout.read()
    records = [RunStore(store).get(run) for run in RUNS]
    assert all(r["task"]["resumed_at_steps"] == [killed_at] for r in records)

    uninterrupted = train_runs(RUNS, RunStore(tmp_path / "uninterrupted"), n_workers=0, options=TrainOptions(**QUIET))
    for a, b in zip(records, uninterrupted):
        assert a["history"] == b.history.to_dict() and a["best_nmse"] == b.best_nmse
        assert b.task["resumed_at_steps"] == []
    weights = [RunStore(store).weights(run) for run in RUNS], [RunStore(tmp_path / "uninterrupted").weights(run)
                                                                for run in RUNS]
    assert all(torch.equal(x[k], y[k]) for x, y in zip(*weights) for k in x)
