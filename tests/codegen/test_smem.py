"""fsir.codegen.smem: Cooper-Harvey-Kennedy dominators and dominance-based reuse of
shared buffers; LayerNorm's two block reductions in one buffer's space (ptxas -v)."""


import random

from fsir.codegen.smem import DominatorTree, Request, allocate, chain, dominates, dominators
from fsir.testing.paths import EXAMPLES


def test_dominators_diamond_and_loop():
    # entry -> a, b; a, b -> join; join -> loop <-> body; loop -> exit
    succ = {"entry": ["a", "b"], "a": ["join"], "b": ["join"], "join": ["loop"],
            "loop": ["body", "exit"], "body": ["loop"], "exit": []}
    idom = dominators(succ, "entry")
    assert idom == {"entry": "entry", "a": "entry", "b": "entry", "join": "entry", "loop": "join",
                    "body": "loop", "exit": "loop"}
    assert dominates(idom, "join", "exit") and not dominates(idom, "a", "join")


def test_dead_buffer_space_is_reused():
    # mean -> var -> out (LayerNorm): the mean's slot is read only by its own group
    idom = dominators(chain(["mean", "var", "out"], {"var": ["mean"], "out": ["mean", "var"]}), "mean")
    reqs = [Request("mean_slot", 4, "mean", ("mean",)), Request("var_slot", 4, "var", ("var",))]
    p = allocate(reqs, idom)
    assert p.offsets == {"mean_slot": 0, "var_slot": 0} and p.size == 4


def test_live_buffer_is_not_overwritten():
    idom = dominators(chain(["g0", "g1", "g2"], {}), "g0")
    # g0's buffer is read again by g2: g1 must not take its space
    reqs = [Request("a", 8, "g0", ("g0", "g2")), Request("b", 8, "g1", ("g1",)), Request("c", 8, "g2", ("g2",))]
    p = allocate(reqs, idom)
    assert p.offsets["a"] == 0 and p.offsets["b"] == 16 and p.offsets["c"] == 16
    assert p.size == 24


def test_reader_on_one_branch_only_keeps_buffer_live():
    # g0 -> g1 | g2 -> g3: a buffer read in g1 is not dead at g2 (g1 does not dominate g2)
    succ = {"g0": ["g1", "g2"], "g1": ["g3"], "g2": ["g3"], "g3": []}
    idom = dominators(succ, "g0")
    p = allocate([Request("a", 4, "g0", ("g1",)), Request("b", 4, "g2", ("g2",)),
                  Request("c", 4, "g3", ("g3",))], idom)
    assert p.offsets["b"] != p.offsets["a"]
    # neither g1 nor g2 dominates the join g3: both buffers count as live there
    # (conservative), so c gets fresh space
    assert p.offsets["c"] == 32


def test_layernorm_reductions_share_one_slot_ptxas():
    """Mean and variance are two block reductions; their result slots share one
    buffer's space in the schedule IR, and ptxas -v reports that many shared bytes."""
    from fsir.dialects.schedule import GroupOp, KernelOp, RowParamsAttr, Storage
    from fsir.parse import parse_module
    from fsir.pipeline import PipelineOptions, emit_ptx, lower
    from fsir.ptx.ptxas import assemble

    module = parse_module((EXAMPLES / "layernorm.mlir").read_text(), "layernorm.mlir")
    options = PipelineOptions(fusion="stitch", rows="block", arch="sm_80")
    scheduled: list[KernelOp] = []

    def keep_kernels(stage, seconds, ir):
        if stage == "stitch-codegen":
            scheduled.extend(op.clone() for op in ir.walk() if isinstance(op, KernelOp))

    lowered = lower(module, options, on_stage=keep_kernels)
    (k,) = scheduled
    slots = [(g.buffer.root_reference.data, g.offset.value.data) for g in k.groups()
             if isinstance(g, GroupOp) and g.storage.data == Storage.SHARED]
    assert slots == [("results_f32", 0), ("results_f32", 0)]
    buffers = {name: s.bytes for name, s in k.shared_buffers().items()}
    assert isinstance(k.params, RowParamsAttr)
    rows_per_block = k.params.rows_per_block
    assert buffers == {"partials_f32": 4 * (256 // 32), "results_f32": 4 * rows_per_block}
    result = assemble(emit_ptx(lowered, options), "sm_80")
    assert result.ok, result.errors
    # one slot for both reductions (no reuse would be 4 more bytes per row of the block)
    assert result.kernels["layernorm_k0"].shared_bytes == sum(buffers.values())


def test_dominator_tree_answers_as_the_idom_walk():
    # random graphs, unreachable nodes and nodes outside the graph included: the
    # interval test `allocate` uses agrees with climbing the immediate dominators
    rng = random.Random(7)
    disagree = 0
    for _ in range(200):
        n = rng.randint(1, 25)
        succ: dict[int, list[int]] = {i: [] for i in range(n)}
        for _ in range(rng.randint(0, 3 * n)):
            a, b = rng.randrange(n), rng.randrange(n)
            if b not in succ[a]:
                succ[a].append(b)
        idom = dominators(succ, 0)
        tree = DominatorTree(idom)
        disagree += sum(tree.dominates(a, b) != dominates(idom, a, b) for a in range(n + 2) for b in range(n + 2))
    assert disagree == 0
