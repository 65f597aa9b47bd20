"""Graph-level passes: rewrites of `ascend.graph` ops that keep what the graph computes."""
