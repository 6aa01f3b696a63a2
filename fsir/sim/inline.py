"""Inline PTX device-function calls (`call`) into the calling kernel, before decoding.

The simulator executes straight-line lane groups, so a call is expanded in place:

  * the callee's registers, labels and `.local` variables get a per-call-site suffix;
  * the call site's `.param` variables (nvcc declares them in a `{ // callseq }` scope) become
    per-thread `.local` variables, and `st.param`/`ld.param` on them become `st.local`/`ld.local`;
  * inside the callee, its parameters and return parameters are renamed to the caller's
    argument and return variables (so `ld.param [f_param_0]` reads the caller's argument);
  * `ret` in the callee becomes a branch to a label after the inlined body.

Recursion (direct or indirect) and indirect calls through a register are rejected.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from fsir.sim.parser import (
    CallList,
    Function,
    Instr,
    Label,
    Mem,
    NotReg,
    Pair,
    PTXModule,
    Reg,
    VarDecl,
    Vec,
)

MAX_DEPTH = 16


class InlineError(Exception):
    def __init__(self, msg: str, line: int = 0, col: int = 0):
        super().__init__(msg)
        self.line = line
        self.col = col


def has_calls(fn: Function) -> bool:
    return any(isinstance(s, Instr) and s.opcode.split(".")[0] == "call" for s in fn.body or [])


def inline_calls(module: PTXModule, fn: Function) -> list:
    """The body of `fn` with every call expanded; `fn` itself is not modified."""
    counter = itertools.count()
    return _expand(module, fn.body or [], (fn.name,), counter)


def _param_vars(body) -> set:
    return {s.name for s in body if isinstance(s, VarDecl) and s.space == "param"}


def _expand(module: PTXModule, body: list, stack: tuple, counter) -> list:
    local_params = _param_vars(body)
    out = []
    for s in body:
        if isinstance(s, VarDecl) and s.space == "param":
            out.append(replace(s, space="local", align=s.align or 8))
            continue
        if not isinstance(s, Instr):
            out.append(s)
            continue
        base = s.opcode.split(".")[0]
        if base in ("ld", "st") and ".param" in "." + s.opcode and _uses(s, local_params):
            out.append(replace(s, opcode=s.opcode.replace(".param", ".local", 1)))
            continue
        if base != "call":
            out.append(s)
            continue
        out.extend(_inline_one(module, s, stack, counter))
    return out


def _uses(ins: Instr, names: set) -> bool:
    return any(isinstance(o, Mem) and o.base in names for o in ins.operands)


def _inline_one(module: PTXModule, call: Instr, stack: tuple, counter) -> list:
    ops = list(call.operands)
    rets: list = []
    if ops and isinstance(ops[0], CallList):
        rets = [o.name for o in ops[0].items]
        ops = ops[1:]
    if not ops or not isinstance(ops[0], Reg):
        raise InlineError("unsupported call form", call.line, call.col)
    callee_name = ops[0].name
    args = [o.name for o in ops[1].items] if len(ops) > 1 and isinstance(ops[1], CallList) else []
    if len(ops) > 2:
        raise InlineError("calls with a prototype (indirect calls) are not supported", call.line, call.col)
    callee = module.functions.get(callee_name)
    if callee is None or callee.kind != "func":
        raise InlineError(
            f"call of unknown function '{callee_name}' (indirect calls are not supported)", call.line, call.col
        )
    if callee.body is None:
        raise InlineError(f"function '{callee_name}' is declared but not defined in this module", call.line, call.col)
    if callee_name in stack or len(stack) > MAX_DEPTH:
        raise InlineError(f"recursive call of '{callee_name}' is not supported", call.line, call.col)
    if call.guard is not None:
        raise InlineError("predicated calls are not supported", call.line, call.col)
    ret_params = getattr(callee, "returns", [])
    if len(args) != len(callee.params) or len(rets) != len(ret_params):
        raise InlineError(f"call of '{callee_name}' passes {len(args)} arguments and {len(rets)} results; "
                          f"it takes {len(callee.params)} and returns {len(ret_params)}", call.line, call.col)
    k = next(counter)
    suffix = f"__i{k}"
    ren: dict[str, str] = {}
    for p, a in zip(callee.params, args):
        ren[p.name] = a
    for p, r in zip(ret_params, rets):
        ren[p.name] = r
    body = []
    for s in callee.body:  # expand register ranges %r<4> into %r0..%r3 so each can be renamed
        if isinstance(s, VarDecl) and s.space == "reg" and s.count is not None:
            body.extend(replace(s, name=f"{s.name}{i}", count=None) for i in range(s.count))
        else:
            body.append(s)
    for s in body:
        if isinstance(s, VarDecl) and s.space in ("reg", "local", "param"):
            ren.setdefault(s.name, s.name + suffix)
        elif isinstance(s, Label):
            ren[s.name] = s.name + suffix
    end_label = f"$__ret{suffix}"
    renamed = []
    for s in body:
        if isinstance(s, VarDecl):
            if s.space in ("reg", "local", "param"):
                renamed.append(replace(s, name=ren[s.name]))
            else:
                renamed.append(s)
        elif isinstance(s, Label):
            renamed.append(Label(ren[s.name], s.line))
        elif isinstance(s, Instr):
            if s.opcode.split(".")[0] == "ret":
                renamed.append(Instr("bra.uni" if s.guard is None else "bra", [Reg(end_label)],
                                     _ren_guard(s.guard, ren), s.line, s.col))
                continue
            renamed.append(
                Instr(s.opcode, [_ren_op(o, ren) for o in s.operands], _ren_guard(s.guard, ren), s.line, s.col)
            )
        else:
            renamed.append(s)
    # the callee's own parameters now name the caller's (local) variables
    caller_vars = set(args) | set(rets)
    fixed = []
    for s in renamed:
        if isinstance(s, Instr) and s.opcode.split(".")[0] in ("ld", "st") and ".param" in "." + s.opcode \
                and _uses(s, caller_vars):
            s = replace(s, opcode=s.opcode.replace(".param", ".local", 1))
        fixed.append(s)
    inner = _expand(module, fixed, stack + (callee_name,), counter)
    return inner + [Label(end_label, call.line)]


def _ren_guard(g, ren):
    if g is None:
        return None
    return (ren.get(g[0], g[0]), g[1])


def _ren_op(o, ren):
    if isinstance(o, Reg):
        return Reg(ren.get(o.name, o.name))
    if isinstance(o, NotReg):
        return NotReg(ren.get(o.name, o.name))
    if isinstance(o, Mem):
        return Mem(ren.get(o.base, o.base) if o.base is not None else None, o.offset)
    if isinstance(o, Vec):
        return Vec(tuple(_ren_op(x, ren) for x in o.items))
    if isinstance(o, Pair):
        return Pair(ren.get(o.first, o.first), ren.get(o.second, o.second))
    if isinstance(o, CallList):
        return CallList(tuple(_ren_op(x, ren) for x in o.items))
    return o
