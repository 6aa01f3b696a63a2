"""HLO contractions: dot and convolution.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsir.dialects.graph import shape_of
from fsir.errors import UserError
from fsir.frontend.hlo_parse import Item

if TYPE_CHECKING:  # the importer calls these handlers; they only read its state
    from fsir.frontend.hlo import HloImporter


def dot(imp: HloImporter, instr, ops):
    a, c = ops
    out_elem = imp.type_of(instr.shape, instr).element_type
    a, c = imp.b.convert(a, out_elem), imp.b.convert(c, out_elem)
    lb, lc = imp.ints(instr, "lhs_batch_dims", []), imp.ints(instr, "lhs_contracting_dims", [])
    rb, rc = imp.ints(instr, "rhs_batch_dims", []), imp.ints(instr, "rhs_contracting_dims", [])
    return imp.b.dot_general(a, c, lb, lc, rb, rc)


def convolution(imp: HloImporter, instr, ops):
    """XLA's convolution (`dim_labels=b01f_01io->b01f`, `window={size= stride= pad=
    lhs_dilate= rhs_dilate=}`, `feature_group_count`) as one graph.conv in its
    [batch, feature, spatial...] layout, with transposes to and from the labelled
    layouts."""
    x, w = ops
    out_elem = imp.type_of(instr.shape, instr).element_type
    x, w = imp.b.convert(x, out_elem), imp.b.convert(w, out_elem)
    rank = len(shape_of(x.type))
    where = instr.attr_locs.get("dim_labels", instr.loc)
    labels = str(imp.attr(instr, "dim_labels"))
    lhs, _, rest = labels.partition("_")
    rhs, _, out = rest.partition("->")
    spatial = [str(i) for i in range(rank - 2)]
    for text, need in ((lhs, ["b", "f", *spatial]), (rhs, ["i", "o", *spatial]), (out, ["b", "f", *spatial])):
        if sorted(text) != sorted(need):
            raise UserError(f"cannot read dim_labels={labels} of '{instr.name}' for rank-{rank} operands "
                            "(expected e.g. b01f_01io->b01f)", where)
    if int(imp.attr(instr, "batch_group_count", 1)) != 1:
        raise imp.unsupported(instr, "convolution with batch_group_count")
    groups = int(imp.attr(instr, "feature_group_count", 1))
    x = imp.b.transpose(x, [lhs.index(c) for c in ["b", "f", *spatial]])
    w = imp.b.transpose(w, [rhs.index(c) for c in ["o", "i", *spatial]])
    kernel = list(shape_of(w.type)[2:])
    window = imp.attr(instr, "window", None)
    fields = {str(i.values[0]): str(i.values[1]) for i in window or []
              if isinstance(i, Item) and i.seps == ["="]}
    unknown = set(fields) - {"size", "stride", "pad", "lhs_dilate", "rhs_dilate"}
    if unknown:
        raise imp.unsupported(instr, f"convolution window field(s) {', '.join(sorted(unknown))}")

    def sizes(name: str, default: int) -> list[int]:
        text = fields.get(name)
        values = [default] * len(kernel) if text is None else [int(v) for v in text.split("x")]
        if len(values) != len(kernel):
            raise UserError(f"window {name}={text} of '{instr.name}' needs {len(kernel)} sizes",
                            instr.attr_locs.get("window", instr.loc))
        return values

    if "size" in fields and sizes("size", 1) != kernel:
        raise UserError(f"window size={fields['size']} of '{instr.name}' does not match the kernel "
                        f"{'x'.join(map(str, kernel))}", instr.attr_locs.get("window", instr.loc))
    pads = [[int(v) for v in d.split("_")] for d in fields["pad"].split("x")] if "pad" in fields else \
        [[0, 0]] * len(kernel)
    if len(pads) != len(kernel) or any(len(p) != 2 for p in pads):
        raise UserError(f"window pad={fields.get('pad')} of '{instr.name}' needs low_high for {len(kernel)} "
                        "dims", instr.attr_locs.get("window", instr.loc))
    y = imp.b.conv(x, w, sizes("stride", 1), [p[0] for p in pads], [p[1] for p in pads],
                    sizes("rhs_dilate", 1), sizes("lhs_dilate", 1), groups)
    ours = ["b", "f", *spatial]
    return imp.b.transpose(y, [ours.index(c) for c in out])
