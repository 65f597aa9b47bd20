"""The weight store: the tensors behind `dense_resource<key>` constants.

Weights never go into textual IR in bulk: the IR names them by key and the store holds the
bytes. It travels with a compilation (in its compile session), is saved as `.npz` and loaded
without pickle.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .errors import InvalidModelError

_KEY_CHARS = re.compile(r"[^A-Za-z0-9_.]")


class WeightStore:
    """Named, read-only numpy arrays; keys are valid MLIR resource handles."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def add(self, array: np.ndarray, hint: str = "weight") -> str:
        """Stores a copy of `array` under a fresh key derived from `hint`; returns the key."""
        base = _KEY_CHARS.sub("_", hint) or "weight"
        if not base[0].isalpha() and base[0] != "_":
            base = "w_" + base
        key, counter = base, 0
        while key in self._arrays:
            counter += 1
            key = f"{base}_{counter}"
        self.put(key, array)
        return key

    def put(self, key: str, array: np.ndarray) -> None:
        stored = np.array(array, copy=True, order="C")
        stored.flags.writeable = False
        self._arrays[key] = stored

    def get(self, key: str) -> np.ndarray:
        try:
            return self._arrays[key]
        except KeyError:
            raise InvalidModelError(
                f"weight 'dense_resource<{key}>' is not in the weight store "
                f"(pass the weights file that defines it)"
            ) from None

    def __contains__(self, key: str) -> bool:
        return key in self._arrays

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    def copy(self) -> WeightStore:
        other = WeightStore()
        other._arrays = dict(self._arrays)
        return other

    def save(self, path: str | Path) -> None:
        """Writes every weight to an `.npz`; float and integer kinds numpy lacks are stored as bytes."""
        arrays = {key: _portable(a) for key, a in self._arrays.items()}
        np.savez(path, allow_pickle=False, **arrays)

    @classmethod
    def load(cls, path: str | Path) -> WeightStore:
        store = cls()
        try:
            try:
                data = np.load(path, allow_pickle=False)
            except ValueError:  # numpy takes any other file for pickled data, which it refuses
                raise InvalidModelError(
                    f"cannot read weights file '{path}': it is not an .npz archive (numpy.savez writes one)"
                ) from None
            if not isinstance(data, np.lib.npyio.NpzFile):
                raise InvalidModelError(
                    f"weights file '{path}' holds one array: weights are an .npz archive (numpy.savez)"
                )
            with data:
                for key in data.files:
                    store.put(key, data[key])
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
            raise InvalidModelError(f"cannot read weights file '{path}': {error}") from None
        return store


def _portable(array: np.ndarray) -> np.ndarray:
    # ml_dtypes' kinds (bfloat16, the float8 family, int4...) do not survive an .npz: raw bytes do.
    if array.dtype.kind == "V" or array.dtype.type.__module__.startswith("ml_dtypes"):
        return array.view(np.uint8)
    return array
