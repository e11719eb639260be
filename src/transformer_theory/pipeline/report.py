"""The book's reproducibility page, written from the results JSONs of one profile."""

from __future__ import annotations

from pathlib import Path

from transformer_theory.pipeline.notebooks import list_notebooks
from transformer_theory.pipeline.paths import build_dir
from transformer_theory.pipeline.results import read_results
from transformer_theory.tables import markdown_table


def reproducibility_page(profile: str) -> str:
    """Markdown: per notebook, profile, status, wall time and commit; then Python and package versions."""
    rows, versions, platform_line = [], {}, ""
    for path in list_notebooks():
        data = read_results(build_dir() / "results" / profile / f"{path.stem}.json")
        if data is None:
            rows.append({"notebook": path.stem, "profile": profile, "status": "not run", "wall time (s)": "",
                         "seed": "", "commit": ""})
            continue
        versions = versions or data.get("versions", {})
        platform_line = platform_line or data.get("platform", "")
        git = data.get("git", {})
        commit = (git.get("commit") or "unknown")[:7] + ("+" if git.get("dirty") else "")
        wall = data.get("wall_time_s")
        wall_text = f"{wall:.1f}" if isinstance(wall, (int, float)) else "?"
        rows.append({"notebook": f"[{path.stem}](notebooks/{path.stem}.ipynb)", "profile": data.get("profile", profile),
                     "status": data.get("status", "?"), "wall time (s)": wall_text, "seed": data.get("seed"),
                     "commit": f"`{commit}`"})
    lines = [
        "# Reproducibility",
        "",
        f"Every chapter of this build was executed by papermill under the **`{profile}`** profile "
        "(`params/" + profile + ".yaml`), then rendered with execution off: each page shows exactly the "
        "notebook that ran. The table is generated from the results files `build/results/"
        + profile
        + "/<notebook>.json`, which also hold every recorded number, the parameters, the configuration hash "
        "and the versions. A `+` after the commit means the run had uncommitted changes.",
        "",
        "To rerun everything: `make book` (this profile: `make book PROFILE=" + profile + "`). "
        "To rerun one chapter with your own parameters: "
        "`python -m transformer_theory run NOTEBOOK --profile PROFILE -p NAME VALUE`.",
        "",
        markdown_table(rows),
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
    output = Path(output)
    output.write_text(reproducibility_page(profile))
    return output
