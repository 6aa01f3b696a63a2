"""The graph dialect: tensor ops with no scheduling decisions yet.

Users write this level by hand and importers produce it, so its syntax is a contract:

    %y = graph.exp %x : tensor<4x8xf32>
    %z = graph.add %x, %w : tensor<4x8xf32>
    %c = graph.compare gt %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %b = graph.broadcast %v dims [0] : (tensor<4xf32>) -> tensor<4x8xf32>
    %m = graph.reduce sum %x dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>

Every op carries an op-class trait (light elementwise, expensive elementwise, reduction,
gather, compute-intensive) that fusion and code generation key on, a shape rule
(`reify_dims`, written over a `DimBuilder` index algebra: `infer_type` runs it on static
shapes for the verifier and shape inference, code generation on runtime sizes), an index
rule (`operand_indices`: which operand elements one result element reads). What each
op computes in numpy is `fsir/interpreters/graph.py`, apart from the op. Elementwise
ops are rows of the `ELEMENTWISE` table: adding one is a one-line change there.

The modules, bottom up (each imports only those above it; every name is re-exported
here, so `from fsir.dialects import graph` reaches all of them):
  types.py          element types and numpy dtypes, shapes, the index algebra, #graph.dims
  base.py           the op-class traits and `GraphOp`: custom syntax, verifier, shared rules
  elementwise.py    the `ELEMENTWISE` table and the op classes generated from it
  light.py          compare, select, convert, bitcast, constant
  shapes.py         iota, broadcast, reshape, transpose, slice, concat, pad
  reductions.py     reduce, reduce_window, segment_reduce, tile_moments, combine_moments
  gather.py         gather, scatter, sort
  contraction.py    dot and conv, and the GEMM problems they describe
"""

# Builtin types the importers name through this module (graph.IntegerType(64), ...).
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType
from xdsl.ir import Dialect

from fsir.dialects.graph.base import (
    ComputeIntensive,
    ExpensiveElementwise,
    Gather,
    GraphCanonicalization,
    GraphOp,
    LightElementwise,
    OpClass,
    OpClassTrait,
    Reduction,
    dims_property,
    i64_attr,
    op_class,
    tensor_type,
)
from fsir.dialects.graph.contraction import (
    ConvOp,
    ConvProblem,
    DotOp,
    MatmulProblem,
    check_matmul,
    matmul_problem,
    matmul_shape,
)
from fsir.dialects.graph.elementwise import (
    ANY,
    ELEMENTWISE,
    ELEMENTWISE_OPS,
    FLOAT,
    INT,
    INTEGER,
    NUMERIC,
    Elementwise,
    ElementwiseOp,
    make_elementwise,
)
from fsir.dialects.graph.gather import (
    MAX_SORT_SIZE,
    GatherOp,
    ScatterKind,
    ScatterKindAttr,
    ScatterOp,
    SortDirection,
    SortDirectionAttr,
    SortOp,
)
from fsir.dialects.graph.light import (
    BitcastOp,
    CompareDirection,
    CompareDirectionAttr,
    CompareOp,
    ConstantOp,
    ConvertOp,
    SelectOp,
    bit_width,
    constant_array,
    dense_attr,
    is_splat,
    splat_value,
    stored_values,
)
from fsir.dialects.graph.reductions import (
    CombineMomentsOp,
    ReduceKind,
    ReduceKindAttr,
    ReduceOp,
    ReduceWindowOp,
    SegmentKind,
    SegmentKindAttr,
    SegmentReduceOp,
    TileMomentsOp,
    reduce_identity,
)
from fsir.dialects.graph.shapes import (
    BroadcastOp,
    ConcatOp,
    IotaOp,
    PadMode,
    PadModeAttr,
    PadOp,
    ReshapeOp,
    SliceOp,
    TransposeOp,
    kept_dynamic_dims,
)
from fsir.dialects.graph.types import (
    DIMS_ATTR,
    DYN,
    FLOAT_TYPES,
    INT_WIDTHS,
    STATIC,
    SUPPORTED_ELEMENT_TYPES,
    TF32_DOTS,
    D,
    DimAgreement,
    DimBuilder,
    DimsAttr,
    DimsOf,
    StaticDims,
    bf16,
    compute_dtype,
    dims_compatible,
    f16,
    f32,
    float64_reference,
    fmt_shape,
    i1,
    i32,
    is_bool,
    is_float,
    is_int,
    is_unsigned,
    join_shapes,
    numpy_dtype,
    round_tf32,
    shape_of,
    shapes_compatible,
    static_dims,
    tensor,
    tf32_dots,
    unsigned,
)

Graph = Dialect(
    "graph",
    [
        *ELEMENTWISE_OPS.values(),
        CompareOp,
        SelectOp,
        ConvertOp,
        BitcastOp,
        ConstantOp,
        IotaOp,
        BroadcastOp,
        ReshapeOp,
        TransposeOp,
        SliceOp,
        ConcatOp,
        ReduceOp,
        GatherOp,
        DotOp,
        ConvOp,
        ReduceWindowOp,
        PadOp,
        ScatterOp,
        SortOp,
        SegmentReduceOp,
        TileMomentsOp,
        CombineMomentsOp,
    ],
    [ReduceKindAttr, SegmentKindAttr, PadModeAttr, CompareDirectionAttr, ScatterKindAttr, SortDirectionAttr,
     DimsAttr],
)

# The generated elementwise op classes (`AddOp`, `ExpOp`, ...) by name, as in elementwise.py.
globals().update({cls.__name__: cls for cls in ELEMENTWISE_OPS.values()})


__all__ = [
    "ANY",
    "BitcastOp",
    "BroadcastOp",
    "CombineMomentsOp",
    "CompareDirection",
    "CompareDirectionAttr",
    "CompareOp",
    "ComputeIntensive",
    "ConcatOp",
    "ConstantOp",
    "ConvOp",
    "ConvProblem",
    "ConvertOp",
    "D",
    "DIMS_ATTR",
    "DYN",
    "DimAgreement",
    "DimBuilder",
    "DimsAttr",
    "DimsOf",
    "DotOp",
    "ELEMENTWISE",
    "ELEMENTWISE_OPS",
    "Elementwise",
    "ElementwiseOp",
    "ExpensiveElementwise",
    "FLOAT",
    "FLOAT_TYPES",
    "Float32Type",
    "Float64Type",
    "Gather",
    "GatherOp",
    "GraphCanonicalization",
    "GraphOp",
    "INT",
    "INTEGER",
    "INT_WIDTHS",
    "IntegerType",
    "IotaOp",
    "LightElementwise",
    "MAX_SORT_SIZE",
    "MatmulProblem",
    "NUMERIC",
    "OpClass",
    "OpClassTrait",
    "PadMode",
    "PadModeAttr",
    "PadOp",
    "ReduceKind",
    "ReduceKindAttr",
    "ReduceOp",
    "ReduceWindowOp",
    "Reduction",
    "ReshapeOp",
    "STATIC",
    "SUPPORTED_ELEMENT_TYPES",
    "ScatterKind",
    "ScatterKindAttr",
    "ScatterOp",
    "SegmentKind",
    "SegmentKindAttr",
    "SegmentReduceOp",
    "SelectOp",
    "SliceOp",
    "SortDirection",
    "SortDirectionAttr",
    "SortOp",
    "StaticDims",
    "TileMomentsOp",
    "TransposeOp",
    "TF32_DOTS",
    "dims_property",
    "i64_attr",
    "kept_dynamic_dims",
    "make_elementwise",
    "bf16",
    "bit_width",
    "check_matmul",
    "compute_dtype",
    "constant_array",
    "dense_attr",
    "dims_compatible",
    "f16",
    "f32",
    "float64_reference",
    "fmt_shape",
    "i1",
    "i32",
    "is_bool",
    "is_float",
    "is_int",
    "is_splat",
    "is_unsigned",
    "join_shapes",
    "matmul_problem",
    "matmul_shape",
    "numpy_dtype",
    "op_class",
    "reduce_identity",
    "round_tf32",
    "shape_of",
    "shapes_compatible",
    "splat_value",
    "static_dims",
    "stored_values",
    "tensor",
    "tensor_type",
    "tf32_dots",
    "unsigned",
]
