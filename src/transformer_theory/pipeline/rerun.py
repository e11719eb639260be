"""The "Run it yourself" box that ends every chapter, written from the notebook's parameters cell, the
three profiles (``params/*.yaml``) and the wall times of the committed runs (``results/<profile>/``).

A chapter's last cell is ``run_it_yourself("NN_topic", ["name", ...])``, tagged ``remove-input``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from IPython.display import Markdown

from transformer_theory.checks import unknown_name
from transformer_theory.storage.paths import project_root
from transformer_theory.pipeline.profiles import DEFAULT_PROFILE, PROFILES
from transformer_theory.storage.results import read_results
from transformer_theory.pipeline.runner import RunSpec, prepare_run
from transformer_theory.tables import markdown_table

TITLE = "Run it yourself"

#: The first line of the box's commands: ``python`` is the project's virtual environment's only once it is active.
ACTIVATE = "source .venv/bin/activate  # once per shell, after make book (or write .venv/bin/python for python)"


def _compact(value: Any) -> str:
    """``value`` in YAML flow syntax without spaces (``[2,16]``), as ``-p NAME VALUE`` reads it back."""
    return json.dumps(value, separators=(",", ":"))


def cli_value(value: Any) -> str:
    """``value`` as one shell word for ``-p NAME VALUE``."""
    return shlex.quote(_compact(value))


def main_values(notebook: str, main: Sequence[str]) -> dict[str, Any]:
    """The ``main`` parameters of ``notebook`` at their values in the default profile; ``ValueError`` names a
    parameter the notebook does not have."""
    spec = prepare_run(notebook, DEFAULT_PROFILE)
    values = {**spec.defaults, **spec.parameters}
    unknown = [name for name in main if name not in values]
    if unknown:
        raise unknown_name("parameter", unknown[0], values, f"notebook '{notebook}': ")
    return {name: values[name] for name in main}


def run_command(notebook: str, main: Sequence[str]) -> str:
    """``python -m transformer_theory run NOTEBOOK -p NAME VALUE ...`` with the ``main`` parameters at their
    values in the default profile (:func:`main_values`)."""
    return " ".join(["python -m transformer_theory run", notebook,
                     *(f"-p {name} {cli_value(value)}" for name, value in main_values(notebook, main).items())])


def measured_seconds(spec: RunSpec) -> float | None:
    """Wall time of a committed run (``results/<any profile>/<notebook>.json``) with the parameters of
    ``spec``, or ``None`` when none was committed for them (a time is a time: code changes since do not count)."""
    for path in sorted((project_root() / "results").glob(f"*/{spec.name}.json")):
        data = read_results(path)
        if data and data.get("status") == "ok" and data.get("parameters_hash") == spec.parameters_hash:
            return float(data["wall_time_s"])
    return None


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "not measured"
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def run_it_yourself(notebook: str, main: Sequence[str]) -> Markdown:
    """The box (a MyST admonition): :func:`run_command`, then per profile the parameters it sets to other
    values than the parameters cell and how long a committed run with them took."""
    command = run_command(notebook, main).replace(" -p ", " \\\n    -p ")  # one parameter a line
    output = prepare_run(notebook, DEFAULT_PROFILE, main_values(notebook, main)).output.relative_to(project_root())
    rows = []
    for profile in PROFILES:
        spec = prepare_run(notebook, profile)
        changed = [f"`{k}={_compact(v)}`" for k, v in spec.parameters.items() if v != spec.defaults[k]]
        rows.append({"profile": f"`{profile}`" + (" (default)" if profile == DEFAULT_PROFILE else ""),
                     "sets": ", ".join(changed) or "nothing: the defaults",
                     "time": _duration(measured_seconds(spec))})
    return Markdown("\n".join([
        f"````{{admonition}} {TITLE}",
        ":class: tip",
        "",
        "```bash",
        ACTIVATE,
        command,
        "```",
        "",
        f"executes this chapter with the `{DEFAULT_PROFILE}` values of its main parameters into `{output}` (a run "
        "with `-p` is kept under `build/custom/`, apart from the book's chapters). Change them, or any other "
        "parameter, with "
        f"`-p NAME VALUE` (`-p seed 1` draws other random data; `python -m transformer_theory list {notebook}` "
        "describes every parameter); `--profile smoke` or `--profile paper` starts from another profile's values:",
        "",
        markdown_table(rows),
        "",
        "Times: one committed run (`results/`) on a 2-core machine.",
        "````",
    ]))
