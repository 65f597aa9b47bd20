"""The AI Core emulator: runs a stream-level model over a real arena and weight blob."""

from .runtime import Emulator

__all__ = ["Emulator"]
