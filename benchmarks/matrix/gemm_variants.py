"""Writes the matrix-tile GEMMs: the bodies of examples/hgemm.krn and examples/sgemm_tf32.krn
(their header comments are kept by hand) and the variants measured in docs/benchmarks.md.

Usage: python3 gemm_variants.py KERNEL TF32 DEPTH BUFFERING OUT.krn [STAGES [THREADS [GROUP]]]
  KERNEL     the kernel's name (hgemm, sgemm_tf32)
  TF32       1: f32 inputs computed as tf32 (m16n16k8 tiles); 0: f16 inputs (m16n16k16)
  DEPTH      the k extent staged in local memory per step (a multiple of the tile's K)
  BUFFERING  0: one local buffer, two barriers a step; 1: two buffers, one barrier a step;
             2: two buffers with the step loop unrolled twice (k a multiple of 2 * DEPTH);
             3: two buffers, the compute in an if/else on the buffer;
             4: asynchronous copies (`async_copy`) into a ring of STAGES local buffers, one
                barrier a step, the ring in `local` arrays (at most 48 KiB);
             5: as 4, the ring in a launch-sized `ring: local mut [T]` parameter, the last
                (dynamic shared memory on CUDA: bench_matrix.py's KERNEL@FILE+BYTES)
             6: as 5, with fragments in two register sets (gen_pipe); THREADS is then the
                layout WMxWN:TMxTN, WM x WN sub-groups of TM x TN accumulator tiles each
  STAGES     the ring's length for BUFFERING 4 to 6 (2 to 8; default 3)
  THREADS    for BUFFERING 4 and 5: 256 (default; eight sub-groups of 2 x 4 accumulator tiles)
             or 128 (four sub-groups of 4 x 4 tiles: fewer local reads per product)
  GROUP      for BUFFERING 4 to 6: 0 (default) takes blocks row by row; N > 0 in bands of N
             block rows, column by column (Triton's GROUP_SIZE_M: more L2 reuse)
The examples: hgemm 0 64 6 (3 stages, 2x2:4x4) and sgemm_tf32 1 32 5 (3 stages, 128).
BUFFERING 0 to 3: 256 work-items, a 128 x 128 block of C each, eight sub-groups of 2 x 4
accumulator tiles.
Also: python3 gemm_variants.py ring-bytes KERNEL TF32 DEPTH STAGES prints a BUFFERING 5
kernel's dynamic local memory in bytes; python3 gemm_variants.py launch TF32 DEPTH BUFFERING
STAGES THREADS the launch suffix bench_matrix.py takes (+BYTES,THREADS[,BM,BN])."""
import sys

def ring_bytes(tf32, bk, stages):
    """The local memory of a ring of `stages` buffers, in bytes."""
    pad = 4 if tf32 else 8
    size = 4 if tf32 else 2
    return stages * (128 * (bk + pad) + bk * (128 + 8)) * size


def gen_async(kernel, tf32, bk, stages, dynamic, threads=256, group=0):
    """A ring of `stages` local buffers filled by asynchronous copies: step s computes on
    buffer s % stages while the copies of steps s + 1 .. s + stages - 1 are in flight.
    256 work-items: eight units of 32 x 64 (2 x 4 tiles); 128: four units of 64 x 64 (4 x 4).
    group > 0: work-groups take blocks in bands of `group` block rows, column by column (as
    Triton's GROUP_SIZE_M), so the blocks running at once share more of A and B in L2."""
    rows = 2 if threads == 256 else 4  # accumulator tiles of a unit along M
    units = threads // 32
    ty = "f32" if tf32 else "f16"
    kstep = 8 if tf32 else 16
    pad = 4 if tf32 else 8
    a_stride, b_stride = bk + pad, 128 + 8
    a_size, b_size = 128 * a_stride, bk * b_stride
    chunk = 4 if tf32 else 8  # elements of one 16-byte copy
    a_row_chunks, b_row_chunks = bk // chunk, 128 // chunk
    per = 128 * bk // chunk // threads  # copies of A (and of B) per work-item and step
    frag = 128 if tf32 else 256
    a_ring = "ring" if dynamic else "a_ring"
    b_ring = "ring" if dynamic else "b_ring"
    L = []
    w = L.append
    w(f"const A_STRIDE: u32 = {a_stride};")
    w(f"const B_STRIDE: u32 = {b_stride};")
    w(f"const A_STAGE: u32 = {a_size};")
    w(f"const B_STAGE: u32 = {b_size};")
    if dynamic:
        w(f"// B's buffers follow A's in `ring` ({ring_bytes(tf32, bk, stages)} bytes).")
        w(f"const B_BASE: u32 = {stages * a_size};")
    w("")
    w(f"#[work_group_size({threads})]")
    ring_param = f", ring: local mut [{ty}]" if dynamic else ""
    w(f"kernel {kernel}(c: global mut [f32], a: global [{ty}], b: global [{ty}], m: u32, n: u32, k: u32{ring_param}) {{")
    if not dynamic:
        w(f"    local a_ring: [{ty}; {a_size * stages}];")
        w(f"    local b_ring: [{ty}; {b_size * stages}];")
    w("    let item = get_local_id(0);")
    if group:
        w(f"    // Bands of {group} block rows, walked column by column.")
        w("    let columns = get_num_groups(0);")
        w("    let linear = get_group_id(1) * columns + get_group_id(0);")
        w(f"    let band = linear / ({group} * columns);")
        w(f"    let band_rows = min(get_num_groups(1) - band * {group}, {group}u32);")
        w(f"    let in_band = linear % ({group} * columns);")
        w(f"    let block_row = (band * {group} + in_band % band_rows) * 128;")
        w("    let block_column = in_band / band_rows * 128;")
    else:
        w("    let block_row = get_group_id(1) * 128;")
        w("    let block_column = get_group_id(0) * 128;")
    w("    let unit = get_sub_group_id();")
    w("    let units = get_num_sub_groups();")
    w(f"    let unit_row = unit / 2 * {16 * rows};")
    w("    let unit_column = unit % 2 * 64;")
    accs = [f"acc{i}{j}" for i in range(rows) for j in range(4)]
    for acc in accs:
        w(f"    let mut {acc}: [f32; 256];")
        w(f"    matrix_fill({acc}, 0.0);")
    for t in [f"a{i}" for i in range(rows)] + ["b0", "b1", "b2", "b3"]:
        w(f"    let mut {t}: [{ty}; {frag}];")
    b_base = "B_BASE + " if dynamic else ""

    def copies(stage, depth, indent):
        """The copies of the step at `depth` into buffer `stage` (names or numbers)."""
        a_at = "" if stage == 0 else f"{stage} * A_STAGE + "
        b_at = b_base + ("" if stage == 0 else f"{stage} * B_STAGE + ")
        at = "" if depth == 0 else f"{depth} + "
        out = []
        for j in range(per):
            q = f"(item + {j * threads})" if j else "item"
            row, col = f"{q} / {a_row_chunks}", f"{q} % {a_row_chunks} * {chunk}"
            out.append(f"{indent}async_copy({a_ring}[{a_at}({row}) * A_STRIDE + {col}], "
                       f"a[(block_row + {row}) * k + {at}{col}], {chunk});")
        for j in range(per):
            q = f"(item + {j * threads})" if j else "item"
            row, col = f"{q} / {b_row_chunks}", f"{q} % {b_row_chunks} * {chunk}"
            out.append(f"{indent}async_copy({b_ring}[{b_at}({row}) * B_STRIDE + {col}], "
                       f"b[({at}{row}) * n + block_column + {col}], {chunk});")
        return out

    w(f"    // Work-item `item` copies the 16-byte chunks item, item + {threads}, ... of each step's A")
    first = "Step 0 starts" if stages == 2 else f"Steps 0 to {stages - 2} start"
    w(f"    // ({a_row_chunks} chunks a row) and B ({b_row_chunks} a row). {first} first.")
    for stage in range(stages - 1):
        w(f"    if k > {stage * bk} {{")
        L.extend(copies(stage, stage * bk, "        "))
        w("    }")
        w("    async_commit();")
    w("    let mut read_stage = 0u32;")
    w(f"    let mut write_stage = {stages - 1}u32;")
    w(f"    for depth in 0..k step {bk} {{")
    later = {2: "", 3: " (the next step's copies may still be in flight)"}.get(
        stages, f" (the next {stages - 2} steps' copies may still be in flight)")
    w("        // This step's copies have landed, for every work-item after the barrier, which also")
    w(f"        // ends the last step's compute on the buffer refilled next{later}.")
    w(f"        async_wait({stages - 2});")
    w("        barrier();")
    w(f"        let next = depth + {(stages - 1) * bk};")
    w("        if next < k {")
    L.extend(copies("write_stage", "next", "            "))
    w("        }")
    w("        async_commit();")
    w("        let a_base = read_stage * A_STAGE;")
    w(f"        let b_base = {b_base}read_stage * B_STAGE;")
    w(f"        if unit < {units} {{")
    w(f"            for sub_step in 0u32..{bk // kstep} unroll {{")
    w(f"                let kk = sub_step * {kstep};")
    mma_step(
        w,
        "                ",
        rows,
        lambda i: f"{a_ring}, a_base + (unit_row + {16 * i}) * A_STRIDE + kk, A_STRIDE",
        lambda j: f"{b_ring}, b_base + kk * B_STRIDE + unit_column + {16 * j}, B_STRIDE",
    )
    w("            }")
    w("        }")
    w(f"        read_stage = select(read_stage == {stages - 1}, 0u32, read_stage + 1);")
    w(f"        write_stage = select(write_stage == {stages - 1}, 0u32, write_stage + 1);")
    w("    }")
    epilogue(L, accs, kstep, rows, units)
    return "\n".join(L) + "\n"


def pipe_ring_bytes(tf32, bk, stages, bm, bn):
    """The local memory of a BUFFERING 6 ring, in bytes."""
    pad = 4 if tf32 else 8
    size = 4 if tf32 else 2
    return stages * (bm * (bk + pad) + bk * (bn + 8)) * size


def gen_pipe(kernel, tf32, bk, stages, warps_m, warps_n, tiles_m, tiles_n, group=0):
    """As gen_async with the ring in a launch-sized `ring` parameter, plus fragments in two
    register sets: while the products of one k-step of a stage run, the next k-step's
    fragments load, and the last k-step of a stage waits for the next stage, passes the
    barrier, starts the copies and loads the next stage's first fragments before its own
    products, so the tensor cores have work across the barrier. The sub-group's unit is
    clamped to the last one (sub-groups narrower than 32 lanes repeat its products and do not
    store them) instead of a branch around the products. Work-groups of 32 * warps_m *
    warps_n work-items; a block of (16 tiles_m warps_m) x (16 tiles_n warps_n) elements of C;
    sub-group tiles of tiles_m x tiles_n accumulators."""
    units = warps_m * warps_n
    threads = 32 * units
    bm, bn = 16 * tiles_m * warps_m, 16 * tiles_n * warps_n
    ty = "f32" if tf32 else "f16"
    kstep = 8 if tf32 else 16
    steps = bk // kstep
    assert steps % 2 == 0, "an even number of k-steps a stage"
    pad = 4 if tf32 else 8
    a_stride, b_stride = bk + pad, bn + 8
    a_size, b_size = bm * a_stride, bk * b_stride
    chunk = 4 if tf32 else 8
    a_row_chunks, b_row_chunks = bk // chunk, bn // chunk
    a_per, b_per = bm * bk // chunk // threads, bk * bn // chunk // threads
    assert a_per * threads * chunk == bm * bk and b_per * threads * chunk == bk * bn
    frag = 128 if tf32 else 256
    L = []
    w = L.append
    w(f"// C = A x B: {bm} x {bn} blocks, {units} sub-groups of {tiles_m} x {tiles_n} tiles, a ring of")
    w(f"// {stages} stages {bk} deep in `ring` ({pipe_ring_bytes(tf32, bk, stages, bm, bn)} bytes), fragments in two register sets.")
    w(f"const A_STRIDE: u32 = {a_stride};")
    w(f"const B_STRIDE: u32 = {b_stride};")
    w(f"const A_STAGE: u32 = {a_size};")
    w(f"const B_STAGE: u32 = {b_size};")
    w(f"const B_BASE: u32 = {stages * a_size};")
    w(f"const UNITS: u32 = {units};")
    w("")
    w(f"#[work_group_size({threads})]")
    w(f"kernel {kernel}(c: global mut [f32], a: global [{ty}], b: global [{ty}], m: u32, n: u32, k: u32, ring: local mut [{ty}]) {{")
    w("    let item = get_local_id(0);")
    if group:
        w(f"    // Bands of {group} block rows, walked column by column.")
        w("    let columns = get_num_groups(0);")
        w("    let linear = get_group_id(1) * columns + get_group_id(0);")
        w(f"    let band = linear / ({group} * columns);")
        w(f"    let band_rows = min(get_num_groups(1) - band * {group}, {group}u32);")
        w(f"    let in_band = linear % ({group} * columns);")
        w(f"    let block_row = (band * {group} + in_band % band_rows) * {bm};")
        w(f"    let block_column = in_band / band_rows * {bn};")
    else:
        w(f"    let block_row = get_group_id(1) * {bm};")
        w(f"    let block_column = get_group_id(0) * {bn};")
    w("    let unit = min(get_sub_group_id(), UNITS - 1);")
    w(f"    let unit_row = unit / {warps_n} * {16 * tiles_m};")
    w(f"    let unit_column = unit % {warps_n} * {16 * tiles_n};")
    accs = [f"acc{i}{j}" for i in range(tiles_m) for j in range(tiles_n)]
    for acc in accs:
        w(f"    let mut {acc}: [f32; 256];")
        w(f"    matrix_fill({acc}, 0.0);")
    for p in range(2):
        for t in [f"a{i}_{p}" for i in range(tiles_m)] + [f"b{j}_{p}" for j in range(tiles_n)]:
            w(f"    let mut {t}: [{ty}; {frag}];")

    def copies(stage, depth, indent):
        a_at = "" if stage == 0 else f"{stage} * A_STAGE + "
        b_at = "B_BASE + " + ("" if stage == 0 else f"{stage} * B_STAGE + ")
        at = "" if depth == 0 else f"{depth} + "
        out = []
        for j in range(a_per):
            q = f"(item + {j * threads})" if j else "item"
            row, col = f"{q} / {a_row_chunks}", f"{q} % {a_row_chunks} * {chunk}"
            out.append(f"{indent}async_copy(ring[{a_at}({row}) * A_STRIDE + {col}], "
                       f"a[(block_row + {row}) * k + {at}{col}], {chunk});")
        for j in range(b_per):
            q = f"(item + {j * threads})" if j else "item"
            row, col = f"{q} / {b_row_chunks}", f"{q} % {b_row_chunks} * {chunk}"
            out.append(f"{indent}async_copy(ring[{b_at}({row}) * B_STRIDE + {col}], "
                       f"b[({at}{row}) * n + block_column + {col}], {chunk});")
        return out

    def loads(p, kk, indent):
        out = []
        for i in range(tiles_m):
            out.append(f"{indent}matrix_load_a(a{i}_{p}, ring, a_base + (unit_row + {16 * i}) * A_STRIDE + {kk}, A_STRIDE);")
        for j in range(tiles_n):
            out.append(f"{indent}matrix_load_b(b{j}_{p}, ring, b_base + {kk} * B_STRIDE + unit_column + {16 * j}, B_STRIDE);")
        return out

    def products(p, indent):
        return [f"{indent}matrix_mma(acc{i}{j}, a{i}_{p}, b{j}_{p}, acc{i}{j});"
                for i in range(tiles_m) for j in range(tiles_n)]

    w(f"    // Work-item `item` copies the 16-byte chunks item, item + {threads}, ... of each stage's A")
    w(f"    // ({a_row_chunks} chunks a row) and B ({b_row_chunks} a row); stages 0 to {stages - 2} start first.")
    for stage in range(stages - 1):
        w(f"    if k > {stage * bk} {{")
        L.extend(copies(stage, stage * bk, "        "))
        w("    }")
        w("    async_commit();")
    w(f"    async_wait({stages - 2});")
    w("    barrier();")
    w(f"    if k > {(stages - 1) * bk} {{")
    L.extend(copies(stages - 1, (stages - 1) * bk, "        "))
    w("    }")
    w("    async_commit();")
    w("    let mut read_stage = 0u32;")
    w("    let mut a_base = 0u32;")
    w("    let mut b_base = B_BASE;")
    w("    if k > 0 {")
    L.extend(loads(0, "0", "        "))
    w("    }")
    w(f"    for depth in 0..k step {bk} {{")
    for step in range(steps):
        p, q = step % 2, 1 - step % 2
        if step < steps - 1:
            L.extend(loads(q, f"{(step + 1) * kstep}", "        "))
        else:
            w(f"        if depth + {bk} < k {{")
            w("            // The next stage has landed and every sub-group is done with this one,")
            w("            // which the copies of the stage after the ring's others refill.")
            w(f"            async_wait({stages - 2});")
            w("            barrier();")
            w(f"            let next = depth + {stages * bk};")
            w("            if next < k {")
            L.extend(copies("read_stage", "next", "                "))
            w("            }")
            w("            async_commit();")
            w(f"            read_stage = select(read_stage == {stages - 1}, 0u32, read_stage + 1);")
            w("            a_base = read_stage * A_STAGE;")
            w("            b_base = B_BASE + read_stage * B_STAGE;")
            L.extend(loads(q, "0", "            "))
            w("        }")
        L.extend(products(p, "        "))
    w("    }")
    w("    if get_sub_group_id() < UNITS {")
    for i in range(tiles_m):
        for j in range(tiles_n):
            w(f"        matrix_store(acc{i}{j}, c, (block_row + unit_row + {16 * i}) * n + block_column + unit_column + {16 * j}, n);")
    w("    }")
    w("    // Units without a sub-group of their own (sub-groups wider than 32 lanes).")
    w("    let units = get_num_sub_groups();")
    w("    for extra in get_sub_group_id() + units..UNITS step units {")
    w(f"        let row = block_row + extra / {warps_n} * {16 * tiles_m};")
    w(f"        let column = block_column + extra % {warps_n} * {16 * tiles_n};")
    for acc in accs:
        w(f"        matrix_fill({acc}, 0.0);")
    w(f"        for depth in 0..k step {kstep} {{")
    for i in range(tiles_m):
        w(f"            matrix_load_a(a{i}_0, a, (row + {16 * i}) * k + depth, k);")
    for j in range(tiles_n):
        w(f"            matrix_load_b(b{j}_0, b, depth * n + column + {16 * j}, n);")
    L.extend(products(0, "            "))
    w("        }")
    for i in range(tiles_m):
        for j in range(tiles_n):
            w(f"        matrix_store(acc{i}{j}, c, (row + {16 * i}) * n + column + {16 * j}, n);")
    w("    }")
    w("}")
    return "\n".join(L) + "\n"


def mma_step(w, indent, rows, a_operands, b_operands):
    """One k-step of a sub-group's `rows` x 4 accumulator tiles: the A and B fragments, loaded
    with the operands (memory, offset, stride) each function gives, then the products."""
    for i in range(rows):
        w(f"{indent}matrix_load_a(a{i}, {a_operands(i)});")
    for j in range(4):
        w(f"{indent}matrix_load_b(b{j}, {b_operands(j)});")
    for i in range(rows):
        for j in range(4):
            w(f"{indent}matrix_mma(acc{i}{j}, a{i}, b{j}, acc{i}{j});")


def epilogue(L, accs, kstep, rows=2, units=8):
    """The stores of the accumulators, and the units without a sub-group of their own."""
    w = L.append
    w(f"    if unit < {units} {{")
    for i in range(rows):
        for j in range(4):
            w(f"        matrix_store(acc{i}{j}, c, (block_row + unit_row + {16 * i}) * n + block_column + unit_column + {16 * j}, n);")
    w("    }")
    w("    // Units without a sub-group of their own (sub-groups wider than 32 lanes).")
    w(f"    for extra in unit + units..{units} step units {{")
    w(f"        let row = block_row + extra / 2 * {16 * rows};")
    w("        let column = block_column + extra % 2 * 64;")
    for acc in accs:
        w(f"        matrix_fill({acc}, 0.0);")
    w(f"        for depth in 0..k step {kstep} {{")
    mma_step(
        w,
        "            ",
        rows,
        lambda i: f"a, (row + {16 * i}) * k + depth, k",
        lambda j: f"b, depth * n + column + {16 * j}, n",
    )
    w("        }")
    for i in range(rows):
        for j in range(4):
            w(f"        matrix_store(acc{i}{j}, c, (row + {16 * i}) * n + column + {16 * j}, n);")
    w("    }")
    w("}")


def gen(kernel, tf32, bk, double):
    ty = "f32" if tf32 else "f16"
    kstep = 8 if tf32 else 16
    pad = 4 if tf32 else 8
    a_stride, b_stride = bk + pad, 128 + 8
    a_size, b_size = 128 * a_stride, bk * b_stride
    per = bk // 8  # 4-element chunks of A (and of B) per work-item and step
    frag = 128 if tf32 else 256
    bufs = 2 if double else 1
    L = []
    w = L.append
    w(f"const A_STRIDE: u32 = {a_stride};")
    w(f"const B_STRIDE: u32 = {b_stride};")
    w("")
    w("#[work_group_size(256)]")
    w(f"kernel {kernel}(c: global mut [f32], a: global [{ty}], b: global [{ty}], m: u32, n: u32, k: u32) {{")
    w(f"    local a_block: [{ty}; {a_size * bufs}];")
    w(f"    local b_block: [{ty}; {b_size * bufs}];")
    w("    let item = get_local_id(0);")
    w("    let block_row = get_group_id(1) * 128;")
    w("    let block_column = get_group_id(0) * 128;")
    w("    let unit = get_sub_group_id();")
    w("    let units = get_num_sub_groups();")
    w("    let unit_row = unit / 2 * 32;")
    w("    let unit_column = unit % 2 * 64;")
    accs = [f"acc{i}{j}" for i in range(2) for j in range(4)]
    for acc in accs:
        w(f"    let mut {acc}: [f32; 256];")
        w(f"    matrix_fill({acc}, 0.0);")
    for t in ["a0", "a1", "b0", "b1", "b2", "b3"]:
        w(f"    let mut {t}: [{ty}; {frag}];")
    w(f"    // Work-item `item` copies the 4-element chunks item, item + 256, ... of each step's A")
    w(f"    // ({bk // 4} chunks a row) and B (32 a row): a sub-group reads whole rows, coalesced.")
    def chunk(j):
        return f"(item + {j * 256})" if j else "item"
    def a_row(j): return f"{chunk(j)} / {bk // 4}"
    def a_col(j): return f"{chunk(j)} % {bk // 4} * 4"
    def b_row(j): return f"{chunk(j)} / 32"
    def b_col(j): return f"{chunk(j)} % 32 * 4"
    def loads(depth, indent, decl):
        out = []
        let = "let mut " if decl else ""
        for j in range(per):
            out.append(f"{indent}{let}av{j} = vload4(a, ((block_row + {a_row(j)}) * k + {depth}{a_col(j)}) / 4);")
        for j in range(per):
            out.append(f"{indent}{let}bv{j} = vload4(b, (({depth}{b_row(j)}) * n + block_column + {b_col(j)}) / 4);")
        return out
    def stores(base_a, base_b, indent):
        out = []
        for j in range(per):
            out.append(f"{indent}let a_at{j} = {base_a}({a_row(j)}) * A_STRIDE + {a_col(j)};")
            for c, comp in enumerate("xyzw"):
                off = f" + {c}" if c else ""
                out.append(f"{indent}a_block[a_at{j}{off}] = av{j}.{comp};")
        for j in range(per):
            out.append(f"{indent}let b_at{j} = {base_b}({b_row(j)}) * B_STRIDE + {b_col(j)};")
            for c, comp in enumerate("xyzw"):
                off = f" + {c}" if c else ""
                out.append(f"{indent}b_block[b_at{j}{off}] = bv{j}.{comp};")
        return out
    def compute(a_cur, b_cur, indent):
        out = [f"{indent}if unit < 8 {{",
               f"{indent}    for sub_step in 0u32..{bk // kstep} unroll {{",
               f"{indent}        let kk = sub_step * {kstep};"]
        i2 = indent + "        "
        out.append(f"{i2}matrix_load_a(a0, a_block, {a_cur}(unit_row + 0) * A_STRIDE + kk, A_STRIDE);")
        out.append(f"{i2}matrix_load_a(a1, a_block, {a_cur}(unit_row + 16) * A_STRIDE + kk, A_STRIDE);")
        for j in range(4):
            out.append(f"{i2}matrix_load_b(b{j}, b_block, {b_cur}kk * B_STRIDE + unit_column + {16 * j}, B_STRIDE);")
        for i in range(2):
            for j in range(4):
                out.append(f"{i2}matrix_mma(acc{i}{j}, a{i}, b{j}, acc{i}{j});")
        out += [f"{indent}    }}", f"{indent}}}"]
        return out
    if double == 2:
        w("    // Step 0 goes to buffer 0; each step then computes on one buffer while the next")
        w("    // step's A and B travel through registers into the other: one barrier a step.")
        L.extend(loads("", "    ", True))
        L.extend(stores("", "", "    "))
        w("    barrier();")
        w(f"    for depth in 0..k step {2 * bk} {{")
        for half in range(2):
            nxt = f"depth + {bk * (half + 1)}"
            w(f"        if {nxt} < k {{")
            L.extend(loads(f"{nxt} + ", "            ", False))
            w("        }")
            L.extend(compute(f"{half * a_size} + " if half else "", f"{half * b_size} + " if half else "", "        "))
            w(f"        if {nxt} < k {{")
            L.extend(stores(f"{(1 - half) * a_size} + " if half == 0 else "", f"{(1 - half) * b_size} + " if half == 0 else "", "            "))
            w("        }")
            w("        barrier();")
        w("    }")
    elif double == 3:
        L.extend(loads("", "    ", True))
        L.extend(stores("", "", "    "))
        w("    barrier();")
        w(f"    for depth in 0..k step {bk} {{")
        w(f"        let current = depth / {bk} % 2;")
        w("        let next = depth + %d;" % bk)
        w("        if next < k {")
        L.extend(loads("next + ", "            ", False))
        w("        }")
        w("        if current == 0 {")
        L.extend(compute("", "", "            "))
        w("        } else {")
        L.extend(compute(f"{a_size} + ", f"{b_size} + ", "            "))
        w("        }")
        w("        if next < k {")
        L.extend(stores(f"(1 - current) * {a_size} + ", f"(1 - current) * {b_size} + ", "            "))
        w("        }")
        w("        barrier();")
        w("    }")
    elif double:
        w("    // Step 0 goes to buffer 0; each step then computes on one buffer while the next")
        w("    // step's A and B travel through registers into the other: one barrier a step.")
        L.extend(loads("", "    ", True))
        L.extend(stores("", "", "    "))
        w("    barrier();")
        w(f"    for depth in 0..k step {bk} {{")
        w(f"        let current = depth / {bk} % 2;")
        w("        let next = depth + %d;" % bk)
        w("        if next < k {")
        L.extend(loads("next + ", "            ", False))
        w("        }")
        L.extend(compute(f"current * {a_size} + ", f"current * {b_size} + ", "        "))
        w("        if next < k {")
        L.extend(stores(f"(1 - current) * {a_size} + ", f"(1 - current) * {b_size} + ", "            "))
        w("        }")
        w("        barrier();")
        w("    }")
    else:
        w("    // A and B of the next step are read into registers while this step computes.")
        L.extend(loads("", "    ", True))
        w(f"    for depth in 0..k step {bk} {{")
        L.extend(stores("", "", "        "))
        w("        let next = depth + %d;" % bk)
        w("        if next < k {")
        L.extend(loads("next + ", "            ", False))
        w("        }")
        w("        barrier();")
        L.extend(compute("", "", "        "))
        w("        barrier();")
        w("    }")
    epilogue(L, accs, kstep)
    return "\n".join(L) + "\n"

if __name__ == "__main__":
    if sys.argv[1] == "launch":
        # bench_matrix.py's +BYTES,THREADS,BM,BN of a variants.txt line:
        # launch TF32 DEPTH BUFFERING STAGES THREADS
        tf32, bk, buffering, stages, threads = sys.argv[2] == "1", int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
        if buffering == 6:
            warps, tiles = threads.split(":")
            warps_m, warps_n = map(int, warps.split("x"))
            tiles_m, tiles_n = map(int, tiles.split("x"))
            bm, bn = 16 * tiles_m * warps_m, 16 * tiles_n * warps_n
            print(f"+{pipe_ring_bytes(tf32, bk, stages, bm, bn)},{32 * warps_m * warps_n},{bm},{bn}")
        elif buffering == 5:
            print(f"+{ring_bytes(tf32, bk, stages)},{threads}")
        else:
            print(f",{threads}")
        sys.exit(0)
    if sys.argv[1] == "ring-bytes":
        if len(sys.argv) > 6:
            print(pipe_ring_bytes(sys.argv[3] == "1", int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])))
        else:
            print(ring_bytes(sys.argv[3] == "1", int(sys.argv[4]), int(sys.argv[5])))
        sys.exit(0)
    kernel, tf32, bk, double, out = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    stages = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    threads = int(sys.argv[7]) if len(sys.argv) > 7 and double != 6 else 256
    group = int(sys.argv[8]) if len(sys.argv) > 8 else 0
    if double == 6:
        # THREADS is the layout here: WMxWN:TMxTN (sub-groups, tiles per sub-group).
        warps, tiles = sys.argv[7].split(":")
        warps_m, warps_n = map(int, warps.split("x"))
        tiles_m, tiles_n = map(int, tiles.split("x"))
        text = gen_pipe(kernel, tf32, bk, stages, warps_m, warps_n, tiles_m, tiles_n, group)
    elif double in (4, 5):
        text = gen_async(kernel, tf32, bk, stages, double == 5, threads, group)
    else:
        text = gen(kernel, tf32, bk, double)
    open(out, "w").write(text)
