"""Whole-process compile speed: runs `kdsl compile FILE -o OUT` (all default targets) several
times per binary and prints the median, minimum and maximum wall-clock time in milliseconds.

    python3 crates/kdsl-bench/compile_speed.py [--runs 15] KDSL_BINARY... -- FILE...
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time


def measure(binary, source, runs):
    output = os.path.join(tempfile.gettempdir(), f"kdsl-speed-{os.getpid()}.kbundle")
    times = []
    for _ in range(runs + 1):  # the first run warms the page cache and is dropped
        start = time.perf_counter()
        subprocess.run([binary, "compile", source, "-o", output], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1e3)
    os.remove(output)
    return times[1:]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("binaries", nargs="+")
    arguments, _, sources = " ".join(os.sys.argv[1:]).partition(" -- ")
    options = parser.parse_args(arguments.split())
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for source in sources.split():
        for binary in options.binaries:
            times = measure(binary, source, options.runs)
            print(f"{source:<48} {binary:<40} median {statistics.median(times):7.1f} ms"
                  f"  min {min(times):7.1f}  max {max(times):7.1f}  ({options.runs} runs)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
