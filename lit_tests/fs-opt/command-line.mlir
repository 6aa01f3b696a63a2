// Command-line mistakes are one-line errors naming the tool, with exit status 1.
// RUN: not fs-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not fs-opt %s -p 'graph-canonicalize{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not fs-opt %s.does-not-exist 2>&1 | filecheck %s --check-prefix=FILE
// RUN: sh -c 'fs-opt "$0" -p no-such-pass 2>/dev/null; test $? -eq 1' %s

// PASS: fs-opt: error: unknown pass 'no-such-pass' (see fs-opt --help for the list)
// OPTION: fs-opt: error: bad pass pipeline: {{.*}}bogus
// FILE: fs-opt: error: cannot open '{{.*}}command-line.mlir.does-not-exist': no such file

func.func @f() {
  func.return
}
