"""Applying a tuning log: within `tuned(log, options)`, stitch-codegen builds every
fusion whose workload key has a successful record in the log in that record's best
configuration (replayed from its decisions on the fusion's own space).

    with tuned("tune.jsonl", PipelineOptions(gpu="H100")):
        exe = fsir.compile("model.mlir", gpu="H100", cache=False)

(`cache=False`: a compile cache keyed by the fusion and the options knows nothing of
the log.) A record whose decisions no longer give a configuration of the fusion's
space is skipped with a warning.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fsir.codegen.mappings.base import ChoiceRequest
from fsir.pipeline import PipelineOptions
from fsir.tune.database import Database, Record
from fsir.tune.space import Invalid, space_for, today_splits
from fsir.tune.task import ConfigOf, forcing


def _replay(rec: Record) -> ConfigOf:
    def config_of(request: ChoiceRequest) -> Any:
        try:
            return space_for(request, today_splits(request)).config(rec.trace)
        except Invalid as err:
            print(f"warning: tuning record {rec.config} for {rec.key} does not apply: {err}", file=sys.stderr)
            return None

    return config_of


@contextmanager
def tuned(log: str | Path, options: PipelineOptions) -> Iterator[dict[str, Record]]:
    """Force the log's best configuration per workload on compiles within (module
    docstring); yields the records applied, by key."""
    db = Database(log)
    best = {k: r for k, r in db.best_per_key().items() if r.gpu == options.gpu and r.arch == options.arch}
    with forcing({k: _replay(r) for k, r in best.items()}, options):
        yield best
