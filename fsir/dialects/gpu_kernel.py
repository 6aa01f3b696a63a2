"""MLIR's gpu ops that hold and launch kernels, with MLIR's custom syntax: `gpu.module`,
`gpu.func` (workgroup attributions, kernel attributes), `gpu.return`, `gpu.launch_func`.
Registered in the gpu dialect (gpu.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
    i32,
    i64,
)
from xdsl.dialects.builtin import ModuleOp as BuiltinModuleOp
from xdsl.ir import (
    Attribute,
    Block,
    Operation,
    Region,
    SSAValue,
)
from xdsl.irdl import (
    AnyOf,
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    NoTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from fsir.dialects.common import print_result_types
from fsir.dialects.gpu_memory import PRIVATE_ADDRESS_SPACE, WORKGROUP_ADDRESS_SPACE, AsyncTokenType, memory_space_of

# ------------------------------------------------------------------ module and func


@irdl_op_definition
class ModuleOp(IRDLOperation):
    """A module of device code (compiled into one PTX module).

    ```mlir
    gpu.module @kernels {
      gpu.func @k() kernel {
        gpu.return
      }
    }
    ```
    """

    name = "gpu.module"

    body = region_def("single_block")
    sym_name = prop_def(SymbolNameConstraint())

    traits = traits_def(
        IsolatedFromAbove(), NoTerminator(), SymbolOpInterface(), SymbolTable()
    )

    def __init__(self, name: str | StringAttr, body: Region | None = None):
        if isinstance(name, str):
            name = StringAttr(name)
        if body is None:
            body = Region(Block())
        super().__init__(properties={"sym_name": name}, regions=[body])

    @classmethod
    def parse(cls, parser: Parser) -> ModuleOp:
        name = parser.parse_symbol_name()
        attrs = parser.parse_optional_attr_dict_with_keyword(["sym_name"])
        body = parser.parse_region()
        if not body.blocks:
            body.add_block(Block())
        op = cls(name, body)
        if attrs is not None:
            op.attributes |= attrs.data
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, False, False)


_FUNC_RESERVED = (
    "sym_name",
    "function_type",
    "gpu.kernel",
    "workgroup_attributions",
    "arg_attrs",
    "res_attrs",
)


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A device function; with `kernel`, an entry point launched by gpu.launch_func.

    The entry block takes the function arguments, then one argument per workgroup
    attribution (a statically shaped memref in address space 3: a shared-memory buffer
    of the block), then one per private attribution (address space 5).

    ```mlir
    gpu.func @k(%a: memref<?xf32>, %n: index) workgroup(%smem : memref<256xf32, 3>) kernel
        attributes {gpu.known_block_size = array<i32: 256, 1, 1>} {
      gpu.return
    }
    ```
    """

    name = "gpu.func"

    body = region_def()
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    workgroup_attributions = opt_prop_def(IntegerAttr)
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    kernel = opt_attr_def(UnitAttr, attr_name="gpu.kernel")
    known_block_size = opt_attr_def(
        DenseArrayBase.constr(i32), attr_name="gpu.known_block_size"
    )
    known_grid_size = opt_attr_def(
        DenseArrayBase.constr(i32), attr_name="gpu.known_grid_size"
    )

    traits = traits_def(IsolatedFromAbove(), HasParent(ModuleOp), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        function_type: FunctionType | tuple[Sequence[Attribute], Sequence[Attribute]],
        region: Region | None = None,
        kernel: bool = False,
        workgroup: Sequence[Attribute] = (),
        private: Sequence[Attribute] = (),
        known_block_size: Sequence[int] | None = None,
        known_grid_size: Sequence[int] | None = None,
    ):
        if isinstance(function_type, tuple):
            inputs, outputs = function_type
            function_type = FunctionType.from_lists(inputs, outputs)
        if region is None:
            region = Region(
                Block(
                    arg_types=[*function_type.inputs.data, *workgroup, *private]
                )
            )
        properties: dict[str, Attribute | None] = {
            "sym_name": StringAttr(name),
            "function_type": function_type,
        }
        if workgroup:
            properties["workgroup_attributions"] = IntegerAttr(len(workgroup), i64)
        attributes: dict[str, Attribute | None] = {}
        if kernel:
            attributes["gpu.kernel"] = UnitAttr()
        if known_block_size is not None:
            attributes["gpu.known_block_size"] = DenseArrayBase.from_list(
                i32, known_block_size
            )
        if known_grid_size is not None:
            attributes["gpu.known_grid_size"] = DenseArrayBase.from_list(
                i32, known_grid_size
            )
        super().__init__(properties=properties, attributes=attributes, regions=[region])

    @property
    def is_kernel(self) -> bool:
        return self.kernel is not None

    @property
    def num_workgroup_attributions(self) -> int:
        n = self.workgroup_attributions
        return 0 if n is None else n.value.data

    @property
    def arguments(self) -> tuple[SSAValue, ...]:
        """The entry-block arguments that are function arguments."""
        n = len(self.function_type.inputs)
        return tuple(self.body.blocks[0].args[:n])

    @property
    def workgroup_buffers(self) -> tuple[SSAValue, ...]:
        n = len(self.function_type.inputs)
        return tuple(
            self.body.blocks[0].args[n : n + self.num_workgroup_attributions]
        )

    @property
    def private_buffers(self) -> tuple[SSAValue, ...]:
        n = len(self.function_type.inputs) + self.num_workgroup_attributions
        return tuple(self.body.blocks[0].args[n:])

    def verify_(self) -> None:
        if not self.body.blocks:
            raise VerifyException("gpu.func must have a body")
        inputs = self.function_type.inputs.data
        args = self.body.blocks[0].args
        nwg = self.num_workgroup_attributions
        if len(args) < len(inputs) + nwg or tuple(
            a.type for a in args[: len(inputs)]
        ) != tuple(inputs):
            raise VerifyException(
                "gpu.func entry block arguments must be the function inputs followed "
                "by the workgroup and private attributions"
            )
        for a in self.workgroup_buffers:
            t = a.type
            if (
                not isinstance(t, MemRefType)
                or memory_space_of(t) != WORKGROUP_ADDRESS_SPACE
                or not t.has_static_shape()
            ):
                raise VerifyException(
                    "gpu.func workgroup attribution must be a statically shaped "
                    f"memref in address space 3, got {t}"
                )
        for a in self.private_buffers:
            t = a.type
            if (
                not isinstance(t, MemRefType)
                or memory_space_of(t) != PRIVATE_ADDRESS_SPACE
                or not t.has_static_shape()
            ):
                raise VerifyException(
                    "gpu.func private attribution must be a statically shaped "
                    f"memref in address space 5, got {t}"
                )
        if self.is_kernel and self.function_type.outputs.data:
            raise VerifyException("gpu.func kernel must not return values")

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name = parser.parse_symbol_name()

        def parse_arg() -> tuple[Parser.Argument, dict[str, Attribute]]:
            arg = parser.parse_argument()
            return arg, parser.parse_optional_dictionary_attr_dict()

        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_arg)
        outputs: list[Attribute] = []
        if parser.parse_optional_punctuation("->"):
            types = parser.parse_optional_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_type
            )
            outputs = list(types) if types is not None else [parser.parse_type()]

        workgroup: list[Parser.Argument] = []
        private: list[Parser.Argument] = []
        if parser.parse_optional_keyword("workgroup"):
            workgroup = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_argument
            )
        if parser.parse_optional_keyword("private"):
            private = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_argument
            )
        kernel = parser.parse_optional_keyword("kernel") is not None
        attrs = parser.parse_optional_attr_dict_with_keyword(_FUNC_RESERVED)
        entry = [a for a, _ in args] + workgroup + private
        body = parser.parse_region(entry)
        op = cls(
            name.data,
            ([a.type for a, _ in args], outputs),
            body,
            kernel=kernel,
            workgroup=[a.type for a in workgroup],
        )
        if any(d for _, d in args):
            op.arg_attrs = ArrayAttr(DictionaryAttr(d) for _, d in args)
        if attrs is not None:
            op.attributes |= attrs.data
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string("(")
        arg_attrs = self.arg_attrs.data if self.arg_attrs is not None else None

        def print_arg(i_arg: tuple[int, SSAValue]) -> None:
            i, arg = i_arg
            printer.print_ssa_value(arg)
            printer.print_string(": ")
            printer.print_attribute(arg.type)
            if arg_attrs is not None and arg_attrs[i].data:
                printer.print_string(" ")
                printer.print_attr_dict(arg_attrs[i].data)

        printer.print_list(enumerate(self.arguments), print_arg)
        printer.print_string(")")
        outputs = self.function_type.outputs.data
        if outputs:
            printer.print_string(" -> ")
            print_result_types(printer, outputs)

        def print_attribution(keyword: str, values: Sequence[SSAValue]) -> None:
            if not values:
                return
            printer.print_string(f" {keyword}(")

            def print_one(v: SSAValue) -> None:
                printer.print_ssa_value(v)
                printer.print_string(" : ")
                printer.print_attribute(v.type)

            printer.print_list(values, print_one)
            printer.print_string(")")

        print_attribution("workgroup", self.workgroup_buffers)
        print_attribution("private", self.private_buffers)
        if self.is_kernel:
            printer.print_string(" kernel")
        printer.print_op_attributes(
            self.attributes, reserved_attr_names=_FUNC_RESERVED, print_keyword=True
        )
        printer.print_string(" ")
        printer.print_region(self.body, False, True)


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Terminates a gpu.func.

    ```mlir
    gpu.return
    gpu.return %x : f32
    ```
    """

    name = "gpu.return"
    args = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(FuncOp), Pure())
    assembly_format = "attr-dict ($args^ `:` type($args))?"

    def __init__(self, operands: Sequence[SSAValue | Operation] = ()):
        super().__init__(operands=[operands])

    def verify_(self) -> None:
        func = self.parent_op()
        if isinstance(func, FuncOp):
            expected = func.function_type.outputs.data
            if tuple(self.args.types) != tuple(expected):
                raise VerifyException(
                    "gpu.return operand types "
                    f"({', '.join(map(str, self.args.types))}) do not match the "
                    f"gpu.func result types ({', '.join(map(str, expected))})"
                )


# ---------------------------------------------------------------------- launch_func

_LaunchDim = AnyOf.get(IndexType, i32, i64)


@irdl_op_definition
class LaunchFuncOp(IRDLOperation):
    """Launches a kernel on a grid of blocks (host side).

    ```mlir
    gpu.launch_func @kernels::@k blocks in (%gx, %c1, %c1) threads in (%c256, %c1, %c1)
        dynamic_shared_memory_size %smem args(%x : memref<?xf32>, %n : index)
    ```
    """

    name = "gpu.launch_func"
    asyncDependencies = var_operand_def(AsyncTokenType)
    gridSizeX = operand_def(_LaunchDim)
    gridSizeY = operand_def(_LaunchDim)
    gridSizeZ = operand_def(_LaunchDim)
    blockSizeX = operand_def(_LaunchDim)
    blockSizeY = operand_def(_LaunchDim)
    blockSizeZ = operand_def(_LaunchDim)
    clusterSizeX = opt_operand_def(_LaunchDim)
    clusterSizeY = opt_operand_def(_LaunchDim)
    clusterSizeZ = opt_operand_def(_LaunchDim)
    dynamicSharedMemorySize = opt_operand_def(i32)
    kernelOperands = var_operand_def()
    asyncObject = opt_operand_def()

    asyncToken = opt_result_def(AsyncTokenType)

    kernel = prop_def(SymbolRefAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        kernel: SymbolRefAttr,
        grid: Sequence[SSAValue | Operation],
        block: Sequence[SSAValue | Operation],
        args: Sequence[SSAValue | Operation] = (),
        dynamic_shared_memory_size: SSAValue | Operation | None = None,
        cluster: Sequence[SSAValue | Operation] | None = None,
        async_dependencies: Sequence[SSAValue | Operation] = (),
        async_launch: bool = False,
    ):
        if len(grid) != 3 or len(block) != 3:
            raise ValueError("gpu.launch_func needs 3 grid and 3 block sizes")
        cl: Sequence[Sequence[SSAValue | Operation]] = (
            [[], [], []] if cluster is None else [[c] for c in cluster]
        )
        super().__init__(
            operands=[
                async_dependencies,
                *grid,
                *block,
                *cl,
                [] if dynamic_shared_memory_size is None else [dynamic_shared_memory_size],
                args,
                [],
            ],
            result_types=[[AsyncTokenType()] if async_launch else []],
            properties={"kernel": kernel},
        )

    @classmethod
    def parse(cls, parser: Parser) -> LaunchFuncOp:
        async_launch = parser.parse_optional_keyword("async") is not None
        deps: list[SSAValue] = []
        if async_launch or parser._current_token.text == "[":
            dep_list = parser.parse_optional_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_unresolved_operand
            )
            if dep_list is not None:
                deps = [parser.resolve_operand(d, AsyncTokenType()) for d in dep_list]
        kernel = parser.parse_attribute()
        if not isinstance(kernel, SymbolRefAttr):
            parser.raise_error("gpu.launch_func expects a kernel symbol @module::@kernel")

        def parse_triple(keyword: str) -> list[UnresolvedOperand]:
            parser.parse_keyword(keyword)
            parser.parse_keyword("in")
            ops = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_unresolved_operand
            )
            if len(ops) != 3:
                parser.raise_error(f"expected 3 {keyword} sizes")
            return ops

        cluster = None
        if parser._current_token.text == "clusters":
            cluster = parse_triple("clusters")
        grid = parse_triple("blocks")
        block = parse_triple("threads")
        dim_type: Attribute = IndexType()
        if parser.parse_optional_punctuation(":"):
            dim_type = parser.parse_type()
        smem = None
        if parser.parse_optional_keyword("dynamic_shared_memory_size"):
            smem = parser.resolve_operand(parser.parse_unresolved_operand(), i32)
        args: list[SSAValue] = []
        if parser.parse_optional_keyword("args"):

            def parse_arg() -> SSAValue:
                u = parser.parse_unresolved_operand()
                parser.parse_punctuation(":")
                return parser.resolve_operand(u, parser.parse_type())

            args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_arg)
        attrs = parser.parse_optional_attr_dict()
        op = cls(
            kernel,
            [parser.resolve_operand(u, dim_type) for u in grid],
            [parser.resolve_operand(u, dim_type) for u in block],
            args,
            smem,
            None if cluster is None else [parser.resolve_operand(u, dim_type) for u in cluster],
            deps,
            async_launch,
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        if self.asyncToken is not None:
            printer.print_string(" async")
        if self.asyncDependencies:
            printer.print_string(" [")
            printer.print_list(self.asyncDependencies, printer.print_operand)
            printer.print_string("]")
        printer.print_string(" ")
        printer.print_attribute(self.kernel)

        def print_triple(keyword: str, ops: Sequence[SSAValue]) -> None:
            printer.print_string(f" {keyword} in (")
            printer.print_list(ops, printer.print_operand)
            printer.print_string(")")

        if self.clusterSizeX is not None:
            assert self.clusterSizeY is not None and self.clusterSizeZ is not None
            print_triple(
                "clusters", [self.clusterSizeX, self.clusterSizeY, self.clusterSizeZ]
            )
        print_triple("blocks", [self.gridSizeX, self.gridSizeY, self.gridSizeZ])
        print_triple("threads", [self.blockSizeX, self.blockSizeY, self.blockSizeZ])
        if not isinstance(self.gridSizeX.type, IndexType):
            printer.print_string(" : ")
            printer.print_attribute(self.gridSizeX.type)
        if self.dynamicSharedMemorySize is not None:
            printer.print_string(" dynamic_shared_memory_size ")
            printer.print_operand(self.dynamicSharedMemorySize)
        if self.kernelOperands:
            printer.print_string(" args(")

            def print_arg(v: SSAValue) -> None:
                printer.print_operand(v)
                printer.print_string(" : ")
                printer.print_attribute(v.type)

            printer.print_list(self.kernelOperands, print_arg)
            printer.print_string(")")
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        dims = [
            self.gridSizeX, self.gridSizeY, self.gridSizeZ,
            self.blockSizeX, self.blockSizeY, self.blockSizeZ,
        ]  # fmt: skip
        if len({d.type for d in dims}) != 1:
            raise VerifyException("gpu.launch_func grid and block sizes must share one type")
        module = self.parent_op()
        while module is not None and not isinstance(module, BuiltinModuleOp):
            module = module.parent_op()
        if module is None:
            return
        if "gpu.container_module" not in module.attributes:
            raise VerifyException(
                "gpu.launch_func expects the closest surrounding module to have the "
                "'gpu.container_module' attribute"
            )
        kernel = SymbolTable.lookup_symbol(module, self.kernel)
        if kernel is None:
            return
        if not isinstance(kernel, FuncOp):
            raise VerifyException(
                f"gpu.launch_func: symbol {self.kernel} is not a gpu.func"
            )
        if not kernel.is_kernel:
            raise VerifyException(
                f"gpu.launch_func: {self.kernel} is not a kernel (missing 'kernel')"
            )
        expected = tuple(kernel.function_type.inputs.data)
        got = tuple(self.kernelOperands.types)
        if expected != got:
            raise VerifyException(
                f"gpu.launch_func arguments ({', '.join(map(str, got))}) do not match "
                f"the signature of {self.kernel} ({', '.join(map(str, expected))})"
            )
