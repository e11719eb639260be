"""Command line: ``python -m transformer_theory {run,list,sweep,report,train,reproduce,predict}``.

``run`` executes one notebook under a profile with checked overrides (a run with overrides is kept under
``build/custom/``, apart from the book's folders); ``sweep`` runs a grid of overrides in parallel and resumes
where an interrupted sweep stopped; ``list`` shows the notebooks (or one) with each parameter's default, type and
description; ``report`` writes the book's reproducibility page; ``train`` trains (or reuses
from the run store) the runs of a training chapter's experiment, locally or on a Dask cluster;
``reproduce`` recomputes a profile's results into ``build/reproduce/<profile>/`` (a fresh run store
included), prints them against the committed ones and, with ``--accept``, copies them into
``results/<profile>/``; ``predict`` asks the InfoFlow calculator about a target
(:mod:`~transformer_theory.pipeline.calculator`).

Exit status: 0, 1 (a run or point failed), 2 (bad arguments, refused before anything ran),
128 + the signal when stopped by Ctrl-C (130) or SIGTERM (143).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import fields
from typing import Any, Sequence

from transformer_theory.pipeline import calculator
from transformer_theory.pipeline.notebooks import list_notebooks, notebook_key, notebook_parameters, resolve_notebook
from transformer_theory.pipeline.parameters import parse_list, parse_value
from transformer_theory.pipeline.processes import Interrupted, signals_raise
from transformer_theory.pipeline.profiles import DEFAULT_PROFILE, PROFILES


def _pairs(pairs: list[list[str]] | None, parse) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, text in pairs or []:
        if name in values:
            raise ValueError(f"parameter '{name}' given twice with -p")
        values[name] = parse(text)
    return values


#: A value that argparse would take for an option: ``-1e-3``, ``-.5``, ``-.inf`` (it knows only ``-1`` and ``-1.5``).
_NEGATIVE = re.compile(r"^-\.?[0-9]|^-\.inf$", re.IGNORECASE)


def _negative_values_kept(argv: Sequence[str]) -> list[str]:
    """``argv`` with a leading space before each ``-p NAME VALUE``'s negative number, so that argparse keeps it a
    value (YAML ignores the space)."""
    argv = list(argv)
    for i in range(len(argv) - 2):
        if argv[i] in ("-p", "--parameter") and _NEGATIVE.match(argv[i + 2]):
            argv[i + 2] = " " + argv[i + 2]
    return argv


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m transformer_theory", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="execute one notebook with papermill")
    run.add_argument("notebook", help="a name such as 00_overview, or a path to a notebook")
    run.add_argument("--profile", default=DEFAULT_PROFILE, help=f"one of {', '.join(PROFILES)} (default {DEFAULT_PROFILE})")
    run.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"), help="override a parameter (YAML value)")
    run.add_argument("--output", help="executed notebook path (default build/executed/<profile>/<notebook>.ipynb; "
                     "with -p: build/custom/<profile>/<overrides>/<notebook>.ipynb)")

    listing = sub.add_parser("list", help="list the notebooks with each parameter's default, type and description")
    listing.add_argument("notebook", nargs="?", help="one notebook (default: every chapter)")

    sweep = sub.add_parser("sweep", help="run a notebook over a grid of parameter values")
    sweep.add_argument("notebook")
    sweep.add_argument("--profile", default=DEFAULT_PROFILE)
    sweep.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "V1,V2,..."), help="values of one grid axis")
    sweep.add_argument("--jobs", type=int, default=1, help="parallel processes (default 1)")
    sweep.add_argument("--output", help="folder for the points' notebooks and JSONs")

    report = sub.add_parser("report", help="write the reproducibility page from the results JSONs")
    report.add_argument("--profile", default=DEFAULT_PROFILE)
    report.add_argument("--output", required=True)

    claims = sub.add_parser("claims", help="write the claims-at-a-glance page from the committed book results")
    claims.add_argument("--output", required=True)

    train = sub.add_parser("train", help="train the runs of a chapter's experiment (stored runs are reused)")
    train.add_argument("experiment", help="a training chapter, such as 10_intrinsic_dimension")
    train.add_argument("--profile", default=DEFAULT_PROFILE, help="its sizes: the profile's entry for the chapter")
    train.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"),
                       help="override one of the experiment's parameters (YAML value), over the profile's entry")
    train.add_argument("--scheduler", help="address of a running Dask scheduler (default: a local cluster)")
    train.add_argument("--store", help="run store folder (default build/runs/<profile>/)")
    train.add_argument("--workers", type=int, help="local single-threaded workers (default: one per core; 0: no Dask)")
    train.add_argument("--models-per-task", type=int, help="at most this many models batched into one task (default: "
                       "every run of a batch signature; smaller tasks spread over more workers)")
    train.add_argument("--device", default="cpu", help="cpu (default) or cuda (an error if CUDA is not available)")
    train.add_argument("--compile", action="store_true", help="torch.compile the loss (rounding differs slightly)")

    reproduce = sub.add_parser("reproduce", help="recompute a profile's results into build/reproduce/<profile>/ "
                               "and compare them with the committed results/<profile>/")
    reproduce.add_argument("notebooks", nargs="*", help="chapters to recompute (default: every chapter)")
    reproduce.add_argument("--profile", default=DEFAULT_PROFILE)
    reproduce.add_argument("--output", help="folder (default build/reproduce/<profile>/); complete notebooks in it are kept")
    reproduce.add_argument("--accept", action="store_true",
                           help="then copy the recomputed results and runs into results/<profile>/")
    reproduce.add_argument("--no-run", action="store_true",
                           help="run nothing: compare (and accept) the complete notebooks already in the folder")
    reproduce.add_argument("--workers", type=int, help="local single-threaded Dask workers that train the training "
                           "chapters' runs first (default: one per core; 0: each notebook trains its own)")

    calculator.add_parser(sub)
    return parser


def _run(args: argparse.Namespace) -> int:
    from transformer_theory.storage.results import failed_path
    from transformer_theory.pipeline.runner import execute, prepare_run

    spec = prepare_run(args.notebook, args.profile, _pairs(args.parameter, parse_value), output=args.output)
    print(f"running {spec.name} [{spec.profile}] {spec.parameters or ''}", flush=True)
    try:
        result = execute(spec)
    except Interrupted as exc:
        partial = getattr(exc, "partial_record", None)
        print(f"interrupted: the previous results (if any) are kept in {spec.results}; "
              + (f"this run's partial record is {partial}" if partial else "this run had not started: it wrote nothing"),
              file=sys.stderr)
        raise
    if result["status"] == "ok":
        print(f"ok: {spec.output} ({result['wall_time_s']:.1f} s); results {spec.results}")
        return 0
    print(f"{result['error']}\nfailed ({result['wall_time_s']:.1f} s): this run's record is "
          f"{failed_path(spec.results)}, its notebook {result['executed_notebook'] or '(none: the kernel did not start)'}; "
          f"the previous results (if any) are kept in {spec.results}", file=sys.stderr)
    return 1


def _sweep(args: argparse.Namespace) -> int:
    from transformer_theory.pipeline.sweep import SweepInterrupted, run_sweep

    try:
        report = run_sweep(args.notebook, _pairs(args.parameter, parse_list), args.profile, args.jobs, args.output)
    except SweepInterrupted as exc:
        report = exc.report
        print(f"sweep interrupted: {len(report.done)} run, {len(report.interrupted)} interrupted (records marked "
              f"'interrupted'), {len(report.cancelled)} cancelled; rerun the same command to resume", file=sys.stderr)
        for label in report.interrupted:
            print(f"  interrupted {label}", file=sys.stderr)
        raise Interrupted(exc.signum) from None
    print(f"sweep: {len(report.done)} run, {len(report.skipped)} skipped (already done), {len(report.failed)} failed")
    for label in report.skipped:
        print(f"  skipped {label}")
    for label, error in report.failed.items():
        print(f"  FAILED {label}: {error}", file=sys.stderr)
    return 1 if report.failed else 0


def _list(args: argparse.Namespace) -> int:
    from transformer_theory.chapters import PARAMETERS
    from transformer_theory.chapters.parameters import descriptions

    for path in [resolve_notebook(args.notebook)] if args.notebook else list_notebooks():
        cls = PARAMETERS.get(notebook_key(path))
        docs = descriptions(cls) if cls else {}
        types = {f.name: f.type if isinstance(f.type, str) else f.type.__name__ for f in fields(cls)} if cls else {}
        print(path.stem)
        for name, default in notebook_parameters(path).items():
            doc = f": {docs[name]}" if docs.get(name) else ""
            print(f"    {name} = {default!r}  ({types.get(name, type(default).__name__)}){doc}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from transformer_theory.pipeline.profiles import load_profile
    from transformer_theory.pipeline.report import write_reproducibility_page

    load_profile(args.profile)
    print(write_reproducibility_page(args.profile, args.output))
    return 0


def _claims(args: argparse.Namespace) -> int:
    from transformer_theory.pipeline.claims import write_claims_page

    print(write_claims_page(args.output))
    return 0


def _train(args: argparse.Namespace) -> int:
    from transformer_theory.chapters import best_over_seeds, run_experiment
    from transformer_theory.pipeline.profiles import load_profile
    from transformer_theory.training import TrainOptions, default_store

    options = TrainOptions(device=args.device, compile=args.compile)
    values = {**load_profile(args.profile).get(args.experiment, {}), **_pairs(args.parameter, parse_value)}
    results = run_experiment(args.experiment, values, store=args.store or default_store(args.profile),
                             scheduler=args.scheduler, n_workers=args.workers,
                             models_per_task=args.models_per_task, options=options)
    for row in best_over_seeds(results):
        print({k: v for k, v in row.items() if k != "seed_nmse"})
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from transformer_theory.pipeline.reproduce import accept, comparison_page, reproduce, reproduce_folder
    from transformer_theory.storage.results import write_text_atomic

    folder = args.output or reproduce_folder(args.profile)
    parts = reproduce(args.profile, args.notebooks, folder, run=not args.no_run, n_workers=args.workers)
    page = comparison_page(args.profile, parts, folder)
    write_text_atomic(f"{folder}/comparison.md", page)
    print("\n" + page)
    failed = [p for p in parts if not p.ok]
    for part in failed:
        print(f"FAILED {part.spec.name}: {part.result.get('error')}", file=sys.stderr)
    if failed:
        return 1
    if args.accept:
        written = accept(args.profile, parts, folder)
        print(f"accepted: {len(written)} files written under results/{args.profile}/ (review with git diff, then commit)")
    else:
        names = f' NOTEBOOKS="{" ".join(args.notebooks)}"' if args.notebooks else ""
        print(f"results/{args.profile}/ is unchanged; to accept these results: make accept PROFILE={args.profile}{names} "
              f"(python -m transformer_theory reproduce --profile {args.profile} --no-run --accept"
              f"{''.join(' ' + n for n in args.notebooks)})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; exit status 0, 1 (a run failed), 2 (bad arguments), 128 + signal (stopped)."""
    args = _parser().parse_args(_negative_values_kept(sys.argv[1:] if argv is None else argv))
    command = {"run": _run, "sweep": _sweep, "list": _list, "report": _report, "claims": _claims, "train": _train,
               "reproduce": _reproduce, "predict": calculator.run}[args.command]
    try:
        with signals_raise():
            return command(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Interrupted as exc:
        return 128 + exc.signum


if __name__ == "__main__":
    raise SystemExit(main())
