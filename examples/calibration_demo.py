#!/usr/bin/env python3
"""A stand-in for a post-training quantization job, with the stages AMD Quark reports.

Only the standard library: memory is held in bytearrays, and calibration runs two worker
processes the way a multi-process data loader does. Each stage prints Quark-style markers on
stderr, which `qprof run` turns into checkpoints and stages:

    qprof run -o demo.dat -- python3 examples/calibration_demo.py
"""
import multiprocessing as mp
import sys
import time

MIB = 1024 * 1024


def mark(label):
    print(f"QPROF_MARK: {label}", file=sys.stderr, flush=True)


def touch(mib):
    block = bytearray(mib * MIB)
    for i in range(0, len(block), 4096):
        block[i] = 1
    return block


def calibration_worker(batches, mib):
    activations = []
    for _ in range(batches):
        activations.append(touch(mib))
        time.sleep(0.05)
    time.sleep(0.2)


def main():
    mark("Pre-process Start")
    model = touch(120)
    time.sleep(0.3)
    mark("Pre-process End")

    mark("Calibration Start")
    workers = [mp.Process(target=calibration_worker, args=(6, 20)) for _ in range(2)]
    for w in workers:
        w.start()
    stats = touch(60)
    for w in workers:
        w.join()
    del stats
    mark("Calibration End")

    mark("Quantization (Static) Start")
    quantized = touch(90)
    time.sleep(0.4)
    del model
    time.sleep(0.2)
    mark("Quantization (Static) End")

    mark("Post-process Start")
    time.sleep(0.2)
    del quantized
    mark("Post-process End")


if __name__ == "__main__":
    mp.set_start_method("fork")
    main()
