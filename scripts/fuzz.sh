#!/usr/bin/env bash
# Reproduces the fuzz runs recorded in docs/fuzzing.md: builds the two cargo-fuzz targets of
# crates/kdsl-fuzz (libFuzzer, address sanitizer, debug assertions), runs them side by side at
# `nice -n 19` for the given number of seconds each, then minimises each corpus with
# `cargo fuzz cmin` into crates/kdsl-fuzz/corpus/<target>/, which is committed and which
# `cargo test` replays (crates/kdsl-frontend/tests/fuzz_corpus.rs,
# crates/kdsl-bundle/tests/fuzz_corpus.rs).
#
# Usage: scripts/fuzz.sh [seconds] [target...]     (default: 1800 seconds, frontend bundle)
# Environment: FUZZ_SANITIZER=none builds without a sanitizer (if ASan does not link);
#              FUZZ_MAX_FILE=bytes leaves larger inputs out of the committed corpus (6144).
#
# Only the stable toolchain is needed: RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its nightly flags.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=scripts/env.sh
. scripts/env.sh

seconds=${1:-1800}
shift || true
if [ $# -gt 0 ]; then targets=("$@"); else targets=(frontend bundle); fi
fuzz_dir=crates/kdsl-fuzz
sanitizer=${FUZZ_SANITIZER:-address}
max_file=${FUZZ_MAX_FILE:-6144}
export RUSTC_BOOTSTRAP=1

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

echo "== building the fuzz targets (sanitizer: $sanitizer)"
nice -n 19 cargo fuzz build --fuzz-dir "$fuzz_dir" -a -s "$sanitizer"

logs=$fuzz_dir/logs
mkdir -p "$logs"

# The raw corpus of a run: the committed corpus, the crash regressions and fresh seeds.
seed() {
    local target=$1 raw=$fuzz_dir/corpus-raw/$1
    mkdir -p "$raw"
    for folder in "$fuzz_dir/corpus/$target" "$fuzz_dir/regressions/$target"; do
        if [ -d "$folder" ]; then
            find "$folder" -maxdepth 1 -type f ! -name .gitkeep -exec cp -t "$raw" {} +
        fi
    done
    case $target in
        frontend)
            for file in examples/*.krn tests/kernels/*.krn tests/errors/*.krn; do
                cp "$file" "$raw/$(basename "$(dirname "$file")")_$(basename "$file")"
            done
            ;;
        bundle)
            # Real bundles, when the compiler is built (`cargo build --release -p kdsl-cli`).
            local kdsl=target/release/kdsl
            if [ -x "$kdsl" ]; then
                "$kdsl" compile examples/saxpy.krn -o "$raw/saxpy_all.kbundle" >/dev/null
                "$kdsl" compile examples/saxpy.krn --target spirv -o "$raw/saxpy_spirv.kbundle" >/dev/null
                "$kdsl" compile examples/histogram.krn --target ptx --arch sm_80,sm_90 \
                    -o "$raw/histogram_ptx.kbundle" >/dev/null
                "$kdsl" compile examples/reduction.krn --target amdgpu --arch gfx90a,gfx1100 \
                    -o "$raw/reduction_amdgpu.kbundle" >/dev/null
                "$kdsl" compile examples/matmul.krn -D TILE=8 --target spirv \
                    -o "$raw/matmul_defined_spirv.kbundle" >/dev/null
                "$kdsl" compile examples/softmax.krn --checked --target ptx \
                    -o "$raw/softmax_checked_ptx.kbundle" >/dev/null
                "$kdsl" compile tests/kernels/work_group_size.krn --target spirv,ptx \
                    -o "$raw/work_group_size.kbundle" >/dev/null
                "$kdsl" compile examples/saxpy.krn --format syclbin -o "$raw/saxpy_all.syclbin" >/dev/null
                "$kdsl" compile examples/reduction.krn --format syclbin --target spirv \
                    -o "$raw/reduction_spirv.syclbin" >/dev/null
                "$kdsl" compile examples/stencil.krn --format syclbin --target amdgpu --arch gfx942 \
                    -o "$raw/stencil_amdgpu.syclbin" >/dev/null
                "$kdsl" compile examples/transpose.krn --format syclbin --target ptx --arch sm_90 \
                    -o "$raw/transpose_ptx.syclbin" >/dev/null
                # Shaped buffers, launch-sized local arrays, print and records in the metadata.
                "$kdsl" compile tests/kernels/shaped_buffers.krn --target spirv,ptx \
                    -o "$raw/shaped_buffers.kbundle" >/dev/null
                "$kdsl" compile tests/kernels/local_parameters.krn --target spirv,amdgpu --arch gfx90a \
                    -o "$raw/local_parameters.kbundle" >/dev/null
                "$kdsl" compile tests/kernels/print.krn --target spirv,ptx -o "$raw/print.kbundle" >/dev/null
                "$kdsl" compile tests/kernels/records.krn --target spirv -o "$raw/records.kbundle" >/dev/null
                "$kdsl" compile tests/kernels/local_parameters.krn --format syclbin --target spirv \
                    -o "$raw/local_parameters.syclbin" >/dev/null
                "$kdsl" compile tests/kernels/shaped_buffers.krn --checked --format syclbin --target spirv \
                    -o "$raw/shaped_checked.syclbin" >/dev/null
            else
                echo "   ($kdsl is not built: the bundle corpus starts from the committed one)"
            fi
            ;;
    esac
}

pids=()
for target in "${targets[@]}"; do
    seed "$target"
    echo "== fuzzing $target for $seconds s (log: $logs/$target.log)"
    nice -n 19 cargo fuzz run --fuzz-dir "$fuzz_dir" -a -s "$sanitizer" "$target" \
        "$fuzz_dir/corpus-raw/$target" -- \
        -dict="$fuzz_dir/dict/$target.dict" -max_total_time="$seconds" -timeout=20 \
        -print_final_stats=1 >"$logs/$target.log" 2>&1 &
    pids+=($!)
done

failed=0
for index in "${!targets[@]}"; do
    target=${targets[$index]}
    if wait "${pids[$index]}"; then
        echo "== $target: no crash"
    else
        echo "== $target: the fuzzer stopped with a failure; see $logs/$target.log and $fuzz_dir/artifacts/$target/"
        failed=1
    fi
    grep -E '^(Done|stat::)|^#[0-9]+ +DONE' "$logs/$target.log" || true
done

# Minimising: inputs over FUZZ_MAX_FILE bytes are left out (they are few, large and mostly
# mutated real bundles), except the seeds written above (named *.krn, *.kbundle, *.syclbin),
# which reach paths only whole real bundles reach; then `cargo fuzz cmin` keeps the smallest
# inputs that together reach every coverage edge the rest reach (`-use_counters=0`: edges, not
# hit counts, which would keep three times as many files).
for target in "${targets[@]}"; do
    echo "== minimising the $target corpus"
    raw=$fuzz_dir/corpus-raw/$target
    staging=$fuzz_dir/corpus-raw/$target-cmin
    rm -rf "$staging"
    mkdir -p "$staging"
    find "$raw" -maxdepth 1 -type f \( -size -"$((max_file + 1))"c -o -name '*.krn' \
        -o -name '*.kbundle' -o -name '*.syclbin' \) -exec cp -t "$staging" {} +
    nice -n 19 cargo fuzz cmin --fuzz-dir "$fuzz_dir" -a -s "$sanitizer" "$target" "$staging" \
        -- -use_counters=0 >"$logs/$target-cmin.log" 2>&1
    grep '^MERGE-OUTER: .* new files' "$logs/$target-cmin.log" || true
    committed=$fuzz_dir/corpus/$target
    rm -rf "$committed"
    mv "$staging" "$committed"
    echo "   $(find "$raw" -type f | wc -l) inputs in the run's corpus ->" \
        "$(find "$committed" -type f | wc -l) committed ($(du -sh --apparent-size "$committed" | cut -f1))"
done

exit "$failed"
