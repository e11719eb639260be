"""``joint_positions``: the encoder reads each token with its position, ``W₂ relu(W₁ x(t) + b₁ + P[t]) + b₂``, as
the token map of InfoFlow's predecessor (Yu et al., ICLR 2026) does. The formula by hand, position routing
content, the model axis against single models, the config checks, and run keys that do not change when the
option is off (every committed record keeps its key: tests/training/test_committed_run_keys.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from transformer_theory.infoflow.targets import pairwise_max
from transformer_theory.models import Transformer, TransformerConfig
from transformer_theory.models.transformer import EMBEDDING_INIT_STD
from transformer_theory.training import Ensemble, RunConfig, register_targets

pytestmark = pytest.mark.usefixtures("one_torch_thread")

register_targets({"pairwise_max": pairwise_max})


def joint(**changes) -> TransformerConfig:
    base = dict(d=4, heads=(3, 2), embed_dim=12, head_dim=4, ffn_width=8, encoder_width=6, cls_token=True,
                readout_dim=1, max_len=6, joint_positions=True, dtype="float64")
    return TransformerConfig(**{**base, **changes})


def seeded(config: TransformerConfig, seed: int = 0) -> Transformer:
    torch.manual_seed(seed)
    return Transformer(config)


def test_the_positions_enter_the_encoders_hidden_layer_instead_of_the_stream() -> None:
    model = seeded(joint())
    assert model.pos is None and model.encoder_pos.shape == (6, 6)
    assert 0 < model.encoder_pos.std().item() < 5 * EMBEDDING_INIT_STD  # drawn as the stream's encoding is
    x = torch.randn(3, 5, 4, dtype=torch.float64)
    first, second = model.encoder[0], model.encoder[2]
    hidden = torch.relu(x @ first.weight.T + first.bias + model.encoder_pos[:5])
    torch.testing.assert_close(model.trace(x).tokens[:, :5], hidden @ second.weight.T + second.bias, rtol=1e-12,
                               atol=1e-12)
    with pytest.raises(ValueError, match="max_len 6"):
        model(torch.randn(2, 7, 4, dtype=torch.float64))


def test_joint_positions_break_the_permutation_symmetry() -> None:
    x = torch.randn(8, 2, 4, dtype=torch.float64)
    swapped = x.flip(-2)
    plain = seeded(joint(joint_positions=False, max_len=None))
    torch.testing.assert_close(plain(swapped), plain(x), rtol=1e-12, atol=1e-12)
    model = seeded(joint())
    assert (model(swapped) - model(x)).abs().min() > 1e-8  # every pair's CLS output moves


def test_models_axis_is_the_single_models() -> None:
    config = joint()
    singles = [seeded(config, seed) for seed in range(3)]
    batched = Transformer(config, models=3)
    batched.load_state_dict({name: torch.stack([m.state_dict()[name] for m in singles])
                             for name in singles[0].state_dict()})
    for T in (6, 4):
        x = torch.randn(3, 5, T, 4, dtype=torch.float64)
        torch.testing.assert_close(batched(x), torch.stack([m(x[k]) for k, m in enumerate(singles)]), rtol=1e-12,
                                   atol=1e-12)
    with pytest.raises(ValueError, match="max_len 6"):
        batched(torch.randn(3, 2, 7, 4, dtype=torch.float64))


def test_an_ensemble_of_runs_is_its_models() -> None:
    """The engine's path: runs of different heads and seeds padded and stacked (the table decays like a weight)."""
    runs = [RunConfig(model=joint(dtype="float32", cls_only_last=True, heads=heads), target="pairwise_max",
                      target_args={"D": 2}, seq_len=6, steps=1, seed=seed)
            for heads, seed in (((3, 2), 0), ((3, 2), 1), ((2, 2), 2))]
    ensemble = Ensemble(runs)
    decayed = {id(p) for p in ensemble.parameter_groups(1e-2)[0]["params"]}
    assert id(ensemble.module.encoder_pos) in decayed
    x = torch.randn(3, 4, 6, 4)
    out = ensemble(x)
    for k in range(3):
        torch.testing.assert_close(out[k], ensemble.model(k)(x[k]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("changes", [
    {"max_len": None},
    {"encoder_width": None, "embed_dim": None},
    {"joint_positions": 1},
    {"joint_positions": "yes"},
])
def test_invalid_combinations_name_the_field(changes) -> None:
    with pytest.raises(ValueError, match="joint_positions"):
        joint(**changes)


def test_the_option_is_in_the_dict_only_when_set() -> None:
    default = joint(joint_positions=False)
    data = default.to_dict()
    assert "joint_positions" not in data and TransformerConfig.from_dict(data) == default
    data = joint().to_dict()
    assert data["joint_positions"] is True and TransformerConfig.from_dict(data) == joint()
    on = RunConfig(model=joint(), target="pairwise_max", target_args={"D": 2}, seq_len=6, steps=1)
    off = replace(on, model=default)
    assert "joint_positions" not in off.to_dict()["model"] and RunConfig.from_dict(on.to_dict()) == on
    assert on.key != off.key and on.batch_signature() != off.batch_signature()
