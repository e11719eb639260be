"""Tikhonov experiment of Paper A (§6, Figs. 1a/1b): data, exact interpolant, loss, trainer, slope."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch import nn

from transformer_theory.chapters.tikhonov_runs import StageResult, epsilon_sweep, tikhonov_bound, train_tikhonov
from transformer_theory.models.tikhonov import (TikhonovTransformer, exact_interpolant, frozen_eta_loss_bound,
                                                generate_synthetic_data, hausdorff_to_singleton_loss,
                                                setup_experiment, squared_norm)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SMALL = {"N": 4, "d": 4, "n": 6}


def test_generator_shapes_and_determinism():
    a = generate_synthetic_data(N=3, d=5, n=7, seed=1)
    b = generate_synthetic_data(N=3, d=5, n=7, seed=1)
    c = generate_synthetic_data(N=3, d=5, n=7, seed=2)
    assert a.inputs.shape == (3, 7, 5) and a.targets.shape == (3, 1, 5)
    assert (a.W.shape, a.U.shape, a.b.shape) == ((4, 5), (5, 4), (4,))
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets)
    assert not torch.equal(a.inputs, c.inputs)


def test_generator_follows_official_rng_order():
    torch.manual_seed(0)
    inputs, W, U, b = torch.rand(10, 100, 16), torch.rand(4, 16), torch.rand(16, 4), torch.rand(4)
    data = generate_synthetic_data()
    for ours, official in [(data.inputs, inputs), (data.W, W), (data.U, U), (data.b, b)]:
        assert torch.equal(ours, official)
    mean = inputs.mean(dim=1, keepdim=True)
    expected = mean + torch.relu(mean @ U + b) @ W
    torch.testing.assert_close(data.targets, expected, rtol=1e-5, atol=1e-5)


def test_float64_data_are_the_float32_draws():
    d32 = generate_synthetic_data(**SMALL)
    d64 = generate_synthetic_data(**SMALL, dtype=torch.float64)
    assert d64.inputs.dtype == torch.float64
    assert torch.equal(d64.inputs, d32.inputs.double())
    torch.testing.assert_close(d64.targets, d32.targets.double(), rtol=1e-6, atol=1e-6)


def test_model_has_422_parameters_and_official_init():
    data, model = setup_experiment()
    assert sum(p.numel() for p in model.parameters()) == 422
    assert model.rho.item() == 0 and model.eta.item() == 0
    generate_synthetic_data()  # same RNG state as after the data of setup_experiment
    official = [nn.Linear(16, 1, bias=False), nn.Linear(16, 1, bias=False), nn.Linear(16, 16, bias=False)]
    official += [nn.Linear(16, 4), nn.Linear(4, 16, bias=False)]
    for ours, theirs in zip([model.to_q, model.to_k, model.to_v, model.ff[0], model.ff[2]], official):
        assert torch.equal(ours.weight, theirs.weight)


def test_exact_interpolant_has_zero_loss():
    for dtype, tol in [(torch.float64, 1e-20), (torch.float32, 1e-8)]:
        data, model = setup_experiment(dtype=dtype)
        model.load_state_dict(exact_interpolant(data))
        with torch.no_grad():
            loss = hausdorff_to_singleton_loss(model(data.inputs), data.targets).item()
        assert loss <= tol * float((data.targets**2).sum(-1).max())


def test_theta_star_norm_matches_the_published_threshold():
    """The threshold line of the published Fig. 1a (decoded from the figure file) is ε‖θ*‖² at ε = 1e-4."""
    from transformer_theory.interpolation.reference import FIG1A

    data = generate_synthetic_data()  # float32, as the official script
    assert squared_norm(exact_interpolant(data)) == pytest.approx(FIG1A.threshold / FIG1A.eps, rel=1e-6)


def test_hausdorff_to_singleton_loss():
    pred = torch.tensor([[[0.0, 0.0], [3.0, 4.0]], [[1.0, 1.0], [1.0, 1.0]]])
    y = torch.tensor([[0.0, 0.0], [1.0, 2.0]])
    assert hausdorff_to_singleton_loss(pred, y).item() == pytest.approx((25.0 + 1.0) / 2)
    assert hausdorff_to_singleton_loss(pred, y[:, None, :]).item() == pytest.approx(13.0)
    with pytest.raises(ValueError, match="expected pred"):
        hausdorff_to_singleton_loss(pred, torch.zeros(3, 2))


def test_training_decreases_loss_and_is_deterministic():
    runs = []
    for _ in range(2):
        data, model = setup_experiment(**SMALL, dtype=torch.float64)
        runs.append(train_tikhonov(model, data.inputs, data.targets, eps=1e-3, epochs=150, lr=1e-2, progress=False))
    assert runs[0].shape == (150,)
    assert runs[0][-1] < 0.01 * runs[0][0]
    np.testing.assert_array_equal(runs[0], runs[1])


def test_weight_decay_is_eps_in_adam():
    """train_tikhonov = Adam(lr, weight_decay=ε) + cosine schedule, one full-batch step per epoch."""
    eps, lr, epochs = 0.05, 1e-2, 5
    data, model = setup_experiment(**SMALL, dtype=torch.float64)
    reference = copy.deepcopy(model)
    train_tikhonov(model, data.inputs, data.targets, eps=eps, epochs=epochs, lr=lr, progress=False)
    opt = torch.optim.Adam(reference.parameters(), lr=lr, weight_decay=eps)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    for _ in range(epochs):
        opt.zero_grad()
        hausdorff_to_singleton_loss(reference(data.inputs), data.targets).backward()
        opt.step()
        sched.step()
    for (name, ours), theirs in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(ours, theirs, rtol=1e-10, atol=1e-12, msg=name)
    other = setup_experiment(**SMALL, dtype=torch.float64)[1]
    train_tikhonov(other, data.inputs, data.targets, eps=10 * eps, epochs=epochs, lr=lr, progress=False)
    assert not torch.allclose(other.to_v.weight, model.to_v.weight)


def test_frozen_parameters_stay_fixed():
    data, model = setup_experiment(**SMALL)
    train_tikhonov(model, data.inputs, data.targets, eps=1e-2, epochs=20, frozen={"to_v.weight": 0.0, "eta": 0.5}, progress=False)
    assert torch.count_nonzero(model.to_v.weight) == 0
    assert model.eta.item() == 0.5 and model.rho.item() != 0
    with pytest.raises(ValueError, match="unknown parameter"):
        train_tikhonov(model, data.inputs, data.targets, eps=1e-2, epochs=2, frozen={"V": 0.0}, progress=False)


def test_epsilon_sweep_warm_starts_the_same_model():
    eps_list, epochs_list = [1e-1, 1e-2], [30, 40]
    data, model = setup_experiment(**SMALL, dtype=torch.float64)
    twin = copy.deepcopy(model)
    stages = epsilon_sweep(model, data.inputs, data.targets, eps_list, epochs_list, progress=False)
    expected = []
    for e, k in zip(eps_list, epochs_list):
        curve = train_tikhonov(twin, data.inputs, data.targets, e, k, progress=False)
        with torch.no_grad():
            final = hausdorff_to_singleton_loss(twin(data.inputs), data.targets).item()
        expected.append((curve, final, float(sum((p.detach().double() ** 2).sum() for p in twin.parameters()))))
    assert [len(st.losses) for st in stages] == epochs_list
    for st, (curve, final, sq_norm) in zip(stages, expected):
        np.testing.assert_array_equal(st.losses, curve)
        assert st.min_loss == curve.min() and st.final_loss == final and st.final_sq_norm == pytest.approx(sq_norm, rel=1e-12)
    with pytest.raises(ValueError, match="equal length"):
        epsilon_sweep(model, data.inputs, data.targets, [1e-1, 1e-2], [10], progress=False)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda m, x, y: train_tikhonov(m, x, y, eps=0.0, epochs=10), "eps"),
        (lambda m, x, y: train_tikhonov(m, x, y, eps=-1e-3, epochs=10), "eps"),
        (lambda m, x, y: train_tikhonov(m, x, y, eps=1e-3, epochs=0), "epochs"),
        (lambda m, x, y: generate_synthetic_data(N=0), "N"),
        (lambda m, x, y: generate_synthetic_data(dtype=torch.float16), "dtype"),
        (lambda m, x, y: TikhonovTransformer(4, tau=0.0), "tau"),
    ],
)
def test_bad_input_raises(call, match):
    data, model = setup_experiment(**SMALL)
    with pytest.raises(ValueError, match=match):
        call(model, data.inputs, data.targets)


def test_frozen_eta_loss_bound_holds_and_is_positive():
    data = generate_synthetic_data(N=8, d=6, n=5, seed=3, dtype=torch.float64)
    bound = frozen_eta_loss_bound(data.targets)
    assert bound > 0
    assert frozen_eta_loss_bound(data.targets, ff_width=8) == pytest.approx(0.0, abs=1e-20)
    for s in range(5):
        torch.manual_seed(s)
        model = TikhonovTransformer(6).double()
        with torch.no_grad():
            model.ff[2].weight.mul_(50.0)
            assert hausdorff_to_singleton_loss(model(data.inputs), data.targets).item() >= bound
    # the best rank-4 subspace attains the bound when every token sits on the projected target
    Y = data.targets[:, 0, :]
    U, S, Vh = torch.linalg.svd(Y, full_matrices=False)
    projected = (U[:, :4] * S[:4]) @ Vh[:4]
    assert hausdorff_to_singleton_loss(projected[:, None, :], Y).item() == pytest.approx(bound, rel=1e-10)


def test_the_certificate_separates_an_interpolant_from_an_untrained_model() -> None:
    """J(θ) > (ε/2)‖θ*‖² proves θ is no global minimiser: false at θ* itself, true at the initialisation."""
    data, model = setup_experiment(**SMALL, dtype=torch.float64)
    theta_star = exact_interpolant(data)
    norm2 = squared_norm(theta_star)
    with torch.no_grad():
        init_loss = hausdorff_to_singleton_loss(model(data.inputs), data.targets).item()
    init = StageResult(1e-2, np.array([init_loss]), init_loss, squared_norm(model))
    model.load_state_dict(theta_star)
    with torch.no_grad():
        star_loss = hausdorff_to_singleton_loss(model(data.inputs), data.targets).item()
    at_star = StageResult(1e-2, np.array([star_loss]), star_loss, squared_norm(model))
    assert star_loss <= 1e-24 and at_star.final_sq_norm == pytest.approx(norm2, rel=1e-15)
    assert tikhonov_bound(1e-2, norm2) == pytest.approx(1e-2 / 2 * norm2)
    assert at_star.objective == pytest.approx(tikhonov_bound(1e-2, norm2)) and not at_star.certifies_not_global(norm2)
    assert init.objective > init_loss > 0 and init.certifies_not_global(norm2)
