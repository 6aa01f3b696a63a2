// What schedule-to-gpu needs of a hand-written segments kernel: runs that divide the
// result rows, a segment within the block, lanes past a warp in whole warps with the
// shared buffer their partials meet in.
// RUN: fs-opt %s --split-input-file -p schedule-to-gpu --verify-diagnostics

func.func @f(%d: tensor<?x16xf32>, %o: tensor<?xi32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: elements (3) must divide the result rows (16)}}
  %y = schedule.kernel @k segments<elements = 3, lanes = 1> grid [1, 1, 1] block [256, 1, 1] (%d, %o) : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32> {
  ^bb0(%a: tensor<?x16xf32>, %b: tensor<?xi32>):
    %g = schedule.group warp -> global : tensor<?x16xf32> {
      %s = graph.segment_reduce sum %a, %b : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
      schedule.yield %s : tensor<?x16xf32>
    }
    schedule.yield %g : tensor<?x16xf32>
  }
  func.return %y : tensor<?x16xf32>
}

// -----

func.func @f(%d: tensor<?x16xf32>, %o: tensor<?xi32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: a segment takes 1024 threads, more than the block's 256}}
  %y = schedule.kernel @k segments<elements = 1, lanes = 64> grid [1, 1, 1] block [256, 1, 1] (%d, %o) : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32> {
  ^bb0(%a: tensor<?x16xf32>, %b: tensor<?xi32>):
    %g = schedule.group block -> global : tensor<?x16xf32> {
      %s = graph.segment_reduce sum %a, %b : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
      schedule.yield %s : tensor<?x16xf32>
    }
    schedule.yield %g : tensor<?x16xf32>
  }
  func.return %y : tensor<?x16xf32>
}

// -----

func.func @f(%d: tensor<?x16xf32>, %o: tensor<?xi32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: lanes past a warp combine through a shared buffer @partials_f32}}
  %y = schedule.kernel @k segments<elements = 4, lanes = 64> grid [1, 1, 1] block [256, 1, 1] (%d, %o) : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32> {
  ^bb0(%a: tensor<?x16xf32>, %b: tensor<?xi32>):
    %g = schedule.group block -> global : tensor<?x16xf32> {
      %s = graph.segment_reduce sum %a, %b : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
      schedule.yield %s : tensor<?x16xf32>
    }
    schedule.yield %g : tensor<?x16xf32>
  }
  func.return %y : tensor<?x16xf32>
}

// -----

func.func @f(%d: tensor<?x16xf32>, %o: tensor<?xi32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: a segments kernel has one group yielding a graph.segment_reduce}}
  %y = schedule.kernel @k segments<elements = 4, lanes = 1> grid [1, 1, 1] block [256, 1, 1] (%d, %o) : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32> {
  ^bb0(%a: tensor<?x16xf32>, %b: tensor<?xi32>):
    %g = schedule.group warp -> global : tensor<?x16xf32> {
      %s = graph.exp %a : tensor<?x16xf32>
      schedule.yield %s : tensor<?x16xf32>
    }
    schedule.yield %g : tensor<?x16xf32>
  }
  func.return %y : tensor<?x16xf32>
}
