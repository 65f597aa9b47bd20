"""Conversion passes: graph -> kernel -> stream."""
