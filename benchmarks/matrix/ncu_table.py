"""The durations of ncu_sets.sh's (or profile_pair.py's) ncu logs, per kernel: profile_pair.py
profiles its launches in the same order REPEAT times, so the Nth duration of each round belongs
to the Nth name. NAMES (comma-separated) are taken from the log's `profiled:` lines when not
given. Then each kdsl kernel's (and Triton-persistent's) time over the best time of Triton's
tutorial kernel writing the same C type (f16 or bf16 C where the launch spec or name says so,
f32 otherwise).
Usage: python3 ncu_table.py LOG[,LOG...] [NAME,NAME,...]"""
import re
import statistics
import sys


def launch_names(text):
    """The first round of the log's `profiled:` names (the round repeats)."""
    names = []
    for name in re.findall(r"^profiled: (.+)$", text, re.MULTILINE):
        if name in names:
            break
        names.append(name)
    return names


def label(name):
    """A launch spec's file name (`kernel@FILE+...`), else the name itself."""
    match = re.match(r"[^@]+@([^+,]+)", name)
    return match.group(1) if match else name


def c_type(name):
    """The C type a Triton name or a launch spec states (f32 unless it says f16 or bf16)."""
    if name.startswith("Triton"):
        return name.split()[1] if len(name.split()) > 2 else "f32"  # also Triton-persistent
    fields = name.split(",")
    return fields[4] if len(fields) > 4 and fields[4] in ("f16", "bf16") else "f32"


for log in sys.argv[1].split(","):
    text = open(log).read()
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else launch_names(text)
    rows = re.findall(r"^\s+gpu__time_duration.sum\s+(\w+)\s+([\d.,]+)\s*$", text, re.MULTILINE)
    scale = {"ns": 1e-3, "usecond": 1, "us": 1, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6, "nsecond": 1e-3}
    values = [float(value.replace(",", "")) * scale[unit] for unit, value in rows]
    print(f"{log}: {len(values)} durations (us)")
    medians = {}
    for index, name in enumerate(names):
        runs = values[index::len(names)]
        if runs:
            medians[name] = statistics.median(runs)
            print(f"  {label(name):36s} {' '.join(f'{v:8.2f}' for v in runs)}  median {medians[name]:8.2f}")
    best = {}
    for name, median in medians.items():
        if name.startswith("Triton ") and median < best.get(c_type(name), (float("inf"), ""))[0]:
            best[c_type(name)] = (median, name)
    for kind, (median, name) in sorted(best.items()):
        print(f"  best Triton, {kind} C: {name} {median:.2f}")
    for name, median in medians.items():
        if not name.startswith("Triton ") and c_type(name) in best:
            print(f"  {label(name):36s} / best Triton ({c_type(name)} C) = {median / best[c_type(name)][0]:.3f}")
