"""Build the model corpus: every architecture of archs.py exported to ONNX with the
TorchScript exporter and (where it works) the dynamo exporter, in f32 and f16, with a
symbolic batch dim for every transformer; saved with its inputs and onnxruntime's
outputs.

    pip install -e '.[zoo]'
    python examples/zoo/build.py                      # all of them, into examples/zoo/out/
    python examples/zoo/build.py --only bert,dlrm --exporters torchscript --dtypes f32 --out /tmp/zoo

For each variant NAME.EXPORTER.DTYPE the output folder holds NAME.EXPORTER.DTYPE.onnx and
NAME.EXPORTER.DTYPE.npz (`in.<input>` arrays in graph order, `out.<i>` the expected
outputs); `manifest.json` lists every variant with its kinds, where its expected outputs
come from (onnxruntime on the f16 model, or on the f32 model where onnxruntime has no f16
kernel) and the exporter's error where an export failed. Seeds are fixed: the corpus is
the same on every run.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import traceback
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
EXPORTERS = ("torchscript", "dynamo")
DTYPES = ("f32", "f16")


def _import_torchvision() -> None:
    """Import torchvision even where its C++ ops do not load (a wheel built for another
    torch): the corpus uses only its Python model definitions, but its fake-kernel
    registrations need these two op schemas to exist."""
    import torch

    try:
        import torchvision  # noqa: F401
        return
    except RuntimeError:
        pass
    for mod in [m for m in sys.modules if m.startswith("torchvision")]:
        del sys.modules[mod]
    lib = torch.library.Library("torchvision", "DEF")  # kept alive: the schemas live as long as lib
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _KEEP.append(lib)
    import torchvision  # noqa: F401,F811


_KEEP: list = []


def export(module, inputs: dict, path: Path, exporter: str, symbolic_batch: bool, symbolic_seq: bool = False) -> None:
    """Export `module` to ONNX at `path`; symbolic_batch names dim 0 of every input
    `batch`, symbolic_seq (TorchScript only) dim 1 `seq` too (text models' [batch, seq]
    inputs)."""
    import torch

    names = list(inputs)
    args = tuple(inputs.values())
    if exporter == "torchscript":
        axes = {n: {0: "batch", 1: "seq"} if symbolic_seq else {0: "batch"} for n in names} if symbolic_batch else None
        torch.onnx.export(module, args, str(path), input_names=names, output_names=["output"], dynamic_axes=axes,
                          opset_version=17, dynamo=False)
        return
    shapes = None
    if symbolic_batch:
        batch = torch.export.Dim("batch", min=1, max=64)
        shapes = tuple({0: batch} for _ in names)
        varargs = _varargs(module)
        if varargs is not None:  # torch.export sees `*args` as one input: a tuple of tensors
            shapes = {varargs: shapes}
    program = torch.onnx.export(module, args, input_names=names, output_names=["output"], dynamic_shapes=shapes,
                                dynamo=True, external_data=False, verbose=False)
    assert program is not None
    program.save(str(path), external_data=False)


def _varargs(module) -> str | None:
    """The name of `module.forward`'s `*args` parameter, if it has one."""
    import inspect

    params = inspect.signature(module.forward).parameters.values()
    return next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)


def reference(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in sess.get_inputs()}
    return list(sess.run(None, {k: v for k, v in feeds.items() if k in wanted}))


def build_one(arch, exporter: str, dtype: str, out: Path) -> dict:
    import torch

    stem = f"{arch.name}.{exporter}.{dtype}"
    entry: dict = {"name": stem, "arch": arch.name, "kinds": list(arch.kinds), "exporter": exporter, "dtype": dtype,
                   "symbolic_batch": arch.symbolic_batch}
    torch.manual_seed(0)
    module = arch.module().eval()
    inputs = arch.inputs()
    f32_feeds = {k: v.numpy() for k, v in inputs.items()}
    if dtype == "f16":
        module = module.half()
        inputs = {k: v.half() if v.is_floating_point() else v for k, v in inputs.items()}
    feeds = {k: v.numpy() for k, v in inputs.items()}
    path = out / f"{stem}.onnx"
    log = io.StringIO()
    try:
        with torch.no_grad(), warnings.catch_warnings(), redirect_stdout(log), redirect_stderr(log):
            warnings.simplefilter("ignore")
            export(module, inputs, path, exporter, arch.symbolic_batch)
    except Exception as err:  # recorded: some exporters cannot export some models
        entry["export_error"] = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"[:300]
        path.unlink(missing_ok=True)
        return entry
    try:
        expected = reference(path, feeds)
        entry["expected_from"] = "onnxruntime"
    except Exception as err:  # onnxruntime lacks an f16 kernel: the f32 model's outputs stand
        if dtype != "f16":
            entry["export_error"] = f"onnxruntime: {str(err).splitlines()[0]}"[:300]
            return entry
        try:
            expected = reference(out / f"{arch.name}.{exporter}.f32.onnx", f32_feeds)
        except Exception:
            entry["export_error"] = f"onnxruntime (f16, and the f32 export): {str(err).splitlines()[0]}"[:300]
            return entry
        entry["expected_from"] = "onnxruntime-f32"
    import onnx

    graph_inputs = [i.name for i in onnx.load(str(path), load_external_data=False).graph.input]
    arrays = {f"in.{n}": feeds[n] for n in graph_inputs if n in feeds}
    arrays |= {f"out.{i}": np.asarray(y) for i, y in enumerate(expected)}
    np.savez(out / f"{stem}.npz", **arrays)  # type: ignore[arg-type]  # numpy's stub types **kwds narrowly
    entry["bytes"] = path.stat().st_size
    return entry


def build(names: list[str] | None, exporters, dtypes, out: Path, progress: bool = True) -> list[dict]:
    sys.path.insert(0, str(HERE))
    _import_torchvision()
    from archs import ARCHS
    from tqdm import tqdm

    archs = [a for a in ARCHS if names is None or a.name in names]
    if names is not None and len(archs) != len(names):
        unknown = set(names) - {a.name for a in archs}
        raise SystemExit(f"unknown architectures: {', '.join(sorted(unknown))}")
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(a, e, d) for a in archs for e in exporters for d in dtypes]
    entries = []
    for arch, exporter, dtype in tqdm(jobs, desc="export", disable=not progress):
        try:
            entries.append(build_one(arch, exporter, dtype, out))
        except Exception:
            traceback.print_exc()
            raise
    manifest = out / "manifest.json"
    old = json.loads(manifest.read_text()) if manifest.exists() else []
    fresh = {e["name"] for e in entries}
    merged = [e for e in old if e["name"] not in fresh] + entries
    manifest.write_text(json.dumps(sorted(merged, key=lambda e: e["name"]), indent=1) + "\n")
    return entries


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "out"), help="output folder (default examples/zoo/out)")
    ap.add_argument("--only", help="architectures to build (comma-separated; default all)")
    ap.add_argument("--exporters", default=",".join(EXPORTERS))
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    entries = build(args.only.split(",") if args.only else None, args.exporters.split(","), args.dtypes.split(","),
                    Path(args.out), progress=not args.quiet)
    failed = [e for e in entries if "export_error" in e]
    print(f"{len(entries) - len(failed)} of {len(entries)} variants exported to {args.out}")
    for e in failed:
        print(f"  {e['name']}: {e['export_error']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
