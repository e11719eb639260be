"""The committed results (``results/<profile>/``, written by ``make reproduce PROFILE=<profile> ACCEPT=1``).

Long runs (the Tikhonov experiment at the official sizes takes minutes) are not repeated in CI; their
book-profile results files are committed with provenance, and the smoke and paper runs for the times the
"Run it yourself" boxes quote. These checks make sure the book's files are complete and current (same
parameters, and for the book profile the same notebook and library code: the configuration hash covers
both), every other committed file has its profile's parameters, and the results still support what the
chapters claim.
"""

from __future__ import annotations

import json

import pytest

from conftest import ROOT
from transformer_theory.pipeline.notebooks import list_notebooks
from transformer_theory.pipeline.profiles import load_profile
from transformer_theory.pipeline.runner import prepare_run
from transformer_theory.chapters import EXPERIMENTS, RunResult, experiment
from transformer_theory.training import RunRecord, RunStore
from transformer_theory.chapters import intrinsic_dimension, max_position, triangle_center
from transformer_theory.chapters.depth_separation import MIN_RATIO, nmse_table, separation
from transformer_theory.infoflow.efficiency import observed_efficient

RESULTS = ROOT / "results" / "book"
NOTEBOOKS = list_notebooks()
#: Every committed results file; the other profiles' files hold the times the "Run it yourself" boxes quote.
COMMITTED = sorted(p for p in (ROOT / "results").glob("*/*.json") if p.stem in {nb.stem for nb in NOTEBOOKS})


def load(stem: str) -> dict:
    path = RESULTS / f"{stem}.json"
    assert path.is_file(), f"{path} is missing: run `make reproduce NOTEBOOKS={stem} ACCEPT=1` (a new notebook)"
    return json.loads(path.read_text())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_book_results_are_complete(path) -> None:
    load(path.stem)


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_committed_results_are_current(path) -> None:
    data, profile = json.loads(path.read_text()), path.parent.name
    assert data["status"] == "ok" and data["profile"] == profile
    spec = prepare_run(path.stem, profile)
    assert data.get("parameters_hash") == spec.parameters_hash, (
        f"{path}: produced with other parameters than params/{profile}.yaml gives; run "
        f"`make reproduce PROFILE={profile} NOTEBOOKS={path.stem} ACCEPT=1`"
    )
    if profile == "book":  # the book's numbers: produced by today's notebook and library code
        assert data.get("config_hash") == spec.config_hash, (
            f"{path}: produced by other code than the notebook and the library modules it imports today; "
            f"run `make reproduce NOTEBOOKS={path.stem} ACCEPT=1`"
        )
    assert data["wall_time_s"] > 0 and len(data["git"]["commit"]) == 40
    assert data["versions"]["torch"] and data["versions"]["numpy"] and data["values"]


def test_hardmax_and_softmax_results_are_exact() -> None:
    hardmax = load("02_hardmax_interpolation")["values"]
    assert hardmax["toy_max_error"] <= 1e-14 and hardmax["exact_errors_all_zero"] is True
    assert all(b <= p for b, p in zip(hardmax["random_blocks"], hardmax["random_paper_blocks"]))
    softmax = load("03_softmax_interpolation")["values"]
    assert softmax["max_error_over_tol_underflow"] <= 1 and softmax["max_error_over_tol_soft"] <= 1
    assert softmax["min_soft_spread"] > 0 and softmax["blocks_toy"] <= softmax["paper_blocks_toy"]
    complexity = load("04_complexity")["values"]
    assert complexity["blocks_constant_in_n"] is True


def test_tikhonov_results_support_the_bound_and_match_the_paper() -> None:
    """Chapter 05 (Paper A §6): every minimal loss and stage objective below (ε/2)‖θ*‖², the under-trained
    run certified non-global, the η = 0 run above its floor, and the published numbers reproduced."""
    data = load("05_tikhonov")
    values, params = data["values"], data["parameters"]
    assert values["fig1b_epochs"] == [5000, 10000, 50000], "the book profile runs the official epochs"
    norm2 = values["theta_star_sq_norm"]
    assert values["loss_at_theta_star"] <= 1e-12
    assert values["fig1a_final_loss"] <= values["fig1a_threshold"]
    bounds = [e / 2 * norm2 for e in values["fig1b_eps"]]
    assert all(m <= b for m, b in zip(values["fig1b_min_losses"], bounds))
    assert all(j <= b for j, b in zip(values["fig1b_objectives"], bounds))
    assert any(values["failed_certified_not_global"])
    assert min(values["diagnostic_min_losses"]) >= values["diagnostic_loss_bound"] * (1 - 1e-5)
    assert values["diagnostic_slope"] <= params["diagnostic_slope_max"]
    tol = params["paper_rel_tol"]
    assert abs(norm2 - values["paper_theta_star_sq_norm"]) <= 1e-6 * norm2
    for ours, paper in zip(values["fig1b_min_losses"], values["paper_fig1b_min_losses"]):
        assert abs(ours - paper) <= tol * paper
    for row in values["fig1a_vs_paper"]:
        assert row["ours"] is not None and abs(row["ours"] - row["paper"]) <= tol * abs(row["paper"]), row


def test_infoflow_predictions_agree_with_the_papers() -> None:
    values = load("06_infoflow_framework")["values"]
    assert values["n_judged"] > 0 and values["n_agree_with_papers"] == values["n_judged"]


def committed_results(name: str, parameters: dict) -> list[RunResult]:
    """Every book-profile run of chapter ``name`` for ``parameters``, its record read from ``results/book/runs/``;
    fails naming the runs that are missing (so ``make book`` would train them)."""
    runs = experiment(name).runs(parameters)
    store = RunStore(RESULTS / "runs")
    records = [store.get(run.config) for run in runs]
    missing = [run.tags for run, record in zip(runs, records) if record is None]
    assert not missing, (f"runs missing from results/book/runs/ (`make reproduce NOTEBOOKS={name} ACCEPT=1` "
                         f"trains them and copies the records): {missing[:3]}")
    return [RunResult(run.tags, RunRecord.from_dict(record)) for run, record in zip(runs, records)]


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_committed_claims_are_those_of_the_committed_runs(name: str) -> None:
    """Each training chapter's claims (the verdicts it asserts, :meth:`~transformer_theory.chapters.experiment.
    Experiment.claims`), recomputed from its committed book-profile runs (with the weights kept beside them) for the
    book profile's parameters, are the ones its results file recorded: the committed claims checked once, through
    the function the notebook called."""
    parameters = load_profile("book")[name]
    recorded = load(name)["values"].get("claims")
    assert recorded, f"results/book/{name}.json records no claims: run `make reproduce NOTEBOOKS={name} ACCEPT=1`"
    claims = experiment(name).claims(committed_results(name, parameters), parameters, RunStore(RESULTS / "runs"))
    assert claims == recorded


def test_depth_separation_runs_support_the_claim() -> None:
    """Chapter 07 (InfoFlow Theorem 1; the experiment is the project's own): every run of the book profile is
    committed under ``results/book/runs/`` (so ``make book`` trains nothing), and at the largest T the best
    two-layer NMSE over seeds is at least ``MIN_RATIO`` times lower than the best one-layer NMSE, as the chapter's
    results file also says."""
    parameters = load_profile("book")["07_depth_separation"]
    results = committed_results("07_depth_separation", parameters)
    p = experiment("07_depth_separation").parameters(parameters)
    rows = nmse_table(results, parameters)
    largest = separation(rows, max(p["seq_lens"]), p["ffn_width"])
    assert largest["ratio"] >= MIN_RATIO, largest
    values = load("07_depth_separation")["values"]
    assert values["claim_checked"] is True and values["largest_T"] == largest["T"]
    assert values["separation_ratio"] == pytest.approx(largest["ratio"], rel=1e-12)
    assert [r["nmse"] for r in values["nmse_table"]] == pytest.approx([r["nmse"] for r in rows], rel=1e-12)


def test_triangle_center_runs_support_the_criteria() -> None:
    """Chapter 11 (InfoFlow §4.2): every run of the book profile is committed under ``results/book/runs/``, and
    every configuration learns at the shortest T (NMSE <= 0.3) and is near 1 at the largest (NMSE >= 0.7)."""
    parameters = load_profile("book")["11_triangle_center"]
    rows = triangle_center.nmse_table(committed_results("11_triangle_center", parameters), parameters)
    judged = triangle_center.judge(rows)
    assert judged["shortest_T"] == 8 and judged["largest_T"] == 64 and judged["observed"], judged


def test_max_position_runs_support_the_criteria() -> None:
    """Chapter 08 (InfoFlow Theorem 2, §4.3): every run of the book profile is committed under
    ``results/book/runs/`` with the weights of the probe models; the committed criteria on them give the verdicts
    the chapter recorded (top-1 stays low, every k >= 2 degrades, the two-layer model agrees with its prediction),
    and the probe ratios recomputed from the stored weights are the recorded ones (the probe's verdict is a claim:
    :func:`test_committed_claims_are_those_of_the_committed_runs`)."""
    parameters = load_profile("book")["08_max_position_retrieval"]
    results = committed_results("08_max_position_retrieval", parameters)
    rows = max_position.nmse_table(results, parameters)
    p = experiment("08_max_position_retrieval").parameters(parameters)
    judged = max_position.judge_table(rows, p["two_layer_k"])
    assert judged["top1_stays_low"] and all(judged["kth_degrades"].values()) and judged["agrees"], judged
    values = load("08_max_position_retrieval")["values"]
    assert values["claim_checked"] is True and values["judged"] == json.loads(json.dumps(judged))
    assert [r["nmse"] for r in values["nmse_table"]] == pytest.approx([r["nmse"] for r in rows], rel=1e-12)
    probe = max_position.probe_table(results, parameters, RunStore(RESULTS / "runs"), n_samples=4096, seed=p["seeds"][0])
    assert [r["argmax_ratio"] for r in values["probe_ratios"]] == pytest.approx([r["argmax_ratio"] for r in probe], rel=1e-9)


def test_intrinsic_dimension_runs_are_committed_and_tabulated() -> None:
    """Chapter 10 (InfoFlow §4.1, the predecessor's Table 2 shrunk, the sequence-length scan, the longer schedule):
    every run of the book profile is committed under ``results/book/runs/``, and the chapter's results file holds
    the tables and ratios of those runs (its verdicts against the criteria it fixed, ``MIN_RATIOS`` and the ratio
    rising with T, are claims: :func:`test_committed_claims_are_those_of_the_committed_runs`)."""
    parameters = load_profile("book")["10_intrinsic_dimension"]
    results = committed_results("10_intrinsic_dimension", parameters)
    rows = intrinsic_dimension.nmse_table(results, parameters)
    ratios = intrinsic_dimension.separation_ratios(rows)
    values = load("10_intrinsic_dimension")["values"]
    assert values["claim_checked"] is True
    assert [r["nmse"] for r in values["nmse_table"]] == pytest.approx([r["nmse"] for r in rows], rel=1e-12)
    assert [s["ratio"] for s in values["separation_ratios"]] == pytest.approx([s["ratio"] for s in ratios], rel=1e-12)
    hc = intrinsic_dimension.head_count_table(results, parameters)
    assert [r["nmse"] for r in values["head_count_table"]] == pytest.approx([r["nmse"] for r in hc], rel=1e-12)
    sl = intrinsic_dimension.sequence_length_table(results, parameters)
    assert [r["ratio"] for r in values["sequence_length_table"]] == pytest.approx([r["ratio"] for r in sl], rel=1e-12)
    ls = intrinsic_dimension.separation_ratios(intrinsic_dimension.nmse_table(results, parameters, "long_schedule"))
    assert [s["ratio"] for s in values["long_schedule_ratios"]] == pytest.approx([s["ratio"] for s in ls], rel=1e-12)


def _chapter12_results() -> tuple[dict, list]:
    data = load("12_predictions_vs_training")
    return data, committed_results("12_predictions_vs_training", data["parameters"])


def test_committed_runs_give_the_recorded_scoreboard() -> None:
    """Chapter 12: every run of the book profile is committed, and the scoreboard and agreement rate recomputed
    from the committed records with the committed predictions equal what the chapter recorded."""
    from transformer_theory.infoflow.heldout import agreement, configurations, scoreboard
    from transformer_theory.chapters.heldout import best_nmse, committed_predictions

    data, results = _chapter12_results()
    values, doc = data["values"], committed_predictions()
    assert data["parameters"]["configurations"] == [] and len(data["parameters"]["seeds"]) >= 2  # the whole suite
    rows = scoreboard(doc["configurations"], best_nmse(results), doc["criterion"])
    summary = agreement(rows)
    assert summary["n_configurations"] == len(configurations()) == values["n_configurations"]
    assert (summary["n_agree"], summary["rate"], summary["disagreements"]) == (
        values["n_agree"], values["agreement_rate"], values["disagreements"])
    recorded = values["scoreboard"]
    assert [{k: r[k] for k in recorded[0]} for r in rows] == recorded
    assert all(r.record.config["val_size"] >= 4096 for r in results)
    assert {d["configuration"] for d in values["diagnosis"]} == set(values["disagreements"])


def test_predictions_were_committed_before_the_runs() -> None:
    """The commit that added the predictions file precedes the commit each run was trained at and the commit
    that added its record; the predictions at the training commit are the committed ones."""
    import subprocess

    from transformer_theory.infoflow.heldout import PREDICTIONS_FILE
    from transformer_theory.chapters.heldout import commit_that_added, committed_predictions, is_ancestor

    data, results = _chapter12_results()
    added = commit_that_added(str(PREDICTIONS_FILE))
    if added is None or is_ancestor(added, "HEAD") is None:
        pytest.skip("no git history to check the order in")
    doc = committed_predictions()
    for commit in sorted({r.record.provenance["git"]["commit"] for r in results}):
        assert is_ancestor(added, commit), f"run trained at {commit}, before the predictions ({added})"
        then = subprocess.run(["git", "show", f"{commit}:{PREDICTIONS_FILE}"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout
        assert json.loads(then)["configurations"] == doc["configurations"]
    for key in sorted({r.record.key for r in results})[:5]:  # a sample: git log per file is slow
        record_added = commit_that_added(f"results/book/runs/{key}.json")
        assert record_added is not None and record_added != added and is_ancestor(added, record_added)


def test_the_forecasts_were_in_the_library_when_their_runs_were_trained() -> None:
    """Chapter 12's budget prediction (the scoreboard's runs at :data:`SCOREBOARD_STEPS`) and follow-up prediction
    (the follow-ups it names, at its step count) were committed before their runs: the library held each text at
    the commit every such run was trained at."""
    import subprocess

    from transformer_theory.chapters.heldout import BUDGET_PREDICTION, FOLLOWUP_PREDICTION, SCOREBOARD_STEPS

    data, results = _chapter12_results()
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True).returncode != 0:
        pytest.skip("no git history to check the order in")
    named = FOLLOWUP_PREDICTION["observed_efficient"] + FOLLOWUP_PREDICTION["observed_inefficient"]
    texts: dict[str, set[str]] = {}
    for r in results:
        t = r.tags
        if not t["followup"] and t["steps"] == SCOREBOARD_STEPS:
            texts.setdefault(r.record.provenance["git"]["commit"], set()).add(BUDGET_PREDICTION["text"])
        elif t["followup"] and not t["joint"] and not t["reference"] and t["name"] in named \
                and t["steps"] == FOLLOWUP_PREDICTION["steps"]:
            texts.setdefault(r.record.provenance["git"]["commit"], set()).add(FOLLOWUP_PREDICTION["text"])
    assert data["parameters"]["steps"] != SCOREBOARD_STEPS or texts, "no run of the budget prediction"
    for commit, wanted in texts.items():
        library = subprocess.run(["git", "show", f"{commit}:src/transformer_theory/chapters/heldout.py"], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout
        flat = " ".join(library.replace('"', " ").split())  # the texts are split over string literals
        for text in wanted:
            assert " ".join(text.replace('"', " ").split())[:120] in flat, (commit, text[:60])


@pytest.mark.parametrize("stem", ["07_depth_separation", "08_max_position_retrieval", "10_intrinsic_dimension"])
def test_the_books_efficiency_verdicts_follow_the_one_criterion(stem) -> None:
    """Issue 25's one criterion, calibrated (issue 34): the absolute verdicts chapters 07, 08 and 10 recorded are those of
    :func:`~transformer_theory.infoflow.efficiency.observed_efficient` on the NMSEs they recorded beside them, and
    chapter 12's committed criterion holds the same numbers (``tests/infoflow/test_heldout.py``)."""
    rows = load(stem)["values"]["book_efficiency"]
    assert rows and all(len(r["nmse_by_T"]) >= 2 for r in rows)
    for r in rows:
        nmse = {int(T): v for T, v in r["nmse_by_T"].items()}
        assert r["absolute_efficient"] == observed_efficient(nmse), r
        assert not r["observed_efficient"] or r["absolute_efficient"], r  # the sibling rule only adds a condition
        assert r["agrees"] == (r["observed_efficient"] == r["predicted_efficient"]), r
