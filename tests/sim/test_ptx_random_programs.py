"""Random structured programs (nested scf.for with iter_args, scf.if with results,
scf.while, integer arithmetic) are printed as PTX, assembled, run on the simulator, and
compared with a Python evaluation of the same program. Exercises register allocation
across regions, parallel copies of loop-carried values, and label/branch layout."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest

from fsir import sim
from fsir.ptx import print_ptx
from fsir.ptx.ptxas import assemble, find_ptxas
from fsir.testing.ptx import parse

M32 = (1 << 32) - 1


def wrap(v: int) -> int:
    v &= M32
    return v - (1 << 32) if v >= 1 << 31 else v


class Gen:
    """Builds MLIR text and, in parallel, a Python closure computing the same values."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.n = 0
        self.lines: list[str] = []

    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("  " * indent + text)

    def expr(self, env: dict[str, Callable[[dict], int]], vals: list[str], indent: int, depth: int) -> str:
        """Emit one op over `vals`; returns the new value name (env maps name -> fn(state))."""
        r = self.rng
        kind = r.choice(["bin", "bin", "bin", "select", "const"] + (["for", "if", "while"] if depth < 3 else []))
        name = self.fresh()
        if kind == "const":
            c = r.randint(-50, 50)
            self.emit(indent, f"{name} = arith.constant {c} : i32")
            env[name] = lambda s, c=c: c
        elif kind == "bin":
            op = r.choice(["addi", "subi", "muli", "xori", "andi", "ori", "maxsi", "minsi", "shrsi"])
            a, b = r.choice(vals), r.choice(vals)
            if op == "shrsi":
                amt = self.fresh()
                k = r.randint(0, 5)
                self.emit(indent, f"{amt} = arith.constant {k} : i32")
                env[amt] = lambda s, k=k: k
                b = amt
            self.emit(indent, f"{name} = arith.{op} {a}, {b} : i32")
            fa, fb = env[a], env[b]
            fn = {
                "addi": lambda x, y: x + y, "subi": lambda x, y: x - y, "muli": lambda x, y: x * y,
                "xori": lambda x, y: x ^ y, "andi": lambda x, y: x & y, "ori": lambda x, y: x | y,
                "maxsi": max, "minsi": min, "shrsi": lambda x, y: x >> y,
            }[op]  # fmt: skip
            env[name] = lambda s, fa=fa, fb=fb, fn=fn: wrap(fn(fa(s), fb(s)))
        elif kind == "select":
            a, b, c, d = (r.choice(vals) for _ in range(4))
            p = self.fresh()
            pred = r.choice(["slt", "sgt", "eq", "ne", "ule"])
            self.emit(indent, f"{p} = arith.cmpi {pred}, {a}, {b} : i32")
            self.emit(indent, f"{name} = arith.select {p}, {c}, {d} : i32")
            fa, fb, fc, fd = env[a], env[b], env[c], env[d]
            cmp = {"slt": lambda x, y: x < y, "sgt": lambda x, y: x > y, "eq": lambda x, y: x == y,
                   "ne": lambda x, y: x != y, "ule": lambda x, y: (x & M32) <= (y & M32)}[pred]  # fmt: skip
            env[name] = lambda s: fc(s) if cmp(fa(s), fb(s)) else fd(s)
        elif kind == "for":
            return self.for_loop(env, vals, indent, depth, name)
        elif kind == "if":
            return self.if_op(env, vals, indent, depth, name)
        else:
            return self.while_loop(env, vals, indent, depth, name)
        return name

    def block(self, env, vals, indent, depth, n_ops: int, n_yield: int) -> list[str]:
        local = list(vals)
        for _ in range(n_ops):
            local.append(self.expr(env, local, indent, depth + 1))
        return [self.rng.choice(local[len(vals) - 1 :] if len(local) > len(vals) else local) for _ in range(n_yield)]

    def for_loop(self, env, vals, indent, depth, name):
        r = self.rng
        k = r.randint(1, 3)
        trip = r.randint(0, 4)
        inits = [r.choice(vals) for _ in range(k)]
        ivs = [self.fresh() for _ in range(k)]
        iv = self.fresh()
        lb, ub, st = self.fresh(), self.fresh(), self.fresh()
        self.emit(indent, f"{lb} = arith.constant 0 : index")
        self.emit(indent, f"{ub} = arith.constant {trip} : index")
        self.emit(indent, f"{st} = arith.constant 1 : index")
        results = [self.fresh() for _ in range(k)]
        self.emit(
            indent,
            f"{', '.join(results)} = scf.for {iv} = {lb} to {ub} step {st} iter_args("
            + ", ".join(f"{a} = {b}" for a, b in zip(ivs, inits))
            + f") -> ({', '.join(['i32'] * k)}) {{",
        )
        ivi = self.fresh()
        self.emit(indent + 1, f"{ivi} = arith.index_cast {iv} : index to i32")
        # the body reads loop-carried values from a state slot
        body_env = dict(env)
        for a in ivs:
            body_env[a] = lambda s, a=a: s[a]
        body_env[ivi] = lambda s: s[ivi]
        ys = self.block(body_env, list(vals) + ivs + [ivi], indent + 1, depth, r.randint(1, 3), k)
        if r.random() < 0.3 and k >= 2:  # swap-like yields stress parallel copies
            ys = ivs[::-1]
        self.emit(indent + 1, f"scf.yield {', '.join(ys)} : {', '.join(['i32'] * k)}")
        self.emit(indent, "}")
        finits = [env[a] for a in inits]
        fys = [body_env[y] for y in ys]

        def run(s, finits=finits, fys=fys):
            cur = [f(s) for f in finits]
            for i in range(trip):
                s2 = dict(s)
                s2.update(zip(ivs, cur))
                s2[ivi] = i
                cur = [f(s2) for f in fys]
            return cur

        def getter(idx):
            return lambda s: run(s)[idx]

        for i, res in enumerate(results):
            env[res] = getter(i)
        return results[0]

    def if_op(self, env, vals, indent, depth, name):
        r = self.rng
        a, b = r.choice(vals), r.choice(vals)
        p = self.fresh()
        self.emit(indent, f"{p} = arith.cmpi slt, {a}, {b} : i32")
        k = r.randint(1, 2)
        results = [self.fresh() for _ in range(k)]
        self.emit(indent, f"{', '.join(results)} = scf.if {p} -> ({', '.join(['i32'] * k)}) {{")
        tenv, eenv = dict(env), dict(env)
        ty = self.block(tenv, list(vals), indent + 1, depth, r.randint(0, 2), k)
        self.emit(indent + 1, f"scf.yield {', '.join(ty)} : {', '.join(['i32'] * k)}")
        self.emit(indent, "} else {")
        ey = self.block(eenv, list(vals), indent + 1, depth, r.randint(0, 2), k)
        self.emit(indent + 1, f"scf.yield {', '.join(ey)} : {', '.join(['i32'] * k)}")
        self.emit(indent, "}")
        fa, fb = env[a], env[b]
        ft, fe = [tenv[y] for y in ty], [eenv[y] for y in ey]
        for i, res in enumerate(results):
            env[res] = lambda s, i=i: (ft[i] if fa(s) < fb(s) else fe[i])(s)
        return results[0]

    def while_loop(self, env, vals, indent, depth, name):
        """Counts a value down: while (c > 0) { c -= 1; acc = f(acc, c) }."""
        r = self.rng
        init_c = r.randint(0, 4)
        c0, one, zero = self.fresh(), self.fresh(), self.fresh()
        self.emit(indent, f"{c0} = arith.constant {init_c} : i32")
        self.emit(indent, f"{one} = arith.constant 1 : i32")
        self.emit(indent, f"{zero} = arith.constant 0 : i32")
        acc0 = r.choice(vals)
        ca, aa, cb, ab = self.fresh(), self.fresh(), self.fresh(), self.fresh()
        rc, ra = self.fresh(), self.fresh()
        cond = self.fresh()
        self.emit(indent, f"{rc}, {ra} = scf.while ({ca} = {c0}, {aa} = {acc0}) : (i32, i32) -> (i32, i32) {{")
        self.emit(indent + 1, f"{cond} = arith.cmpi sgt, {ca}, {zero} : i32")
        self.emit(indent + 1, f"scf.condition({cond}) {ca}, {aa} : i32, i32")
        self.emit(indent, "} do {")
        self.emit(indent, f"^bb0({cb}: i32, {ab}: i32):")
        c1 = self.fresh()
        self.emit(indent + 1, f"{c1} = arith.subi {cb}, {one} : i32")
        benv = dict(env)
        benv[cb] = lambda s: s[cb]
        benv[ab] = lambda s: s[ab]
        benv[c1] = lambda s: s[cb] - 1
        (y,) = self.block(benv, list(vals) + [ab, c1], indent + 1, depth, r.randint(1, 2), 1)
        self.emit(indent + 1, f"scf.yield {c1}, {y} : i32, i32")
        self.emit(indent, "}")
        facc, fy = env[acc0], benv[y]

        def run(s):
            c, acc = init_c, facc(s)
            while c > 0:
                s2 = dict(s)
                s2[cb], s2[ab] = c, acc
                c, acc = c - 1, fy(s2)
            return acc

        env[rc] = lambda s: 0
        env[ra] = run
        return ra


def program(seed: int, n_out: int = 4) -> tuple[str, list]:
    g = Gen(seed)
    env: dict[str, Callable[[dict], int]] = {"%x0": lambda s: s["%x0"], "%t": lambda s: s["%t"]}
    vals = ["%x0", "%t"]
    for _ in range(g.rng.randint(3, 7)):
        vals.append(g.expr(env, vals, 3, 0))
    outs = vals[-n_out:]
    body = "\n".join(g.lines)
    stores = "\n".join(
        f"      %o{k} = arith.constant {k} : index\n      %p{k} = arith.muli %o{k}, %n : index\n"
        f"      %q{k} = arith.addi %p{k}, %i : index\n      memref.store {v}, %y[%q{k}] : memref<?xi32>"
        for k, v in enumerate(outs)
    )
    text = f"""builtin.module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @prog(%x: memref<?xi32>, %y: memref<?xi32>, %n: index) kernel {{
      %i = gpu.thread_id x
      %x0 = memref.load %x[%i] : memref<?xi32>
      %t = arith.index_cast %i : index to i32
{body}
{stores}
      gpu.return
    }}
  }}
}}
"""
    return text, [env[v] for v in outs]


SEEDS = list(range(40))


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program(seed):
    text, fns = program(seed)
    ptx = print_ptx(parse(text))
    n = 64
    x = np.random.default_rng(seed).integers(-1000, 1000, n).astype(np.int32)
    y = np.zeros(4 * n, np.int32)
    sim.run_ptx(ptx, "prog", (1,), (n,), [x, y, np.uint64(n)])
    for k, fn in enumerate(fns):
        want = [fn({"%x0": int(x[i]), "%t": i}) for i in range(n)]
        np.testing.assert_array_equal(y[k * n : (k + 1) * n], np.array(want, np.int64).astype(np.int32), err_msg=text)


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas not installed")
def test_random_programs_assemble():
    mods = [program(s)[0].replace("@prog", f"@prog{s}") for s in SEEDS]
    # one module with all kernels, so ptxas runs once per arch
    merged = mods[0].split("    gpu.func")[0] + "\n".join(
        "    gpu.func" + m.split("    gpu.func", 1)[1].rsplit("  }\n}\n", 1)[0] for m in mods
    ) + "  }\n}\n"
    ptx = print_ptx(parse(merged))
    for arch in ("sm_80", "sm_90"):
        result = assemble(ptx, arch)
        assert result.ok, result.errors[:5]
