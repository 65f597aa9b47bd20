"""Command-line tools: `ge-opt` (the pass driver) and `ge-bisect` (the pass and rewrite that change a
model's outputs)."""
