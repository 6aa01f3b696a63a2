"""Every user error ends in `file:line:col: error: message` (or `tool: error:` when there is
no position) and exit code 1 — never a traceback."""

import re

import numpy as np
import pytest

from fsir.tools import fs_opt, fs_run

GOOD = """func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.exp %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
"""


def run(main, argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.fixture
def good(tmp_path):
    p = tmp_path / "good.mlir"
    p.write_text(GOOD)
    return p


def write(tmp_path, text, name="bad.mlir"):
    p = tmp_path / name
    p.write_text(text)
    return p


def assert_located(err, path, line, col=None):
    m = re.search(rf"{re.escape(str(path))}:(\d+):(\d+): error: ", err)
    assert m, err
    assert int(m.group(1)) == line, err
    if col is not None:
        assert int(m.group(2)) == col, err
    assert "Traceback" not in err
    # the source line and a caret under the column
    lines = err.splitlines()
    i = next(k for k, s in enumerate(lines) if s.startswith(str(path)))
    assert lines[i + 2].strip() == "^", err


@pytest.mark.parametrize("text, line, col, words", [
    (GOOD.replace("graph.exp %x", "graph.exp %q"), 2, 18, "use of undefined value '%q'"),
    (GOOD.replace("graph.exp", "graph.expo"), 2, 8, "graph.expo"),
    (GOOD.replace("tensor<4x8xf32>\n  func", "tensor<4x9xf32>\n  func"), 2, 19, "tensor<4x9xf32>"),
    (GOOD.replace("%y = graph.exp %x : tensor<4x8xf32>",
                  "%y = graph.reduce sum %x dims [2] : (tensor<4x8xf32>) -> tensor<4x8xf32>"), 2, 3, "out of range"),
    (GOOD.replace("graph.exp %x : tensor<4x8xf32>", "graph.exp %i : (tensor<4x8xi32>) -> tensor<4x8xf32>").replace(
        "  %y", "  %i = graph.iota dim 0 : tensor<4x8xi32>\n  %y"), 3, 3, "element type"),
])
def test_fs_opt_located_errors(tmp_path, capsys, text, line, col, words):
    p = write(tmp_path, text)
    code, out, err = run(fs_opt.main, [str(p)], capsys)
    assert code == 1
    assert words in err
    assert_located(err, p, line)


@pytest.mark.parametrize("argv, words", [
    (["-p", "no-such-pass"], "unknown pass 'no-such-pass'"),
    (["-p", "graph-canonicalize{bogus=1}"], "bogus"),
    (["-t", "no-such-target"], "no-such-target"),
])
def test_fs_opt_option_errors(good, capsys, argv, words):
    code, out, err = run(fs_opt.main, [str(good), *argv], capsys)
    assert code == 1
    assert err.startswith("fs-opt: error: ") and words in err, err


def test_fs_opt_missing_and_directory_inputs(tmp_path, capsys):
    code, _, err = run(fs_opt.main, [str(tmp_path / "nope.mlir")], capsys)
    assert code == 1 and "no such file" in err and "Traceback" not in err
    code, _, err = run(fs_opt.main, [str(tmp_path)], capsys)
    assert code == 1 and "directory" in err


def test_fs_opt_verify_diagnostics_mlir_semantics(tmp_path, capsys):
    ok = write(tmp_path, """
func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reduction dimension 2 is out of range}}
  %y = graph.reduce sum %x dims [2] : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// -----
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
""")
    code, out, err = run(fs_opt.main, [str(ok), "--split-input-file", "--verify-diagnostics"], capsys)
    assert code == 0, err
    assert "@g" in out
    # wrong line -> failure, and an error nobody expected -> failure
    wrong = write(tmp_path, ok.read_text().replace("@+1", "@+2"), "wrong.mlir")
    code, _, err = run(fs_opt.main, [str(wrong), "--split-input-file", "--verify-diagnostics"], capsys)
    assert code == 1 and "was not produced" in err and "unexpected error" in err


def test_fs_run_input_errors(good, tmp_path, capsys):
    npz = tmp_path / "in.npz"
    np.savez(npz, x=np.ones((3, 8), np.float32))
    code, _, err = run(fs_run.main, [str(good), "--device", "reference", "--inputs", str(npz)], capsys)
    assert code == 1 and "expected shape 4x8, got 3x8" in err
    assert_located(err, good, 1)
    np.savez(npz, y=np.ones((4, 8), np.float32))
    code, _, err = run(fs_run.main, [str(good), "--device", "reference", "--inputs", str(npz)], capsys)
    assert code == 1 and "no input for argument(s) %x" in err
    code, _, err = run(fs_run.main, [str(good), "--device", "reference", "--entry", "nope"], capsys)
    assert code == 1 and "no function @nope" in err
    code, _, err = run(fs_run.main, [str(good), "--device", "gpu9"], capsys)
    assert code == 1 and "invalid choice" in err and "Traceback" not in err


def test_fs_run_reference_outputs_by_name_and_position(good, tmp_path, capsys):
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    for key in ("x", "arg0"):
        npz, out = tmp_path / f"in_{key}.npz", tmp_path / f"out_{key}.npz"
        np.savez(npz, **{key: x})
        code, stdout, err = run(fs_run.main, [str(good), "--device", "reference", "--inputs", str(npz),
                                              "--outputs", str(out)], capsys)
        assert code == 0, err
        assert "out0: 4x8 float32" in stdout
        got = np.load(out)["out0"]
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, np.exp(x))


def test_fs_run_random_inputs_reproducible_by_seed(good, capsys):
    outs = []
    for seed in (1, 1, 2):
        code, stdout, _ = run(fs_run.main, [str(good), "--device", "reference", "--seed", str(seed)], capsys)
        assert code == 0
        outs.append(stdout.splitlines()[1])
    assert outs[0] == outs[1] != outs[2]


def test_internal_error_says_bug(capsys, monkeypatch):
    def boom():
        raise KeyError("oops")

    from fsir.tools.driver import run_tool
    with pytest.raises(SystemExit) as exc:
        run_tool("fs-opt", boom)
    err = capsys.readouterr().err
    assert exc.value.code == 3 and "internal error" in err and "bug in fsir" in err and "Traceback" not in err
