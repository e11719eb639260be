"""``python -m transformer_theory predict``: verdicts, reasons, information sets, JSON, help and errors."""

from __future__ import annotations

import json

import pytest

from conftest import cli
from transformer_theory.pipeline.calculator import answer, format_answer, parse_heads
from transformer_theory.pipeline.cli import main


def _json(capsys, *args: str) -> dict:
    assert main(["predict", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_pairwise_max_needs_two_heads_in_the_first_layer(capsys) -> None:
    good = _json(capsys, "pairwise_max(D=2)", "--heads", "2,2")
    assert good["verdict"] == "efficient" and good["efficient"] is True and good["exponent"] == 1.0
    assert good["heads"] == [2, 2] and good["embed_dim"] == 32 and good["seq_len"] == 16
    assert [layer["token"] for layer in good["layers"]] == [["t"], ["t", "s1*(t)", "s2*(t)"], ["t", "s1*(t)", "s2*(t)"]]
    assert "t1*" in good["layers"][2]["cls"] and good["layers"][1]["cls"] == []

    bad = _json(capsys, "pairwise_max(D=2)", "--heads", "1,2")
    assert bad["verdict"] == "inefficient" and bad["efficient"] is False
    assert "layer 1 has 1 head(s)" in bad["reason"]
    assert bad["exponent"] == 2.0 and bad["regime"] == "aggregation" and "T d/E - 1" in bad["cost"]


def test_three_hops_do_not_fit_two_layers(capsys) -> None:
    out = _json(capsys, "k_hop(3)", "--heads", "1,1")
    assert out["verdict"] == "inefficient" and "pointer chase of 3 look-up(s)" in out["reason"]
    assert _json(capsys, "k_hop(3)", "--heads", "1,1,1")["verdict"] == "efficient"


def test_expressions_and_options_reach_the_prediction(capsys) -> None:
    out = _json(capsys, "max_t a^T x(t) + max_s b^T x(s)", "--heads", "2", "--embed", "8", "--T", "4", "--d", "2")
    assert out["efficient"] and (out["embed_dim"], out["seq_len"], out["input_dim"]) == (8, 4, 2)
    assert out["formula"] == "max_t a^T x(t) + max_s b^T x(s)"
    one = _json(capsys, "max_t a^T x(t) + max_s b^T x(s)", "--heads", "1", "--embed", "8", "--T", "4", "--d", "2")
    assert not one["efficient"] and one["exponent"] == 2.0 and one["regime"] == "memorisation"  # T d = 8 <= E
    assert _json(capsys, "specific_positions(P=(1, 2))", "--heads", "1", "--positional")["efficient"]


def test_text_output_has_verdict_reason_cost_and_information_sets() -> None:
    text = format_answer(answer("pairwise_max(D=2)", parse_heads("1,2")))
    lines = text.splitlines()
    assert lines[2] == "verdict       inefficient"
    assert lines[3].startswith("reason        'max over s (term 2)' must run at layer 1")
    assert lines[4].startswith("cost          M ~ eps^-2 parameters for accuracy eps (aggregation)")
    assert lines[-3:] == ["  l = 0: I(t) = {t}   I(CLS) = {}",
                          "  l = 1: I(t) = {t, s1*(t)}   I(CLS) = {}",
                          "  l = 2: I(t) = {t, s1*(t)}   I(CLS) = 34 positions (1, 2, 3, 4, ..., s1*(t1*))"]


def test_help_documents_the_expression_syntax() -> None:
    out = cli("predict", "--help")
    assert out.returncode == 0
    for needle in ("--heads H1,H2,...", "--embed E", "--T T", "--json", "pairwise_max(D=2)", "k_hop(3)",
                   "max_{s,t} SCORE", "x(s)^T A x(t)", "||x(t1) + x(t2) + x(t3)||", "Examples:",
                   "'max_t max_s x(s)^T A x(t)'"):
        assert needle in out.stdout, needle


def test_a_malformed_expression_is_refused_naming_the_column() -> None:
    out = cli("predict", "max_t a^T x(t", "--heads", "1")
    assert out.returncode == 2 and out.stdout == ""
    assert "error: expected ')' after the position variable, got the end of the expression (at column 14)" in out.stderr
    assert out.stderr.splitlines()[-2:] == ["  max_t a^T x(t", "               ^"]


@pytest.mark.parametrize("args,message", [
    (["pairwse_max(D=2)", "--heads", "2,2"], "did you mean 'pairwise_max'?"),
    (["k_hop(3)", "--heads", "1,0"], "--heads '1,0': expected positive head counts per layer"),
    (["k_hop(3)", "--heads", "two"], "--heads 'two'"),
    (["k_hop(3)", "--heads", "1", "--T", "0"], "--T must be a positive integer, got 0"),
    (["k_hop(3)", "--heads", "1", "--embed", "-4"], "--embed must be a positive integer, got -4"),
    (["k_hop(3)", "--heads", "1", "--d", "2"], "--d 2: the named target k_hop(k=3) works on tokens of dimension d = 4"),
    (["specific_positions", "--heads", "1"], "positional"),
])
def test_bad_arguments_exit_2_with_a_message(capsys, args: list[str], message: str) -> None:
    assert main(["predict", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err, err
