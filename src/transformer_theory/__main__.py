"""``python -m transformer_theory``: see :mod:`transformer_theory.pipeline.cli`."""

from transformer_theory.pipeline.cli import main

raise SystemExit(main())
