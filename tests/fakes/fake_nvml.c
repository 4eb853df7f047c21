// SPDX-License-Identifier: Apache-2.0
/* A fake libnvidia-ml.so.1 for qprof's tests: the NVML entry points qprof uses, answering from a
 * script file named by $QPROF_FAKE_NVML_SCRIPT, re-read whenever it changes (so a test, or a
 * workload, changes the GPU's state by rewriting it; write a new file and rename it over the old
 * one). Built several times from this one source: -DFAKE_NO_V3 drops the _v3 process-list
 * symbols, -DFAKE_NO_V2 the _v2 ones (and _v3), -DFAKE_NO_MEM_V2 nvmlDeviceGetMemoryInfo_v2,
 * -DFAKE_NO_INIT_V2 nvmlInit_v2 (and the other _v2 entry points of old drivers).
 *
 * Script lines (tokens separated by blanks, '#' starts a comment):
 *   driver VERSION                  nvmlSystemGetDriverVersion
 *   init RC                         nvmlInit/_v2 return RC (e.g. 9: driver not loaded)
 *   init_delay_us N                 nvmlInit/_v2 take N µs (a real driver's start: tens of ms)
 *   stride32 0|1                    _v3 process lists write 32-byte entries (an R535 bug)
 *   delay_us N                      every process-list call sleeps N µs first
 *   device UUID TOTAL USED NAME…    a GPU (index = order of the device lines)
 *   mig UUID TOTAL USED NAME…       a MIG device of the last GPU (which then has MIG mode on)
 *   compute_mode N                  nvmlDeviceGetComputeMode of the last GPU (0 default, 2 prohibited,
 *                                   3 exclusive process; without it: 0)
 *   mig_mode 1                      the last GPU has MIG mode on (without MIG devices yet)
 *   memory_error RC                 memory queries of the last GPU or MIG device return RC
 *   process_error RC                process lists of the last GPU or MIG device return RC
 *   graphics_error RC               its graphics process list alone returns RC
 *   process_util_error RC          nvmlDeviceGetProcessUtilization of the last GPU returns RC
 *   compute PID BYTES|max           a compute process of the last GPU or MIG device
 *   graphics PID BYTES|max          a graphics process of the last GPU or MIG device
 *   util SM MEM                     nvmlDeviceGetUtilizationRates of the last GPU (percent);
 *                                   without it: Not Supported
 *   process_util PID SM [AGO_MS]    a sample of the last GPU's driver (the period's process and its
 *                                   SM %), stamped with the script's mtime (µs) less AGO_MS
 *                                   (default 0). nvmlDeviceGetProcessUtilization answers as an
 *                                   H200's driver does: of the samples newer than lastSeen, one
 *                                   figure per process, its SM % summed and divided by the number
 *                                   of periods (distinct stamps) there, rounded up, stamped with
 *                                   its newest sample
 *   pcie RX_KBPS TX_KBPS            nvmlDeviceGetPcieThroughput of the last GPU (KB/s)
 *   pcie_delay_us N                 each nvmlDeviceGetPcieThroughput takes N µs more (a real driver
 *                                   samples the counter for 20 ms), other calls going on meanwhile
 * BYTES "max" is ULLONG_MAX (NVML's "not available"). A PID may be on both lists.
 *
 * Every entry point counts its calls: qprof_fake_nvml_calls("nvmlDeviceGetComputeRunningProcesses_v3")
 * in-process, and the file $QPROF_FAKE_NVML_COUNTS ("name count" lines) at nvmlShutdown. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

enum {
  OK = 0,
  ERR_UNINITIALIZED = 1,
  ERR_INVALID_ARGUMENT = 2,
  ERR_NOT_SUPPORTED = 3,
  ERR_NO_PERMISSION = 4,
  ERR_NOT_FOUND = 6,
  ERR_INSUFFICIENT_SIZE = 7,
  ERR_ARGUMENT_VERSION_MISMATCH = 25,
};

#define MAX_DEVICES 16
#define MAX_MIGS 8
#define MAX_PROCS 256
#define TEXT 96

struct proc {
  unsigned pid;
  unsigned long long bytes;
};

struct dev {
  char uuid[TEXT];
  char name[TEXT];
  unsigned long long total, used;
  int memory_error, process_error, graphics_error, process_util_error;
  int compute_mode, mig_mode;
  int ncompute, ngraphics;
  struct proc compute[MAX_PROCS], graphics[MAX_PROCS];
  int has_util;
  unsigned sm, mem;
  int nproc_util;
  struct proc_util {
    unsigned pid, sm;
    unsigned long long ago_us;
  } proc_util[MAX_PROCS];
  int has_pcie;
  unsigned pcie_rx, pcie_tx;
  int nmig;
  struct dev* migs; /* into the MIG pool; NULL for a MIG device */
  int is_mig;
  unsigned gpu_instance;
};

static struct {
  char driver[TEXT];
  int init_rc;
  int stride32;
  long delay_us;
  long pcie_delay_us;
  long init_delay_us;
  int ndev;
  struct dev devs[MAX_DEVICES];
  struct dev mig_pool[MAX_DEVICES][MAX_MIGS];
} S;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static struct stat script_stat;
static int script_loaded;

/* Call counters, by entry point name. */
#define MAX_COUNTERS 64
static struct {
  const char* name;
  long n;
} counters[MAX_COUNTERS];

static void count(const char* name) {
  for (int i = 0; i < MAX_COUNTERS; ++i) {
    if (counters[i].name == NULL) {
      counters[i].name = name;
      counters[i].n = 1;
      return;
    }
    if (strcmp(counters[i].name, name) == 0) {
      ++counters[i].n;
      return;
    }
  }
}

EXPORT long qprof_fake_nvml_calls(const char* name) {
  long n = 0;
  pthread_mutex_lock(&mu);
  for (int i = 0; i < MAX_COUNTERS && counters[i].name; ++i) {
    if (strcmp(counters[i].name, name) == 0) n = counters[i].n;
  }
  pthread_mutex_unlock(&mu);
  return n;
}

static unsigned long long parse_bytes(const char* s) {
  if (strcmp(s, "max") == 0) return ~0ULL;
  return strtoull(s, NULL, 0);
}

static void rest_of_line(char* dst, char* src) {
  while (*src == ' ' || *src == '\t') ++src;
  size_t n = strcspn(src, "\r\n");
  if (n >= TEXT) n = TEXT - 1;
  memcpy(dst, src, n);
  dst[n] = 0;
}

/* Re-reads the script if it changed (size, time or file). Called with mu held. */
static void load_script(void) {
  const char* path = getenv("QPROF_FAKE_NVML_SCRIPT");
  struct stat st;
  if (!path || stat(path, &st) != 0) {
    if (script_loaded) memset(&S, 0, sizeof S);
    script_loaded = 0;
    return;
  }
  if (script_loaded && st.st_ino == script_stat.st_ino && st.st_size == script_stat.st_size &&
      st.st_mtim.tv_sec == script_stat.st_mtim.tv_sec && st.st_mtim.tv_nsec == script_stat.st_mtim.tv_nsec) {
    return;
  }
  FILE* f = fopen(path, "r");
  if (!f) return;
  memset(&S, 0, sizeof S);
  strcpy(S.driver, "999.99.99");
  struct dev* cur = NULL;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char* hash = strchr(line, '#');
    if (hash) *hash = 0;
    char kind[32];
    int used_chars = 0;
    if (sscanf(line, "%31s%n", kind, &used_chars) != 1) continue;
    char* rest = line + used_chars;
    if (strcmp(kind, "driver") == 0) {
      rest_of_line(S.driver, rest);
    } else if (strcmp(kind, "init") == 0) {
      S.init_rc = atoi(rest);
    } else if (strcmp(kind, "stride32") == 0) {
      S.stride32 = atoi(rest);
    } else if (strcmp(kind, "delay_us") == 0) {
      S.delay_us = atol(rest);
    } else if (strcmp(kind, "pcie_delay_us") == 0) {
      S.pcie_delay_us = atol(rest);
    } else if (strcmp(kind, "init_delay_us") == 0) {
      S.init_delay_us = atol(rest);
    } else if (strcmp(kind, "device") == 0 || strcmp(kind, "mig") == 0) {
      struct dev* d;
      if (kind[0] == 'd') {
        if (S.ndev >= MAX_DEVICES) continue;
        d = &S.devs[S.ndev];
        d->migs = S.mig_pool[S.ndev];
        ++S.ndev;
      } else {
        if (S.ndev == 0) continue;
        struct dev* parent = &S.devs[S.ndev - 1];
        if (parent->nmig >= MAX_MIGS) continue;
        d = &parent->migs[parent->nmig++];
        d->is_mig = 1;
        d->gpu_instance = (unsigned)parent->nmig;
      }
      char uuid[TEXT], total[32], used[32];
      int n = 0;
      if (sscanf(rest, "%95s %31s %31s %n", uuid, total, used, &n) < 3) continue;
      strcpy(d->uuid, uuid);
      d->total = parse_bytes(total);
      d->used = parse_bytes(used);
      rest_of_line(d->name, rest + n);
      cur = d;
    } else if (cur && strcmp(kind, "util") == 0) {
      if (sscanf(rest, "%u %u", &cur->sm, &cur->mem) == 2) cur->has_util = 1;
    } else if (cur && strcmp(kind, "process_util") == 0) {
      if (cur->nproc_util < MAX_PROCS &&
          sscanf(rest, "%u %u", &cur->proc_util[cur->nproc_util].pid, &cur->proc_util[cur->nproc_util].sm) == 2) {
        unsigned ago_ms = 0;
        sscanf(rest, "%*u %*u %u", &ago_ms);
        cur->proc_util[cur->nproc_util].ago_us = ago_ms * 1000ULL;
        ++cur->nproc_util;
      }
    } else if (cur && strcmp(kind, "pcie") == 0) {
      if (sscanf(rest, "%u %u", &cur->pcie_rx, &cur->pcie_tx) == 2) cur->has_pcie = 1;
    } else if (cur && strcmp(kind, "compute_mode") == 0) {
      cur->compute_mode = atoi(rest);
    } else if (cur && strcmp(kind, "mig_mode") == 0) {
      cur->mig_mode = atoi(rest);
    } else if (cur && strcmp(kind, "memory_error") == 0) {
      cur->memory_error = atoi(rest);
    } else if (cur && strcmp(kind, "process_error") == 0) {
      cur->process_error = atoi(rest);
    } else if (cur && strcmp(kind, "graphics_error") == 0) {
      cur->graphics_error = atoi(rest);
    } else if (cur && strcmp(kind, "process_util_error") == 0) {
      cur->process_util_error = atoi(rest);
    } else if (cur && (strcmp(kind, "compute") == 0 || strcmp(kind, "graphics") == 0)) {
      char pid[32], bytes[32];
      if (sscanf(rest, "%31s %31s", pid, bytes) != 2) continue;
      int* n = kind[0] == 'c' ? &cur->ncompute : &cur->ngraphics;
      struct proc* list = kind[0] == 'c' ? cur->compute : cur->graphics;
      if (*n >= MAX_PROCS) continue;
      list[*n].pid = (unsigned)strtoul(pid, NULL, 10);
      list[*n].bytes = parse_bytes(bytes);
      ++*n;
    }
  }
  fclose(f);
  script_stat = st;
  script_loaded = 1;
}

static void enter(const char* name) {
  pthread_mutex_lock(&mu);
  count(name);
  load_script();
}

static int leave(int rc) {
  pthread_mutex_unlock(&mu);
  return rc;
}

static struct dev* device_of(void* handle) {
  /* Handles are pointers into S; anything else is an invalid argument. */
  char* p = handle;
  if (p >= (char*)S.devs && p < (char*)(S.devs + S.ndev)) return handle;
  if (p >= (char*)S.mig_pool && p < (char*)S.mig_pool + sizeof S.mig_pool) return handle;
  return NULL;
}

static int copy_text(char* dst, unsigned len, const char* src) {
  if (!dst) return ERR_INVALID_ARGUMENT;
  if (strlen(src) + 1 > len) return ERR_INSUFFICIENT_SIZE;
  strcpy(dst, src);
  return OK;
}

/* ---- init ---------------------------------------------------------------------------------- */

static int do_init(const char* name) {
  enter(name);
  const long delay = S.init_delay_us;
  struct timespec ts = {delay / 1000000, (delay % 1000000) * 1000};
  while (delay > 0 && nanosleep(&ts, &ts) != 0) {
  }
  if (S.init_rc != 0) return leave(S.init_rc);
  ++initialized;
  return leave(OK);
}

#ifndef FAKE_NO_INIT_V2
EXPORT int nvmlInit_v2(void) { return do_init("nvmlInit_v2"); }
#endif
EXPORT int nvmlInit(void) { return do_init("nvmlInit"); }

EXPORT int nvmlShutdown(void) {
  enter("nvmlShutdown");
  if (initialized == 0) return leave(ERR_UNINITIALIZED);
  --initialized;
  const char* path = getenv("QPROF_FAKE_NVML_COUNTS");
  if (path) {
    FILE* f = fopen(path, "w");
    if (f) {
      for (int i = 0; i < MAX_COUNTERS && counters[i].name; ++i)
        fprintf(f, "%s %ld\n", counters[i].name, counters[i].n);
      fclose(f);
    }
  }
  return leave(OK);
}

EXPORT const char* nvmlErrorString(int rc) {
  switch (rc) {
    case OK:
      return "Success";
    case ERR_UNINITIALIZED:
      return "Uninitialized";
    case ERR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case ERR_NOT_SUPPORTED:
      return "Not Supported";
    case ERR_NO_PERMISSION:
      return "Insufficient Permissions";
    case ERR_NOT_FOUND:
      return "Not Found";
    case ERR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case 9:
      return "Driver Not Loaded";
    case 15:
      return "GPU is lost";
    case ERR_ARGUMENT_VERSION_MISMATCH:
      return "Argument version mismatch";
    default:
      return "Unknown Error";
  }
}

EXPORT int nvmlSystemGetDriverVersion(char* version, unsigned len) {
  enter("nvmlSystemGetDriverVersion");
  if (!initialized) return leave(ERR_UNINITIALIZED);
  return leave(copy_text(version, len, S.driver));
}

/* ---- devices -------------------------------------------------------------------------------- */

static int get_count(const char* name, unsigned* n) {
  enter(name);
  if (!initialized) return leave(ERR_UNINITIALIZED);
  if (!n) return leave(ERR_INVALID_ARGUMENT);
  *n = (unsigned)S.ndev;
  return leave(OK);
}

static int handle_by_index(const char* name, unsigned i, void** handle) {
  enter(name);
  if (!initialized) return leave(ERR_UNINITIALIZED);
  if (!handle || i >= (unsigned)S.ndev) return leave(ERR_INVALID_ARGUMENT);
  *handle = &S.devs[i];
  return leave(OK);
}

#ifndef FAKE_NO_INIT_V2
EXPORT int nvmlDeviceGetCount_v2(unsigned* n) { return get_count("nvmlDeviceGetCount_v2", n); }
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** h) {
  return handle_by_index("nvmlDeviceGetHandleByIndex_v2", i, h);
}
#endif
EXPORT int nvmlDeviceGetCount(unsigned* n) { return get_count("nvmlDeviceGetCount", n); }
EXPORT int nvmlDeviceGetHandleByIndex(unsigned i, void** h) {
  return handle_by_index("nvmlDeviceGetHandleByIndex", i, h);
}

EXPORT int nvmlDeviceGetUUID(void* handle, char* uuid, unsigned len) {
  enter("nvmlDeviceGetUUID");
  struct dev* d = device_of(handle);
  if (!d) return leave(ERR_INVALID_ARGUMENT);
  return leave(copy_text(uuid, len, d->uuid));
}

EXPORT int nvmlDeviceGetName(void* handle, char* name, unsigned len) {
  enter("nvmlDeviceGetName");
  struct dev* d = device_of(handle);
  if (!d) return leave(ERR_INVALID_ARGUMENT);
  return leave(copy_text(name, len, d->name));
}

struct memory_v1 {
  unsigned long long total, free, used;
};
struct memory_v2 {
  unsigned version;
  unsigned long long total, reserved, free, used;
};

EXPORT int nvmlDeviceGetMemoryInfo(void* handle, struct memory_v1* m) {
  enter("nvmlDeviceGetMemoryInfo");
  struct dev* d = device_of(handle);
  if (!d || !m) return leave(ERR_INVALID_ARGUMENT);
  if (d->memory_error) return leave(d->memory_error);
  m->total = d->total;
  m->used = d->used;
  m->free = d->total > d->used ? d->total - d->used : 0;
  return leave(OK);
}

#ifndef FAKE_NO_MEM_V2
EXPORT int nvmlDeviceGetMemoryInfo_v2(void* handle, struct memory_v2* m) {
  enter("nvmlDeviceGetMemoryInfo_v2");
  struct dev* d = device_of(handle);
  if (!d || !m) return leave(ERR_INVALID_ARGUMENT);
  if (m->version != (unsigned)(sizeof(struct memory_v2) | (2u << 24))) return leave(ERR_ARGUMENT_VERSION_MISMATCH);
  if (d->memory_error) return leave(d->memory_error);
  m->total = d->total;
  m->reserved = 0;
  m->used = d->used;
  m->free = d->total > d->used ? d->total - d->used : 0;
  return leave(OK);
}
#endif

EXPORT int nvmlDeviceGetMigMode(void* handle, unsigned* current, unsigned* pending) {
  enter("nvmlDeviceGetMigMode");
  struct dev* d = device_of(handle);
  if (!d || !current || !pending) return leave(ERR_INVALID_ARGUMENT);
  if (d->is_mig) return leave(ERR_NOT_SUPPORTED);
  *current = *pending = d->nmig > 0 || d->mig_mode ? 1 : 0;
  return leave(OK);
}

EXPORT int nvmlDeviceGetComputeMode(void* handle, int* mode) {
  enter("nvmlDeviceGetComputeMode");
  struct dev* d = device_of(handle);
  if (!d || !mode) return leave(ERR_INVALID_ARGUMENT);
  *mode = d->compute_mode;
  return leave(OK);
}

EXPORT int nvmlDeviceGetMaxMigDeviceCount(void* handle, unsigned* n) {
  enter("nvmlDeviceGetMaxMigDeviceCount");
  struct dev* d = device_of(handle);
  if (!d || !n) return leave(ERR_INVALID_ARGUMENT);
  *n = d->is_mig ? 0 : 7;
  return leave(OK);
}

EXPORT int nvmlDeviceGetMigDeviceHandleByIndex(void* handle, unsigned i, void** mig) {
  enter("nvmlDeviceGetMigDeviceHandleByIndex");
  struct dev* d = device_of(handle);
  if (!d || !mig || d->is_mig) return leave(ERR_INVALID_ARGUMENT);
  if (i >= (unsigned)d->nmig) return leave(ERR_NOT_FOUND);
  *mig = &d->migs[i];
  return leave(OK);
}

/* ---- process lists -------------------------------------------------------------------------- */

static int process_list(const char* name, int version, int graphics, void* handle, unsigned* count, void* infos) {
  enter(name);
  long delay = S.delay_us;
  struct dev* d = device_of(handle);
  if (!d || !count) return leave(ERR_INVALID_ARGUMENT);
  if (delay > 0) {
    /* The lock is held meanwhile, as a driver's would be. */
    struct timespec ts = {delay / 1000000, (delay % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0) {
    }
  }
  if (d->process_error) return leave(d->process_error);
  if (graphics && d->graphics_error) return leave(d->graphics_error);
  int n = graphics ? d->ngraphics : d->ncompute;
  const struct proc* list = graphics ? d->graphics : d->compute;
  if (*count < (unsigned)n || (n > 0 && !infos)) {
    *count = (unsigned)n;
    return leave(ERR_INSUFFICIENT_SIZE);
  }
  size_t stride = version == 1 ? 16 : (version == 3 && S.stride32 ? 32 : 24);
  for (int i = 0; i < n; ++i) {
    unsigned char* e = (unsigned char*)infos + (size_t)i * stride;
    memset(e, 0, stride);
    memcpy(e, &list[i].pid, 4);
    memcpy(e + 8, &list[i].bytes, 8);
    if (version > 1) {
      unsigned gi = d->is_mig ? d->gpu_instance : 0xFFFFFFFFu;
      unsigned ci = d->is_mig ? 0 : 0xFFFFFFFFu;
      memcpy(e + 16, &gi, 4);
      memcpy(e + 20, &ci, 4);
    }
  }
  *count = (unsigned)n;
  return leave(OK);
}

#define PROCESS_FUNCTIONS(kind, graphics)                                                \
  EXPORT int nvmlDeviceGet##kind##RunningProcesses(void* h, unsigned* c, void* i) {      \
    return process_list("nvmlDeviceGet" #kind "RunningProcesses", 1, graphics, h, c, i); \
  }                                                                                      \
  V2(kind, graphics)                                                                     \
  V3(kind, graphics)

#ifndef FAKE_NO_V2
#define V2(kind, graphics)                                                                  \
  EXPORT int nvmlDeviceGet##kind##RunningProcesses_v2(void* h, unsigned* c, void* i) {      \
    return process_list("nvmlDeviceGet" #kind "RunningProcesses_v2", 2, graphics, h, c, i); \
  }
#else
#define V2(kind, graphics)
#endif
#if !defined(FAKE_NO_V3) && !defined(FAKE_NO_V2)
#define V3(kind, graphics)                                                                  \
  EXPORT int nvmlDeviceGet##kind##RunningProcesses_v3(void* h, unsigned* c, void* i) {      \
    return process_list("nvmlDeviceGet" #kind "RunningProcesses_v3", 3, graphics, h, c, i); \
  }
#else
#define V3(kind, graphics)
#endif

PROCESS_FUNCTIONS(Compute, 0)
PROCESS_FUNCTIONS(Graphics, 1)

/* ---- busy time ------------------------------------------------------------------------------ */

struct utilization {
  unsigned gpu, memory;
};

EXPORT int nvmlDeviceGetUtilizationRates(void* handle, struct utilization* u) {
  enter("nvmlDeviceGetUtilizationRates");
  struct dev* d = device_of(handle);
  if (!d || !u) return leave(ERR_INVALID_ARGUMENT);
  if (!d->has_util) return leave(ERR_NOT_SUPPORTED);
  u->gpu = d->sm;
  u->memory = d->mem;
  return leave(OK);
}

struct process_utilization_sample {
  unsigned pid;
  unsigned long long time_stamp;
  unsigned sm, mem, enc, dec;
};

EXPORT int nvmlDeviceGetProcessUtilization(void* handle, struct process_utilization_sample* out, unsigned* count,
                                           unsigned long long last_seen) {
  enter("nvmlDeviceGetProcessUtilization");
  struct dev* d = device_of(handle);
  if (!d || !count) return leave(ERR_INVALID_ARGUMENT);
  if (!d->has_util) return leave(ERR_NOT_SUPPORTED);
  if (d->process_util_error) return leave(d->process_util_error);
  unsigned long long stamp = (unsigned long long)script_stat.st_mtim.tv_sec * 1000000ULL +
                             (unsigned long long)script_stat.st_mtim.tv_nsec / 1000ULL;
  /* The window: the samples newer than last_seen; its periods: their distinct stamps. */
  unsigned periods = 0, pids = 0;
  unsigned long long seen_stamps[MAX_PROCS];
  unsigned seen_pids[MAX_PROCS];
  for (int i = 0; i < d->nproc_util; ++i) {
    const unsigned long long t = stamp - d->proc_util[i].ago_us;
    if (t <= last_seen) continue;
    int k = 0;
    while (k < (int)periods && seen_stamps[k] != t) ++k;
    if (k == (int)periods) seen_stamps[periods++] = t;
    k = 0;
    while (k < (int)pids && seen_pids[k] != d->proc_util[i].pid) ++k;
    if (k == (int)pids) seen_pids[pids++] = d->proc_util[i].pid;
  }
  if (pids == 0) return leave(ERR_NOT_FOUND);
  if (!out || *count < pids) {
    *count = pids;
    return leave(ERR_INSUFFICIENT_SIZE);
  }
  /* One figure per process: its SM % summed over the window's periods, divided by their number
   * and rounded up, stamped with its newest sample. */
  for (unsigned k = 0; k < pids; ++k) {
    unsigned long long sum = 0, newest = 0;
    for (int i = 0; i < d->nproc_util; ++i) {
      const unsigned long long t = stamp - d->proc_util[i].ago_us;
      if (t <= last_seen || d->proc_util[i].pid != seen_pids[k]) continue;
      sum += d->proc_util[i].sm;
      if (t > newest) newest = t;
    }
    memset(&out[k], 0, sizeof out[k]);
    out[k].pid = seen_pids[k];
    out[k].time_stamp = newest;
    out[k].sm = (unsigned)((sum + periods - 1) / periods);
  }
  *count = pids;
  return leave(OK);
}

EXPORT int nvmlDeviceGetPcieThroughput(void* handle, int counter, unsigned* value) {
  enter("nvmlDeviceGetPcieThroughput");
  struct dev* d = device_of(handle);
  if (!d || !value || counter < 0 || counter > 1) return leave(ERR_INVALID_ARGUMENT);
  if (!d->has_pcie) return leave(ERR_NOT_SUPPORTED);
  *value = counter == 1 ? d->pcie_rx : d->pcie_tx; /* NVML_PCIE_UTIL_RX_BYTES = 1 */
  const long delay = S.pcie_delay_us;
  const int rc = leave(OK);
  /* Outside the lock: the driver's other calls are answered while it samples the counter. */
  struct timespec ts = {delay / 1000000, (delay % 1000000) * 1000};
  while (delay > 0 && nanosleep(&ts, &ts) != 0) {
  }
  return rc;
}
