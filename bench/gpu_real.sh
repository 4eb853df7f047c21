#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gpu_real.sh: the real-GPU checks, for a machine with an NVIDIA GPU, nvcc and PyTorch (none of
# which the build or the tests need: they use the fake libnvidia-ml.so.1). It builds the two CUDA
# workloads, runs them and bench/torch_gpu.py under `qprof run` with each NVIDIA backend, measures
# qprof's own CPU with and without GPU queries, the real NVML call costs, and what the backend
# adds to a short run (bench/gpu_startup.py); everything lands in
# OUTDIR (traces, each run's output), checked by bench/gpu_real_check.py. Results: bench/RESULTS.md.
#   bench/gpu_real.sh QPROF QPROF_GPU_BENCH OUTDIR [QPROF_BASELINE]
set -u
qprof=$(realpath "$1") gpu_bench=$(realpath "$2") out=$3 baseline=${4:+$(realpath "$4")}
mkdir -p "$out" && out=$(realpath "$out")
cd "$(dirname "$0")/.." || exit 2
step() { printf '\n== %s (%s)\n' "$*" "$(date -u +%T)"; }
py=$(command -v python3)

step machine
nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id,compute_mode,mig.mode.current --format=csv
nvidia-smi -L
uname -r; nproc; grep -m1 'model name' /proc/cpuinfo
nvcc --version | tail -2
ldconfig -p | grep -m2 libnvidia-ml || echo "libnvidia-ml not in the loader's cache (LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-})"
"$py" -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())'
"$qprof" --version

step build
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
for w in cuda_alloc cuda_busy; do
  nvcc -O2 -arch="sm_${arch:-90}" -o "$out/$w" "bench/$w.cu" || echo "nvcc $w failed"
done

# One qprof run: its output (the workload's and qprof's summary) to the log and OUTDIR/NAME.log,
# its trace to OUTDIR/NAME.dat.
run() {  # run NAME BACKEND CMD...
  local name=$1 backend=$2; shift 2
  step "run $name (--gpu $backend)"
  timeout 120 "$qprof" run -v --gpu "$backend" -o "$out/$name.dat" -- "$@" 2>&1 | tee "$out/$name.log"
  echo "exit ${PIPESTATUS[0]}"
}
run alloc_nvml nvml "$out/cuda_alloc"
run alloc_smi smi "$out/cuda_alloc"
run alloc_auto auto "$out/cuda_alloc"
run busy nvml "$out/cuda_busy"
# Two processes of the tree taking turns on the GPU: the driver's samples alternate between them.
printf '#!/bin/sh\n"%s" & "%s"\nwait\n' "$out/cuda_busy" "$out/cuda_busy" >"$out/two_busy.sh"
chmod +x "$out/two_busy.sh"
run busy_two nvml "$out/two_busy.sh"
PYTHONPATH=$PWD/python run torch nvml "$py" bench/torch_gpu.py
for f in alloc_nvml busy torch; do
  step "report $f"; "$qprof" report "$out/$f.dat"; "$qprof" peak "$out/$f.dat"
done

# qprof's own CPU with GPU queries (nvml) and without (none), and with an older qprof's GPU
# queries (QPROF_BASELINE, optional), alternating, on the same busy job; SUFFIX names the case.
overhead() {  # overhead SUFFIX VARIANT...
  local suffix=$1 round variant bin backend; shift
  for round in 1 2 3; do
    for variant in "$@"; do
      bin=$qprof backend=$variant
      [ "$variant" = baseline ] && bin=$baseline backend=nvml
      step "overhead round $round: $variant$suffix"
      timeout 60 "$bin" run -v --gpu "$backend" -o "$out/overhead_${variant}${suffix}_$round.dat" -- "$out/cuda_busy" 2>&1 |
        grep -E 'qprof: +overhead ' | sed "s/^/$variant$suffix $round: /" | tee -a "$out/overhead.log"
    done
  done
}
# The tree alone on the GPU (its share is the device's busy %, no per-process call).
overhead "" none nvml ${baseline:+baseline}

# Another tenant: a CUDA process outside the tree holds 1 GiB, idle. The tree's share is then
# its processes' figures again (the per-process call), checked as alone; the cost of that case.
step "another tenant, holding 1 GiB"
"$py" -c 'import torch, time; x = torch.empty(1 << 28, device="cuda"); torch.cuda.synchronize(); time.sleep(240)' &
holder=$!
sleep 8
nvidia-smi --query-compute-apps=pid,used_memory --format=csv
run busy_shared nvml "$out/cuda_busy"
overhead _shared nvml ${baseline:+baseline}

step "NVML call costs, with one CUDA process holding 1 GiB"
QPROF_BENCH_REAL_NVML=1 timeout 120 "$gpu_bench" --benchmark_filter='Nvml|SamplerFastPath' \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/gpu_bench.json" --benchmark_out_format=json
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null

step "what the GPU backend adds to a short run"
"$py" bench/gpu_startup.py "$qprof" ${baseline:+"$baseline"} --rounds 40 | tee "$out/startup.md"
step done
