"""Formats live in types only as device formats: the attribute refuses the framework layouts, one
bracketed syntax serves every enum attribute, and a view or a conversion is checked against the
bytes it stands for."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import MemRefType, NoneAttr, TensorType, f16, f32
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from ge.context import make_context
from ge.dialects import graph
from ge.dialects.formats import Format, FormatAttr, memref_of, view_error, with_format
from ge.dialects.graph import traits
from ge.dialects.kernel import KernelKind, KernelKindAttr, KernelUnitAttr, Unit


@pytest.mark.parametrize("fmt", [Format.ND, Format.NCHW])
def test_the_format_attribute_refuses_a_framework_layout(fmt: Format) -> None:
    with pytest.raises(VerifyException, match=f"{fmt.value} is the layout of a type without encoding"):
        FormatAttr(fmt)


def test_a_framework_format_is_the_plain_type() -> None:
    t = TensorType(f32, (1, 3, 8, 8))
    assert with_format(t, "NCHW") == t and isinstance(with_format(t, "ND").encoding, NoneAttr)
    assert memref_of(t, "NCHW") == MemRefType(f32, (1, 3, 8, 8))
    assert str(with_format(t, "NC1HWC0")) == "tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>"


@pytest.mark.parametrize(
    ("attribute", "text"),
    [
        (KernelUnitAttr(Unit.CUBE), "#ascend.unit<cube>"),
        (KernelKindAttr(KernelKind.TRANS_DATA), "#ascend.kind<trans_data>"),
        (FormatAttr(Format.FRACTAL_NZ), "#ascend.format<FRACTAL_NZ>"),
    ],
)
def test_enum_attributes_print_and_parse_their_value_in_angle_brackets(attribute, text: str) -> None:
    assert str(attribute) == text
    assert Parser(make_context(), text).parse_attribute() == attribute


def _nc1hwc0(element, shape: tuple[int, ...]) -> TensorType:
    return TensorType(element, shape, FormatAttr(Format.NC1HWC0))


@pytest.mark.parametrize(
    ("source", "result", "error"),
    [
        # 32 channels are two whole C0 = 16 blocks and H = W = 1: the bytes are the plain (1, 32).
        (_nc1hwc0(f32, (1, 32, 1, 1)), TensorType(f32, (1, 32)), None),
        # H = W = 2 interleaves the blocks: (1, 2, 2, 2, 16) is not (1, 128) read row by row.
        (_nc1hwc0(f32, (1, 32, 2, 2)), TensorType(f32, (1, 128)), "NC1HWC0 data of"),
        # 20 channels pad to 32: the bytes hold 12 zeros the plain (1, 20) has not.
        (_nc1hwc0(f16, (1, 20, 1, 1)), TensorType(f16, (1, 20)), "NC1HWC0 data of"),
        (TensorType(f32, (2, 3)), TensorType(f16, (6,)), "a view keeps the element type"),
        (TensorType(f32, (2, 3)), TensorType(f32, (7,)), "the element counts differ"),
        (
            TensorType(f32, (1, 32, 1, 1)),
            _nc1hwc0(f32, (1, 32, 1, 1)),
            "a plain type (ND or NCHW), not NC1HWC0",
        ),
    ],
)
def test_a_view_is_the_same_bytes_or_is_refused(source, result, error: str | None) -> None:
    found = view_error(source, result)
    assert found is None if error is None else error in (found or "")
    as_memrefs = view_error(memref_of(source), memref_of(result))
    assert as_memrefs is None if error is None else error in (as_memrefs or "")


def _verify(text: str) -> None:
    Parser(make_context(), text).parse_module().verify()


def test_a_conversion_between_two_device_formats_is_one_trans_data() -> None:
    _verify(
        "func.func @f(%x: tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>) {\n"
        "  %y = ascend.kernel.trans_data %x : (tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>)"
        " -> tensor<1x16x4x4xf32, #ascend.format<FRACTAL_NZ>>\n"
        "  func.return\n}"
    )


def test_a_graph_op_refuses_a_device_format_naming_the_operand_and_the_format() -> None:
    with pytest.raises(VerifyException, match=r"'ascend.graph.relu'.*operand #0 .*#ascend.format<NC1HWC0>"):
        _verify(
            "func.func @f(%x: tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>>) {\n"
            "  %y = ascend.graph.relu %x :"
            " (tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>>) -> tensor<1x16x2x2xf32>\n"
            "  func.return\n}"
        )


def test_the_graph_dialect_re_exports_every_trait_name_once() -> None:
    assert set(traits.__all__) <= set(graph.__all__)
    assert len(graph.__all__) == len(set(graph.__all__))
    assert all(getattr(graph, name) is getattr(traits, name) for name in traits.__all__)
