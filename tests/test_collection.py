"""Automatic garbage collection is off while ge imports and compiles, and is given back as it was."""

from __future__ import annotations

import gc

import pytest

import ge
from ge.collection import collection_paused


def test_collection_is_off_inside_and_restored_after_an_error() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collection_paused():
        assert not gc.isenabled()
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves it to the outer one
        raise RuntimeError
    assert gc.isenabled()


def test_a_caller_that_turned_collection_off_keeps_it_off() -> None:
    gc.disable()
    try:
        graph = ge.Graph()
        graph.add_output(graph.add_relu(graph.add_input("x", [2])))
        ge.GraphCompiler().compile(graph, optimization_level=0)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_compile_gives_collection_back() -> None:
    graph = ge.Graph()
    graph.add_output(graph.add_relu(graph.add_input("x", [2])))
    ge.GraphCompiler().compile(graph, optimization_level=3)
    assert gc.isenabled()
