"""How a graph module is compiled: one frozen, typed options object every stage reads.

`PipelineOptions` holds enum-valued fields; text (from `fs-run` flags, `fs-opt -p`
pass options or `fsir.compile` keywords) is parsed once, when the object is built, and
a bad value is the same `UserError` from every door:

    PipelineOptions(fusion="xla", rows="warp")      # the strings become enums here
    PipelineOptions(rows="diagonal")                 # stitch-codegen: rows=diagonal (expected ...)

The passes keep their text options (the `-p` syntax) and read them through this object
(`StitchCodegenPass.options()`), so a pass and the API cannot disagree on a value.
`key()` is the options' part of a cache key: every field that changes the generated
code.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from fsir.codegen.gemm_config import GemmConfig
from fsir.codegen.tile_sync import TileSyncChoice, parse_tile_sync
from fsir.errors import UserError
from fsir.gpuspec import gpu_spec
from fsir.ptx.module import ARCHS


class FusionMode(StrEnum):
    """fusion-explore's grouping: FusionStitching, XLA's rules, or one kernel per op."""

    STITCH = "stitch"
    XLA = "xla"
    NONE = "none"


class RowSchedule(StrEnum):
    """The schedule of every row kernel (auto: the latency-evaluator's choice)."""

    AUTO = "auto"
    THREAD = "thread"
    WARP = "warp"
    BLOCK = "block"
    INTERLEAVED = "interleaved"


class Registers(StrEnum):
    """Whether a row may stay in registers between its groups (off: every group re-reads it)."""

    AUTO = "auto"
    OFF = "off"


class Subroots(StrEnum):
    """Expensive ops read by several groups lead groups of their own: in the
    evaluator's choice (auto), wherever they can (all) or never (none)."""

    AUTO = "auto"
    ALL = "all"
    NONE = "none"


class VectorWidth(StrEnum):
    """The elements a thread moves per memory instruction (auto: the evaluator's choice)."""

    AUTO = "auto"
    V1 = "1"
    V2 = "2"
    V4 = "4"

    @property
    def width(self) -> int | None:
        """The forced width, None for auto."""
        return None if self is VectorWidth.AUTO else int(self.value)


class Precision(StrEnum):
    """What f32 GEMMs compute in: exact FMAs or tf32 on the tensor cores."""

    FP32 = "fp32"
    TF32 = "tf32"


# field -> (the pass that owns it, the pass's name for it, its enum): errors name the
# pass option, the same from `-p`, `fs-run` and `fsir.compile`
_ENUMS: dict[str, tuple[str, str, type[StrEnum]]] = {
    "fusion": ("fusion-explore", "mode", FusionMode),
    "rows": ("stitch-codegen", "rows", RowSchedule),
    "registers": ("stitch-codegen", "registers", Registers),
    "subroots": ("stitch-codegen", "subroots", Subroots),
    "vector": ("stitch-codegen", "vector", VectorWidth),
    "precision": ("stitch-codegen", "precision", Precision),
}


def parse_choice(option: str, value: Any) -> StrEnum:
    """`value` (text, a number or already the enum) as option `option`'s enum."""
    owner, name, enum = _ENUMS[option]
    try:
        return enum(str(value).strip().lower())
    except ValueError:
        expected = [str(m) for m in enum]
        raise UserError(f"{owner}: {name}={value} (expected {', '.join(expected[:-1])} or {expected[-1]})") from None


def parse_gemm(value: str | GemmConfig | None) -> GemmConfig | None:
    """The gemm option: None for auto, else a configuration (`GemmConfig.parse`)."""
    if value is None or isinstance(value, GemmConfig):
        return value
    return None if str(value).strip().lower() == "auto" else GemmConfig.parse(str(value))


@dataclass(frozen=True)
class PipelineOptions:
    """How a graph module is compiled. Each field is an option of one pass or of the
    PTX target; the defaults equal the passes' own, so `fs-opt -p` with no options
    compiles the same way.

    fusion: fusion-explore's mode (`FusionMode`).
    gpu: the GPU the cost models assume (a `fsir.gpuspec` name, case-insensitive).
    rows, registers, subroots, vector, gemm: stitch-codegen's choices (auto: the
        latency-evaluator's); see `fs-opt --help`.
    precision: what f32 GEMMs compute in (`Precision`); f16/bf16 GEMMs always use the
        tensor cores.
    traffic_slack: the fraction of a GEMM's time stitch-codegen may trade for fewer
        requested global bytes (0: the fastest configuration).
    arch: the PTX target architecture (sm_80, sm_86, sm_89, sm_90).
    tile_sync: None (off, the default), a `SyncPolicy` or "auto": dependent kernels as
        cuSync pipelines synchronised tile by tile by the `tile-sync` pass.
    jobs: the processes that lower kernels and print their PTX when a compile asks for
        PTX (`fsir.pipeline.compile_ptx`); None: FSIR_JOBS, else the usable CPUs. The
        output does not depend on it, so it is not part of `key()`.
    """

    fusion: FusionMode = FusionMode.STITCH
    gpu: str = "H100"
    rows: RowSchedule = RowSchedule.AUTO
    registers: Registers = Registers.AUTO
    subroots: Subroots = Subroots.AUTO
    vector: VectorWidth = VectorWidth.AUTO
    gemm: GemmConfig | None = None
    precision: Precision = Precision.FP32
    traffic_slack: float = 0.0
    arch: str = "sm_80"
    tile_sync: TileSyncChoice = None
    jobs: int | None = None

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        for name in _ENUMS:
            put(name, parse_choice(name, getattr(self, name)))
        put("gpu", gpu_spec(str(self.gpu)).name)
        put("gemm", parse_gemm(self.gemm))
        slack = self.traffic_slack
        if isinstance(slack, bool) or not isinstance(slack, (int, float)) or not 0 <= slack <= 1:
            raise UserError(f"stitch-codegen: traffic_slack={slack} (expected a fraction from 0 to 1)")
        put("traffic_slack", float(slack))
        if self.arch not in ARCHS:
            raise UserError(f"PTX printer: unsupported arch '{self.arch}' (choose from {', '.join(ARCHS)})")
        put("tile_sync", parse_tile_sync(self.tile_sync))
        if self.jobs is not None:
            try:
                jobs = int(self.jobs)
            except (TypeError, ValueError):
                jobs = 0
            if jobs < 1 or isinstance(self.jobs, bool):
                raise UserError(f"jobs={self.jobs} (expected a number of processes, 1 or more)")
            put("jobs", jobs)

    @classmethod
    def parse(cls, **values: Any) -> PipelineOptions:
        """Options from text (flags, pass options, keywords), each value parsed as its
        field's; an unknown name is a user error."""
        unknown = sorted(set(values) - {f.name for f in fields(cls)})
        if unknown:
            raise UserError(f"unknown compile option(s) {', '.join(unknown)}")
        return cls(**values)

    @property
    def gemm_text(self) -> str:
        """The gemm option as stitch-codegen's pass option writes it."""
        return "auto" if self.gemm is None else self.gemm.text()

    def key(self) -> tuple:
        """Every field, as plain values: the options' part of a cache key."""
        return tuple((f.name, str(getattr(self, f.name))) for f in fields(self) if f.name not in UNKEYED)


UNKEYED = frozenset({"jobs"})  # fields that cannot change the output


DEFAULT = PipelineOptions()
