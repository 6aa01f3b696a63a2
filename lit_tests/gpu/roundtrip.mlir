// RUN: fs-opt %s | fs-opt | filecheck %s

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @k(
    // CHECK-SAME: %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index) workgroup(%[[SMEM:.*]] : memref<256xf32, 3 : i64>) kernel attributes {gpu.known_block_size = array<i32: 256, 1, 1>} {
    gpu.func @k(%a: memref<?xf32>, %b: memref<?xf32>, %n: index) workgroup(%smem: memref<256xf32, 3>) kernel attributes {gpu.known_block_size = array<i32: 256, 1, 1>} {
      // CHECK-NEXT: %[[TID:.*]] = gpu.thread_id x
      // CHECK-NEXT: %{{.*}} = gpu.thread_id y
      // CHECK-NEXT: %{{.*}} = gpu.thread_id z
      // CHECK-NEXT: %{{.*}} = gpu.block_id x
      // CHECK-NEXT: %{{.*}} = gpu.block_dim y
      // CHECK-NEXT: %{{.*}} = gpu.grid_dim z
      // CHECK-NEXT: %{{.*}} = gpu.global_id x
      // CHECK-NEXT: %{{.*}} = gpu.lane_id
      %tid = gpu.thread_id x
      %ty = gpu.thread_id y
      %tz = gpu.thread_id z
      %bid = gpu.block_id x
      %bdim = gpu.block_dim y
      %gdim = gpu.grid_dim z
      %gid = gpu.global_id x
      %lane = gpu.lane_id
      %c16 = arith.constant 16 : i32
      %c32 = arith.constant 32 : i32
      // CHECK: %[[V:.*]] = memref.load %{{.*}}[%[[TID]]] : memref<?xf32>
      %v = memref.load %a[%tid] : memref<?xf32>
      // CHECK-NEXT: %{{.*}}, %{{.*}} = gpu.shuffle xor %[[V]], %{{.*}}, %{{.*}} : f32
      // CHECK-NEXT: %{{.*}}, %{{.*}} = gpu.shuffle up %[[V]], %{{.*}}, %{{.*}} : f32
      // CHECK-NEXT: %{{.*}}, %{{.*}} = gpu.shuffle down %[[V]], %{{.*}}, %{{.*}} : f32
      // CHECK-NEXT: %{{.*}}, %{{.*}} = gpu.shuffle idx %{{.*}}, %{{.*}}, %{{.*}} : i32
      %r, %valid = gpu.shuffle xor %v, %c16, %c32 : f32
      %r1, %valid1 = gpu.shuffle up %v, %c16, %c32 : f32
      %r2, %valid2 = gpu.shuffle down %v, %c16, %c32 : f32
      %r3, %valid3 = gpu.shuffle idx %c16, %c16, %c32 : i32
      // CHECK-NEXT: %{{.*}} = gpu.subgroup_reduce add %[[V]] : (f32) -> f32
      // CHECK-NEXT: %{{.*}} = gpu.subgroup_reduce maxnumf %[[V]] uniform cluster(size = 8) : (f32) -> f32
      // CHECK-NEXT: %{{.*}} = gpu.subgroup_reduce xor %{{.*}} cluster(size = 4) : (i32) -> i32
      %sum = gpu.subgroup_reduce add %v : (f32) -> f32
      %mx = gpu.subgroup_reduce maxnumf %v uniform cluster(size = 8) : (f32) -> f32
      %xr = gpu.subgroup_reduce xor %c16 cluster(size = 4) : (i32) -> i32
      // CHECK-NEXT: gpu.barrier
      gpu.barrier
      // CHECK-NEXT: memref.store %{{.*}}, %[[SMEM]][%[[TID]]] : memref<256xf32, 3 : i64>
      memref.store %r, %smem[%tid] : memref<256xf32, 3>
      // CHECK-NEXT: gpu.return
      gpu.return
    }
    // CHECK-LABEL: gpu.func @dyn(%{{.*}}: memref<?xf32>) kernel {
    gpu.func @dyn(%a: memref<?xf32>) kernel {
      // CHECK-NEXT: %[[D:.*]] = gpu.dynamic_shared_memory : memref<?xi8, 3 : i64>
      // CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
      // CHECK-NEXT: %{{.*}} = memref.view %[[D]][%[[C0]]][] : memref<?xi8, 3 : i64> to memref<64xf32, 3 : i64>
      %dyn = gpu.dynamic_shared_memory : memref<?xi8, 3>
      %c0 = arith.constant 0 : index
      %buf = memref.view %dyn[%c0][] : memref<?xi8, 3> to memref<64xf32, 3>
      gpu.return
    }
    // CHECK-LABEL: gpu.func @helper(%{{.*}}: f32) -> f32 {
    // CHECK-NEXT: gpu.return %{{.*}} : f32
    gpu.func @helper(%x: f32) -> f32 {
      gpu.return %x : f32
    }
  }
  // CHECK-LABEL: func.func @host
  func.func @host(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %s = arith.constant 1024 : i32
    // CHECK: gpu.launch_func @kernels::@k blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%{{.*}} : memref<?xf32>, %{{.*}} : memref<?xf32>, %{{.*}} : index)
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c256, %c1, %c1) args(%x : memref<?xf32>, %y : memref<?xf32>, %n : index)
    // CHECK-NEXT: gpu.launch_func @kernels::@dyn blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %{{.*}} args(%{{.*}} : memref<?xf32>)
    gpu.launch_func @kernels::@dyn blocks in (%n, %c1, %c1) threads in (%c256, %c1, %c1) dynamic_shared_memory_size %s args(%x : memref<?xf32>)
    func.return
  }
  // CHECK-LABEL: func.func @host_async
  func.func @host_async(%x: memref<?xf32>) {
    %c1 = arith.constant 1 : i32
    %t = "gpu.wait"() : () -> !gpu.async.token
    // CHECK: %{{.*}} = gpu.launch_func async [%{{.*}}] @kernels::@dyn clusters in (%{{.*}}, %{{.*}}, %{{.*}}) blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) : i32 args(%{{.*}} : memref<?xf32>)
    %t2 = gpu.launch_func async [%t] @kernels::@dyn clusters in (%c1, %c1, %c1) blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i32 args(%x : memref<?xf32>)
    func.return
  }
}
