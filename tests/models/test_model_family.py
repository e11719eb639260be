"""The model family: config checks, attention against torch's reference, head masks, the CLS-only last
layer, positional encoding and permutation symmetry."""

from __future__ import annotations

import math

import pytest
import torch

from transformer_theory.models import Transformer, TransformerConfig, attention_weights, multi_head_attention
from transformer_theory.models.linear import Linear

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def infoflow(**changes) -> TransformerConfig:
    base = dict(d=4, heads=(3, 2), embed_dim=12, head_dim=4, ffn_width=8, encoder_width=6, cls_token=True,
                readout_dim=1, dtype="float64")
    return TransformerConfig(**{**base, **changes})


def seeded(config: TransformerConfig, seed: int = 0) -> Transformer:
    torch.manual_seed(seed)
    return Transformer(config)


@pytest.mark.parametrize("changes, match", [
    ({"d": 0}, "d must be a positive integer"),
    ({"heads": ()}, "heads must not be empty"),
    ({"heads": (2, 0)}, r"heads\[1\]"),
    ({"heads": 3}, "heads must be a sequence"),
    ({"attention": "sparsemax"}, "attention must be one of"),
    ({"temperature": 0.0}, "temperature"),
    ({"activation": "tanh"}, "activation"),
    ({"order": "ff_ff"}, "order"),
    ({"encoder_width": None}, "needs an encoder"),
    ({"cls_token": False}, "readout_dim needs cls_token"),
    ({"readout_dim": None, "cls_only_last": True}, "cls_only_last needs a CLS readout"),
    ({"active_heads": (4, 2)}, "active_heads"),
    ({"dtype": "float16"}, "dtype"),
    ({"rho": float("nan")}, "rho"),
])
def test_config_rejects_bad_values(changes, match) -> None:
    with pytest.raises(ValueError, match=match):
        infoflow(**changes)


def test_config_round_trips_through_json_types() -> None:
    config = infoflow(active_heads=(2, 1), max_len=16)
    data = config.to_dict()
    assert data["heads"] == [3, 2] and TransformerConfig.from_dict(data) == config


def test_attention_is_torch_scaled_dot_product_attention_per_head() -> None:
    torch.manual_seed(1)
    heads, n, E = 3, 4, 12
    x = torch.randn(5, 7, E, dtype=torch.float64)
    to_q, to_k, to_v = (Linear(E, heads * n, dtype=torch.float64) for _ in range(3))  # with biases
    out = multi_head_attention(x, to_q, to_k, to_v, heads, divisor=math.sqrt(n))
    split = lambda t: t.unflatten(-1, (heads, n)).transpose(1, 2)  # noqa: E731
    reference = torch.nn.functional.scaled_dot_product_attention(split(to_q(x)), split(to_k(x)), split(to_v(x)))
    torch.testing.assert_close(out, reference.transpose(1, 2).flatten(-2), rtol=1e-13, atol=1e-13)


def test_hardmax_averages_ties_within_the_tolerance() -> None:
    scores = torch.tensor([[1.0, 3.0, 3.0 - 1e-13, 0.0], [2.0, 1.0, 0.0, -1.0]], dtype=torch.float64)
    strict = attention_weights(scores, "hardmax", 0.0)
    loose = attention_weights(scores, "hardmax", 1e-12)
    assert strict.tolist() == [[0, 1, 0, 0], [1, 0, 0, 0]]
    assert loose.tolist() == [[0, 0.5, 0.5, 0], [1, 0, 0, 0]]


@pytest.mark.parametrize("attention", ["softmax", "hardmax"])
@pytest.mark.parametrize("order", ["sa_ff", "ff_sa"])
@pytest.mark.parametrize("bias", [False, True])
def test_cls_only_last_layer_computes_the_same_map(attention, order, bias) -> None:
    options = dict(attention=attention, order=order, residual="learned", rho=0.7, eta=1.3, attention_bias=bias)
    full = seeded(infoflow(**options))
    fast = Transformer(infoflow(**options, cls_only_last=True))
    fast.load_state_dict(full.state_dict())
    x = torch.randn(9, 6, 4, dtype=torch.float64)
    torch.testing.assert_close(fast(x), full(x), rtol=1e-12, atol=1e-12)


def test_masked_heads_make_the_smaller_model() -> None:
    """A (3, 2)-slot model with heads (2, 1) active is the (2, 1)-head model holding its first heads."""
    big = seeded(infoflow(active_heads=(2, 1)), seed=3)
    small = Transformer(infoflow(heads=(2, 1)))
    state = {name: value[tuple(slice(0, s) for s in small.state_dict()[name].shape)]
             for name, value in big.state_dict().items()}
    small.load_state_dict(state)
    x = torch.randn(8, 5, 4, dtype=torch.float64)
    torch.testing.assert_close(big(x), small(x), rtol=1e-12, atol=1e-12)
    unmasked = Transformer(infoflow())
    unmasked.load_state_dict(big.state_dict())
    assert not torch.allclose(unmasked(x), big(x))  # the masked heads carry weights that would change the output


def test_no_positional_encoding_means_permutation_invariant_readout() -> None:
    x = torch.randn(4, 6, 4, dtype=torch.float64)
    permuted = x[:, torch.randperm(6)]
    nope = seeded(infoflow())
    torch.testing.assert_close(nope(permuted), nope(x), rtol=1e-12, atol=1e-12)
    pe = seeded(infoflow(max_len=6))
    assert not torch.allclose(pe(permuted), pe(x))
    with pytest.raises(ValueError, match="max_len"):
        pe(torch.randn(2, 7, 4, dtype=torch.float64))


def test_models_with_positional_encoding_batch() -> None:
    """K models with a model axis, PE included, are the K models one at a time (the length check reads max_len,
    not the model axis)."""
    config = infoflow(max_len=6)
    singles = [seeded(config, seed) for seed in range(3)]
    batched = Transformer(config, models=3)
    batched.load_state_dict({name: torch.stack([m.state_dict()[name] for m in singles])
                             for name in singles[0].state_dict()})
    x = torch.randn(3, 5, 6, 4, dtype=torch.float64)
    torch.testing.assert_close(batched(x), torch.stack([m(x[k]) for k, m in enumerate(singles)]), rtol=1e-12,
                               atol=1e-12)
    torch.testing.assert_close(batched(x[:, :, :4]), torch.stack([m(x[k, :, :4]) for k, m in enumerate(singles)]),
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="max_len 6"):
        batched(torch.randn(3, 2, 7, 4, dtype=torch.float64))


def test_unbatched_input_and_parameter_names() -> None:
    model = seeded(infoflow())
    x = torch.randn(6, 4, dtype=torch.float64)
    torch.testing.assert_close(model(x), model(x[None])[0], rtol=1e-13, atol=1e-13)
    names = {n for n, _ in model.named_parameters()}
    assert {"cls", "encoder.0.weight", "encoder.2.bias", "blocks.1.to_q.weight", "blocks.0.out.weight",
            "blocks.1.ff.2.bias", "readout.weight"} <= names
    assert not any("rho" in n or "eta" in n for n in names)  # fixed residual weights are not parameters
    E, n, w = 12, 4, 8
    per_block = lambda h: 3 * E * h * n + h * n * E + (E * w + w + w * E + E)  # noqa: E731 (no attention biases)
    expected = (4 * 6 + 6 + 6 * E + E) + E + per_block(3) + per_block(2) + (E + 1)
    assert model.num_parameters() == expected
