"""Training of the torch models: the Tikhonov experiment of Paper A (:mod:`~transformer_theory.training.tikhonov`)."""
