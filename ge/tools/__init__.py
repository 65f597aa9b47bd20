"""Command-line tools: `ge-opt` (the pass driver)."""
