// SPDX-License-Identifier: Apache-2.0
// cuda_busy: the real-GPU check of the busy-time series (GPUUTIL lines), for a machine with an
// NVIDIA GPU and nvcc (not built by CMake). Its truth is known by construction:
//   Spin:  a kernel that keeps every SM busy for ~2 s  -> SM % near 100, the tree's share too;
//   Idle:  1 s with no kernel                         -> SM % 0;
//   Copy:  ~3 s of host-to-device copies from pinned memory -> PCIe RX near the rate it prints
//          (NVML's RX is what the device receives, protocol overhead included); NVML counts
//          copies as busy too (SM 100 % on an H200, bench/RESULTS.md).
// Each phase is a stage (X Start / X End markers on stderr).
//   nvcc -O2 -o cuda_busy bench/cuda_busy.cu
//   build/qprof run --gpu nvml -o busy.dat -- ./cuda_busy
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

// Spins until the SM clock has advanced by `cycles`: a kernel that occupies its SM for a known
// time without touching memory.
__global__ void spin(long long cycles, int* sink) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0 && cycles < 0) *sink = 1;  // never true; keeps the loop from being removed
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define CHECK(call)                                                          \
  do {                                                                       \
    cudaError_t e_ = (call);                                                 \
    if (e_ != cudaSuccess) {                                                 \
      fprintf(stderr, "cuda_busy: %s: %s\n", #call, cudaGetErrorString(e_)); \
      return 1;                                                              \
    }                                                                        \
  } while (0)

int main(void) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  int* sink = NULL;
  CHECK(cudaMalloc(&sink, sizeof(int)));
  usleep(300 * 1000);

  // Spin: 4 blocks per SM, each spinning ~0.25 s at the nominal clock, launched until 2 s passed
  // (the clock may boost, so the wall time is what is measured).
  fprintf(stderr, "QPROF_MARK: Spin Start\n");
  double t0 = now_s();
  long long cycles = (long long)clock_khz * 250;  // kHz * 250 = cycles in 0.25 s
  int launches = 0;
  while (now_s() - t0 < 2.0) {
    spin<<<prop.multiProcessorCount * 4, 256>>>(cycles, sink);
    CHECK(cudaDeviceSynchronize());
    ++launches;
  }
  fprintf(stderr, "QPROF_MARK: Spin End\n");
  fprintf(stderr, "cuda_busy: spin: %d launches on %d SMs, %.2f s\n", launches, prop.multiProcessorCount, now_s() - t0);

  fprintf(stderr, "QPROF_MARK: Idle Start\n");
  usleep(1000 * 1000);
  fprintf(stderr, "QPROF_MARK: Idle End\n");

  const size_t bytes = (size_t)256 << 20;
  void *host = NULL, *dev = NULL;
  CHECK(cudaMallocHost(&host, bytes));
  CHECK(cudaMalloc(&dev, bytes));
  fprintf(stderr, "QPROF_MARK: Copy Start\n");
  t0 = now_s();
  size_t moved = 0;
  while (now_s() - t0 < 3.0) {
    CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    moved += bytes;
  }
  double took = now_s() - t0;
  fprintf(stderr, "QPROF_MARK: Copy End\n");
  fprintf(stderr, "cuda_busy: copy: %zu bytes host-to-device in %.2f s: %.0f B/s\n", moved, took, moved / took);
  usleep(500 * 1000);
  return 0;
}
