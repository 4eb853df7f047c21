// SPDX-License-Identifier: Apache-2.0
// cuda_alloc: the real-GPU check of issue 6, for a machine with an NVIDIA GPU and nvcc
// (not built by CMake: no CUDA at build time). It allocates and touches 1 GiB, says so with a
// marker, frees it, then 2 GiB; qprof run must report the tree's GPU peak ≈ 2 GiB + the CUDA
// context. At each step it prints the device's use as CUDA sees it (cudaMemGetInfo: total −
// free), the figure qprof's device total must match (bench/gpu_real.sh compares them).
//   nvcc -O2 -o cuda_alloc bench/cuda_alloc.cu
//   build/qprof run --gpu nvml -o cuda.dat -- ./cuda_alloc
#include <cuda_runtime.h>
#include <stdio.h>
#include <unistd.h>

static void say_used(const char* when) {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess)
    fprintf(stderr, "cuda_alloc: %s: device used %zu of %zu bytes\n", when, total - free_bytes, total);
}

static int hold(size_t bytes, const char* label) {
  void* p = NULL;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    fprintf(stderr, "cudaMalloc(%zu): %s\n", bytes, cudaGetErrorString(e));
    return 1;
  }
  cudaMemset(p, 1, bytes);
  cudaDeviceSynchronize();
  say_used(label);
  fprintf(stderr, "QPROF_MARK: %s\n", label);
  usleep(1500 * 1000);  // long enough for several process queries (every 0.1 s or slower)
  cudaFree(p);
  cudaDeviceSynchronize();
  say_used("freed");
  usleep(500 * 1000);
  return 0;
}

int main(void) {
  cudaFree(0);  // create the context first: its own memory shows before the first marker
  say_used("context");
  usleep(500 * 1000);
  if (hold((size_t)1 << 30, "1 GiB")) return 1;
  if (hold((size_t)2 << 30, "2 GiB")) return 1;
  return 0;
}
