"""Frontends: framework models into `ge.Graph`s of `ascend.graph` ops (built in memory)."""
