"""The SPIR-V of this change against the previous compiler's, alternately in one process, with
bench_cpu.py's cases. Run from the repository root after compiling examples/reduction.krn,
matmul.krn and kmeans.krn with `--target spirv` into target/bench-cpu-ab/ (NAME.kbundle) and
with the previous compiler as NAME_before.kbundle beside them.
"""

import sys
sys.path.insert(0, "crates/kdsl-bench")
import bench_cpu
cases = {c[0]: c for c in bench_cpu.CASES}
bench_cpu.CASES = [
    ("reduce_sum", cases["reduce_sum"][1], "", [("after", "reduction"), ("before", "reduction_before")]),
    ("matmul", cases["matmul"][1], "", [("after 2-D", "matmul"), ("before 2-D", "matmul_before")]),
    ("kmeans_assign", cases["kmeans_assign"][1], "-cl-std=CL3.0", [("after", "kmeans"), ("before", "kmeans_before")]),
]
sys.argv = ["bench_cpu.py", "target/bench-cpu-ab", "--rounds", "5", "--runs", "10"]
bench_cpu.main()
