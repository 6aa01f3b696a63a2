"""Facts about graph-dialect IR that several layers read: the attention pattern, the
structure of embedding columns, element estimates of values.

Matchers live here, below the transforms, so that the explorer (which groups ops), the
mappings (which choose a kernel for a group) and the lowerings (which emit it) agree
on one definition of each pattern. They read the dialects only.
"""
