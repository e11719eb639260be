"""``python -m transformer_theory``: see :mod:`transformer_theory.cli`."""

from transformer_theory.cli import main

raise SystemExit(main())
