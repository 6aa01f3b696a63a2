"""Running compiled models: the reference interpreter (the oracle), devices (the PTX simulator of
fsir.sim, a CUDA GPU), the executor of host functions, inputs and output comparison."""
