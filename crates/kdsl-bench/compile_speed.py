"""Whole-process compile speed of `kdsl compile FILE -o OUT` (all default targets).

Runs each binary on each file several times, alternating the binaries run by run so that
they meet the same machine load, and prints per binary and file the median wall-clock time
and the median CPU time (user + system, child processes such as llc and ld.lld included),
in milliseconds. The first run of each pair warms the page cache and is dropped.

A binary written `BINARY@own` runs with `KDSL_COMPILE_SERVER=off`, so it compiles in its own
process even while a compile server (`BINARY server start`) runs; plain `BINARY` uses the
server when one runs.

    python3 crates/kdsl-bench/compile_speed.py [--runs 15] BINARY[@own]... -- FILE...
"""

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(binary, source, output):
    environment = dict(os.environ)
    if binary.endswith("@own"):
        binary = binary[:-len("@own")]
        environment["KDSL_COMPILE_SERVER"] = "off"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([binary, "compile", source, "-o", output], check=True, env=environment,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = (time.perf_counter() - start) * 1e3
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1e3
    return wall, cpu


def main():
    arguments = sys.argv[1:]
    runs = 15
    if arguments[:1] == ["--runs"]:
        runs, arguments = int(arguments[1]), arguments[2:]
    split = arguments.index("--")
    binaries, sources = arguments[:split], arguments[split + 1:]
    output = os.path.join(tempfile.gettempdir(), f"kdsl-speed-{os.getpid()}.kbundle")
    print(f"load average before: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores")
    for source in sources:
        results = {binary: [] for binary in binaries}
        for index in range(runs + 1):
            for binary in binaries:
                measured = run_once(binary, source, output)
                if index > 0:
                    results[binary].append(measured)
        for binary in binaries:
            walls = [wall for wall, _ in results[binary]]
            cpus = [cpu for _, cpu in results[binary]]
            print(f"{source:<44} {binary:<34} wall median {statistics.median(walls):7.1f} ms"
                  f" (min {min(walls):6.1f})  cpu median {statistics.median(cpus):7.1f} ms"
                  f"  ({runs} runs)")
    os.remove(output)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
