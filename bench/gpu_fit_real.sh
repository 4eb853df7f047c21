#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gpu_fit_real.sh: qprof fit --gpu on a real NVIDIA GPU, for a machine with the driver's MPS
# control program (nvidia-cuda-mps-control) and PyTorch; run as root (MPS and the probes' cgroups).
# The job is bench/torch_fit_job.py: a context plus N GiB per process, in one and in two
# processes, so the smallest per-process limit is known by construction (the context, as fit's
# baseline reads it, + N GiB). Each fit's JSON, CSV and output land in OUTDIR; the last step
# checks the answers against the truth and writes OUTDIR/RESULTS-gpu-fit.md for bench/RESULTS.md.
#   bench/gpu_fit_real.sh QPROF OUTDIR [N_GIB]
set -u
qprof=$(realpath "$1") out=$2 n=${3:-2}
mkdir -p "$out" && out=$(realpath "$out")
cd "$(dirname "$0")/.." || exit 2
step() { printf '\n== %s (%s)\n' "$*" "$(date -u +%T)"; }
py=$(command -v python3)
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
res=64MiB

step machine
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode,mig.mode.current --format=csv
uname -r
command -v nvidia-cuda-mps-control || echo "no nvidia-cuda-mps-control on PATH"
ls -la /tmp/nvidia-mps 2>&1 | head -3
"$py" -c 'import torch; print("torch", torch.__version__, torch.version.cuda, torch.cuda.is_available())'
"$qprof" --version

# The limit format, checked by hand once: a 1 GiB allocation under 0=768M must fail, under 0=2048M pass.
step "MPS limit format"
d=$(mktemp -d /tmp/qprof-mpscheck.XXXXXX); mkdir "$d/p" "$d/l"
CUDA_MPS_PIPE_DIRECTORY=$d/p CUDA_MPS_LOG_DIRECTORY=$d/l nvidia-cuda-mps-control -d; echo "daemon -d: $?"
for lim in 768M 2048M; do
  CUDA_MPS_PIPE_DIRECTORY=$d/p CUDA_MPS_LOG_DIRECTORY=$d/l CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="0=$lim" timeout 120 "$py" -c '
import torch
free, total = torch.cuda.mem_get_info()
print("mem_get_info free", free, "total", total)
try:
    x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); x.fill_(1); torch.cuda.synchronize(); print("1 GiB: ok")
except torch.OutOfMemoryError as e:
    print("1 GiB: OOM")' 2>&1 | sed "s/^/0=$lim: /"
done
echo quit | CUDA_MPS_PIPE_DIRECTORY=$d/p CUDA_MPS_LOG_DIRECTORY=$d/l nvidia-cuda-mps-control; echo "quit: $?"
rm -rf "$d"

for procs in 1 2; do
  step "fit --gpu: $procs process(es), context + $n GiB each"
  /usr/bin/time -v "$qprof" fit --gpu --resolution "$res" --runs-max 14 --json "$out/fit$procs.json" \
    --csv "$out/fit$procs.csv" -- "$py" bench/torch_fit_job.py "$n" "$procs" 2 2>&1 | tee "$out/fit$procs.log"
  echo "exit ${PIPESTATUS[0]}"
  step "left behind"
  pgrep -af 'nvidia-cuda-mps|torch_fit_job' || echo "no MPS daemon, server or job process left"
  ls -d /tmp/qprof-mps.* 2>/dev/null || echo "no qprof-mps directory left"
done

step check
"$py" - "$out" "$n" "$res" <<'PY'
import json, sys
out, n, res = sys.argv[1], int(sys.argv[2]), sys.argv[3]
MiB = 1 << 20
step = int(res.rstrip("MiB")) * MiB
one = json.load(open(f"{out}/fit1.json"))
ctx = one["gpu"]["floor_bytes"]  # the context, as fit's baseline read it (one process)
truth = ctx + (n << 30)
rows = ["| processes | context (fit's floor) | truth: context + %d GiB | runs in (per process) | short of | "
        "within one step | device peak unlimited | to ask for | probes |" % n, "|---|---|---|---|---|---|---|---|---|"]
for procs in (1, 2):
    j = json.load(open(f"{out}/fit{procs}.json"))
    f = j["findings"]["smallest_running"] or {}
    runs_in, short = f.get("limit_bytes"), f.get("short_of_bytes")
    ok = runs_in is not None and abs(runs_in - truth) <= step
    full = j["findings"]["full_speed"]
    ask = None
    if full:
        p = j["probes"][full["probe"]] if full["probe"] is not None else j["baseline"]
        ask = p.get("gpu_peak_bytes")
    mib = lambda b: "%.0f MiB" % (b / MiB) if b is not None else "-"
    rows.append(f"| {procs} | {mib(ctx)} | {mib(truth)} | {mib(runs_in)} | {mib(short)} | {'yes' if ok else 'NO'} | "
                f"{mib(j['baseline']['gpu_peak_bytes'])} | {mib(ask)} | {len(j['probes'])} |")
text = "\n".join(rows)
print(text)
open(f"{out}/RESULTS-gpu-fit.md", "w").write(text + "\n")
PY
