"""The durations of ncu_sets.sh's (or profile_pair.py's) ncu logs, per kernel: profile_pair.py
profiles Triton (f16 or bf16 C, then f32 C; one for tf32) and then each spec in order, REPEAT
times, so the Nth duration of each round belongs to the Nth name.
Usage: python3 ncu_table.py LOG[,LOG...] NAME,NAME,... (Triton's first)."""
import re
import statistics
import sys

names = sys.argv[2].split(",")
for log in sys.argv[1].split(","):
    text = open(log).read()
    rows = re.findall(r"^\s+gpu__time_duration.sum\s+(\w+)\s+([\d.,]+)\s*$", text, re.MULTILINE)
    values = [float(value.replace(",", "")) for _, value in rows]
    unit = rows[0][0] if rows else "?"
    print(f"{log}: {len(values)} durations ({unit})")
    for index, name in enumerate(names):
        runs = values[index::len(names)]
        if runs:
            print(f"  {name:28s} {' '.join(f'{v:8.2f}' for v in runs)}  median {statistics.median(runs):8.2f}")
