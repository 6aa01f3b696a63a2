"""Torch tensors by pointer on a GPU: fsir's kernels read and write torch's memory.

`TorchCudaDevice` is a `CudaDevice` whose inputs are torch tensors' `data_ptr()`
(`CudaDevice.wrap`: no copy) and whose buffers, outputs included, are torch tensors
allocated by torch's caching allocator; `run` executes a lowered module with
`execute(..., keep_outputs=True)` and returns the output tensors themselves, so nothing
crosses to the host.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
import torch
from xdsl.dialects.builtin import ModuleOp

from fsir.runtime.cuda_device import CudaDevice
from fsir.runtime.device import DeviceBuffer
from fsir.runtime.executor import execute

__all__ = ["TorchCudaDevice"]

_TORCH = {np.dtype(np.float32): torch.float32, np.dtype(np.float16): torch.float16,
          np.dtype(ml_dtypes.bfloat16): torch.bfloat16, np.dtype(np.float64): torch.float64,
          np.dtype(np.int64): torch.int64, np.dtype(np.int32): torch.int32, np.dtype(np.bool_): torch.bool,
          np.dtype(np.int8): torch.int8, np.dtype(np.uint8): torch.uint8}
_NUMPY = {v: k for k, v in _TORCH.items()}


class TorchCudaDevice(CudaDevice):
    """A GPU whose memory comes from torch: `memory` is where tensors are allocated
    (`cuda:N`; a test with a fake driver passes `cpu`)."""

    def __init__(self, memory: torch.device | str = "cuda"):
        memory = torch.device(memory)
        super().__init__(ordinal=memory.index or 0)
        self.memory = memory
        self.tensors: dict[int, torch.Tensor] = {}  # live allocations by address

    def tensor_buffer(self, t: torch.Tensor) -> DeviceBuffer:
        """`t`'s memory as a buffer (contiguous `t`: no copy)."""
        return self.wrap(t.data_ptr(), tuple(t.shape), _NUMPY[t.dtype])

    def alloc(self, shape, dtype) -> DeviceBuffer:
        dims = [int(shape)] if isinstance(shape, (int, np.integer)) else [int(d) for d in shape]
        t = torch.empty(dims, dtype=_TORCH[np.dtype(dtype)], device=self.memory)
        self.tensors[t.data_ptr()] = t
        return self.tensor_buffer(t)

    def free(self, buf: DeviceBuffer) -> None:
        if buf.handle is not None:
            self.tensors.pop(int(buf.handle), None)  # torch's allocator takes the memory back
            buf.handle = None

    def run(self, lowered: ModuleOp, inputs: Sequence[torch.Tensor], ptx: str,
            entry: str | None = None) -> list[torch.Tensor]:
        """The module's outputs as tensors on `memory`, computed in place from `inputs`."""
        inputs = [t.contiguous() for t in inputs]
        by_address: dict[int, torch.Tensor] = {t.data_ptr(): t for t in inputs}
        buffers: list[Any] = [self.tensor_buffer(t) for t in inputs]
        outputs, _ = execute(lowered, buffers, self, entry=entry, ptx=ptx, keep_outputs=True)
        by_address.update(self.tensors)  # the outputs' allocations (the rest went back when freed)
        self.tensors.clear()
        return [by_address[int(buf.handle)].view(buf.shape) for buf in outputs]
