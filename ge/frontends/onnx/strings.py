"""Converters of the text operators: StringConcat, StringSplit, StringNormalizer, RegexFullMatch,
and `ai.onnx.ml` LabelEncoder.

How many pieces a split gives and how many elements survive the stop words depend on the
strings, so those converters read the input's value with `node.value` (a constant, or the data
the graph is specialized on), as NonZero does. Equal, Where, Cast and the data-movement operators
take strings through their own converters.
"""

from __future__ import annotations

import re

import numpy as np
from onnx import numpy_helper
from xdsl.dialects.builtin import ArrayAttr, StringAttr
from xdsl.ir import Attribute

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr
from ge.dialects.graph.strings import CASE_ACTIONS, compile_pattern
from ge.dtypes import is_string
from ge.errors import UnsupportedOperatorError
from ge.graph import Tensor
from ge.semantics.strings import kept, split

from .importer import Converter, Importer, Node


def _string_concat(imp: Importer, node: Node) -> list[Tensor]:
    _since(node, 20)
    operands = [_strings(node, t) for t in node.input_tensors(2)]
    return [imp.g.add_op(ops.StringConcatOp, operands, None, node.name)]


def _string_split(imp: Importer, node: Node) -> list[Tensor]:
    """An empty string gives no pieces (as onnxruntime has it); without a delimiter the
    remainder after `maxsplit` splits is trimmed too, as the specification says."""
    _since(node, 20)
    x = _strings(node, node.input(0))
    delimiter = node.attr("delimiter") or None
    maxsplit = node.attr("maxsplit")
    if maxsplit is not None and int(maxsplit) < 0:
        raise node.invalid(f"maxsplit must be non-negative, got {maxsplit}")
    _, lengths = split(node.value(0), delimiter, None if maxsplit is None else int(maxsplit))
    props: dict[str, Attribute] = {"count": int_attr(int(lengths.max(initial=0)))}
    if delimiter is not None:
        props["delimiter"] = StringAttr(delimiter)
    if maxsplit is not None:
        props["maxsplit"] = int_attr(int(maxsplit))
    return imp.g.add_op_results(ops.StringSplitOp, [x], props, node.name)


def _string_normalizer(imp: Importer, node: Node) -> list[Tensor]:
    """Case changes follow Unicode, whatever the `locale` ("ß" becomes "SS" in upper case)."""
    _since(node, 10)
    x = _strings(node, node.input(0))
    action = str(node.attr("case_change_action", "NONE"))
    if action not in CASE_ACTIONS:
        raise node.invalid(f"case_change_action must be NONE, LOWER or UPPER, got '{action}'")
    case_sensitive = node.flag("is_case_sensitive", False)
    stopwords = tuple(_text(s) for s in node.attr("stopwords", []))
    if "" in stopwords:
        raise node.invalid("stopwords may not be empty strings")
    props = {"case_change_action": StringAttr(action), "is_case_sensitive": bool_attr(case_sensitive)}
    if stopwords:
        props["stopwords"] = ArrayAttr([StringAttr(s) for s in stopwords])
        survivors = int(kept(node.value(0).reshape(-1), stopwords, bool(case_sensitive), action).sum())
        props["count"] = int_attr(max(1, survivors))
    return [imp.g.add_op(ops.StringNormalizerOp, [x], props, node.name)]


def _regex_full_match(imp: Importer, node: Node) -> list[Tensor]:
    """Python's `re` matches, with `\\w`, `\\d`, `\\s` and `\\b` ASCII as in RE2; patterns it
    would read otherwise than RE2 (backreferences, lookarounds, possessive or atomic groups,
    POSIX classes, `{,n}`, `\\Z`, case folding of non-ASCII letters) or cannot read (`\\pL`,
    `\\Q...\\E`) are refused."""
    _since(node, 20)
    x = _strings(node, node.input(0))
    pattern = node.attr("pattern")
    if pattern is None:
        raise node.invalid("the 'pattern' attribute is missing")
    misread = python_misreads(pattern)
    if misread is not None:
        raise _unsupported(node, f"pattern '{pattern}': {misread}", "attribute")
    return [imp.g.add_op(ops.RegexFullMatchOp, [x], {"pattern": StringAttr(pattern)}, node.name)]


def _label_encoder(imp: Importer, node: Node) -> list[Tensor]:
    """Every form of the keys and values (strings, int64s, floats, tensors) and opset 1's
    `classes_strings`."""
    x = node.input(0)
    keys, values, default = _mapping(node, x)
    if is_string(x.dtype) != (keys.dtype.kind == "U"):
        raise node.invalid(f"keys of {keys.dtype} cannot match an input of {x.dtype}")
    if values.dtype.kind == "U":  # the default shares the values' width
        joined = np.array([*values.tolist(), default.item()], dtype=np.str_)
        values, default = joined[:-1], joined[-1:].reshape(())
    else:
        default = np.asarray(default).astype(values.dtype)
    operands = [
        x,
        _constant(imp, keys, f"{node.name}.keys"),
        _constant(imp, values, f"{node.name}.values"),
        _constant(imp, np.asarray(default).reshape(()), f"{node.name}.default"),
    ]
    return [imp.g.add_op(ops.LabelEncoderOp, operands, None, node.name)]


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------

_MISREAD = re.compile(
    r"\\(?P<escape>.)"
    r"|(?P<group>\(\?(?:[=!>(#]|<[=!]|P=))"
    r"|(?P<possessive>[*+?}]\+)"
    r"|(?P<lower_bound>\{,)"
    r"|(?P<posix>\[:[a-z]+:\])"
    r"|(?P<flags>\(\?[a-zA-Z]*i[a-zA-Z-]*[:)])",
    re.DOTALL,
)
_MISREAD_WHAT = {
    "group": "lookarounds, atomic groups, conditionals, comments and named backreferences are not RE2",
    "possessive": "possessive quantifiers are not RE2",
    "lower_bound": "RE2 reads '{,' literally, Python as a repetition",
    "posix": "RE2 reads '[:name:]' as a POSIX class, Python as characters",
}


def python_misreads(pattern: str) -> str | None:
    """Why Python's `re` would read `pattern` otherwise than RE2 does, or None if it reads it alike
    (as far as a scan of its syntax tells)."""
    folds = False
    for match in _MISREAD.finditer(pattern):
        kind = match.lastgroup
        if kind == "escape":
            if match["escape"] in "123456789":
                return "backreferences are not RE2"
            if match["escape"] == "Z":
                return "\\Z is not RE2"
        elif kind == "flags":
            folds = True
        elif kind is not None:  # every alternative of the scan is a named group
            return _MISREAD_WHAT[kind]
    if folds and not pattern.isascii():
        return "RE2 folds the case of non-ASCII letters, Python's ASCII mode does not"
    try:
        compile_pattern(pattern)
    except re.error as error:
        return f"Python cannot read it ({error})"
    return None


def _mapping(node: Node, x: Tensor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keys, values and the default of a LabelEncoder, as arrays."""
    if "classes_strings" in node.attrs:
        classes = np.array([_text(s) for s in node.attr("classes_strings")], dtype=np.str_)
        indices = np.arange(classes.size, dtype=np.int64)
        if is_string(x.dtype):
            return classes, indices, np.array(int(node.attr("default_int64", -1)), np.int64)
        return indices, classes, np.array(str(node.attr("default_string", "_Unused")), np.str_)
    keys, values = _attribute_array(node, "keys"), _attribute_array(node, "values")
    if "default_tensor" in node.attrs:
        return keys, values, np.asarray(numpy_helper.to_array(node.attr("default_tensor")).reshape(-1)[0])
    kind = {"U": "string", "f": "float"}.get(values.dtype.kind, "int64")
    fallback = {"string": "_Unused", "float": -0.0, "int64": -1}[kind]
    return keys, values, np.array(node.attr(f"default_{kind}", fallback))


def _attribute_array(node: Node, what: str) -> np.ndarray:
    if f"{what}_tensor" in node.attrs:
        array = numpy_helper.to_array(node.attr(f"{what}_tensor")).reshape(-1)
        return np.array(array.tolist(), dtype=np.str_) if array.dtype.kind == "O" else array
    for suffix, dtype in (("strings", np.str_), ("int64s", np.int64), ("floats", np.float32)):
        if f"{what}_{suffix}" in node.attrs:
            raw = node.attr(f"{what}_{suffix}")
            return np.array([_text(v) for v in raw] if suffix == "strings" else raw, dtype=dtype)
    raise node.invalid(f"none of the '{what}_*' attributes is set")


def _constant(imp: Importer, array: np.ndarray, name: str) -> Tensor:
    tensor = imp.g.add_constant(array, name)
    imp.known[tensor.value] = array
    return tensor


def _strings(node: Node, tensor: Tensor | None) -> Tensor:
    if tensor is None:
        raise node.invalid("a required input is missing")
    if not is_string(tensor.dtype):
        raise _unsupported(
            node, f"{tensor.dtype} inputs are not supported (the operator takes strings)", "dtype"
        )
    return tensor


def _since(node: Node, opset: int) -> None:
    if node.opset < opset:
        raise _unsupported(node, f"the operator exists from opset {opset}", "operator")


def _unsupported(node: Node, what: str, category: str) -> UnsupportedOperatorError:
    error = node.fail(what)
    error.category = category
    return error


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


CONVERTERS: dict[str, Converter] = {
    "StringConcat": _string_concat,
    "StringSplit": _string_split,
    "StringNormalizer": _string_normalizer,
    "RegexFullMatch": _regex_full_match,
}

ML_CONVERTERS: dict[str, Converter] = {
    "ai.onnx.ml::LabelEncoder": _label_encoder,
}
"""Converters of the `ai.onnx.ml` domain, keyed as `converter_key` names them."""
