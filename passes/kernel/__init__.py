"""Kernel-level passes: device formats and tiling of `ascend.kernel` ops."""
