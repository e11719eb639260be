"""The book's table helpers: Markdown tables that render as tables, whatever the cells hold, and numbers in prose."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from transformer_theory.tables import format_cell, markdown_table, prose_number


def cells(text: str) -> list[list[str]]:
    """The table ``text`` as a GFM parser reads it: one list of cell contents per row (header first)."""
    rows, row = [], None
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    assert tokens[0].type == "table_open", "not parsed as a table"
    for tok in tokens:
        if tok.type == "tr_open":
            row = []
        elif tok.type == "inline" and row is not None:
            row.append(tok.content)
        elif tok.type == "tr_close":
            rows.append(row)
            row = None
    return rows


def test_rows_become_a_table_with_the_first_rows_keys_as_columns() -> None:
    text = markdown_table([{"stage": "separation", "blocks": 1}, {"stage": "**total**", "blocks": 10}])
    assert text == "| stage | blocks |\n|---|---|\n| separation | 1 |\n| **total** | 10 |"
    assert cells(text) == [["stage", "blocks"], ["separation", "1"], ["**total**", "10"]]


def test_columns_choose_and_order_the_cells() -> None:
    rows = [{"a": 1, "b": 2, "c": 3}]
    assert cells(markdown_table(rows, ["c", "a"])) == [["c", "a"], ["3", "1"]]
    assert markdown_table([], ["a", "b"]) == "| a | b |\n|---|---|"


def test_cells_are_formatted_and_pipes_escaped() -> None:
    assert [format_cell(v) for v in (None, True, False, [2, 2], (1,), 0.000123456, 1000.0, 7, "x")] == [
        "n/a", "yes", "no", "(2,2)", "(1)", "0.000123", "1e+03", "7", "x"]
    text = markdown_table([{"formula": "min ||x(t1)+x(t2)||", "note": "two\nlines"}])
    assert cells(text)[1] == ["min ||x(t1)+x(t2)||", "two lines"]  # one cell each, the pipes shown as text


def test_bad_input_names_the_problem() -> None:
    with pytest.raises(ValueError, match="no rows and no columns"):
        markdown_table([])
    with pytest.raises(ValueError, match="row 1 has no column 'b'"):
        markdown_table([{"a": 1, "b": 2}, {"a": 3}])


def test_a_collapsed_table_is_a_dropdown_admonition_holding_the_table() -> None:
    from transformer_theory.tables import collapsed

    table = markdown_table([{"a": 1}])
    text = collapsed(table, "Full table (1 row)")
    assert text.splitlines()[:2] == [":::{admonition} Full table (1 row)", ":class: dropdown"]
    assert table in text and text.endswith("\n:::")
    with pytest.raises(ValueError, match="title"):
        collapsed(table, " ")


def test_a_number_in_prose_is_math_below_a_hundredth_unless_plain_text_is_asked() -> None:
    assert prose_number(None) == "n/a" and prose_number(447.81) == "448" and prose_number(0.78479) == "0.78"
    assert prose_number(2.71e-6) == "$2.7 \\times 10^{-6}$" and prose_number(2.71e-6, math=False) == "2.7e-06"
    assert prose_number(1005.6) == "1006" and prose_number(2.5e6) == "2.5e+06"
    assert prose_number(0.0) == "0"
