"""The one builder of the InfoFlow/P1 model (:func:`~transformer_theory.chapters.experiment.infoflow_model`) and
the chapters' models built with it: each equals the configuration the chapter wrote out before (the runs' keys
hash these configurations, so a change here would orphan the committed runs)."""

from __future__ import annotations

from transformer_theory.models.config import TransformerConfig
from transformer_theory.chapters.aggregation import attention_model, cost_model
from transformer_theory.chapters.experiment import infoflow_model
from transformer_theory.chapters.triangle_center import model as triangle_center_model

P = {"encoder_width": 32, "ffn_width": 64, "embed_dim": 16, "head_dim": 16, "seq_len": 24, "cost_embed_dim": 4,
     "cost_seq_len": 16}


def test_the_default_model_reads_d_4_tokens_without_positions() -> None:
    assert infoflow_model(P, [2, 1], 24, 12, 48) == TransformerConfig(
        d=4, heads=(2, 1), embed_dim=24, head_dim=12, ffn_width=48, encoder_width=32, cls_token=True, readout_dim=1,
        cls_only_last=True)


def test_the_triangle_center_model_reads_d_2_tokens() -> None:
    expected = TransformerConfig(d=2, heads=(4, 4), embed_dim=48, head_dim=12, ffn_width=64, encoder_width=32,
                                 cls_token=True, readout_dim=1, cls_only_last=True)
    assert infoflow_model(P, (4, 4), 48, 12, 64, d=2) == expected
    assert triangle_center_model(4, 4, 48, P) == expected


def test_the_aggregation_models_have_learned_positions() -> None:
    assert attention_model(P) == TransformerConfig(
        d=2, heads=(1,), embed_dim=16, head_dim=16, ffn_width=64, encoder_width=32, max_len=24, cls_token=True,
        readout_dim=2, cls_only_last=True)
    assert cost_model(P, 8) == TransformerConfig(
        d=2, heads=(1,), embed_dim=4, head_dim=4, ffn_width=8, encoder_width=8, max_len=16, cls_token=True,
        readout_dim=1, cls_only_last=True)


def test_positions_and_readout_are_the_only_changes_asked_for() -> None:
    plain = infoflow_model(P, (1,), 16, 16, 64)
    positional = infoflow_model(P, (1,), 16, 16, 64, max_len=32, readout_dim=3)
    assert plain.max_len is None and positional.max_len == 32 and positional.readout_dim == 3
    assert positional.to_dict() == {**plain.to_dict(), "max_len": 32, "readout_dim": 3}
