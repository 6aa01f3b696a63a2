"""Small graph-dialect functions that several test suites and benchmarks compile: LayerNorm,
softmax and their variants, as MLIR text."""


def layernorm_fusion(rows: str, cols: int, t: str = "f32") -> str:
    """LayerNorm of `rows` (a number or `?`) rows of `cols` elements as one stitch.fusion."""
    x, v, r = f"tensor<{rows}x{cols}x{t}>", f"tensor<{cols}x{t}>", f"tensor<{rows}x{t}>"
    if rows == "?":
        # the row count comes from the data: sizes of `?` dims flow from operands
        bx = f"tensor<{rows}x{cols}xi1>"
        count = (f"%same = graph.compare eq %xa, %xa : ({x}, {x}) -> {bx}\n"
                 f"    %one = graph.convert %same : ({bx}) -> {x}\n"
                 f"    %nb = graph.reduce sum %one dims [1] : ({x}) -> {r}")
    else:
        count = f"%nb = graph.broadcast %n dims [] : (tensor<{t}>) -> {r}"
    if rows == "?":  # a static vector cannot broadcast to a `?` dim: no gamma/beta
        affine = f"%y1 = graph.neg %xn : {x}"
    else:
        affine = (f"%gb = graph.broadcast %ga dims [1] : ({v}) -> {x}\n"
                  f"    %bb = graph.broadcast %ba dims [1] : ({v}) -> {x}\n"
                  f"    %y0 = graph.mul %xn, %gb : {x}\n"
                  f"    %y1 = graph.add %y0, %bb : {x}")
    if rows == "?":  # no constant can take a `?` shape: add nb / nb = 1 instead of eps
        eps = f"%eb = graph.div %nb, %nb : {r}"
    else:
        eps = f"%eb = graph.broadcast %eps dims [] : (tensor<{t}>) -> {r}"
    return f"""
func.func @ln(%x: {x}, %g: {v}, %b: {v}) -> {x} {{
  %y = stitch.fusion (%x, %g, %b) : ({x}, {v}, {v}) -> {x} {{
  ^bb0(%xa: {x}, %ga: {v}, %ba: {v}):
    %n = graph.constant dense<{cols}.0> : tensor<{t}>
    %eps = graph.constant dense<1.0e-5> : tensor<{t}>
    %s = graph.reduce sum %xa dims [1] : ({x}) -> {r}
    {count}
    %mean = graph.div %s, %nb : {r}
    %mb = graph.broadcast %mean dims [0] : ({r}) -> {x}
    %xc = graph.sub %xa, %mb : {x}
    %sq = graph.mul %xc, %xc : {x}
    %vs = graph.reduce sum %sq dims [1] : ({x}) -> {r}
    %var = graph.div %vs, %nb : {r}
    {eps}
    %ve = graph.add %var, %eb : {r}
    %rstd = graph.rsqrt %ve : {r}
    %rb = graph.broadcast %rstd dims [0] : ({r}) -> {x}
    %xn = graph.mul %xc, %rb : {x}
    {affine}
    stitch.yield %y1 : {x}
  }}
  func.return %y : {x}
}}
"""


# softmax as one stitch.fusion: rows R x C columns reduced over dim D to K values,
# broadcast back along dim KD
SOFTMAX_FUSION = """
func.func @softmax(%x: tensor<{R}x{C}xf32>) -> tensor<{R}x{C}xf32> {{
  %y = stitch.fusion (%x) : (tensor<{R}x{C}xf32>) -> tensor<{R}x{C}xf32> {{
  ^bb0(%xa: tensor<{R}x{C}xf32>):
    %m = graph.reduce max %xa dims [{D}] : (tensor<{R}x{C}xf32>) -> tensor<{K}xf32>
    %mb = graph.broadcast %m dims [{KD}] : (tensor<{K}xf32>) -> tensor<{R}x{C}xf32>
    %d = graph.sub %xa, %mb : tensor<{R}x{C}xf32>
    %e = graph.exp %d : tensor<{R}x{C}xf32>
    %s = graph.reduce sum %e dims [{D}] : (tensor<{R}x{C}xf32>) -> tensor<{K}xf32>
    %sb = graph.broadcast %s dims [{KD}] : (tensor<{K}xf32>) -> tensor<{R}x{C}xf32>
    %p = graph.div %e, %sb : tensor<{R}x{C}xf32>
    stitch.yield %p : tensor<{R}x{C}xf32>
  }}
  func.return %y : tensor<{R}x{C}xf32>
}}
"""


# LayerNorm of 6 rows of 200 elements, unfused
GRAPH_LAYERNORM = """
func.func @ln(%x: tensor<6x200xf32>, %g: tensor<200xf32>, %b: tensor<200xf32>) -> tensor<6x200xf32> {
  %n = graph.constant dense<200.0> : tensor<6xf32>
  %eps = graph.constant dense<1.0e-5> : tensor<6xf32>
  %s = graph.reduce sum %x dims [1] : (tensor<6x200xf32>) -> tensor<6xf32>
  %mean = graph.div %s, %n : tensor<6xf32>
  %mb = graph.broadcast %mean dims [0] : (tensor<6xf32>) -> tensor<6x200xf32>
  %xc = graph.sub %x, %mb : tensor<6x200xf32>
  %sq = graph.mul %xc, %xc : tensor<6x200xf32>
  %vs = graph.reduce sum %sq dims [1] : (tensor<6x200xf32>) -> tensor<6xf32>
  %var = graph.div %vs, %n : tensor<6xf32>
  %ve = graph.add %var, %eps : tensor<6xf32>
  %rstd = graph.rsqrt %ve : tensor<6xf32>
  %rb = graph.broadcast %rstd dims [0] : (tensor<6xf32>) -> tensor<6x200xf32>
  %xn = graph.mul %xc, %rb : tensor<6x200xf32>
  %gb = graph.broadcast %g dims [1] : (tensor<200xf32>) -> tensor<6x200xf32>
  %bb = graph.broadcast %b dims [1] : (tensor<200xf32>) -> tensor<6x200xf32>
  %y0 = graph.mul %xn, %gb : tensor<6x200xf32>
  %y = graph.add %y0, %bb : tensor<6x200xf32>
  func.return %y : tensor<6x200xf32>
}
"""


def softmax(rows: int, cols: int, t: str = "f32") -> str:
    x, r = f"tensor<{rows}x{cols}x{t}>", f"tensor<{rows}x{t}>"
    return f"""
func.func @softmax(%x: {x}) -> {x} {{
  %m = graph.reduce max %x dims [1] : ({x}) -> {r}
  %mb = graph.broadcast %m dims [0] : ({r}) -> {x}
  %d = graph.sub %x, %mb : {x}
  %e = graph.exp %d : {x}
  %s = graph.reduce sum %e dims [1] : ({x}) -> {r}
  %sb = graph.broadcast %s dims [0] : ({r}) -> {x}
  %y = graph.div %e, %sb : {x}
  func.return %y : {x}
}}
"""


def gelu_sum(rows: int, cols: int) -> str:
    """GELU (erf form), then each row scaled by its sum: erf is read by the sum's group
    and the output's."""
    x, r = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}xf32>"
    return f"""
func.func @gelu(%x: {x}) -> {x} {{
  %h = graph.constant dense<0.5> : {x}
  %c = graph.constant dense<0.70710678> : {x}
  %one = graph.constant dense<1.0> : {x}
  %xs = graph.mul %x, %c : {x}
  %f = graph.erf %xs : {x}
  %f1 = graph.add %f, %one : {x}
  %xh = graph.mul %x, %h : {x}
  %g = graph.mul %xh, %f1 : {x}
  %s = graph.reduce sum %g dims [1] : ({x}) -> {r}
  %sb = graph.broadcast %s dims [0] : ({r}) -> {x}
  %y = graph.sub %g, %sb : {x}
  func.return %y : {x}
}}
"""


def layernorm_exp(rows: int, cols: int) -> str:
    """LayerNorm of exp(x): exp is read by the mean's, the variance's and the output's
    groups."""
    x, r = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}xf32>"
    return f"""
func.func @ln(%x: {x}) -> {x} {{
  %n = graph.constant dense<{float(cols)}> : {r}
  %eps = graph.constant dense<1.0e-5> : {r}
  %e = graph.exp %x : {x}
  %s = graph.reduce sum %e dims [1] : ({x}) -> {r}
  %mean = graph.div %s, %n : {r}
  %mb = graph.broadcast %mean dims [0] : ({r}) -> {x}
  %xc = graph.sub %e, %mb : {x}
  %sq = graph.mul %xc, %xc : {x}
  %vs = graph.reduce sum %sq dims [1] : ({x}) -> {r}
  %var = graph.div %vs, %n : {r}
  %ve = graph.add %var, %eps : {r}
  %rstd = graph.rsqrt %ve : {r}
  %rb = graph.broadcast %rstd dims [0] : ({r}) -> {x}
  %y = graph.mul %xc, %rb : {x}
  func.return %y : {x}
}}
"""
