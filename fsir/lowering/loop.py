"""The `loop` mapping's lowering: thread `i = block_id * block_dim + thread_id` computes
element `i` (or elements `i*V .. i*V + V - 1`) of each output; outputs of other sizes are
guarded (kernel packing)."""

from __future__ import annotations

from fsir.lowering.kernels import KernelLowering


class LoopLowering(KernelLowering):
    def body(self) -> None:
        ib, e = self.ib, self.emit
        # thread t computes elements t*V .. t*V + V - 1 (innermost extents are multiples of V)
        i = ib.mul(ib.add(ib.mul(self.block_id(), self.block_size), self.thread_id()), self.vector)
        by_shape: dict[tuple, list[int]] = {}
        for j, (_, gv) in enumerate(self.outputs):
            dims = self.shapes.dims(gv)
            by_shape.setdefault(tuple(("c", d) if isinstance(d, int) else ("v", id(d)) for d in dims), []).append(j)
        for js in by_shape.values():
            dims = self.shapes.dims(self.outputs[js[0]][1])

            def body(js=js, dims=dims):
                first = ib.delinearize(i, dims)
                for v in range(self.vector):
                    idx = [*first[:-1], ib.add(first[-1], v)] if dims else first
                    for j in js:
                        self.store_output(j, e.at(self.outputs[j][1], idx), idx)

            e.when(ib.lt(i, ib.prod(dims)), body)

