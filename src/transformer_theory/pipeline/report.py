"""The book's reproducibility page, written from the results JSONs of one profile: per chapter its status, wall
time, seed, every parameter that differs from the chapter's defaults under the profile (its overrides) and commit.

Every record is read defensively: a file that is not valid JSON is listed as corrupt, a field of the wrong
type is shown as ``?`` and named, a ``running`` record that no live run holds (its run was killed) is
flagged as stale. The tables come from :func:`transformer_theory.tables.markdown_table` (it escapes ``|`` and
line breaks).
"""

from __future__ import annotations

import json
import numbers
from pathlib import Path
from typing import Any

from transformer_theory.pipeline.locks import is_locked
from transformer_theory.pipeline.notebooks import list_notebooks, notebook_parameters
from transformer_theory.pipeline.profiles import load_profile
from transformer_theory.storage.paths import build_dir, check_writable_file
from transformer_theory.storage.results import failed_path, partial_path, write_text_atomic
from transformer_theory.tables import markdown_table

#: Columns of the page's table (the cells of :func:`_row`, in this order).
COLUMNS = ("notebook", "profile", "status", "wall time (s)", "seed", "overrides", "commit")


def _field(data: dict, name: str, kinds: tuple[type, ...], wrong: list[str]) -> Any:
    """``data[name]`` if it is missing (``None``) or of one of ``kinds`` (never a bool for numbers); else ``None``,
    and ``name`` is added to ``wrong``."""
    value = data.get(name)
    if value is None or (isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)):
        return value
    wrong.append(name)
    return None


def _read(path: Path) -> tuple[str | None, dict | None]:
    """The file's text (``None`` if missing) and its JSON object (``None`` if it is not one)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None, None
    try:
        data = json.loads(text)
    except ValueError:
        return text, None
    return text, data if isinstance(data, dict) else None


def overrides(parameters: dict[str, Any], defaults: dict[str, Any]) -> str:
    """The ``parameters`` of a run that differ from ``defaults`` (or that ``defaults`` lacks), as ``name = value``
    (JSON) sorted by name and separated by commas; ``"none"`` when there are none."""
    changed = [f"{name} = {json.dumps(value)}" for name, value in sorted(parameters.items())
               if name not in defaults or defaults[name] != value]
    return ", ".join(changed) or "none"


def _row(stem: str, profile: str, results: Path, defaults: dict[str, Any]) -> tuple[list[str], dict, str]:
    """The cells of one notebook's table row (``defaults``: its parameters under ``profile``, against which the
    run's overrides are shown), its ``versions`` mapping and its platform ("" when unknown)."""
    text, data = _read(results)
    failed = failed_path(results)
    later_failure = text is not None and failed.is_file()
    for attempt in (failed, partial_path(results)):  # never finished: show the failure, or the attempt in progress
        if text is None:
            text, data = _read(attempt)
    if text is None:
        return [stem, profile, "not run", "", "", "", ""], {}, ""
    if data is None:
        return [stem, profile, "corrupt results file (not a JSON object)", "", "", "", ""], {}, ""
    wrong: list[str] = []
    status = _field(data, "status", (str,), wrong) or "?"
    if status == "running" and not is_locked(results):
        status = "stale: recorded as running, but no run holds it (killed?)"
    git = _field(data, "git", (dict,), wrong) or {}
    commit = git.get("commit")
    commit = (commit if isinstance(commit, str) else "unknown")[:7] + ("+" if git.get("dirty") is True else "")
    wall = _field(data, "wall_time_s", (numbers.Real,), wrong)
    seed = _field(data, "seed", (numbers.Integral,), wrong)
    parameters = _field(data, "parameters", (dict,), wrong)
    versions = _field(data, "versions", (dict,), wrong) or {}
    platform = _field(data, "platform", (str,), wrong) or ""
    shown_profile = _field(data, "profile", (str,), wrong) or profile
    if wrong:
        status += f" (fields of the wrong type: {', '.join(wrong)})"
    if later_failure:
        status += f"; a later run failed ({failed.name})"
    cells = [f"[{stem}](notebooks/{stem}.ipynb)", shown_profile, status,
             f"{wall:.1f}" if wall is not None else "?", "" if seed is None else str(seed),
             "?" if parameters is None else overrides(parameters, defaults), f"`{commit}`"]
    return cells, versions, platform


def reproducibility_page(profile: str) -> str:
    """Markdown: per notebook, profile, status, wall time, seed, overrides and commit; then Python and package
    versions."""
    rows, versions, platform_line = [], {}, ""
    entries = load_profile(profile)
    for path in list_notebooks():
        defaults = {**notebook_parameters(path), **entries.get(path.stem, {})}
        results = build_dir() / "results" / profile / f"{path.stem}.json"
        cells, row_versions, row_platform = _row(path.stem, profile, results, defaults)
        rows.append(dict(zip(COLUMNS, cells)))
        versions = versions or row_versions
        platform_line = platform_line or row_platform
    lines = [
        "# Reproducibility",
        "",
        f"Every chapter of this build was executed by papermill under the **`{profile}`** profile "
        "(`params/" + profile + ".yaml`), then rendered with execution off: each page shows exactly the "
        "notebook that ran. The table is generated from the results files `build/results/"
        + profile
        + "/<notebook>.json`, which also hold every recorded number, the parameters, the configuration hash "
        "and the versions. *overrides* lists every parameter of the run that differs from the chapter's defaults "
        "under this profile (its notebook's parameters cell with `params/" + profile + ".yaml`): a run with "
        "`-p` overrides is kept under `build/custom/`, so the book's runs have none. A `+` after the commit means "
        "the run had uncommitted changes.",
        "",
        "To rerun everything: `make book` (this profile: `make book PROFILE=" + profile + "`). "
        "To rerun one chapter with your own parameters: "
        "`python -m transformer_theory run NOTEBOOK --profile PROFILE -p NAME VALUE` (its notebook and results go "
        "to `build/custom/PROFILE/NAME=VALUE/`).",
        "",
        markdown_table(rows, COLUMNS),
        "",
        "## Environment",
        "",
        f"Platform: `{platform_line or 'unknown'}`",
        "",
        markdown_table([{"package": name, "version": version} for name, version in versions.items()],
                       ["package", "version"]),
        "",
    ]
    return "\n".join(lines)


def write_reproducibility_page(profile: str, output: str | Path) -> Path:
    """Write the page to ``output`` (a ``.md`` file; missing folders are created), atomically."""
    output = check_writable_file(output, "--output", ".md")
    write_text_atomic(output, reproducibility_page(profile))
    return output
