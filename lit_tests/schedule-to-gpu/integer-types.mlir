// Integer and f64 element types from graph ops to gpu IR and to PTX. The signedness of
// the element type picks the arith op (divui, cmpi ult, uitofp, fptoui, maxui, shrui),
// ui8 loads and stores as .u8 and stays zero-extended in its 16-bit register, i8
// sign-extended; float -> narrow int converts straight to the narrow type (cvt
// saturates to its range); f64 -> bf16 rounds once (round-to-odd to f32 first).
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen,schedule-to-gpu' | filecheck %s --check-prefix=GPU
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen,schedule-to-gpu' -t ptx | filecheck %s --check-prefix=PTX

// GPU-LABEL: gpu.func @unsigned_k0(
// GPU-SAME: %[[X:[a-z0-9_]+]]: memref<?xui8>, %[[Y:[a-z0-9_]+]]: memref<?xui8>,
// GPU: %[[A:[0-9]+]] = memref.load %[[X]][%{{.*}}] : memref<?xui8>
// GPU: %[[B:[0-9]+]] = memref.load %[[Y]][%{{.*}}] : memref<?xui8>
// GPU: %[[Z:.*]] = arith.constant 0 : i8
// GPU-NEXT: %[[ZU:.*]] = arith.bitcast %[[Z]] : i8 to ui8
// GPU-NEXT: %[[ISZ:.*]] = arith.cmpi eq, %[[B]], %[[ZU]] : ui8
// GPU: %[[SAFE:.*]] = arith.select %[[ISZ]], %{{.*}}, %[[B]] : ui8
// GPU-NEXT: %[[Q:.*]] = arith.divui %[[A]], %[[SAFE]] : ui8
// GPU: arith.cmpi ult, %[[A]], %[[B]] : ui8
// GPU: arith.uitofp %[[A]] : ui8 to f32
// GPU: %[[WIDE:.*]] = arith.cmpi uge, %[[B]], %{{.*}} : ui8
// GPU-NEXT: %[[SH:.*]] = arith.shrui %[[A]], %[[B]] : ui8
// GPU-NEXT: arith.select %[[WIDE]], %[[ZU]], %[[SH]] : ui8
// GPU: arith.maxui %[[A]], %[[B]] : ui8

// PTX-LABEL: .visible .entry unsigned_k0(
// PTX: ld.global.u8 %[[RA:rs[0-9]+]], [%{{rd[0-9]+}}];
// PTX: ld.global.u8 %[[RB:rs[0-9]+]], [%{{rd[0-9]+}}];
// PTX: div.u16 %[[RQ:rs[0-9]+]], %[[RA]], %{{rs[0-9]+}};
// PTX-NEXT: and.b16 %[[RQ]], %[[RQ]], 255;
// PTX: st.global.u8 [%{{rd[0-9]+}}], %{{rs[0-9]+}};
// PTX: setp.lt.u16 %{{p[0-9]+}}, %[[RA]], %[[RB]];
// PTX: cvt.rn.f32.u16 %{{f[0-9]+}}, %[[RA]];
// PTX: shr.u16 %{{rs[0-9]+}}, %[[RA]], %{{r[0-9]+}};
// PTX: max.u16 %{{rs[0-9]+}}, %[[RA]], %[[RB]];
func.func @unsigned(%x: tensor<64xui8>, %y: tensor<64xui8>) -> (tensor<64xui8>, tensor<64xi1>, tensor<64xf32>, tensor<64xui8>, tensor<64xui8>) {
  %d = graph.div %x, %y : tensor<64xui8>
  %c = graph.compare lt %x, %y : (tensor<64xui8>, tensor<64xui8>) -> tensor<64xi1>
  %f = graph.convert %x : (tensor<64xui8>) -> tensor<64xf32>
  %s = graph.shr %x, %y : tensor<64xui8>
  %m = graph.max %x, %y : tensor<64xui8>
  func.return %d, %c, %f, %s, %m : tensor<64xui8>, tensor<64xi1>, tensor<64xf32>, tensor<64xui8>, tensor<64xui8>
}

// GPU-LABEL: gpu.func @convert_k0(
// GPU: arith.fptoui %{{.*}} : f32 to ui8
// GPU: arith.bitcast %{{.*}} : i8 to ui8
// GPU: arith.uitofp %{{.*}} : ui64 to f32
// GPU: %[[DD:.*]] = arith.addf %{{.*}}, %{{.*}} : f64
// GPU-NEXT: arith.truncf %[[DD]] : f64 to bf16
// GPU: %[[BIG:.*]] = arith.cmpi uge, %[[H:.*]], %{{.*}} : i16
// GPU: %[[AMT:.*]] = arith.select %[[BIG]], %{{.*}}, %[[H]] : i16
// GPU-NEXT: arith.shrsi %[[H]], %[[AMT]] : i16

// PTX-LABEL: .visible .entry convert_k0(
// PTX: cvt.rzi.u8.f32 %[[U:rs[0-9]+]], %{{f[0-9]+}};
// PTX-NEXT: and.b16 %[[U]], %[[U]], 255;
// PTX: ld.global.s8 %[[S8:rs[0-9]+]],
// PTX-NEXT: mov.b16 %[[C:rs[0-9]+]], %[[S8]];
// PTX-NEXT: and.b16 %[[C]], %[[C]], 255;
// PTX: ld.global.b64 %[[W:rd[0-9]+]],
// PTX-NEXT: cvt.rn.f32.u64 %{{f[0-9]+}}, %[[W]];
// PTX: ld.global.f64 %[[D:fd[0-9]+]],
// PTX-NEXT: add.rn.f64 %[[D2:fd[0-9]+]], %[[D]], %[[D]];
// PTX-NEXT: cvt.rz.f32.f64 %[[T:f[0-9]+]], %[[D2]];
// PTX-NEXT: cvt.f64.f32 %[[BACK:fd[0-9]+]], %[[T]];
// PTX-NEXT: setp.neu.f64 %[[INEXACT:p[0-9]+]], %[[BACK]], %[[D2]];
// PTX-NEXT: mov.b32 %[[BITS:r[0-9]+]], %[[T]];
// PTX-NEXT: or.b32 %[[ODD:r[0-9]+]], %[[BITS]], 1;
// PTX-NEXT: selp.b32 %[[R:r[0-9]+]], %[[ODD]], %[[BITS]], %[[INEXACT]];
// PTX-NEXT: mov.b32 %[[RF:f[0-9]+]], %[[R]];
// PTX-NEXT: cvt.rn.bf16.f32 %{{rs[0-9]+}}, %[[RF]];
// PTX: shr.s16
func.func @convert(%x: tensor<64xf32>, %b: tensor<64xi8>, %w: tensor<64xui64>, %d: tensor<64xf64>, %h: tensor<64xi16>) -> (tensor<64xui8>, tensor<64xui8>, tensor<64xf32>, tensor<64xbf16>, tensor<64xi16>) {
  %u = graph.convert %x : (tensor<64xf32>) -> tensor<64xui8>
  %c = graph.convert %b : (tensor<64xi8>) -> tensor<64xui8>
  %f = graph.convert %w : (tensor<64xui64>) -> tensor<64xf32>
  %dd = graph.add %d, %d : tensor<64xf64>
  %bf = graph.convert %dd : (tensor<64xf64>) -> tensor<64xbf16>
  %s = graph.shr %h, %h : tensor<64xi16>
  func.return %u, %c, %f, %bf, %s : tensor<64xui8>, tensor<64xui8>, tensor<64xf32>, tensor<64xbf16>, tensor<64xi16>
}
