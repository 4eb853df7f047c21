// SPDX-License-Identifier: Apache-2.0
/* gpu_fake_job SCRIPT MIB:MS [MIB:MS…]
 * A "CUDA job" for the fake libnvidia-ml.so.1: for each step it tells the fake, through the
 * fake's script file SCRIPT ($QPROF_FAKE_NVML_SCRIPT), that this process holds MIB MiB on the
 * script's last GPU (a "compute PID BYTES" line appended to the original script; the device's
 * "used" figure is raised by the same amount), prints the marker "GPU MIB MiB", and holds it for
 * MS ms. At the end it writes the original script back. The file is replaced atomically (write a
 * temporary, rename), so the fake never reads half of it.
 *
 * Under qprof run --gpu nvml with QPROF_NVML_LIBRARY=<fake> and QPROF_FAKE_NVML_SCRIPT=SCRIPT,
 * the tree's GPU peak is the largest MIB step, exactly (bytes = MIB × 2^20). */
#include "workload.h"

static char* base;
static size_t base_len;

static int write_script(const char* path, long pid, unsigned long long bytes) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE* f = fopen(tmp, "w");
  if (!f) return -1;
  /* The last device line's "used" rises by `bytes`: find it and rewrite that one line. */
  const char* last = NULL;
  for (const char* p = base; p && (p = strstr(p, "device ")) != NULL; p += 7) {
    if (p == base || p[-1] == '\n') last = p;
  }
  if (last && bytes > 0) {
    char uuid[128];
    unsigned long long total = 0, used = 0;
    int n = 0;
    if (sscanf(last, "device %127s %llu %llu %n", uuid, &total, &used, &n) >= 3) {
      fwrite(base, 1, (size_t)(last - base), f);
      fprintf(f, "device %s %llu %llu ", uuid, total, used + bytes);
      fputs(last + n, f);
    } else {
      fwrite(base, 1, base_len, f);
    }
  } else {
    fwrite(base, 1, base_len, f);
  }
  if (bytes > 0) fprintf(f, "\ncompute %ld %llu\n", pid, bytes);
  if (fclose(f) != 0) return -1;
  return rename(tmp, path);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: gpu_fake_job SCRIPT MIB:MS [MIB:MS...]\n");
    return 2;
  }
  const char* path = argv[1];
  FILE* f = fopen(path, "r");
  if (!f) {
    perror(path);
    return 3;
  }
  base = malloc(1 << 16);
  base_len = fread(base, 1, (1 << 16) - 1, f);
  base[base_len] = 0;
  fclose(f);
  for (int i = 2; i < argc; ++i) {
    unsigned long long mib = 0;
    long ms = 0;
    if (sscanf(argv[i], "%llu:%ld", &mib, &ms) != 2) {
      fprintf(stderr, "gpu_fake_job: bad step '%s'\n", argv[i]);
      return 2;
    }
    if (write_script(path, (long)getpid(), mib * MIB) != 0) {
      perror("gpu_fake_job: writing the script");
      return 4;
    }
    char label[64];
    snprintf(label, sizeof label, "GPU %llu MiB", mib);
    mark(label);
    sleep_ms(ms);
  }
  write_script(path, (long)getpid(), 0);
  return 0;
}
