"""Stream-level passes: decisions over the whole task list (memory, streams)."""
