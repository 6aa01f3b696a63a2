"""The nine `light` CNNs shipped in the onnx wheel (ResNet-50, VGG-19, Inception v1/v2,
DenseNet-121, ShuffleNet, SqueezeNet, AlexNet, ZFNet-512) compiled by fsir and run on
its PTX simulator against the expected outputs ONNX ships beside them.

    python benchmarks/cnn_models.py                      # all nine, stitch fusion
    python benchmarks/cnn_models.py resnet50 squeezenet --fusion xla

Prints per model: status (passed / refused / failed / crashed, as
`fsir.onnx.conformance` classifies it), kernels, launches, compile seconds, simulator
seconds and the largest relative error. Inputs are ONNX's dummy inputs
(`BackendTest.generate_dummy_data`, as ONNX's runner makes them).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback

import numpy as np

from fsir.errors import UserError
from fsir.onnx.conformance import Outcome, model_cases
from fsir.runtime.progress import progress_over


def run_model(case, fusion: str) -> dict:
    from fsir.onnx.backend import FsirBackend

    row: dict = {"model": case.name.removeprefix("test_"), "status": Outcome.CRASHED.value}
    try:
        model, data = case.load()
        t0 = time.perf_counter()
        rep = FsirBackend.prepare(model, "CPU", fusion=fusion)
        row["compile_s"] = time.perf_counter() - t0
        row["kernels"] = len(rep.executable.kernels)
        (ins, expected), = data
        t0 = time.perf_counter()
        outs = rep.run(ins)
        row["sim_s"] = time.perf_counter() - t0
        stats = rep.executable.last_stats
        row["launches"] = getattr(stats, "launches", None)
        err = max(float(np.max(np.abs(o - e) / (np.abs(e) + 1e-6))) for o, e in zip(outs, expected))
        row["max_rel_err"] = err
        ok = all(np.allclose(o, e, rtol=case.rtol, atol=max(case.atol, 1e-5)) for o, e in zip(outs, expected))
        row["status"] = (Outcome.PASSED if ok else Outcome.FAILED).value
    except UserError as e:
        row["status"] = Outcome.REFUSED.value
        row["message"] = f"{e.loc}: {e.message}" if e.loc else e.message
    except Exception:
        row["message"] = traceback.format_exc(limit=-2).strip().splitlines()[-1]
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", help="model names (e.g. resnet50); default: all nine")
    ap.add_argument("--fusion", default="stitch", choices=("none", "xla", "stitch"))
    ap.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal after two seconds)")
    args = ap.parse_args(argv)
    cases = model_cases(["light"])
    if args.models:
        cases = [c for c in cases if c.name.removeprefix("test_") in args.models]
    print(f"{'model':<16}{'status':>9}{'kernels':>9}{'launches':>9}{'compile s':>11}{'sim s':>9}{'max rel err':>13}")
    for case in progress_over(cases, desc="models", enabled=False if args.quiet else None):
        r = run_model(case, args.fusion)

        def cell(key, fmt, width, r=r):
            v = r.get(key)
            return f"{'-':>{width}}" if v is None else f"{v:>{width}{fmt}}"

        print(f"{r['model']:<16}{r['status']:>9}{cell('kernels', 'd', 9)}{cell('launches', 'd', 9)}"
              f"{cell('compile_s', '.1f', 11)}{cell('sim_s', '.1f', 9)}{cell('max_rel_err', '.2e', 13)}", flush=True)
        if "message" in r:
            print(f"    {r['message'][:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
