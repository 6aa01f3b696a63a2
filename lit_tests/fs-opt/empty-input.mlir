// An input of only comments is an empty module (as in MLIR), also as the last chunk
// of a split file.
// RUN: fs-opt %s | filecheck %s --check-prefix=WHOLE
// RUN: fs-opt %s --split-input-file | filecheck %s --check-prefix=SPLIT

// WHOLE: builtin.module {
// WHOLE-NEXT: }

// SPLIT: builtin.module {
// SPLIT-NEXT: }
// SPLIT: // -----
// SPLIT-NEXT: builtin.module {
// SPLIT-NEXT: }

// -----

// nothing here either
