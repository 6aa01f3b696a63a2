#!/bin/sh
# Regenerate the committed PTX from the CUDA sources (needs nvcc; CI does not run this).
set -e
cd "$(dirname "$0")"
for f in *.cu; do
    nvcc -ptx -arch=sm_80 -O3 -o "${f%.cu}.ptx" "$f"
    ptxas -arch=sm_80 -o /dev/null "${f%.cu}.ptx"
done
