from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AttributeProto(_message.Message):
    __slots__ = ("name", "f", "i", "d", "s", "t", "floats", "doubles", "ints", "strings", "tensors", "ref_attr_name", "type", "values")
    class AttributeType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        UNDEFINED: _ClassVar[AttributeProto.AttributeType]
        FLOAT: _ClassVar[AttributeProto.AttributeType]
        UINT8: _ClassVar[AttributeProto.AttributeType]
        INT8: _ClassVar[AttributeProto.AttributeType]
        UINT16: _ClassVar[AttributeProto.AttributeType]
        INT16: _ClassVar[AttributeProto.AttributeType]
        INT32: _ClassVar[AttributeProto.AttributeType]
        INT64: _ClassVar[AttributeProto.AttributeType]
        STRING: _ClassVar[AttributeProto.AttributeType]
        BOOL: _ClassVar[AttributeProto.AttributeType]
        FLOAT16: _ClassVar[AttributeProto.AttributeType]
        DOUBLE: _ClassVar[AttributeProto.AttributeType]
        UINT32: _ClassVar[AttributeProto.AttributeType]
        UINT64: _ClassVar[AttributeProto.AttributeType]
        COMPLEX64: _ClassVar[AttributeProto.AttributeType]
        COMPLEX128: _ClassVar[AttributeProto.AttributeType]
        BFLOAT16: _ClassVar[AttributeProto.AttributeType]
        TENSOR: _ClassVar[AttributeProto.AttributeType]
        GRAPH: _ClassVar[AttributeProto.AttributeType]
        TENSORS: _ClassVar[AttributeProto.AttributeType]
        TUPLE: _ClassVar[AttributeProto.AttributeType]
        LIST: _ClassVar[AttributeProto.AttributeType]
        DICT: _ClassVar[AttributeProto.AttributeType]
        UMONAD: _ClassVar[AttributeProto.AttributeType]
        IOMONAD: _ClassVar[AttributeProto.AttributeType]
        NONE: _ClassVar[AttributeProto.AttributeType]
        PRIMITIVECLOSURE: _ClassVar[AttributeProto.AttributeType]
        FUNCGRAPHCLOSURE: _ClassVar[AttributeProto.AttributeType]
        PARTIALCLOSURE: _ClassVar[AttributeProto.AttributeType]
        UNIONFUNCCLOSURE: _ClassVar[AttributeProto.AttributeType]
        CSR_TENSOR: _ClassVar[AttributeProto.AttributeType]
        COO_TENSOR: _ClassVar[AttributeProto.AttributeType]
        ROW_TENSOR: _ClassVar[AttributeProto.AttributeType]
        CLASS_TYPE: _ClassVar[AttributeProto.AttributeType]
        NAME_SPACE: _ClassVar[AttributeProto.AttributeType]
        SYMBOL: _ClassVar[AttributeProto.AttributeType]
        TYPE_NULL: _ClassVar[AttributeProto.AttributeType]
        MAP_TENSOR: _ClassVar[AttributeProto.AttributeType]
    UNDEFINED: AttributeProto.AttributeType
    FLOAT: AttributeProto.AttributeType
    UINT8: AttributeProto.AttributeType
    INT8: AttributeProto.AttributeType
    UINT16: AttributeProto.AttributeType
    INT16: AttributeProto.AttributeType
    INT32: AttributeProto.AttributeType
    INT64: AttributeProto.AttributeType
    STRING: AttributeProto.AttributeType
    BOOL: AttributeProto.AttributeType
    FLOAT16: AttributeProto.AttributeType
    DOUBLE: AttributeProto.AttributeType
    UINT32: AttributeProto.AttributeType
    UINT64: AttributeProto.AttributeType
    COMPLEX64: AttributeProto.AttributeType
    COMPLEX128: AttributeProto.AttributeType
    BFLOAT16: AttributeProto.AttributeType
    TENSOR: AttributeProto.AttributeType
    GRAPH: AttributeProto.AttributeType
    TENSORS: AttributeProto.AttributeType
    TUPLE: AttributeProto.AttributeType
    LIST: AttributeProto.AttributeType
    DICT: AttributeProto.AttributeType
    UMONAD: AttributeProto.AttributeType
    IOMONAD: AttributeProto.AttributeType
    NONE: AttributeProto.AttributeType
    PRIMITIVECLOSURE: AttributeProto.AttributeType
    FUNCGRAPHCLOSURE: AttributeProto.AttributeType
    PARTIALCLOSURE: AttributeProto.AttributeType
    UNIONFUNCCLOSURE: AttributeProto.AttributeType
    CSR_TENSOR: AttributeProto.AttributeType
    COO_TENSOR: AttributeProto.AttributeType
    ROW_TENSOR: AttributeProto.AttributeType
    CLASS_TYPE: AttributeProto.AttributeType
    NAME_SPACE: AttributeProto.AttributeType
    SYMBOL: AttributeProto.AttributeType
    TYPE_NULL: AttributeProto.AttributeType
    MAP_TENSOR: AttributeProto.AttributeType
    NAME_FIELD_NUMBER: _ClassVar[int]
    F_FIELD_NUMBER: _ClassVar[int]
    I_FIELD_NUMBER: _ClassVar[int]
    D_FIELD_NUMBER: _ClassVar[int]
    S_FIELD_NUMBER: _ClassVar[int]
    T_FIELD_NUMBER: _ClassVar[int]
    FLOATS_FIELD_NUMBER: _ClassVar[int]
    DOUBLES_FIELD_NUMBER: _ClassVar[int]
    INTS_FIELD_NUMBER: _ClassVar[int]
    STRINGS_FIELD_NUMBER: _ClassVar[int]
    TENSORS_FIELD_NUMBER: _ClassVar[int]
    REF_ATTR_NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    name: str
    f: float
    i: int
    d: float
    s: bytes
    t: TensorProto
    floats: _containers.RepeatedScalarFieldContainer[float]
    doubles: _containers.RepeatedScalarFieldContainer[float]
    ints: _containers.RepeatedScalarFieldContainer[int]
    strings: _containers.RepeatedScalarFieldContainer[bytes]
    tensors: _containers.RepeatedCompositeFieldContainer[TensorProto]
    ref_attr_name: str
    type: AttributeProto.AttributeType
    values: _containers.RepeatedCompositeFieldContainer[AttributeProto]
    def __init__(self, name: _Optional[str] = ..., f: _Optional[float] = ..., i: _Optional[int] = ..., d: _Optional[float] = ..., s: _Optional[bytes] = ..., t: _Optional[_Union[TensorProto, _Mapping]] = ..., floats: _Optional[_Iterable[float]] = ..., doubles: _Optional[_Iterable[float]] = ..., ints: _Optional[_Iterable[int]] = ..., strings: _Optional[_Iterable[bytes]] = ..., tensors: _Optional[_Iterable[_Union[TensorProto, _Mapping]]] = ..., ref_attr_name: _Optional[str] = ..., type: _Optional[_Union[AttributeProto.AttributeType, str]] = ..., values: _Optional[_Iterable[_Union[AttributeProto, _Mapping]]] = ...) -> None: ...

class ValueInfoProto(_message.Message):
    __slots__ = ("name", "tensor", "attr_info")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TENSOR_FIELD_NUMBER: _ClassVar[int]
    ATTR_INFO_FIELD_NUMBER: _ClassVar[int]
    name: str
    tensor: _containers.RepeatedCompositeFieldContainer[TensorProto]
    attr_info: AttributeProto
    def __init__(self, name: _Optional[str] = ..., tensor: _Optional[_Iterable[_Union[TensorProto, _Mapping]]] = ..., attr_info: _Optional[_Union[AttributeProto, _Mapping]] = ...) -> None: ...

class NodeProto(_message.Message):
    __slots__ = ("input", "output", "name", "op_type", "attribute", "domain")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OP_TYPE_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    input: _containers.RepeatedScalarFieldContainer[str]
    output: _containers.RepeatedScalarFieldContainer[str]
    name: str
    op_type: str
    attribute: _containers.RepeatedCompositeFieldContainer[AttributeProto]
    domain: str
    def __init__(self, input: _Optional[_Iterable[str]] = ..., output: _Optional[_Iterable[str]] = ..., name: _Optional[str] = ..., op_type: _Optional[str] = ..., attribute: _Optional[_Iterable[_Union[AttributeProto, _Mapping]]] = ..., domain: _Optional[str] = ...) -> None: ...

class ModelProto(_message.Message):
    __slots__ = ("ir_version", "producer_name", "producer_version", "graph", "functions", "little_endian", "primitives", "mind_ir_version")
    IR_VERSION_FIELD_NUMBER: _ClassVar[int]
    PRODUCER_NAME_FIELD_NUMBER: _ClassVar[int]
    PRODUCER_VERSION_FIELD_NUMBER: _ClassVar[int]
    GRAPH_FIELD_NUMBER: _ClassVar[int]
    FUNCTIONS_FIELD_NUMBER: _ClassVar[int]
    LITTLE_ENDIAN_FIELD_NUMBER: _ClassVar[int]
    PRIMITIVES_FIELD_NUMBER: _ClassVar[int]
    MIND_IR_VERSION_FIELD_NUMBER: _ClassVar[int]
    ir_version: str
    producer_name: str
    producer_version: str
    graph: GraphProto
    functions: _containers.RepeatedCompositeFieldContainer[GraphProto]
    little_endian: bool
    primitives: _containers.RepeatedCompositeFieldContainer[PrimitiveProto]
    mind_ir_version: int
    def __init__(self, ir_version: _Optional[str] = ..., producer_name: _Optional[str] = ..., producer_version: _Optional[str] = ..., graph: _Optional[_Union[GraphProto, _Mapping]] = ..., functions: _Optional[_Iterable[_Union[GraphProto, _Mapping]]] = ..., little_endian: _Optional[bool] = ..., primitives: _Optional[_Iterable[_Union[PrimitiveProto, _Mapping]]] = ..., mind_ir_version: _Optional[int] = ...) -> None: ...

class GraphProto(_message.Message):
    __slots__ = ("node", "name", "parameter", "input", "output")
    NODE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMETER_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    node: _containers.RepeatedCompositeFieldContainer[NodeProto]
    name: str
    parameter: _containers.RepeatedCompositeFieldContainer[TensorProto]
    input: _containers.RepeatedCompositeFieldContainer[ValueInfoProto]
    output: _containers.RepeatedCompositeFieldContainer[ValueInfoProto]
    def __init__(self, node: _Optional[_Iterable[_Union[NodeProto, _Mapping]]] = ..., name: _Optional[str] = ..., parameter: _Optional[_Iterable[_Union[TensorProto, _Mapping]]] = ..., input: _Optional[_Iterable[_Union[ValueInfoProto, _Mapping]]] = ..., output: _Optional[_Iterable[_Union[ValueInfoProto, _Mapping]]] = ...) -> None: ...

class TensorProto(_message.Message):
    __slots__ = ("dims", "data_type", "float_data", "int32_data", "int64_data", "name", "raw_data", "double_data", "external_data", "ref_key")
    class DataType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        UNDEFINED: _ClassVar[TensorProto.DataType]
        FLOAT: _ClassVar[TensorProto.DataType]
        UINT8: _ClassVar[TensorProto.DataType]
        INT8: _ClassVar[TensorProto.DataType]
        UINT16: _ClassVar[TensorProto.DataType]
        INT16: _ClassVar[TensorProto.DataType]
        INT32: _ClassVar[TensorProto.DataType]
        INT64: _ClassVar[TensorProto.DataType]
        STRING: _ClassVar[TensorProto.DataType]
        BOOL: _ClassVar[TensorProto.DataType]
        FLOAT16: _ClassVar[TensorProto.DataType]
        DOUBLE: _ClassVar[TensorProto.DataType]
        UINT32: _ClassVar[TensorProto.DataType]
        UINT64: _ClassVar[TensorProto.DataType]
        COMPLEX64: _ClassVar[TensorProto.DataType]
        COMPLEX128: _ClassVar[TensorProto.DataType]
        BFLOAT16: _ClassVar[TensorProto.DataType]
        FLOAT64: _ClassVar[TensorProto.DataType]
    UNDEFINED: TensorProto.DataType
    FLOAT: TensorProto.DataType
    UINT8: TensorProto.DataType
    INT8: TensorProto.DataType
    UINT16: TensorProto.DataType
    INT16: TensorProto.DataType
    INT32: TensorProto.DataType
    INT64: TensorProto.DataType
    STRING: TensorProto.DataType
    BOOL: TensorProto.DataType
    FLOAT16: TensorProto.DataType
    DOUBLE: TensorProto.DataType
    UINT32: TensorProto.DataType
    UINT64: TensorProto.DataType
    COMPLEX64: TensorProto.DataType
    COMPLEX128: TensorProto.DataType
    BFLOAT16: TensorProto.DataType
    FLOAT64: TensorProto.DataType
    class ExternalDataProto(_message.Message):
        __slots__ = ("location", "offset", "length")
        LOCATION_FIELD_NUMBER: _ClassVar[int]
        OFFSET_FIELD_NUMBER: _ClassVar[int]
        LENGTH_FIELD_NUMBER: _ClassVar[int]
        location: str
        offset: int
        length: int
        def __init__(self, location: _Optional[str] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ...) -> None: ...
    DIMS_FIELD_NUMBER: _ClassVar[int]
    DATA_TYPE_FIELD_NUMBER: _ClassVar[int]
    FLOAT_DATA_FIELD_NUMBER: _ClassVar[int]
    INT32_DATA_FIELD_NUMBER: _ClassVar[int]
    INT64_DATA_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RAW_DATA_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_DATA_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_DATA_FIELD_NUMBER: _ClassVar[int]
    REF_KEY_FIELD_NUMBER: _ClassVar[int]
    dims: _containers.RepeatedScalarFieldContainer[int]
    data_type: int
    float_data: _containers.RepeatedScalarFieldContainer[float]
    int32_data: _containers.RepeatedScalarFieldContainer[int]
    int64_data: _containers.RepeatedScalarFieldContainer[int]
    name: str
    raw_data: bytes
    double_data: _containers.RepeatedScalarFieldContainer[float]
    external_data: TensorProto.ExternalDataProto
    ref_key: str
    def __init__(self, dims: _Optional[_Iterable[int]] = ..., data_type: _Optional[int] = ..., float_data: _Optional[_Iterable[float]] = ..., int32_data: _Optional[_Iterable[int]] = ..., int64_data: _Optional[_Iterable[int]] = ..., name: _Optional[str] = ..., raw_data: _Optional[bytes] = ..., double_data: _Optional[_Iterable[float]] = ..., external_data: _Optional[_Union[TensorProto.ExternalDataProto, _Mapping]] = ..., ref_key: _Optional[str] = ...) -> None: ...

class PrimitiveProto(_message.Message):
    __slots__ = ("name", "op_type", "attribute", "instance_name")
    NAME_FIELD_NUMBER: _ClassVar[int]
    OP_TYPE_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    op_type: str
    attribute: _containers.RepeatedCompositeFieldContainer[AttributeProto]
    instance_name: str
    def __init__(self, name: _Optional[str] = ..., op_type: _Optional[str] = ..., attribute: _Optional[_Iterable[_Union[AttributeProto, _Mapping]]] = ..., instance_name: _Optional[str] = ...) -> None: ...
