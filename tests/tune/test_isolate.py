"""The model measurer compiles a task's fusion alone (`fsir.tune.task.isolate`): the
kernel measured alone takes the time it takes in its model, to the last bit (the
sampled blocks' counters do not depend on the other kernels), under another name; the
whole model is compiled where asked."""

from __future__ import annotations

import random

from fsir.pipeline import PipelineOptions
from fsir.testing.graphs import small_bert_layer
from fsir.tune.measure import (
    MeasureInput,
    ModelBackend,
    TaskSource,
    compile_for_measuring,
    stitched_from_text,
    task_space,
)
from fsir.tune.task import discover, isolate

H100 = PipelineOptions(fusion="stitch", gpu="H100")


def test_a_fusion_alone_is_the_same_task_and_measures_the_same():
    text = small_bert_layer()
    stitched = stitched_from_text(text, H100)
    tasks = discover(stitched, H100)
    assert len(tasks) >= 4
    rng = random.Random(0)
    mappings = set()
    for task in tasks:
        got = isolate(stitched, H100, task.key)
        assert got is not None, task.kernel
        module, kernel = got
        (alone,) = discover(module, H100)  # one task, the same workload
        assert alone.key == task.key and alone.kernel == kernel != task.kernel
        if task.mapping in mappings or len(mappings) == 2:
            continue
        mappings.add(task.mapping)
        space = task_space(text, H100, task.key)
        # no split-K (simulated in full: slow)
        trace = space.narrowed({s.kind for s in space.sketches}, split=False).sample(rng)
        inp = MeasureInput(TaskSource(text, H100, task.key, task.kernel), trace)
        whole = compile_for_measuring(inp, False)
        assert getattr(whole, "kernel", None) == task.kernel  # in its model, under its name
        a = ModelBackend(ptxas=False).measure_one(inp)
        b = ModelBackend(ptxas=False, alone=False).measure_one(inp)
        assert (a.seconds, a.error, a.blocks) == (b.seconds, b.error, b.blocks), task.kernel
        assert a.ok or a.error is not None
    assert len(mappings) == 2
