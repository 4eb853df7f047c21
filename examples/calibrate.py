#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for an ONNX post-training quantization job, with the stages AMD Quark reports.

Pure standard library: tensors are bytearrays whose every page is written, so their memory is
real and its size known. The stages `Pre-process`, `Calibration`, `Quantization (Static)` and
`Post-process` are announced as qprof markers: through the marker helper (python/qprof_mark.py,
synchronous checkpoints) when it can be imported, as `QPROF_MARK:` lines on stderr otherwise.

    qprof run -o minmax.dat -- python3 examples/calibrate.py --method minmax

What each stage holds, with M = --model and A = --activations (one batch's activations):

    stage                   holds (beside the interpreter, ~10 MiB)
    Pre-process             the model: M
    Calibration             the model and, per --method:
                              minmax                one batch's activations: A
                              percentile            a batch and the histograms: A + A/2
                              layerwise_percentile  one of 4 layer groups at a time: A/4 + A/8,
                                                    in 4 passes over the data (lower peak, longer)
                              minmse                a batch, the histograms and the candidate
                                                    scales' error buffers: A + A/2 + A
    Quantization (Static)   the model and its quantized copy: M + M/4
    Post-process            the quantized copy: M/4

So the peaks order as layerwise_percentile < minmax < percentile < minmse whenever A is large
enough for calibration to be the peak (the defaults: 64 MiB each).

--workers N forks N calibration workers that share the parent's model (they read every page of it,
they do not copy it): Σ RSS counts the model N+1 times, PSS once, as with Quark's CalibWorkerNum.
Each worker holds the method's calibration memory for its share of the batches.

--cache-dir DIR spills the histograms to disk, as CalibOptimizeDisk / TmpDir do: with percentile
and minmse (the methods that keep histograms across batches) every batch writes A/2 into a file of
its own in DIR, so DIR grows by batches × A/2 and the histograms are not kept in memory; the files
are deleted at the end of Calibration.
"""
import argparse
import os
import sys
import time

MIB = 1024 * 1024
PAGE = 4096
METHODS = ("minmax", "percentile", "layerwise_percentile", "minmse")
LAYER_GROUPS = 4


def _marker_helper():
    """qprof's marker helper when importable (installed, or in this repository), else None."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.append(os.path.join(here, os.pardir, "python"))
    try:
        import qprof_mark
    except ImportError:
        return None
    return qprof_mark


_HELPER = _marker_helper()


def mark(label):
    if _HELPER is not None:
        _HELPER.mark(label)
    else:
        print(f"QPROF_MARK: {label}", file=sys.stderr, flush=True)


class Stage:
    """`with Stage("Calibration"):` marks the stage's start and end."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        mark(f"{self.name} Start")

    def __exit__(self, *exc):
        mark(f"{self.name} End")
        return False


def _fixed_mmap_threshold():
    """Every tensor gets pages of its own that go back to the kernel when it is freed.

    glibc raises its mmap threshold each time a large block is freed, so that later blocks of that
    size come from the heap, which keeps freed memory: a stage's memory would then depend on the
    stages before it. Fixing the threshold (mallopt M_MMAP_THRESHOLD) makes what a stage holds
    exactly what the table above says."""
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        pass  # not glibc: the sizes still hold, the release of freed memory may come later


def tensor(nbytes):
    """nbytes of memory the process really holds: every page written."""
    block = bytearray(nbytes)
    for i in range(0, nbytes, PAGE):
        block[i] = 1
    return block


def read_every_page(block):
    """Reads a page of the model at a time: a forked worker shares these pages, never copies them."""
    return sum(memoryview(block)[::PAGE])


def size(text):
    """'64', '64M', '64MiB', '1G', '1.5GiB': MiB unless a unit says otherwise, as bytes."""
    t = text.strip().lower()
    for suffix, scale in (("gib", 1024), ("gb", 1024), ("g", 1024), ("mib", 1), ("mb", 1), ("m", 1)):
        if t.endswith(suffix):
            return int(float(t[: -len(suffix)]) * scale * MIB)
    return int(float(t) * MIB)


def spill(cache_dir, batch, nbytes):
    """Writes a batch's histograms into cache_dir: real blocks, flushed, so the disk holds them."""
    path = os.path.join(cache_dir, f"activations-{os.getpid()}-{batch}.bin")
    chunk = b"\x01" * MIB
    with open(path, "wb") as f:
        left = nbytes
        while left > 0:
            f.write(chunk[: min(left, MIB)])
            left -= MIB
        f.flush()
        os.fsync(f.fileno())
    return path


def calibrate_batch(args, model, batch, kept):
    """One batch of the method's calibration; what stays (histograms) goes into `kept`."""
    a = args.activations
    read_every_page(model)
    if args.method == "layerwise_percentile":
        for _ in range(LAYER_GROUPS):
            chunk = tensor(a // LAYER_GROUPS)
            histogram = tensor(a // (2 * LAYER_GROUPS))
            time.sleep(args.pause)
            del chunk, histogram
        return
    activations = tensor(a)
    if args.method in ("percentile", "minmse"):
        if args.cache_dir:
            kept.append(spill(args.cache_dir, batch, a // 2))
        else:
            kept.append(tensor(a // 2 // args.batches))
    errors = tensor(a) if args.method == "minmse" else None
    time.sleep(args.pause)
    del activations, errors


def calibrate(args, model, batches):
    """Calibrates on `batches` and returns the histograms (or spilled files) it kept."""
    kept = []
    for batch in batches:
        calibrate_batch(args, model, batch, kept)
    return kept


def forget(kept):
    for item in kept:
        if isinstance(item, str):
            os.unlink(item)
    kept.clear()


def calibration(args, model):
    batches = list(range(args.batches))
    if args.workers <= 0:
        forget(calibrate(args, model, batches))
        return
    pids = []
    for w in range(args.workers):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                mine = batches[w :: args.workers]
                kept = calibrate(args, model, mine)
                time.sleep(args.pause)
                forget(kept)
            except BaseException:  # a worker must never return into the parent's code
                code = 1
            os._exit(code)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        if status != 0:
            sys.exit(f"calibrate.py: a calibration worker failed (wait status {status})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", choices=METHODS, default="minmax")
    parser.add_argument("--model", type=size, default=size("64"), help="model size (MiB unless a unit: 64, 1G)")
    parser.add_argument("--activations", type=size, default=size("64"), help="one batch's activations")
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--workers", type=int, default=0, help="calibration worker processes")
    parser.add_argument("--cache-dir", help="spill histograms to files here (deleted after Calibration)")
    parser.add_argument("--pause", type=float, default=0.05, help="seconds of 'work' per step")
    args = parser.parse_args(argv)
    _fixed_mmap_threshold()
    if args.batches < 1 or args.workers < 0:
        parser.error("--batches must be at least 1 and --workers not negative")
    if args.cache_dir:
        os.makedirs(args.cache_dir, exist_ok=True)

    with Stage("Pre-process"):
        model = tensor(args.model)
        time.sleep(args.pause * 2)
    with Stage("Calibration"):
        calibration(args, model)
    with Stage("Quantization (Static)"):
        quantized = tensor(args.model // 4)
        time.sleep(args.pause * 2)
        del model
    with Stage("Post-process"):
        time.sleep(args.pause * 2)
        del quantized


if __name__ == "__main__":
    main()
