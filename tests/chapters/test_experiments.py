"""The experiment registry (the intrinsic-dimension run list and its batching; chapter 07's run list is
tested in ``test_depth_separation.py``) and the ``train`` command, which takes an experiment's sizes from the
profile entry of the chapter's name."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import TINY_INTRINSIC as TINY, cli, make_notebook, run_record
from transformer_theory.models import Transformer
from transformer_theory.chapters import EXPERIMENTS, RunResult, best_over_seeds, experiment, run_experiment
from transformer_theory.chapters.experiment import Experiment, applicable, book_efficiency, claim_name
from transformer_theory.training import TrainOptions, plan_tasks
from transformer_theory.training.jobs import CONNECT_TIMEOUT_S, dask_client
from transformer_theory.training import default_store

#: The run store the claims read weights from: the book profile's (committed runs first).
BOOK_STORE = default_store("book")



def test_intrinsic_dimension_runs() -> None:
    runs = [r for r in experiment("10_intrinsic_dimension").runs({"D_values": [2, 3], "seeds": [0, 1, 2]})
            if r.tags["part"] == "intrinsic_dimension"]
    assert len(runs) == 2 * 3 * 3
    cells = {(r.tags["D"], r.tags["h1"], r.tags["h2"]) for r in runs}
    assert cells == {(2, 2, 2), (2, 1, 2), (2, 2, 1), (3, 3, 3), (3, 2, 3), (3, 3, 2)}
    for r in runs:
        c = r.config
        assert c.target == "pairwise_max" and c.target_args == {"D": r.tags["D"], "d": 4, "seed": 0}
        assert c.model.heads == (r.tags["h1"], r.tags["h2"]) and c.model.width == 16 * r.tags["D"]
        assert c.model.cls_only_last and c.model.max_len is None and c.seed == r.tags["seed"]
    tasks = plan_tasks([r.config for r in runs])
    assert sorted(len(t.runs) for t in tasks) == [9, 9]  # per D: its three head configurations x seeds


def test_a_tasks_cost_weighs_its_steps_by_the_size_of_a_step() -> None:
    runs = [r.config for r in experiment("10_intrinsic_dimension").runs({"D_values": [2, 6], "seeds": [0]})
            if r.tags["part"] == "intrinsic_dimension"]
    by_D = {t.runs[0].target_args["D"]: t for t in plan_tasks(runs)}
    for task in by_D.values():
        assert task.cost == sum(r.steps * r.batch_size * (r.seq_len + 1) * Transformer(r.model).num_parameters()
                                for r in task.runs)
    assert by_D[2].cost / by_D[6].cost < 1 / 5  # same model-steps, E = 32 against 96: started last of the two


def test_unknown_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="Did you mean 'seq_len'"):
        experiment("10_intrinsic_dimension").runs({"seqlen": 8})
    with pytest.raises(ValueError, match="unknown experiment"):
        experiment("11_nothing")


def test_best_over_seeds() -> None:
    results = [RunResult({"D": 2, "seed": 0, "part": "a"}, run_record(0.2)),
               RunResult({"D": 2, "seed": 1, "part": "b"}, run_record(0.1)),
               RunResult({"D": 3, "seed": 0, "part": "a"}, run_record(None))]
    rows = best_over_seeds(results, ignore=("part",))
    assert rows == [{"D": 2, "seed_nmse": {0: 0.2, 1: 0.1}, "nmse": 0.1},
                    {"D": 3, "seed_nmse": {0: None}, "nmse": None}]
    assert len(best_over_seeds(results)) == 3  # the tag ``part`` names a configuration unless ignored
    assert results[1].best_nmse == 0.1 and results[2].best_nmse is None


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_every_chapter_implements_the_protocol(name: str) -> None:
    """Each registered chapter has its runs, predictions, tables and claims, each taking the parameter overrides
    (an unknown name is refused naming it, as for the runs); the predictions are for its defaults."""
    exp = experiment(name)
    assert exp.name == name and all(callable(f) for f in (exp.build, exp.predict, exp.tabulate, exp.judge))
    assert isinstance(exp.predictions(), dict) and exp.predictions()
    for call in (lambda: exp.runs({"no_such_parameter": 1}), lambda: exp.predictions({"no_such_parameter": 1}),
                 lambda: exp.tables([], {"no_such_parameter": 1}), lambda: exp.claims([], {"no_such_parameter": 1}, BOOK_STORE)):
        with pytest.raises(ValueError, match="unknown parameter 'no_such_parameter'"):
            call()


def test_claims_must_be_named_bools() -> None:
    """The protocol's claims are ``dict[str, bool]``: a judge returning anything else is an error, not a claim."""
    def judge(verdict):
        return Experiment("x", {"a": 1}, lambda p: [], lambda p: {}, lambda r, p: {}, lambda r, p, s: {"ok": verdict})

    assert judge(True).claims([], None, BOOK_STORE) == {"ok": True}
    assert judge(False).claims([], {"a": 2}, BOOK_STORE) == {"ok": False}
    for bad in (None, 1, "yes"):
        with pytest.raises(TypeError, match="claims must map names to bools"):
            judge(bad).claims([], None, BOOK_STORE)
    assert applicable({"a": True, "b": None, "c": np.bool_(False)}) == {"a": True, "c": False}
    assert type(applicable({"c": np.bool_(False)})["c"]) is bool
    assert claim_name("agrees", "k_hop(3) (1,1,1)") == "agrees_k_hop_3_1_1_1"
    assert claim_name("learned", "(2,2),E=24") == "learned_2_2_e_24"


def test_a_chapter_trains_on_a_dask_worker_that_imported_no_chapter(tmp_path: Path) -> None:
    """A worker process looks up a run's target by name: the job brings the registered functions along (the
    worker never imports the chapters), and the records equal those trained in this process."""
    tiny = {"steps": 4, "warmup": 1, "eval_every": 2, "batch_size": 16, "train_size": 32, "val_size": 64,
            "encoder_width": 8, "embed_dim": 16, "head_dim": 4, "seq_lens": [4], "one_layer_heads": [1],
            "two_layer_heads": [1, 1], "ffn_widths": [8], "width_seq_len": 4, "width_one_layer_heads": [1],
            "seeds": [0]}
    options = TrainOptions(progress=False, threads=1)
    here = run_experiment("07_depth_separation", tiny, store=tmp_path / "here", n_workers=0, options=options)
    with dask_client(n_workers=1) as client:
        assert list(client.run(lambda: "transformer_theory.chapters" in sys.modules).values()) == [False]
        there = run_experiment("07_depth_separation", tiny, store=tmp_path / "worker",
                               scheduler=client.scheduler.address, options=TrainOptions(progress=False))
        assert list(client.run(lambda: "transformer_theory.chapters" in sys.modules).values()) == [False]
    assert all(isinstance(r, RunResult) for r in here + there)
    assert [r.tags for r in there] == [r.tags for r in here]
    for a, b in zip((r.record for r in here), (r.record for r in there)):
        assert a.key == b.key and a.history == b.history and b.provenance["execution"]["threads"] == 1


def tiny_chapter(project: Path) -> Path:
    """Chapter 10 in ``project`` with the :data:`TINY` sizes as its smoke-profile entry; its run store."""
    import yaml

    make_notebook(project / "notebooks" / "10_intrinsic_dimension.ipynb", "seed = 0", "print(seed)")
    smoke = project / "params" / "smoke.yaml"
    smoke.write_text(smoke.read_text() + yaml.safe_dump({"10_intrinsic_dimension": TINY}))
    return project / "build" / "runs" / "smoke"


def test_train_command_uses_the_profile_entry_and_the_store(tiny_project: Path) -> None:
    store = tiny_chapter(tiny_project)
    out = cli("train", "10_intrinsic_dimension", "--profile", "smoke", "--workers", "0")
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("{")]
    # three head configurations, the same three as the sequence-length part (TINY's one T), the three of the
    # longer schedule, one head-count run
    assert len(rows) == 10 and all("'D': " in row and "'nmse':" in row for row in rows)
    assert sum("'h1': " in row for row in rows) == 9 and sum("'sequence_length'" in row for row in rows) == 3
    assert sum("'long_schedule'" in row for row in rows) == 3
    records = sorted(store.glob("*.json"))
    assert len(records) == 2 * 3 + 3 + 1
    stamps = [p.stat().st_mtime_ns for p in records]
    again = cli("train", "10_intrinsic_dimension", "--profile", "smoke", "--workers", "0")
    assert again.returncode == 0 and again.stdout == out.stdout
    assert [p.stat().st_mtime_ns for p in records] == stamps  # reused, not retrained


def test_train_command_takes_checked_overrides(tiny_project: Path) -> None:
    store = tiny_chapter(tiny_project)
    bad = cli("train", "10_intrinsic_dimension", "--profile", "smoke", "--workers", "0", "-p", "seqlen", "4")
    assert bad.returncode == 2 and "unknown parameter 'seqlen'" in bad.stderr and "Did you mean 'seq_len'" in bad.stderr
    assert not store.exists() or not list(store.glob("*.json"))  # refused before anything trained
    out = cli("train", "10_intrinsic_dimension", "--profile", "smoke", "--workers", "0", "-p", "seeds", "[1]",
              "-p", "hc_heads", "[2]")
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 10 and sum("'h': 2," in row for row in rows) == 1  # the head-count run has h = 2
    seeds = sorted({json.loads(p.read_text())["config"]["seed"] for p in store.glob("*.json")})
    # three seed-1 runs, the seed-0 head-count run and the longer schedule's three (its own seeds, ls_seeds = [0])
    assert len(list(store.glob("*.json"))) == 3 + 1 + 3 and seeds == [0, 1]


def test_train_command_checks_the_device_before_training(tiny_project: Path) -> None:
    store = tiny_chapter(tiny_project)
    bad = cli("train", "10_intrinsic_dimension", "--profile", "smoke", "--workers", "0", "--device", "tpu")
    assert bad.returncode == 2 and "device" in bad.stderr and "tpu" in bad.stderr
    if not torch.cuda.is_available():
        bad = cli("train", "10_intrinsic_dimension", "--profile", "smoke", "--workers", "0", "--device", "cuda")
        assert bad.returncode == 2 and "CUDA is not available" in bad.stderr
    assert not store.exists() or not list(store.glob("*.json"))


@pytest.mark.parametrize("name, values, problem", [
    ("07_depth_separation", {"seeds": []}, "seeds must be a non-empty list of seeds"),
    ("08_max_position_retrieval", {"probe_seeds": []}, "probe_seeds must be a non-empty list of seeds"),
    ("08_max_position_retrieval", {"probe_heads": [[2], []]}, r"probe_heads\[1\] must be a non-empty list"),
    ("09_aggregation_cost", {"seeds": []}, "seeds must be a non-empty list of seeds"),
    ("09_aggregation_cost", {"cost_seeds": []}, "cost_seeds must be a non-empty list of seeds"),
    ("09_aggregation_cost", {"cost_widths": 8}, "cost_widths must be a non-empty list of integers, got 8"),
    ("11_triangle_center", {"seeds": [-1]}, r"seeds\[0\] must be a non-negative integer"),
    ("11_triangle_center", {"configs": [[1, 2]]}, r"configs must hold \[h1, h2, E\] triples"),
    ("12_predictions_vs_training", {"seeds": 3}, "seeds must be a non-empty list of seeds"),
    ("12_predictions_vs_training", {"followups": [["shifted_max (1,)", [], 10]]}, r"followups\[0\] seeds must be"),
])
def test_a_chapters_lists_are_checked_before_anything_trains(name: str, values: dict, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        experiment(name).runs(values)


def test_train_command_refuses_a_part_without_seeds(tmp_path: Path) -> None:
    for values in (["seeds", "[]"], ["cost_seeds", "[]"], ["cost_widths", "8"]):
        out = cli("train", "09_aggregation_cost", "--profile", "smoke", "--workers", "0", "--store", str(tmp_path),
                  "-p", *values)
        assert out.returncode == 2 and f"error: {values[0]} must be a non-empty list" in out.stderr
        assert "Traceback" not in out.stderr
    assert not list(tmp_path.iterdir())


def test_run_command_checks_a_training_chapters_lists_before_the_kernel_starts(tmp_path: Path) -> None:
    out = cli("run", "09_aggregation_cost", "--profile", "smoke", "-p", "cost_seeds", "[0, -1]",
              "--output", str(tmp_path / "09.ipynb"))
    assert out.returncode == 2 and "cost_seeds[1] must be a non-negative integer" in out.stderr
    assert not list(tmp_path.iterdir())


def test_an_unreachable_scheduler_is_a_short_error_naming_it(tmp_path: Path) -> None:
    out = cli("train", "09_aggregation_cost", "--profile", "smoke", "--store", str(tmp_path),
              "--scheduler", "tcp://127.0.0.1:1")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert out.stderr.startswith("error: cannot connect to the Dask scheduler at tcp://127.0.0.1:1")
    assert not list(tmp_path.glob("*.json"))


def test_the_scheduler_gets_a_short_connect_timeout(monkeypatch) -> None:
    """distributed's default connect timeout (30 s; 33 s in all from the command line) is replaced by ours."""
    import distributed

    seen = {}

    def refuse(address, timeout):
        seen.update(address=address, timeout=timeout)
        raise OSError("timed out")

    monkeypatch.setattr(distributed, "Client", refuse)
    with pytest.raises(ValueError, match="cannot connect to the Dask scheduler at tcp://10.0.0.1:1: timed out"):
        with dask_client("tcp://10.0.0.1:1"):
            pass
    assert seen == {"address": "tcp://10.0.0.1:1", "timeout": CONNECT_TIMEOUT_S} and CONNECT_TIMEOUT_S <= 10


def test_bad_executor_settings_are_rejected_before_training(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="n_workers"):
        run_experiment("10_intrinsic_dimension", TINY, store=tmp_path, n_workers=-1)
    with pytest.raises(ValueError, match="models_per_task"):
        run_experiment("10_intrinsic_dimension", TINY, store=tmp_path, n_workers=0, models_per_task=0)
    with pytest.raises(ValueError, match="device"):
        TrainOptions(device="tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            TrainOptions(device="cuda")
    assert not list(tmp_path.iterdir())


def test_half_gains_read_the_best_seed_of_each_configuration() -> None:
    from transformer_theory.chapters.experiment import RunResult, half_gains

    def run(seed, heads, curve):
        best = min(v for v in curve if v is not None) if any(v is not None for v in curve) else None
        return RunResult({"heads": heads, "T": 8, "seed": seed},
                         run_record(best, config={"steps": 400}, best_step=400, final_nmse=curve[-1],
                                    history={"step": [100, 200, 300, 400], "val_nmse": curve}))

    results = [run(0, [1], [0.5, 0.2, 0.1, 0.1]), run(1, [1], [0.5, 0.1, 0.05, 0.04]),
               run(0, [2], [None, None, None, None])]
    rows = half_gains(results, ["heads", "T"])
    assert [(r["heads"], r["T"]) for r in rows] == [([1], 8), ([2], 8)]
    assert rows[0]["seed_half_gain"] == {0: pytest.approx(2.0), 1: pytest.approx(2.5)}
    assert rows[0]["half_gain"] == pytest.approx(2.5)  # seed 1 has the best NMSE
    assert rows[1] == {"heads": [2], "T": 8, "seed_half_gain": {0: None}, "half_gain": None}  # diverged


def test_book_efficiency_judges_a_plateau_against_its_siblings() -> None:
    """P1 Table 2's one-layer means (h = 3 plateaus at 1e-3, h = 4 sits 1000x lower): the absolute rule alone calls
    h = 3 efficient, the sibling rule does not; a configuration of another target is no sibling."""
    rows = [{"h": h, "target": "max", "T": T, "nmse": v} for h, by_T in
            {3: {8: 6.9e-4, 128: 1.6e-3}, 4: {8: 1.5e-6, 128: 2.5e-6}}.items() for T, v in by_T.items()]
    rows += [{"h": 1, "target": "other", "T": T, "nmse": 1e-3} for T in (8, 128)]
    judged = {r["h"]: r for r in book_efficiency(rows, ["h"], siblings=["target"])}
    assert judged[3]["absolute_efficient"] and not judged[3]["observed_efficient"]
    assert judged[4]["observed_efficient"] and judged[1]["observed_efficient"]
    assert not {r["h"]: r for r in book_efficiency(rows, ["h"])}[1]["observed_efficient"]  # one target: 1 is 400x h = 4
