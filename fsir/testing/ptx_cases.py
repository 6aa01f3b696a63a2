"""Generated gpu-level kernels covering every op/type combination the PTX printer supports.

Each case is a kernel computing a list of one-op expressions of its inputs; expression k
of element i is stored at y[k*n + i] so every result stays observable.
"""

from __future__ import annotations

from dataclasses import dataclass

INT_TYPES = ["i1", "i8", "i16", "i32", "i64", "index"]
FLOAT_TYPES = ["f16", "bf16", "f32", "f64"]
INT_BIN = ["addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "floordivsi",
           "ceildivsi", "ceildivui", "maxsi", "minsi", "maxui", "minui", "andi", "ori",
           "xori", "shli", "shrsi", "shrui"]  # fmt: skip
CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
        "ult", "ule", "une", "uno", "true"]  # fmt: skip
FLOAT_BIN = ["addf", "subf", "mulf", "divf", "maximumf", "minimumf", "maxnumf", "minnumf"]
MATH_UNARY_F32 = ["exp", "exp2", "log", "log2", "log10", "log1p", "tanh", "erf", "sin",
                  "cos"]  # fmt: skip
MATH_UNARY_ANY = ["sqrt", "rsqrt", "absf", "floor", "ceil", "trunc", "roundeven", "round"]


def width(t: str) -> int:
    return 64 if t == "index" else int(t[1:]) if t.startswith("i") else {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[t]


@dataclass
class Case:
    name: str
    in_types: list[str]
    out_type: str
    exprs: list[str]  # each uses %a0, %a1, %a2 and is one op producing out_type

    def kernel(self) -> str:
        args = ", ".join(f"%x{k}: memref<?x{t}>" for k, t in enumerate(self.in_types))
        lines = [
            f"  gpu.func @{self.name}({args}, %y: memref<?x{self.out_type}>, %n: index) kernel {{",
            "    %i = gpu.global_id x",
            "    %in = arith.cmpi ult, %i, %n : index",
            "    scf.if %in {",
        ]
        for k, t in enumerate(self.in_types):
            lines.append(f"      %a{k} = memref.load %x{k}[%i] : memref<?x{t}>")
        for k, e in enumerate(self.exprs):
            lines.append(f"      %c{k} = arith.constant {k} : index")
            lines.append(f"      %o{k} = arith.muli %c{k}, %n : index")
            lines.append(f"      %j{k} = arith.addi %o{k}, %i : index")
            lines.append(f"      %r{k} = {e}")
            lines.append(f"      memref.store %r{k}, %y[%j{k}] : memref<?x{self.out_type}>")
        lines += ["    }", "    gpu.return", "  }"]
        return "\n".join(lines)


def _ident(t: str) -> str:
    return t.replace("index", "idx")


def cases() -> list[Case]:
    out: list[Case] = []
    for t in INT_TYPES:
        ops = [
            o
            for o in INT_BIN
            if not (t == "i1" and o in ("divsi", "divui", "remsi", "remui", "floordivsi", "ceildivsi", "ceildivui"))
        ]
        out.append(Case(f"int_bin_{_ident(t)}", [t, t], t, [f"arith.{o} %a0, %a1 : {t}" for o in ops]))
        out.append(Case(f"cmpi_{_ident(t)}", [t, t], "i1", [f"arith.cmpi {p}, %a0, %a1 : {t}" for p in CMPI]))
        out.append(Case(f"select_{_ident(t)}", ["i1", t, t], t, [f"arith.select %a0, %a1, %a2 : {t}"]))
        if t != "i1":
            out.append(Case(f"absi_{_ident(t)}", [t], t, [f"math.absi %a0 : {t}"]))
        if t in ("i32", "i64"):
            out.append(Case(f"bits_{t}", [t], t, [f"math.ctpop %a0 : {t}", f"math.ctlz %a0 : {t}"]))
        c = {"i1": "true", "i8": "-7", "i16": "-300", "i32": "-70000", "i64": "-5000000000", "index": "12345"}[t]
        expr = "arith.constant true" if t == "i1" else f"arith.constant {c} : {t}"
        out.append(Case(f"const_{_ident(t)}", [t], t, [expr]))
    # integer casts between all widths
    for s in INT_TYPES:
        for d in INT_TYPES:
            if s == d:
                continue
            if "index" in (s, d):
                out.append(Case(f"icast_{_ident(s)}_{_ident(d)}", [s], d, [f"arith.index_cast %a0 : {s} to {d}"]))
            elif width(d) > width(s):
                out.append(
                    Case(f"ext_{s}_{d}", [s], d, [f"arith.extsi %a0 : {s} to {d}", f"arith.extui %a0 : {s} to {d}"])
                )
            else:
                out.append(Case(f"trunc_{s}_{d}", [s], d, [f"arith.trunci %a0 : {s} to {d}"]))
    for t in FLOAT_TYPES:
        out.append(
            Case(
                f"float_bin_{t}",
                [t, t],
                t,
                [f"arith.{o} %a0, %a1 : {t}" for o in FLOAT_BIN]
                + [f"arith.negf %a0 : {t}", f"math.fma %a0, %a1, %a0 : {t}", f"math.copysign %a0, %a1 : {t}"],
            )
        )
        out.append(Case(f"cmpf_{t}", [t, t], "i1", [f"arith.cmpf {p}, %a0, %a1 : {t}" for p in CMPF]))
        out.append(Case(f"select_{t}", ["i1", t, t], t, [f"arith.select %a0, %a1, %a2 : {t}"]))
        unary = MATH_UNARY_ANY + (MATH_UNARY_F32 if t != "f64" else [])
        out.append(Case(f"math_{t}", [t], t, [f"math.{o} %a0 : {t}" for o in unary]))
        if t != "f64":
            out.append(Case(f"powf_{t}", [t, t], t, [f"math.powf %a0, %a1 : {t}"]))
        out.append(
            Case(
                f"const_{t}",
                [t],
                t,
                [
                    f"arith.constant -1.5 : {t}",
                    "arith.constant 0x7F800000 : f32" if t == "f32" else f"arith.constant 3.0e-3 : {t}",
                ],
            )
        )
        for it in INT_TYPES:
            if it == "index":
                continue
            out.append(
                Case(f"itof_{it}_{t}", [it], t, [f"arith.sitofp %a0 : {it} to {t}", f"arith.uitofp %a0 : {it} to {t}"])
            )
            if it != "i1":
                out.append(
                    Case(
                        f"ftoi_{t}_{it}",
                        [t],
                        it,
                        [f"arith.fptosi %a0 : {t} to {it}", f"arith.fptoui %a0 : {t} to {it}"],
                    )
                )
        for d in FLOAT_TYPES:
            if d == t:
                continue
            if width(d) > width(t) or {t, d} == {"f16", "bf16"}:
                out.append(Case(f"extf_{t}_{d}", [t], d, [f"arith.extf %a0 : {t} to {d}"]))
            if width(d) < width(t) or {t, d} == {"f16", "bf16"}:
                out.append(Case(f"truncf_{t}_{d}", [t], d, [f"arith.truncf %a0 : {t} to {d}"]))
        it = {"f16": "i16", "bf16": "i16", "f32": "i32", "f64": "i64"}[t]
        out.append(Case(f"bitcast_{t}", [t], it, [f"arith.bitcast %a0 : {t} to {it}"]))
        out.append(Case(f"bitcast_back_{t}", [it], t, [f"arith.bitcast %a0 : {it} to {t}"]))
    return out


def cases_module(selected: list[Case] | None = None) -> str:
    selected = cases() if selected is None else selected
    body = "\n".join(c.kernel() for c in selected)
    return (
        "builtin.module attributes {gpu.container_module} {\n"
        f"gpu.module @kernels {{\n{body}\n}}\n}}\n"
    )
