// SPDX-License-Identifier: Apache-2.0
/* gpu_limit_job SCRIPT CTX_MIB NEED_MIB HOLD_MS PROCS [CACHE_MIB SLOW_MS [FAIL_BELOW_MIB]]
 * A "CUDA job" whose device-memory need is known by construction, for qprof fit --gpu with the
 * fake libnvidia-ml.so.1 and the fake nvidia-cuda-mps-control. PROCS processes each hold a
 * context of CTX_MIB MiB alone for 300 ms, then CTX_MIB + NEED_MIB + a cache of up to CACHE_MIB
 * (what the limit leaves of it: a caching allocator's habit), on the fake's last GPU (a
 * "compute PID BYTES" line of the fake's script SCRIPT, rewritten under a lock: the processes
 * share it), for HOLD_MS. Each reads its limit from CUDA_MPS_PINNED_DEVICE_MEM_LIMIT ("0=NM" or
 * "0=NG"; none: unlimited):
 *   limit < FAIL_BELOW_MIB           fails without an out-of-memory message (exit 3)
 *   limit < CTX_MIB + NEED_MIB       fails as PyTorch does: "torch.OutOfMemoryError: CUDA out of
 *                                    memory" on stderr, exit 1
 *   a cache smaller than CACHE_MIB   completes after SLOW_MS instead of HOLD_MS (the allocator
 *                                    freeing and retrying)
 * So the smallest limit it runs in is CTX_MIB + NEED_MIB, the unlimited peak CTX + NEED + CACHE.
 * With QPROF_MARK_FD it sends torch's figures with a checkpoint at its peak: allocated NEED_MIB,
 * reserved NEED_MIB + 2 MiB. With GPU_LIMIT_JOB_PIDS=DIR each process writes DIR/PID holding the
 * limit it saw (-1: none; the tests check that none outlives its probe). The processes hold their
 * peaks together: each starts its HOLD_MS once every one has reached its peak or failed, however
 * slowly a loaded machine (or a sanitizer) runs them. */
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "workload.h"

static const char* script;
static long procs_total = 1;
static volatile long* arrived; /* shared by the processes: those at their peak or failed */

/* Counts this process in, then waits (at most 10 s) until all are in. */
static void arrive_and_wait(void) {
  __atomic_add_fetch(arrived, 1, __ATOMIC_SEQ_CST);
  for (int i = 0; i < 10000 && __atomic_load_n(arrived, __ATOMIC_SEQ_CST) < procs_total; ++i) sleep_ms(1);
}

/* Sets this process's line of the fake's script to `bytes` (0: removes it). */
static void hold(unsigned long long bytes) {
  char lock_path[4096], tmp[4096];
  snprintf(lock_path, sizeof lock_path, "%s.lock", script);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", script, (long)getpid());
  const int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || flock(lock, LOCK_EX) != 0) exit(4);
  FILE* in = fopen(script, "r");
  FILE* out = fopen(tmp, "w");
  if (!in || !out) exit(4);
  char line[1024], mine[64];
  const int mine_len = snprintf(mine, sizeof mine, "compute %ld ", (long)getpid());
  while (fgets(line, sizeof line, in)) {
    if (strncmp(line, mine, (size_t)mine_len) != 0) fputs(line, out);
  }
  if (bytes > 0) fprintf(out, "compute %ld %llu\n", (long)getpid(), bytes);
  fclose(in);
  if (fclose(out) != 0 || rename(tmp, script) != 0) exit(4);
  close(lock);
}

/* The limit for device 0 in MiB; -1 without one. */
static long limit_mib(void) {
  const char* v = getenv("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT");
  if (!v || strncmp(v, "0=", 2) != 0) return -1;
  char* end = NULL;
  const long n = strtol(v + 2, &end, 10);
  if (end && (*end == 'G' || *end == 'g')) return n * 1024;
  return n;
}

static void send_torch(unsigned long long allocated, unsigned long long reserved) {
  const char* fd_text = getenv("QPROF_MARK_FD");
  if (!fd_text) return;
  char text[256];
  const int n = snprintf(text, sizeof text, "QPROF_TORCH 0 %llu %llu\nQPROF_MARK: peak\n", allocated, reserved);
  if (write(atoi(fd_text), text, (size_t)n) < 0) exit(98);
}

static int client(long ctx, long need, long hold_ms, long cache, long slow_ms, long fail_below) {
  const long limit = limit_mib();
  const char* pids = getenv("GPU_LIMIT_JOB_PIDS");
  if (pids) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%ld", pids, (long)getpid());
    FILE* f = fopen(path, "w");
    if (f) {
      fprintf(f, "%ld\n", limit);
      fclose(f);
    }
  }
  if (limit >= 0 && limit < fail_below) {
    fprintf(stderr, "gpu_limit_job: cannot read the dataset (limit %ld MiB)\n", limit);
    __atomic_add_fetch(arrived, 1, __ATOMIC_SEQ_CST);
    return 3;
  }
  hold((unsigned long long)ctx * MIB);
  sleep_ms(300);  // the context alone: the GPU sampler sees it
  if (limit >= 0 && limit < ctx + need) {
    fprintf(stderr,
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %ld.00 MiB. GPU 0 has a total capacity "
            "of %ld.00 MiB\n",
            need, limit);
    hold(0);
    __atomic_add_fetch(arrived, 1, __ATOMIC_SEQ_CST);
    return 1;
  }
  const long room = limit < 0 || limit - ctx - need >= cache ? cache : limit - ctx - need;
  hold((unsigned long long)(ctx + need + room) * MIB);
  send_torch((unsigned long long)need * MIB, (unsigned long long)(need + 2) * MIB);
  arrive_and_wait();
  sleep_ms(room < cache ? slow_ms : hold_ms);
  hold(0);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: gpu_limit_job SCRIPT CTX_MIB NEED_MIB HOLD_MS PROCS [CACHE_MIB SLOW_MS [FAIL_BELOW]]\n");
    return 2;
  }
  script = argv[1];
  const long ctx = atol(argv[2]), need = atol(argv[3]), hold_ms = atol(argv[4]), procs = atol(argv[5]);
  const long cache = argc > 7 ? atol(argv[6]) : 0, slow_ms = argc > 7 ? atol(argv[7]) : 0;
  const long fail_below = argc > 8 ? atol(argv[8]) : 0;
  procs_total = procs < 1 ? 1 : procs;
  arrived = mmap(NULL, sizeof *arrived, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (arrived == MAP_FAILED) return 4;
  int worst = 0;
  for (long i = 1; i < procs; ++i) {
    if (fork() == 0) _exit(client(ctx, need, hold_ms, cache, slow_ms, fail_below));
  }
  worst = client(ctx, need, hold_ms, cache, slow_ms, fail_below);
  int status = 0;
  while (wait(&status) > 0) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code > worst) worst = code;
  }
  return worst;
}
