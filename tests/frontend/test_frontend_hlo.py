"""The XLA HLO-text importer: JAX-dumped examples against JAX's own outputs, one test per
supported instruction against numpy, and located errors for what it rejects."""

import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from scipy import special

from fsir import registry
from fsir.errors import UserError
from fsir.frontend.hlo import import_hlo
from fsir.runtime.reference import run
from fsir.testing import paths

EXAMPLES = paths.EXAMPLES / "hlo"
HLO_FILES = sorted(EXAMPLES.glob("*.hlo"))


# -- the examples dumped from JAX ---------------------------------------------


# JAX expands erf/erfc into polynomials evaluated on both sides of a select; the
# discarded side overflows for large inputs, exactly as it does under XLA.
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("path", HLO_FILES, ids=[p.name for p in HLO_FILES])
def test_example_matches_jax(path: Path):
    module = import_hlo(path.read_text(), str(path))
    model = path.name.split(".")[0]
    inputs = np.load(EXAMPLES / f"{model}.inputs.npz")
    expected = np.load(EXAMPLES / f"{model}.outputs.npz")
    outs = run(module, [inputs[f"arg{i}"] for i in range(len(inputs))])
    assert len(outs) == len(expected)
    for i, got in enumerate(outs):
        np.testing.assert_allclose(got, expected[f"out{i}"], rtol=1e-4, atol=1e-5)


def test_examples_cover_both_forms():
    names = {p.name for p in HLO_FILES}
    for model in ("layernorm", "softmax", "gelu_mlp", "bert_layer", "causal_attention", "embedding_bag"):
        assert f"{model}.hlo" in names
    assert sum(n.endswith(".opt.hlo") for n in names) >= 2
    opt = (EXAMPLES / "bert_layer.opt.hlo").read_text()
    for construct in ("ENTRY %", "fusion(", "metadata={", "FileNames", "StackFrames", "{1,0}"):
        assert construct in opt


def test_registered_frontend():
    assert registry.FRONTENDS["hlo"]() is import_hlo


# -- one instruction at a time --------------------------------------------------


def hlo(body: str, params: dict[str, str], root_shape: str) -> str:
    lines = [f"  {name} = {shape} parameter({i})" for i, (name, shape) in enumerate(params.items())]
    body_lines = [line.strip() for line in body.strip().splitlines()]
    body_lines[-1] = "ROOT " + body_lines[-1]
    return ("HloModule test\n\nENTRY main {\n" + "\n".join(lines) + "\n  "
            + "\n  ".join(body_lines) + "\n}\n")


def run_hlo(text: str, *args):
    return run(import_hlo(text, "test.hlo"), list(args))


rng = np.random.default_rng(0)
X = rng.standard_normal((4, 6)).astype(np.float32)
Y = rng.standard_normal((4, 6)).astype(np.float32)
P = np.abs(X) + 0.5

UNARY = {
    "negate": np.negative, "abs": np.abs, "exponential": np.exp, "log": lambda x: np.log(np.abs(x) + 0.5),
    "tanh": np.tanh, "logistic": lambda x: 1 / (1 + np.exp(-x)), "sqrt": lambda x: np.sqrt(np.abs(x) + 0.5),
    "rsqrt": lambda x: 1 / np.sqrt(np.abs(x) + 0.5), "erf": special.erf, "floor": np.floor,
    "exponential-minus-one": np.expm1, "log-plus-one": lambda x: np.log1p(np.abs(x) + 0.5),
}


@pytest.mark.parametrize("opcode", sorted(UNARY))
def test_unary(opcode):
    positive = opcode in ("log", "sqrt", "rsqrt", "log-plus-one")
    x = P if positive else X
    text = hlo(f"r = f32[4,6] {opcode}(x)", {"x": "f32[4,6]"}, "f32[4,6]")
    (got,) = run_hlo(text, x)
    want = UNARY[opcode](X) if positive else UNARY[opcode](x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
          "maximum": np.maximum, "minimum": np.minimum, "power": np.power}


@pytest.mark.parametrize("opcode", sorted(BINARY))
def test_binary(opcode):
    x = P if opcode == "power" else X
    text = hlo(f"r = f32[4,6] {opcode}(x, y)", {"x": "f32[4,6]", "y": "f32[4,6]"}, "f32[4,6]")
    (got,) = run_hlo(text, x, Y)
    np.testing.assert_allclose(got, BINARY[opcode](x, Y), rtol=1e-5)


@pytest.mark.parametrize("direction,fn", [("EQ", np.equal), ("NE", np.not_equal), ("LT", np.less),
                                          ("LE", np.less_equal), ("GT", np.greater), ("GE", np.greater_equal)])
def test_compare_and_select(direction, fn):
    text = hlo(f"""
        c = pred[4,6] compare(x, y), direction={direction}
        r = f32[4,6] select(c, x, y)""", {"x": "f32[4,6]", "y": "f32[4,6]"}, "f32[4,6]")
    y = np.where(rng.random((4, 6)) < 0.3, X, Y)  # some equal elements
    (got,) = run_hlo(text, X, y)
    np.testing.assert_array_equal(got, np.where(fn(X, y), X, y))


def test_constants_iota_convert():
    text = hlo("""
        a = s32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })
        i = s32[2,3] iota(), iota_dimension=1
        s = s32[2,3] add(a, i)
        t = pred[] constant(true)
        f = f32[] constant(-inf)
        c = f32[2,3] convert(s)
        r = (f32[2,3], pred[], f32[]) tuple(c, t, f)""", {}, "")
    c, t, f = run_hlo(text)
    np.testing.assert_array_equal(c, np.array([[1, 3, 5], [4, 6, 8]], np.float32))
    assert t.dtype == np.bool_ and t
    assert f == -np.inf


def test_broadcast_reshape_transpose():
    text = hlo("""
        b = f32[6,5,4] broadcast(x), dimensions={2,0}
        t = f32[5,4,6] transpose(b), dimensions={1,2,0}
        r = f32[20,6] reshape(t)""", {"x": "f32[4,6]"}, "")
    (got,) = run_hlo(text, X)
    want = np.broadcast_to(X.T[:, None, :], (6, 5, 4)).transpose(1, 2, 0).reshape(20, 6)
    np.testing.assert_array_equal(got, want)


def test_slice_dynamic_slice_concatenate_pad():
    text = hlo("""
        s = f32[2,3] slice(x), slice={[1:4:2], [0:6:2]}
        i = s32[] constant(3)
        j = s32[] constant(5)
        d = f32[2,2] dynamic-slice(x, i, j), dynamic_slice_sizes={2,2}
        c = f32[2,5] concatenate(s, d), dimensions={1}
        z = f32[] constant(0.5)
        p = f32[3,6] pad(c, z), padding=1_0x-1_2
        r = (f32[2,5], f32[3,6]) tuple(c, p)""", {"x": "f32[4,6]"}, "")
    c, p = run_hlo(text, X)
    want_c = np.concatenate([X[1:4:2, 0:6:2], X[2:4, 4:6]], axis=1)  # start indices clamp
    np.testing.assert_array_equal(c, want_c)
    want_p = np.full((3, 6), 0.5, np.float32)
    want_p[1:, :4] = want_c[:, 1:]
    np.testing.assert_array_equal(p, want_p)


REGION = """
{kind}_region {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] {kind}(a, b)
}}
"""


@pytest.mark.parametrize("kind,init,fn", [("add", "0", np.sum), ("maximum", "-inf", np.max),
                                          ("minimum", "inf", np.min), ("multiply", "1", np.prod),
                                          ("add", "10", lambda x, axis: np.sum(x, axis) + 10)])
def test_reduce(kind, init, fn):
    text = hlo(f"""
        z = f32[] constant({init})
        r = f32[6] reduce(x, z), dimensions={{0,2}}, to_apply={kind}_region""", {"x": "f32[2,6,3]"}, "")
    text = text.replace("ENTRY", REGION.format(kind=kind) + "\nENTRY")
    x = rng.standard_normal((2, 6, 3)).astype(np.float32)
    (got,) = run_hlo(text, x)
    np.testing.assert_allclose(got, fn(x, axis=(0, 2)), rtol=1e-5)


def test_argmax_variadic_reduce():
    text = (EXAMPLES / "embedding_bag.hlo").read_text()  # any module parses; build argmax by hand
    del text
    src = """HloModule argmax
cmp {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lt)
  take = pred[] or(gt, tie)
  v = f32[] select(take, a, b)
  k = s32[] select(take, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}
ENTRY main {
  x = f32[4,6] parameter(0)
  io = s32[4,6] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[4], s32[4]) reduce(x, io, ninf, zero), dimensions={1}, to_apply=cmp
  ROOT k = s32[4] get-tuple-element(r), index=1
}
"""
    x = np.round(X * 2) / 2  # ties: the first index wins
    (got,) = run_hlo(src, x)
    np.testing.assert_array_equal(got, np.argmax(x, axis=1))


def test_dot_general_batch_and_contracting_dims():
    text = hlo("r = f32[2,5,3] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={0,3}, "
               "rhs_batch_dims={0}, rhs_contracting_dims={2,1}",
               {"a": "f32[4,2,5,6]", "b": "f32[2,6,4,3]"}, "")
    a = rng.standard_normal((4, 2, 5, 6)).astype(np.float32)
    c = rng.standard_normal((2, 6, 4, 3)).astype(np.float32)
    (got,) = run_hlo(text, a, c)
    np.testing.assert_allclose(got, np.einsum("kbmc,bckn->bmn", a, c), rtol=1e-4, atol=1e-5)


def test_gather_embedding_rows():
    text = hlo("""
        i = s32[3,2,1] reshape(ids)
        r = f32[3,2,6] gather(t, i), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,6}""",
               {"t": "f32[4,6]", "ids": "s32[3,2]"}, "")
    ids = np.array([[0, 3], [2, 2], [1, 0]], np.int32)
    (got,) = run_hlo(text, X, ids)
    np.testing.assert_array_equal(got, X[ids])


def test_call_fusion_tuple_and_layout_bitcast():
    src = """HloModule m, entry_computation_layout={(f32[4,6]{1,0})->f32[6,4]{1,0}}

%fused (p0: f32[4,6]) -> (f32[4,6], f32[6,4]) {
  %p0 = f32[4,6]{1,0} parameter(0)
  %c = f32[4,6]{0,1} copy(%p0)
  %t = f32[6,4]{1,0} bitcast(%c)
  ROOT %tup = (f32[4,6]{1,0}, f32[6,4]{1,0}) tuple(%p0, %t)
}

%helper (a: f32[6,4]) -> f32[6,4] {
  %a = f32[6,4]{1,0} parameter(0)
  ROOT %n = f32[6,4]{1,0} negate(%a), metadata={op_name="jit(f)/neg" source_file="f.py" source_line=3}
}

ENTRY %main.5 (x.1: f32[4,6]) -> f32[6,4] {
  %x.1 = f32[4,6]{1,0} parameter(0), metadata={op_name="x"}
  %f = (f32[4,6]{1,0}, f32[6,4]{1,0}) fusion(f32[4,6]{1,0} %x.1), kind=kLoop, calls=%fused, backend_config={"outer_dimension_partitions":[],"flag":true}
  %g = f32[6,4]{1,0} get-tuple-element(%f), index=1
  ROOT %r = f32[6,4]{1,0} call(%g), to_apply=%helper
}

FileNames
1 "f.py"

StackFrames
1 {file_location_id=1 parent_frame_id=0}
"""
    module = import_hlo(src, "m.hlo")
    assert "func.func @main(%x: tensor<4x6xf32>)" in str(module)
    (got,) = run(module, [X])
    # copy to layout {0,1} then a bitcast to the default layout of [6,4] is a transpose
    np.testing.assert_array_equal(got, -X.T)


# -- errors -----------------------------------------------------------------------


def error_of(text: str) -> UserError:
    with pytest.raises(UserError) as info:
        import_hlo(text, "bad.hlo")
    return info.value


def test_unsupported_instruction_is_located():
    text = hlo("r = f32[4,6] cosine(x)", {"x": "f32[4,6]"}, "")
    err = error_of(text)
    assert "'cosine'" in err.message and "('r')" in err.message
    assert (err.loc.file, err.loc.line, err.loc.col) == ("bad.hlo", 5, 21)


def test_custom_call_names_its_target():
    text = hlo('r = f32[4,6] custom-call(x), custom_call_target="my_kernel"', {"x": "f32[4,6]"}, "")
    assert "custom-call to 'my_kernel'" in error_of(text).message


def test_malformed_hlo_has_line_and_col():
    err = error_of("HloModule m\n\nENTRY main {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] add(x x)\n}\n")
    assert err.message.startswith("malformed HLO")
    assert (err.loc.line, err.loc.col) == (5, 25)


def test_other_rejections():
    # dynamic dims `?` and `<=4` import (test_frontend_hlo_dynamic.py); other dims do not
    assert "dimension 'N' in f32[N] is not supported" in error_of(hlo("r = f32[N] abs(x)", {"x": "f32[N]"}, "")).message
    assert "not defined" in error_of(hlo("r = f32[4] abs(y)", {"x": "f32[4]"}, "")).message
    elided = hlo("r = f32[4] constant({...})", {}, "")
    assert "elided" in error_of(elided).message
    assert "unknown computation" in error_of(hlo("r = f32[4] call(x), to_apply=nope", {"x": "f32[4]"}, "")).message
    assert "not supported" in error_of(hlo("r = c64[4] parameter(1)", {"x": "f32[4]"}, "")).message


def test_fs_opt_reads_hlo_by_extension_and_reports_errors(tmp_path):
    fs_opt = str(Path(sysconfig.get_path("scripts")) / "fs-opt")
    ok = subprocess.run([fs_opt, str(EXAMPLES / "softmax.hlo")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "graph.reduce max" in ok.stdout
    bad = tmp_path / "bad.txt"
    bad.write_text(hlo("r = f32[4,6] cosine(x)", {"x": "f32[4,6]"}, ""))
    err = subprocess.run([fs_opt, str(bad), "-f", "hlo"], capture_output=True, text=True)
    assert err.returncode == 1
    assert f"{bad}:5:21: error: HLO instruction 'cosine' is not supported" in err.stderr


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # inf - inf, on purpose
def test_sign_is_finite_reverse():
    text = hlo("""
        s = f32[4,6] sign(x)
        f = pred[4,6] is-finite(x)
        v = f32[4,6] reverse(x), dimensions={0,1}
        r = (f32[4,6], pred[4,6], f32[4,6]) tuple(s, f, v)""", {"x": "f32[4,6]"}, "")
    x = X.copy()
    x[0, :3] = [0.0, np.inf, -np.inf]
    s, f, v = run_hlo(text, x)
    np.testing.assert_array_equal(s, np.sign(x))
    np.testing.assert_array_equal(f, np.isfinite(x))
    np.testing.assert_array_equal(v, x[::-1, ::-1])


@pytest.mark.parametrize("op,init,fn", [("or", "false", np.any), ("and", "true", np.all)])
def test_pred_reductions(op, init, fn):
    region = f"r_{op} {{\n  a = pred[] parameter(0)\n  b = pred[] parameter(1)\n  ROOT c = pred[] {op}(a, b)\n}}\n"
    text = hlo(f"""
        c = pred[4,6] compare(x, y), direction=GT
        z = pred[] constant({init})
        r = pred[4] reduce(c, z), dimensions={{1}}, to_apply=r_{op}""", {"x": "f32[4,6]", "y": "f32[4,6]"}, "")
    text = text.replace("ENTRY", region + "\nENTRY")
    y = X + np.where(rng.random((4, 6)) < 0.8, 1, -1).astype(np.float32)
    y[0] = X[0] - 1
    (got,) = run_hlo(text, X, y)
    np.testing.assert_array_equal(got, fn(X > y, axis=1))


def test_tiled_reduce_window_then_reduce_is_one_row_reduction():
    """XLA's CPU pipeline splits a row sum into reduce-window over tiles + reduce; the
    importer gives back the single row reduction fusion knows."""
    src = """HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[4,64] parameter(0)
  z = f32[] constant(0)
  w = f32[4,2] reduce-window(x, z), window={size=1x32 stride=1x32}, to_apply=sum
  ROOT r = f32[4] reduce(w, z), dimensions={1}, to_apply=sum
}
"""
    module = import_hlo(src, "m.hlo")
    reduces = [op for op in module.walk() if op.name == "graph.reduce"]
    assert len(reduces) == 1 and list(reduces[0].dims.get_values()) == [1]
    x = rng.standard_normal((4, 64)).astype(np.float32)
    (got,) = run(module, [x])
    np.testing.assert_allclose(got, x.sum(1), rtol=1e-5, atol=1e-5)


def test_gather_take_on_axis_1_points_and_take_along_axis():
    text = hlo("""
        i = s32[3,1] reshape(ids)
        t = f32[4,3] gather(x, i), offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={4,1}
        p = f32[5] gather(x, pts), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
        a = s32[4,1,1] reshape(along)
        g = f32[4,1] gather(x, a), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}
        r = (f32[4,3], f32[5], f32[4,1]) tuple(t, p, g)""",
               {"x": "f32[4,6]", "ids": "s32[3]", "pts": "s32[5,2]", "along": "s32[4,1]"}, "")
    ids = np.array([5, 0, 2], np.int32)
    pts = np.array([[0, 0], [3, 5], [1, 2], [9, 1], [2, -4]], np.int32)  # out of range: clamped
    along = np.array([[1], [0], [5], [3]], np.int32)
    t, p, g = run_hlo(text, X, ids, pts, along)
    np.testing.assert_array_equal(t, X[:, ids])
    clamped = np.clip(pts, 0, [3, 5])
    np.testing.assert_array_equal(p, X[clamped[:, 0], clamped[:, 1]])
    np.testing.assert_array_equal(g, np.take_along_axis(X, along, 1))


def test_gather_of_windows_is_rejected():
    text = hlo("r = f32[3,2,6] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, "
               "index_vector_dim=1, slice_sizes={2,6}", {"x": "f32[4,6]", "i": "s32[3]"}, "")
    assert "gather of windows" in error_of(text).message


def test_dynamic_update_slice_with_constant_indices():
    text = hlo("""
        i = s32[] constant(1)
        j = s32[] constant(9)
        r = f32[4,6] dynamic-update-slice(x, u, i, j)""", {"x": "f32[4,6]", "u": "f32[2,3]"}, "")
    u = np.full((2, 3), 7.0, np.float32)
    (got,) = run_hlo(text, X, u)
    want = X.copy()
    want[1:3, 3:6] = u  # the column start 9 is clamped to 6 - 3
    np.testing.assert_array_equal(got, want)
