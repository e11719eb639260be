"""Layer 1 of §4.1's mechanism set by hand (the oracle control) and the gated FFN."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from transformer_theory.chapters.intrinsic_dimension import model_retrieval_agreement, retrieval_summary
from transformer_theory.infoflow.targets import pairwise_max
from transformer_theory.models import Transformer, TransformerConfig
from transformer_theory.models.mechanism import set_retrieval_layer
from transformer_theory.training import Ensemble, RunConfig, initial_model
from tests.training.tiny_runs import tiny_run


def _model(heads=(3, 3), **changes) -> TransformerConfig:
    base = dict(d=4, heads=heads, embed_dim=48, head_dim=16, ffn_width=32, encoder_width=32, cls_token=True,
                readout_dim=1, cls_only_last=True)
    return TransformerConfig(**{**base, **changes})


@pytest.mark.parametrize("heads, retrieved", [((3, 3), [1.0, 1.0, 1.0]), ((2, 3), [1.0, 1.0, None])])
def test_the_oracle_layer_retrieves_each_terms_token_before_any_training(heads, retrieved) -> None:
    """Every head i < h₁ attends, from every token t, to argmax_s x(s)ᵀ A_i x(t); a missing head's term is not
    retrieved (its best head agrees on about the chance level only)."""
    tree = pairwise_max(D=3)
    run = RunConfig(model=_model(heads), target="pairwise_max", target_args={"D": 3}, seq_len=8, steps=10,
                    init="oracle")
    X = tree.sample_inputs(256, 8, 0)
    layer1 = retrieval_summary(model_retrieval_agreement(initial_model(run), tree.params["A"], X))["layer1"]
    for got, want in zip(layer1, retrieved):
        assert got == 1.0 if want else got < 0.6
    random = RunConfig(**{**run.__dict__, "init": "random"})
    assert max(retrieval_summary(model_retrieval_agreement(initial_model(random), tree.params["A"], X))["layer1"]) < 0.6


def test_the_oracle_sets_only_the_encoder_and_the_first_attention_layer() -> None:
    run = RunConfig(model=_model(), target="pairwise_max", target_args={"D": 3}, seq_len=8, steps=10, init="oracle")
    oracle, random = initial_model(run), initial_model(replace(run, init="random"))
    changed = {n for (n, a), b in zip(oracle.state_dict().items(), random.state_dict().values()) if not torch.equal(a, b)}
    assert changed == {"encoder.0.weight", "encoder.0.bias", "encoder.2.weight", "encoder.2.bias",
                       "blocks.0.to_q.weight", "blocks.0.to_k.weight", "blocks.0.to_v.weight", "blocks.0.out.weight"}
    # the batched ensemble starts each model where initial_model does
    ensemble = Ensemble([run, replace(run, model=_model((2, 3)))])
    assert all(torch.equal(ensemble.state_dict(0)[n], p) for n, p in oracle.state_dict().items())


@pytest.mark.parametrize("changes, message", [
    ({"encoder_width": 6}, "an encoder of width at least 2d = 8"),
    ({"embed_dim": 12}, r"residual width E >= d·\(1 \+ heads\) = 16"),
    ({"max_len": 8}, "no positional encoding"),
    ({"head_dim": 2, "embed_dim": 48}, "head and value dimensions >= d = 4"),
])
def test_a_model_that_cannot_hold_the_mechanism_is_refused_before_training(changes, message) -> None:
    with pytest.raises(ValueError, match=message):
        RunConfig(model=_model(**changes), target="pairwise_max", target_args={"D": 3}, seq_len=8, steps=10,
                  init="oracle")
    with pytest.raises(ValueError, match=message):
        set_retrieval_layer(Transformer(_model(**changes)), pairwise_max(D=3).params["A"], 20.0)


def test_the_oracle_needs_a_target_with_matrices() -> None:
    from transformer_theory.infoflow.targets import min_pairwise_dot
    from transformer_theory.training import register_targets
    register_targets({"min_pairwise_dot": min_pairwise_dot})
    with pytest.raises(ValueError, match="needs a target with matrices A_i"):
        RunConfig(model=_model(), target="min_pairwise_dot", seq_len=8, steps=10, init="oracle")
    with pytest.raises(ValueError, match="init must be one of"):
        tiny_run(init="clever")


def test_the_gated_ffn_is_the_bilinear_map_and_keeps_the_old_keys() -> None:
    config = _model(ffn_kind="gated")
    torch.manual_seed(0)
    block = Transformer(config).blocks[0]
    x = torch.randn(5, 48)
    W, b = block.ff.up.weight, block.ff.up.bias
    a, g = (x @ W[:32].T + b[:32]), (x @ W[32:].T + b[32:])
    expected = (a * g) @ block.ff.down.weight.T + block.ff.down.bias
    torch.testing.assert_close(block.feed_forward(x), x + expected)
    assert config.to_dict()["ffn_kind"] == "gated" and "ffn_kind" not in _model().to_dict()
    assert TransformerConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="ffn_kind must be one of 'mlp', 'gated'"):
        _model(ffn_kind="glu")


def test_a_batched_gated_model_computes_what_the_single_one_does() -> None:
    runs = [tiny_run(model=replace(tiny_run().model, ffn_kind="gated"), seed=s) for s in (0, 1)]
    ensemble = Ensemble(runs)
    X = torch.from_numpy(runs[0].tree().sample_inputs(16, 8, 0)).float()
    together = ensemble(torch.stack([X, X]))
    for i in range(2):
        torch.testing.assert_close(together[i], ensemble.model(i)(X), rtol=1e-5, atol=1e-6)
    assert np.isfinite(together.detach().numpy()).all()
