"""Small graph-dialect functions that several test suites and benchmarks compile: LayerNorm,
softmax and their variants, GEMMs, as MLIR text."""


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


def layernorm(rows: int, cols: int, name: str = "ln", mean_output: bool = False,
              bias_residual: bool = False) -> str:
    """LayerNorm of `rows` rows of `cols` f32 elements with γ and β, unfused; with
    `mean_output` the function also returns the rows' means; with `bias_residual` it
    normalises mm + bias + residual (BERT's post-attention block; arguments mm, bias,
    residual, γ, β)."""
    x, v, r = f"tensor<{rows}x{cols}xf32>", f"tensor<{cols}xf32>", f"tensor<{rows}xf32>"
    results, returned = (f"({x}, {r})", f"%y, %mean : {x}, {r}") if mean_output else (x, f"%y : {x}")
    args, prefix = f"%x: {x}", ""
    if bias_residual:
        args = f"%mm: {x}, %bias: {v}, %residual: {x}"
        prefix = f"""  %bias_b = graph.broadcast %bias dims [1] : ({v}) -> {x}
  %biased = graph.add %mm, %bias_b : {x}
  %x = graph.add %biased, %residual : {x}
"""
    return f"""
func.func @{name}({args}, %g: {v}, %b: {v}) -> {results} {{
{prefix}  %n = graph.constant dense<{cols}.0> : {r}
  %eps = graph.constant dense<1.0e-5> : {r}
  %s = graph.reduce sum %x dims [1] : ({x}) -> {r}
  %mean = graph.div %s, %n : {r}
  %mb = graph.broadcast %mean dims [0] : ({r}) -> {x}
  %xc = graph.sub %x, %mb : {x}
  %sq = graph.mul %xc, %xc : {x}
  %vs = graph.reduce sum %sq dims [1] : ({x}) -> {r}
  %var = graph.div %vs, %n : {r}
  %ve = graph.add %var, %eps : {r}
  %rstd = graph.rsqrt %ve : {r}
  %rb = graph.broadcast %rstd dims [0] : ({r}) -> {x}
  %xn = graph.mul %xc, %rb : {x}
  %gb = graph.broadcast %g dims [1] : ({v}) -> {x}
  %bb = graph.broadcast %b dims [1] : ({v}) -> {x}
  %y0 = graph.mul %xn, %gb : {x}
  %y = graph.add %y0, %bb : {x}
  func.return {returned}
}}
"""


# LayerNorm of 6 rows of 200 elements, unfused
GRAPH_LAYERNORM = layernorm(6, 200)


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


def _tensor(shape: tuple[int, ...], t: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{t}>"


def dot(m: int, n: int, k: int, t: str) -> str:
    """One m x k by k x n `graph.dot` of element type `t`."""
    a, b, c = (_tensor(s, t) for s in ((m, k), (k, n), (m, n)))
    return f"""
func.func @f(%a: {a}, %b: {b}) -> {c} {{
  %d = graph.dot %a, %b : ({a}, {b}) -> {c}
  func.return %d : {c}
}}
"""


def normalising_gemm(x_shape: tuple[int, ...], n: int, t: str) -> str:
    """The GEMM kernel of a statistics kernel + normalising GEMM plan, as one
    stitch.fusion: x·w with x (batch dims, rows, k) normalised by per-row mean and rstd
    (of x's shape less k) and per-column γ and β (k) while loading; w is k x n."""
    *rows, k = x_shape
    x, w, v, r, o = (_tensor(s, t) for s in (x_shape, (k, n), (k,), tuple(rows), (*rows, n)))
    row_dims = ", ".join(str(d) for d in range(len(rows)))
    col_dim = len(rows)
    return f"""
func.func @f(%x: {x}, %mean: {r}, %rstd: {r}, %gamma: {v}, %beta: {v}, %w: {w}) -> {o} {{
  %y = stitch.fusion (%x, %mean, %rstd, %gamma, %beta, %w) : ({x}, {r}, {r}, {v}, {v}, {w}) -> {o} {{
  ^bb0(%xa: {x}, %mu: {r}, %rs: {r}, %ga: {v}, %be: {v}, %wa: {w}):
    %mu_b = graph.broadcast %mu dims [{row_dims}] : ({r}) -> {x}
    %xc = graph.sub %xa, %mu_b : {x}
    %rs_b = graph.broadcast %rs dims [{row_dims}] : ({r}) -> {x}
    %xn = graph.mul %xc, %rs_b : {x}
    %ga_b = graph.broadcast %ga dims [{col_dim}] : ({v}) -> {x}
    %g = graph.mul %xn, %ga_b : {x}
    %be_b = graph.broadcast %be dims [{col_dim}] : ({v}) -> {x}
    %a = graph.add %g, %be_b : {x}
    %d = graph.dot %a, %wa : ({x}, {w}) -> {o}
    stitch.yield %d : {o}
  }}
  func.return %y : {o}
}}
"""


# examples/bert_layer.mlir at B=2 S=16 H=128, two heads, FFN 256: the smallest where the
# LayerNorm is a row kernel of its own (at H=64 stitch fuses it into the GEMMs)
_SMALL_BERT = {"128": "16", "12": "2", "768": "128", "3072": "256"}


def small_bert_layer() -> str:
    """examples/bert_layer.mlir shrunk to B=2 S=16 H=128 (two heads, FFN 256)."""
    import re

    from fsir.testing.paths import EXAMPLES

    text = (EXAMPLES / "bert_layer.mlir").read_text()
    text = re.sub(r"\b((?:\d+x)+)f32",
                  lambda m: "x".join(_SMALL_BERT.get(d, d) for d in m.group(1).split("x")[:-1]) + "xf32", text)
    return text.replace("dense<7.680000e+02>", "dense<1.280000e+02>")
