"""The provenance line under every figure and the readable log axes."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.ticker import LogLocator  # noqa: E402
from IPython.core.display import HTML  # noqa: E402

from conftest import run_record  # noqa: E402
from transformer_theory.chapters.experiment import RunResult  # noqa: E402
from transformer_theory.plotting import provenance as module  # noqa: E402
from transformer_theory.plotting.provenance import Provenance, show  # noqa: E402
from transformer_theory.plotting.style import readable_log_ticks  # noqa: E402


@pytest.fixture
def page(monkeypatch) -> Provenance:
    monkeypatch.setattr(module, "git_commit", lambda: {"commit": "0123456789abcdef", "dirty": True})
    monkeypatch.setenv("TRANSFORMER_THEORY_PROFILE", "smoke")
    return Provenance.here([1, 0, 1], "smoke")


def test_a_page_figure_names_the_seed_profile_and_commit(page: Provenance) -> None:
    assert page == Provenance("smoke", "0123456789 + uncommitted changes", (0, 1))
    assert page.line() == "Computed in this page (seeds 0, 1), smoke profile, commit 0123456789 + uncommitted changes."
    assert page.html() == f'<p class="figure-provenance">{page.line()}</p>'


def test_a_figure_of_runs_lists_their_keys(page: Provenance) -> None:
    runs = [RunResult({"seed": s}, run_record(key=k, seed=s)) for k, s in (("aa", 1), ("bb", 0), ("aa", 1))]
    made = page.of_runs(runs)
    assert made.runs == ("aa", "bb") and made.seeds == (0, 1)
    assert made.line().startswith("From 2 stored training runs (seeds 0, 1), smoke profile")
    assert "<code>aa</code> <code>bb</code>" in made.html() and made.html().startswith("<details")
    assert page.with_runs(["cc"], [3]).line().startswith("From 1 stored training run (seed 3)")


@pytest.mark.parametrize("kwargs, message", [
    ({"profile": "", "commit": "abc", "seeds": (0,)}, "profile and a commit"),
    ({"profile": "book", "commit": "abc", "seeds": ()}, "seeds"),
    ({"profile": "book", "commit": "abc", "seeds": (0.5,)}, "seeds"),
    ({"profile": "book", "commit": "abc", "seeds": (0,), "runs": ("",)}, "run keys"),
])
def test_bad_provenance_is_refused(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        Provenance(**kwargs)


def test_no_runs_is_an_error(page: Provenance) -> None:
    with pytest.raises(ValueError, match="at least one run"):
        page.of_runs([])


def test_show_displays_the_figure_then_its_line_and_closes_it(page: Provenance, monkeypatch) -> None:
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    fig, ax = plt.subplots()
    ax.semilogy([0, 1], [1.0, 1.1])
    show(page, fig)
    assert shown[0] is fig and isinstance(shown[1], HTML) and shown[1].data == page.html()
    assert not plt.fignum_exists(fig.number)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0.95", "1", "1.05", "1.1", "1.15"]


def test_log_axes_below_a_decade_get_plain_ticks() -> None:
    fig, (narrow, wide, fixed) = plt.subplots(1, 3)
    narrow.semilogy([0, 1], [1.0, 1.04])
    wide.semilogy([0, 1], [1e-3, 1.0])
    fixed.loglog([2, 4], [1.0, 1.04], base=2)
    readable_log_ticks(fig)
    fig.canvas.draw()
    labels = [t.get_text() for t in narrow.get_yticklabels() if 1 <= t.get_position()[1] <= 1.04]
    assert labels and all("10^" not in t and "times" not in t for t in labels), labels
    assert not narrow.get_yticklabels(minor=True)
    assert all("10^" in t.get_text() for t in wide.get_yticklabels())  # a decade or more: powers of ten
    assert isinstance(fixed.yaxis.get_major_locator(), LogLocator)  # base 2: untouched
    plt.close(fig)
