"""HLO scatter, sort and while (in the forms JAX prints) against numpy, and the located
errors for what the importer refuses: scatters of windows, comparators other than LT/GT,
while loops without a static trip count or longer than the unrolling bound, custom-calls."""

import numpy as np
import pytest

from fsir.errors import UserError
from fsir.frontend.hlo import import_hlo
from fsir.frontend.hlo_control import MAX_WHILE_TRIPS
from fsir.runtime.reference import run

rng = np.random.default_rng(0)


def run_hlo(text: str, *args):
    return run(import_hlo(text, "test.hlo"), list(args))


def error_of(text: str) -> UserError:
    with pytest.raises(UserError) as err:
        import_hlo(text, "test.hlo")
    assert err.value.loc is not None and err.value.loc.file == "test.hlo"
    return err.value


UPDATE = {
    "set": "ROOT p1 = f32[] parameter(1)",
    "add": "ROOT r = f32[] add(p0, p1)",
    "mul": "ROOT r = f32[] multiply(p0, p1)",
    "max": "ROOT r = f32[] maximum(p0, p1)",
    "min": "ROOT r = f32[] minimum(p1, p0)",
}


def scatter_module(update: str, idx_shape: str, upd_shape: str, dims: str) -> str:
    """`x.at[idx].<update>(u)` as jax.jit(...).lower(...).as_text(dialect="hlo") prints it."""
    p1 = "" if update == "set" else "  p1 = f32[] parameter(1)\n"
    return f"""HloModule jit_f, entry_computation_layout={{(f32[8,3]{{1,0}}, s32[{idx_shape}], f32[{upd_shape}])->f32[8,3]{{1,0}}}}

region_0.1 {{
  p0 = f32[] parameter(0)
{p1}  {UPDATE[update]}
}}

ENTRY main.2 {{
  x.1 = f32[8,3]{{1,0}} parameter(0)
  i.2 = s32[{idx_shape}] parameter(1)
  u.3 = f32[{upd_shape}] parameter(2)
  ROOT scatter.4 = f32[8,3]{{1,0}} scatter(x.1, i.2, u.3), {dims}, indices_are_sorted=false, unique_indices=false, to_apply=region_0.1
}}
"""


@pytest.mark.parametrize("update", sorted(UPDATE))
def test_scatter_rows(update):
    x = rng.standard_normal((8, 3)).astype(np.float32)
    ids = np.array([[2], [5], [2], [9], [-1], [0]], np.int32)  # a duplicate and two out of bounds
    u = rng.standard_normal((6, 3)).astype(np.float32)
    text = scatter_module(update, "6,1", "6,3", "update_window_dims={1}, inserted_window_dims={0}, "
                                                 "scatter_dims_to_operand_dims={0}, index_vector_dim=1")
    (got,) = run_hlo(text, x, ids, u)
    want = x.copy()
    fn = {"set": lambda a, b: b, "add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[update]
    for i, row in zip(ids[:, 0], u):
        if 0 <= i < 8:  # XLA skips out-of-bounds updates
            want[i] = fn(want[i], row)
    np.testing.assert_array_equal(got, want)


def test_scatter_points_with_window_dims_first():
    """x.at[i, j].add(v) with scalar index vectors along dim 0 and updates of shape [5]:
    both dims scattered, no window; index_vector_dim=1 of s32[5,2]."""
    x = rng.standard_normal((8, 3)).astype(np.float32)
    ij = np.stack([rng.integers(0, 8, 5), rng.integers(0, 3, 5)], axis=1).astype(np.int32)
    u = rng.standard_normal(5).astype(np.float32)
    text = scatter_module("add", "5,2", "5", "update_window_dims={}, inserted_window_dims={0,1}, "
                                              "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1")
    (got,) = run_hlo(text, x, ij, u)
    want = x.copy()
    np.add.at(want, (ij[:, 0], ij[:, 1]), u)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_scatter_columns_updates_transposed():
    """x.at[:, j].set(v): the window (dim 0) comes first in the updates."""
    x = rng.standard_normal((8, 3)).astype(np.float32)
    j = np.array([2, 0], np.int32)
    u = rng.standard_normal((8, 2)).astype(np.float32)
    text = scatter_module("set", "2", "8,2", "update_window_dims={0}, inserted_window_dims={1}, "
                                             "scatter_dims_to_operand_dims={1}, index_vector_dim=1")
    (got,) = run_hlo(text, x, j, u)
    want = x.copy()
    want[:, j] = u
    np.testing.assert_array_equal(got, want)


def test_scatter_of_windows_and_other_updates_are_refused():
    text = scatter_module("add", "2,1", "2,2", "update_window_dims={1}, inserted_window_dims={0}, "
                                               "scatter_dims_to_operand_dims={0}, index_vector_dim=1")
    assert "scatter of partial windows" in error_of(text).message
    text = scatter_module("add", "6,1", "6,3", "update_window_dims={1}, inserted_window_dims={0}, "
                                               "scatter_dims_to_operand_dims={0}, index_vector_dim=1")
    err = error_of(text.replace("ROOT r = f32[] add(p0, p1)", "s = f32[] add(p0, p1)\n  ROOT r = f32[] "
                                                              "multiply(s, p1)"))
    assert "not an assignment or a single add/multiply/maximum/minimum" in err.message
    assert err.loc is not None and err.loc.line == 14  # the scatter


def sort_module(direction: str, n: int = 10, argsort: bool = False) -> str:
    """jnp.sort(x, axis=1) (or lax.sort((x, iota)) for argsort) as JAX prints it."""
    if not argsort:
        return f"""HloModule jit_sort

region_0.1 {{
  Arg_0.2 = f32[] parameter(0)
  Arg_1.3 = f32[] parameter(1)
  ROOT compare.4 = pred[] compare(Arg_0.2, Arg_1.3), direction={direction}, type=TOTALORDER
}}

ENTRY main.5 {{
  x.1 = f32[3,{n}]{{1,0}} parameter(0)
  ROOT sort.6 = f32[3,{n}]{{1,0}} sort(x.1), dimensions={{1}}, is_stable=true, to_apply=region_0.1
}}
"""
    return f"""HloModule jit_argsort

region_0.1 {{
  Arg_0.2 = f32[] parameter(0)
  Arg_1.3 = f32[] parameter(1)
  Arg_2.4 = s32[] parameter(2)
  Arg_3.5 = s32[] parameter(3)
  ROOT compare.6 = pred[] compare(Arg_0.2, Arg_1.3), direction={direction}, type=TOTALORDER
}}

ENTRY main.7 {{
  x.1 = f32[3,{n}]{{1,0}} parameter(0)
  iota.2 = s32[3,{n}]{{1,0}} iota(), iota_dimension=1
  sort.3 = (f32[3,{n}]{{1,0}}, s32[3,{n}]{{1,0}}) sort(x.1, iota.2), dimensions={{1}}, is_stable=true, to_apply=region_0.1
  ROOT get-tuple-element.4 = s32[3,{n}]{{1,0}} get-tuple-element(sort.3), index=1
}}
"""


def test_sort_and_argsort():
    x = rng.integers(0, 4, (3, 10)).astype(np.float32)  # ties: the sort is stable
    x[1, 3] = np.nan
    (got,) = run_hlo(sort_module("LT"), x)
    np.testing.assert_array_equal(got, np.sort(x, axis=1))
    (got,) = run_hlo(sort_module("GT"), x)
    np.testing.assert_array_equal(got[[0, 2]], -np.sort(-x[[0, 2]], axis=1))
    (got,) = run_hlo(sort_module("LT", argsort=True), x)
    np.testing.assert_array_equal(got, np.argsort(x, axis=1, kind="stable"))


def test_sort_refusals():
    assert "not a single LT or GT compare" in error_of(sort_module("LE")).message
    err = error_of(sort_module("LT", n=65))
    assert "sorts only static dims of at most 64 elements" in err.message
    assert err.loc is not None and err.loc.line == 11


def while_module(trips: str, init: int = 0, bound_in_tuple: bool = False) -> str:
    """lax.fori_loop(init, trips, lambda i, x: x * 2 + i, x): a (counter, value) tuple, the
    counter compared LT against a constant (or against a tuple element holding it)."""
    limit = "get-tuple-element(p.5), index=2" if bound_in_tuple else f"constant({trips})"
    tuple_shape = "(s32[], f32[4], s32[])" if bound_in_tuple else "(s32[], f32[4])"
    extra_init = ", n.3" if bound_in_tuple else ""
    extra_body = ", g2.13" if bound_in_tuple else ""
    body_g2 = "  g2.13 = s32[] get-tuple-element(p.8), index=2\n" if bound_in_tuple else ""
    return f"""HloModule jit_loop

cond.4 {{
  p.5 = {tuple_shape} parameter(0)
  i.6 = s32[] get-tuple-element(p.5), index=0
  n.7 = s32[] {limit}
  ROOT lt.7 = pred[] compare(i.6, n.7), direction=LT
}}

body.8 {{
  p.8 = {tuple_shape} parameter(0)
  i.9 = s32[] get-tuple-element(p.8), index=0
  x.10 = f32[4] get-tuple-element(p.8), index=1
{body_g2}  one.11 = s32[] constant(1)
  next.12 = s32[] add(i.9, one.11)
  two.13 = f32[4] constant({{2, 2, 2, 2}})
  i.14 = f32[] convert(i.9)
  ib.15 = f32[4] broadcast(i.14), dimensions={{}}
  x2.16 = f32[4] multiply(x.10, two.13)
  y.17 = f32[4] add(x2.16, ib.15)
  ROOT t.18 = {tuple_shape} tuple(next.12, y.17{extra_body})
}}

ENTRY main.1 {{
  x.1 = f32[4] parameter(0)
  zero.2 = s32[] constant({init})
  n.3 = s32[] constant({trips})
  init.4 = {tuple_shape} tuple(zero.2, x.1{extra_init})
  w.5 = {tuple_shape} while(init.4), condition=cond.4, body=body.8
  ROOT r.6 = f32[4] get-tuple-element(w.5), index=1
}}
"""


@pytest.mark.parametrize("trips, init, in_tuple", [(5, 0, False), (0, 0, False), (7, 3, True),
                                                   (MAX_WHILE_TRIPS, 0, False)])
def test_while_with_a_static_trip_count_is_unrolled(trips, init, in_tuple):
    x = rng.standard_normal(4).astype(np.float32)
    (got,) = run_hlo(while_module(str(trips), init, in_tuple), x)
    want = x.astype(np.float64)
    for i in range(init, trips):
        want = want * 2 + i
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_while_refusals():
    err = error_of(while_module(str(MAX_WHILE_TRIPS + 1)))
    assert f"while of more than {MAX_WHILE_TRIPS} iterations" in err.message
    assert err.loc is not None and err.loc.line == 29  # the while
    # the bound is data: the trip count is not static
    text = while_module("5").replace("n.7 = s32[] constant(5)", "x.70 = f32[4] get-tuple-element(p.5), index=1\n"
                                     "  s.71 = f32[] reduce(x.70, z.72), dimensions={0}, to_apply=add.0\n"
                                     "  n.7 = s32[] convert(s.71)").replace(
        "cond.4 {", "add.0 {\n  a.0 = f32[] parameter(0)\n  b.0 = f32[] parameter(1)\n  ROOT c.0 = f32[] "
        "add(a.0, b.0)\n}\n\ncond.4 {\n  z.72 = f32[] constant(0)")
    assert "trip count must be static" in error_of(text).message


def test_custom_call_is_refused_with_its_target():
    text = """HloModule m

ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(x), custom_call_target="cu_threefry2x32", api_version=API_VERSION_STATUS_RETURNING
}
"""
    err = error_of(text)
    assert "custom-call to 'cu_threefry2x32'" in err.message
    assert (err.loc.line, err.loc.col) == (5, 19)
