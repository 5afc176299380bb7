"""Writes GEMM variants on matrix-group tiles (`matrix_group_mma`, wgmma on sm_90a) for the
benchmark: python3 wgmma_variants.py INPUT GROUPS TILES COLUMNS STAGES OUT.krn, or
python3 wgmma_variants.py launch INPUT GROUPS TILES COLUMNS STAGES for bench_matrix.py's launch
suffix (+BYTES,THREADS,BM,BN), or python3 wgmma_variants.py kernel INPUT for the kernel's name. INPUT is f16 (kernel hgemm_wgmma), bf16 (gemm_bf16_wgmma) or tf32
(f32 inputs, kernel sgemm_tf32_wgmma); `a` after it for the asynchronous form, /DEPTH for
another stage depth, :BAND for blocks taken in bands of BAND block rows, column by column
(Triton's GROUP_SIZE_M), so a band's blocks share rows of A and columns of B in L2, and
options after `+`: `+first` issues each stage's products before its copies (Triton's order;
asynchronous form only), `+late` is Triton's whole loop (asynchronous form only): the
products, then the wait for the previous stage's and a second barrier, then the copies into
the slot those products read, so copies run STAGES - 1 ahead (a ring of 3 is Triton's),
`+lean` computes each work-item's copy addresses once (64-bit offsets into A and B that
advance by a stage per iteration, local offsets that differ by constants), so a copy costs an
add instead of the index arithmetic of its row and chunk, `+narrow` (with `+lean`) makes those
offsets 32-bit (A and B below 2^32 elements): a copy's address is then one multiply-add,
`+offsets` (with `+lean`) keeps each copy's 64-bit offset in an array that advances a stage
per iteration (Triton's form: a copy's address is the base plus a register, no multiply),
`+pinned` (with `+lean`) passes the row and stage strides through a sub-group broadcast, so
ptxas keeps them in registers rather than reloading `k` and `n` inside the loop, `+persist` launches one work-group per SM that walks the blocks of C (needs `+lean`): after a
block's last products it starts the next block's first copies, then stores C while they fly
(with `+staged` through an area of local memory after the ring, so fewer stages fit),
`+streamk` (with `+persist`, not `+ring`) shares the last blocks out by K (Stream-K): where the
work-groups do not divide the blocks, the last (blocks % G) + G blocks are split into G equal
runs of K iterations, so no work-group idles in the last wave; a work-group that computed part
of a block adds its accumulators to `partials` and counts itself in on `arrived` (one per block,
zero before the first launch; the kernel leaves them zero), and the last to count in adds the
others' parts and stores C (`device_fence()` orders them),
`+flat` (with `+tma`) does the same for the TMA form: one loop over the work-group's (block,
stage) iterations, as Triton's persistent kernel flattens it,
`+ring` (with `+persist`) keeps the ring running across blocks: one copy cursor walks
(block, stage), so the next block's first stages are copied during this block's last
iterations instead of after them, `+pairs` stores C in pairs of f32 (`vstore2`, 8-byte stores) instead
of one element at a time, `+half` writes C in the inputs' 16-bit type (f16 or bf16, as Triton's
tutorial and cuBLAS do) instead of f32, and `+staged` writes C through local memory: each
work-item puts its accumulator elements into the ring (free once the last products are done),
then the work-group stores whole rows of C with 8- (f16x4) or 16-byte (f32x4) stores, as
Triton's epilogue does (C must have the ring's type: tf32, or f16 and bf16 with `+half`);
`+store` (with `+tma`) writes C by tile stores from a staging area (f32 C without `+half`: an
area of its own, `carea`), `+quarters` (with `+store`) in four rounds through a quarter of the
block, so four stages fit beside f32 C's area;
with `+persist+staged+halves` C goes through an area of half the block's columns in two rounds,
so a fourth stage of 128 x 256 blocks fits (226 KB).
A work-group of 128 GROUPS work-items computes a (64 GROUPS TILES) x COLUMNS block of C; each
matrix group TILES accumulators of 64 x COLUMNS, one below the other; a stage is 128 bytes deep
(64 f16 or 32 f32) and the ring holds STAGES stages (examples/hgemm_wgmma.krn is f16a:8+late+lean+pairs+persist 2 1 256 4).
f16 and bf16 `B` are chunked along N and copied 16 bytes at a time; tf32 `B` is chunked along K (wgmma
has no transposed tf32 operand), so it is copied an element at a time, four work-items filling
one 16-byte chunk."""
import re
import sys


def facts(input):
    """(element type, bytes, elements in a 16-byte chunk, stage depth, kernel name) of INPUT:
    f16, bf16 or tf32, with /DEPTH for a stage depth other than 128 bytes' (f16/128)."""
    name, _, depth = base_input(input).partition("/")
    element = {
        "tf32": ("f32", 4, 4, 32, "sgemm_tf32_wgmma"),
        "bf16": ("bf16", 2, 8, 64, "gemm_bf16_wgmma"),
        "f16": ("f16", 2, 8, 64, "hgemm_wgmma"),
    }[name.rstrip("a")]
    depth = int(depth or element[3])
    if depth % element[3]:
        # The swizzled layout and the matrix descriptors take rows of 128 bytes along K.
        raise SystemExit(f"{input}: a stage depth must be a multiple of {element[3]} ({name}: 128 bytes)")
    return element[:3] + (depth, element[4])


def base_input(input):
    """INPUT without its band and options: NAME[a][/DEPTH]."""
    return input.partition("+")[0].partition(":")[0]


def options(input):
    """The `+` options of INPUT (module docstring)."""
    known = {"first", "late", "lean", "pairs", "half", "staged", "persist", "ring", "narrow", "offsets", "pinned",
             "streamk", "tma", "release", "store", "halves", "quarters", "flat"}
    chosen = set(input.split("+")[1:])
    unknown = chosen - known
    if unknown:
        raise SystemExit(f"unknown option(s) {sorted(unknown)} in {input}: known {sorted(known)}")
    return chosen


def shape(input, groups, tiles, columns, stages):
    """(rows of C, elements of A in a stage, elements of a stage, elements of local memory):
    the ring, and with `+persist+staged` C's staging area after it."""
    depth = facts(input)[3]
    rows = 64 * groups * tiles
    a_stage = rows * depth
    stage = a_stage + depth * columns
    local = stage * stages
    if "store" in options(input):
        # f32 C's area is an array of its own (store_area).
        local += 0 if output(input) == "f32" else rows * columns // parts(input)
    elif {"persist", "staged", "halves"} <= options(input):
        local += rows * (columns // 2 + 8)
    elif {"persist", "staged"} <= options(input):
        local += rows * (columns + 8)
    return rows, a_stage, stage, local


def parts(input):
    """The rounds C's block goes out in through its staging area: 2 with `+halves`, 4 with
    `+quarters`, else 1."""
    chosen = options(input)
    return 4 if "quarters" in chosen else 2 if "halves" in chosen else 1


def store_area(input, groups, tiles, columns):
    """`+tma+store` with f32 C: the elements of C's staging area, a local array of its own
    (`carea`) after the ring, which holds the inputs' 16-bit type; 0 otherwise."""
    if {"tma", "store"} <= options(input) and output(input) == "f32":
        return 64 * groups * tiles * columns // parts(input)
    return 0


def output(input):
    """C's element type: the inputs' with `+half`, else f32."""
    return facts(input)[0] if "half" in options(input) else "f32"


def launch(input, groups, tiles, columns, stages):
    """bench_matrix.py's suffix: +BYTES,THREADS,BM,BN[,C TYPE[,persist|streamk]]."""
    rows, _, _, ring = shape(input, groups, tiles, columns, stages)
    ring_bytes = ring * facts(input)[1]
    area = store_area(input, groups, tiles, columns)
    suffix = f"+{ring_bytes + 4 * area},{128 * groups},{rows},{columns}"
    if area:
        # f32 C's area is a second launch-sized array, at the ring's end.
        return suffix + f",f32,tmastore,{ring_bytes}"
    if "tma" in options(input):
        return suffix + f",{output(input)},{'tmastore' if 'store' in options(input) else 'tma'}"
    if "persist" in options(input):
        return suffix + f",{output(input)},{'streamk' if 'streamk' in options(input) else 'persist'}"
    return suffix + ("" if output(input) == "f32" else f",{output(input)}")


def staged_epilogue(tiles, rows, columns, threads, ring, c_type, convert, persist, parts=1):
    """C through local memory: rows of COLUMNS + 8 elements, so a warp's stores of its
    accumulator pairs (8 rows, 4 pairs each) take no more wavefronts than their bytes need
    (f16: 32 distinct banks; f32: two halves of 32), then whole rows out. The ring holds C
    (free once the last products are done), or with `persist` (the next block's first copies
    in flight) an area of its own after the ring. With PARTS 2 (`+halves`, persistent) the
    area holds half the block's columns, which go out in two rounds, a barrier between."""
    width = 4
    part_columns = columns // parts
    pitch = part_columns + 8
    if rows * pitch > ring:
        raise SystemExit(f"+staged: {rows} x {pitch} elements of C do not fit the ring of {ring}")
    vectors = part_columns // width
    per_item = rows * vectors // threads
    area, done_row, done_column = ("C_AREA + ", "done_row", "done_column") if persist else ("", "block_row", "block_column")
    # The last copies landed (their wait passed) and every group's products are done before
    # the ring is written; the wait only makes the first sure where the ring could change.
    # With `persist` the area is C's alone, and the barrier after the last products (kernel())
    # covers the previous block's reads of it.
    lines = [] if persist else ["    async_wait(0);", "    barrier();"]
    for part in range(parts):
        if part > 0:
            lines.append("    barrier();")
        for t in range(tiles):
            lines.append(f"    let local_row{t} = (group * {tiles} + {t}) * 64 + item % 128 / 32 * 16 + lane / 4;")
            # Pair p holds columns lane % 4 * 2 + p / 2 * 8 (and the next).
            lines.append(f"    for p in {part * part_columns // 4}u32..{(part + 1) * part_columns // 4} unroll {{")
            lines.append("        let i = 2 * p;")
            shift = f" - {part * part_columns}" if part else ""
            lines.append(f"        vstore2(ring, ({area}(local_row{t} + i % 4 / 2 * 8) * {pitch} + lane % 4 * 2 + i / 4 * 8{shift}) / 2, {c_type}x2({convert('acc%d[i]' % t)}, {convert('acc%d[i + 1]' % t)}));")
            lines.append("    }")
        lines.append("    barrier();")
        lines.append(f"    for j in 0u32..{per_item} unroll {{")
        lines.append(f"        let q = item + {threads} * j;")
        lines.append(f"        let row = q / {vectors};")
        lines.append(f"        let column = q % {vectors};")
        offset = f" + {part * part_columns}" if part else ""
        lines.append(f"        vstore{width}(c, (({done_row} + row) * n + {done_column}{offset}) / {width} + column, vload{width}(ring, ({area}row * {pitch}) / {width} + column));")
        lines.append("    }")
    return lines


def tile_store_epilogue(tiles, rows, columns, c_type, parts, area="ring", base="C_AREA"):
    """`+store`: C's block through its staging area (`area` from `base`: C_AREA after the ring
    for 16-bit C, `carea` from 0 for f32 C), laid out as tile stores read it: COLUMNS /
    PER_ROW tiles of ROWS rows of 128 bytes (PER_ROW elements of C_TYPE), whose 16-byte chunk
    j of row r lies at j ^ (r % 8), so a warp's pairs (8 rows, 4 pairs each) fall in distinct
    banks; then one tile store per tile. With PARTS 2 (`+halves`) or 4 (`+quarters`) the area
    holds that part of the block, which goes out in as many rounds, so another stage fits
    beside it. Each round waits first: the stores before it have read the area."""
    per_row = 128 // {"f32": 4, "f16": 2, "bf16": 2}[c_type]
    chunk = per_row // 8
    convert = (lambda value: value) if c_type == "f32" else (lambda value: f"{value} as {c_type}")
    lines = []
    width = columns // parts
    for part in range(parts):
        lines.append("    async_tile_store_wait();")
        for t in range(tiles):
            lines.append(f"    let local_row{t} = (group * {tiles} + {t}) * 64 + item % 128 / 32 * 16 + lane / 4;")
            # Pair p holds columns lane % 4 * 2 + p / 2 * 8 (and the next).
            lines.append(f"    for p in {part * width // 4}u32..{(part + 1) * width // 4}u32 unroll {{")
            lines.append("        let i = 2 * p;")
            lines.append(f"        let r = local_row{t} + i % 4 / 2 * 8;")
            lines.append(f"        let x = lane % 4 * 2 + i / 4 * 8 - {part * width};")
            lines.append(f"        vstore2({area}, ({base} + x / {per_row} * {rows * per_row} + r * {per_row} + (x % {per_row} ^ r % 8 * {chunk})) / 2, "
                         f"{c_type}x2({convert(f'acc{t}[i]')}, {convert(f'acc{t}[i + 1]')}));")
            lines.append("    }")
        for q in range(width // per_row):
            lines.append(f"    async_tile_store(c[done_row, done_column + {part * width + q * per_row}], {area}[{base} + {q * rows * per_row}], {rows});")
    return lines


def copies(indent, base, depth, threads, rows, columns, input):
    """The copies of one stage into the swizzled layout (rows of 128 bytes whose 16-byte
    chunk j of row r lies at j ^ (r % 8)): consecutive work-items copy consecutive chunks of a
    row of A (and of f16 B), eight of them one row of local memory."""
    element, _, width, stage_depth, _ = facts(input)
    tf32 = element == "f32"
    per_row = 128 // facts(input)[1]
    out = []
    chunks = stage_depth // width
    a_count = rows * chunks // threads
    out.append(f"{indent}for j in 0u32..{a_count} unroll {{")
    out.append(f"{indent}    let q = item + {threads} * j;")
    out.append(f"{indent}    let row = q / {chunks};")
    out.append(f"{indent}    let chunk = q % {chunks};")
    out.append(f"{indent}    async_copy(ring[{base} + chunk / 8 * A_CHUNK + row * {per_row} + (chunk % 8 ^ row % 8) * {width}], a[(block_row + row) * k + {depth} + chunk * {width}], {width});")
    out.append(f"{indent}}}")
    if tf32:
        # Four work-items fill one chunk: k % 4 of row `column` (B is stored transposed).
        b_count = stage_depth * columns // threads
        out.append(f"{indent}for j in 0u32..{b_count} unroll {{")
        out.append(f"{indent}    let q = item + {threads} * j;")
        out.append(f"{indent}    let column = q / 4 % {columns};")
        out.append(f"{indent}    let row = q / {4 * columns} * 4 + q % 4;")
        out.append(f"{indent}    async_copy(ring[{base} + A_STAGE + row / {per_row} * B_CHUNK + column * {per_row} + (row % {per_row} / 4 ^ column % 8) * 4 + row % 4], b[({depth} + row) * n + block_column + column], 1);")
        out.append(f"{indent}}}")
    else:
        row_chunks = columns // 8
        b_count = stage_depth * row_chunks // threads
        out.append(f"{indent}for j in 0u32..{b_count} unroll {{")
        out.append(f"{indent}    let q = item + {threads} * j;")
        out.append(f"{indent}    let row = q / {row_chunks};")
        out.append(f"{indent}    let chunk = q % {row_chunks};")
        out.append(f"{indent}    async_copy(ring[{base} + A_STAGE + chunk / 8 * B_CHUNK + row * 64 + (chunk % 8 ^ row % 8) * 8], b[({depth} + row) * n + block_column + chunk * 8], 8);")
        out.append(f"{indent}}}")
    return out


def lean_setup(threads, rows, columns, input):
    """`+lean`: each work-item's first chunk of A and of B, whose copies then step by constant
    rows: the local offsets (`a_to`, `b_to`) by constants, the global ones (`a_from`,
    `b_from`, 64-bit, advanced a stage per iteration) by `a_rows` and `b_rows`. The swizzle
    term is the same for every step as long as a step is a multiple of 8 rows."""
    element, _, width, stage_depth, _ = facts(input)
    # `+pinned`: through a sub-group broadcast, which ptxas cannot recompute from the kernel's
    # parameters, so the loop keeps the strides in registers instead of reloading `k` and `n`.
    stride = (lambda value: f"sub_group_broadcast({value}, 0u32)") if "pinned" in options(input) else (lambda value: value)
    per_row = 128 // facts(input)[1]
    chunks = stage_depth // width
    row_chunks = columns // 8
    for name, count in (("A", chunks), ("B", row_chunks)):
        if threads % count or threads // count % 8:
            raise SystemExit(f"+lean: {threads} work-items do not step {name} by multiples of 8 rows")
    lines = [
        f"    let a_row = item / {chunks};",
        f"    let a_chunk = item % {chunks};",
        f"    let a_to = a_chunk / 8 * A_CHUNK + a_row * {per_row} + (a_chunk % 8 ^ a_row % 8) * {width};",
        f"    let mut a_from = ((block_row + a_row) as u64) * (k as u64) + ((a_chunk * {width}) as u64);",
        f"    let a_rows = {stride(f'{threads // chunks}u64 * (k as u64)')};",
    ]
    if element == "f32":
        # tf32 B, K-major, an element a copy: work-item `item` copies row item % 4 (+ 4 per
        # `columns / (threads / 4)` steps) of column item / 4 (+ threads / 4 per step).
        if columns % (threads // 4) or threads // 4 % 8:
            raise SystemExit(f"+lean: tf32 B of {columns} columns does not split over {threads} work-items")
        return lines + [
            "    let b_to = A_STAGE + item / 4 * 32 + item % 4;",
            "    let b_swizzle = item / 4 % 8;",
            "    let mut b_from = ((item % 4) as u64) * (n as u64) + ((block_column + item / 4) as u64);",
            f"    let b_rows = {stride('4u64 * (n as u64)')};",
            f"    let b_stage = {stride('(BK as u64) * (n as u64)')};",
        ]
    return lines + [
        f"    let b_row = item / {row_chunks};",
        f"    let b_chunk = item % {row_chunks};",
        f"    let b_to = A_STAGE + b_chunk / 8 * B_CHUNK + b_row * 64 + (b_chunk % 8 ^ b_row % 8) * 8;",
        f"    let mut b_from = (b_row as u64) * (n as u64) + ((block_column + b_chunk * 8) as u64);",
        f"    let b_rows = {stride(f'{threads // row_chunks}u64 * (n as u64)')};",
        f"    let b_stage = {stride('(BK as u64) * (n as u64)')};",
    ]


def lean_sources(threads, rows, columns, input):
    """(copies of A, index of copy `j` into A, copies of B, index of copy `j` into B) of one
    stage, from `a_from` and `b_from` (lean_setup)."""
    _, _, width, stage_depth, _ = facts(input)
    chunks = stage_depth // width
    a = (rows * chunks // threads, "a_from + (j as u64) * a_rows")
    if facts(input)[0] == "f32":
        steps = columns // (threads // 4)
        return a + (stage_depth * columns // threads,
                    f"b_from + ((j / {steps}) as u64) * b_rows + ((j % {steps} * {threads // 4}) as u64)")
    return a + (stage_depth * (columns // 8) // threads, "b_from + (j as u64) * b_rows")


def offsets_setup(threads, rows, columns, input, declare):
    """`+offsets`: each copy's index into A and B (`a_at[j]`, `b_at[j]`), from `a_from` and
    `b_from`; `declare` declares the arrays first."""
    a_count, a_index, b_count, b_index = lean_sources(threads, rows, columns, input)
    lines = [f"    let mut a_at: [u64; {a_count}];", f"    let mut b_at: [u64; {b_count}];"] if declare else []
    return lines + [f"    for j in 0u32..{a_count} unroll {{", f"        a_at[j] = {a_index};", "    }",
                    f"    for j in 0u32..{b_count} unroll {{", f"        b_at[j] = {b_index};", "    }"]


def offsets_advance(threads, rows, columns, input):
    """`+offsets`: every copy's indices a stage on."""
    a_count, _, b_count, _ = lean_sources(threads, rows, columns, input)
    return [f"        for j in 0u32..{a_count} unroll {{", "            a_at[j] += BK as u64;", "        }",
            f"        for j in 0u32..{b_count} unroll {{", "            b_at[j] += b_stage;", "        }"]


def lean_copies(indent, base, threads, rows, columns, input):
    """The copies of one stage from `a_from` and `b_from` (lean_setup), which then advance;
    with `+offsets` from `a_at` and `b_at`."""
    _, _, width, stage_depth, _ = facts(input)
    per_row = 128 // facts(input)[1]
    chunks = stage_depth // width
    row_chunks = columns // 8
    a_count, a_index, b_count, b_index = lean_sources(threads, rows, columns, input)
    if "offsets" in options(input):
        a_index, b_index = "a_at[j]", "b_at[j]"
    out = [
        f"{indent}for j in 0u32..{a_count} unroll {{",
        f"{indent}    async_copy(ring[{base} + a_to + j * {threads // chunks * per_row}], a[{a_index}], {width});",
        f"{indent}}}",
    ]
    if facts(input)[0] == "f32":
        steps = columns // (threads // 4)
        deep = stage_depth > per_row
        next_block = f"j / {steps} / 8 * B_CHUNK + " if deep else ""
        row_group = f"j / {steps} % 8" if deep else f"j / {steps}"
        return out + [
            f"{indent}for j in 0u32..{b_count} unroll {{",
            # Rows 4 (j / steps) to 4 (j / steps) + 3 of the stage: past 32, the next block
            # of 128 bytes along K.
            f"{indent}    async_copy(ring[{base} + b_to + {next_block}j % {steps} * {threads // 4 * 32} + ({row_group} ^ b_swizzle) * 4], b[{b_index}], 1);",
            f"{indent}}}",
        ]
    return out + [
        f"{indent}for j in 0u32..{b_count} unroll {{",
        f"{indent}    async_copy(ring[{base} + b_to + j * {threads // row_chunks * 64}], b[{b_index}], 8);",
        f"{indent}}}",
    ]


def persistent_block(band, rows, columns, tile="tile", row="block_row", column="block_column"):
    """`+persist`: `row` and `column` (block_row and block_column) of block `tile` (the last
    block's past the end)."""
    lines = ["    {", f"        let linear = min({tile}, tiles - 1);"]
    if band:
        lines += [
            f"        let band = linear / ({band} * blocks);",
            f"        let band_rows = min(block_rows - band * {band}, {band}u32);",
            f"        let in_band = linear % ({band} * blocks);",
            f"        {row} = (band * {band} + in_band % band_rows) * {rows};",
            f"        {column} = in_band / band_rows * {columns};",
        ]
    else:
        lines += [f"        {row} = linear / blocks * {rows};",
                  f"        {column} = linear % blocks * {columns};"]
    return lines + ["    }"]


def streamk_setup():
    """`+streamk`: which K iterations this work-group computes. With G work-groups, the first
    blocks go whole, G at a time (`dp_tiles` of them, a multiple of G); the rest, blocks % G + G
    of them where G does not divide the blocks, are split into G runs of K iterations, run g
    from `sk_begin` to `sk_end` (iterations counted block by block, `stages` a block)."""
    return [
        "    let groups = get_num_groups(0);",
        "    let me = get_group_id(0);",
        "    let mut sk_tiles = 0u32;",
        "    if tiles % groups != 0 {",
        "        sk_tiles = min(tiles, tiles % groups + groups);",
        "    }",
        "    let dp_tiles = tiles - sk_tiles;",
        "    let sk_iterations = sk_tiles * stages;",
        "    let sk_begin = dp_tiles * stages + me * sk_iterations / groups;",
        "    let sk_end = dp_tiles * stages + (me + 1) * sk_iterations / groups;",
        "    let mut unit = 0u32;",
        "    let mut tile = 0u32;",
        "    let mut kb = 0u32;",
        "    let mut ke = 0u32;",
    ]


def streamk_unit():
    """`+streamk`: block `tile` and its iterations `kb` to `ke` of this work-group's unit
    `unit`: first its whole blocks, then the pieces of its run, one per block (`tile` past the
    end after the last)."""
    return [
        "    {",
        "        let rounds = dp_tiles / groups;",
        "        if unit < rounds {",
        "            tile = me + unit * groups;",
        "            kb = 0u32;",
        "            ke = stages;",
        "        } else {",
        "            let start = if unit == rounds { sk_begin } else { (sk_begin / stages + unit - rounds) * stages };",
        "            if start < sk_end {",
        "                tile = start / stages;",
        "                kb = start - tile * stages;",
        "                ke = min(stages, sk_end - tile * stages);",
        "            } else {",
        "                tile = tiles;",
        "                kb = 0u32;",
        "                ke = 0u32;",
        "            }",
        "        }",
        "    }",
    ]


def streamk_fixup(tiles, length, threads):
    """`+streamk`: for a unit that computed part of its block, the accumulators go to the
    work-group's slot of `partials` (2 g for its run's first piece, 2 g + 1 for its last), and
    the last work-group to count in on the block adds the others' slots and stores C
    (`finish`). The groups that share block `done_tile` are those whose runs hold its first and
    last iterations; run h holds iteration x (counted from the first split block) when h is the
    largest with h * sk_iterations / groups <= x."""
    def each_element(indent, slot, statement):
        """`statement` (of `acc` and `part`, element i of a slot) for every accumulator element."""
        out = []
        for t in range(tiles):
            part = f"partials[(({slot} * {tiles * length} + {t * length} + i) * {threads} + item) as u64]"
            out += [f"{indent}for i in 0u32..{length} unroll {{",
                    indent + "    " + statement.format(acc=f"acc{t}[i]", part=part), f"{indent}}}"]
        return out

    lines = [
        "    let mut finish = 1u32;",
        "    if done_ke - done_kb < stages {",
        "        let slot = me * 2 + select(done_tile * stages + done_kb == sk_begin, 0u32, 1u32);",
    ]
    lines += each_element("        ", "slot", "{part} = {acc};")
    lines += [
        "        device_fence();",
        "        barrier();",
        "        let mut ticket = 0u32;",
        "        if item == 0 {",
        "            ticket = atomic_add(arrived[done_tile], 1u32);",
        "        }",
        "        let block_start = done_tile * stages - dp_tiles * stages;",
        "        let first_group = ((block_start + 1) * groups - 1) / sk_iterations;",
        "        let last_group = ((block_start + stages) * groups - 1) / sk_iterations;",
        "        if work_group_broadcast(ticket, 0u32) == last_group - first_group {",
        "            device_fence();",
        "            for h in first_group..last_group + 1 {",
        "                if h != me {",
        "                    let h_begin = dp_tiles * stages + h * sk_iterations / groups;",
        "                    let h_slot = h * 2 + select(h_begin >= done_tile * stages, 0u32, 1u32);",
    ]
    lines += each_element("                    ", "h_slot", "{acc} += {part};")
    lines += [
        "                }",
        "            }",
        "            if item == 0 {",
        "                arrived[done_tile] = 0u32;",
        "            }",
        "        } else {",
        "            finish = 0u32;",
        "        }",
        "    }",
    ]
    return lines


def ring_copy(band, rows, columns, threads, input, restart):
    """`+ring`: one stage of copies at the copy cursor (block `copy_tile`, stage `copy_stage`,
    slot `copy_slot`), which then advances, to the next block's first stage after the last."""
    lines = ["        if copy_tile < tiles {", "            let base = copy_slot * STAGE;"]
    lines += lean_copies("            ", "base", threads, rows, columns, input)
    lines += ["        }", "        a_from += BK as u64;", "        b_from += b_stage;", "        async_commit();",
              "        copy_slot += 1;", "        if copy_slot == STAGES {", "            copy_slot = 0;", "        }",
              "        copy_stage += 1;", "        if copy_stage == stages {", "            copy_stage = 0;",
              "            copy_tile += get_num_groups(0);"]
    block = persistent_block(band, rows, columns, "copy_tile", "copy_row", "copy_column")
    lines += ["        " + line for line in block]
    lines += ["        " + line.replace("block_row", "copy_row").replace("block_column", "copy_column") for line in restart]
    return lines + ["        }"]


def tma_kernel(input, groups, tiles, columns, stages):
    """`+tma` (f16 or bf16, asynchronous, `+persist+half+staged`, optionally banded): the
    persistent staged GEMM whose stages are copied by tile copies (`async_tile_copy`: one
    tensor copy of A's block and COLUMNS / 64 of B's on sm_90a, from tensor maps the host
    makes), each stage on its own slot; a stage's wait replaces the copies' wait and the
    barrier after it. A and B are 2-D buffers (`global [[T]]`), C flat. Triton's loop order
    (`+late`): the products, the wait for the previous stage's, a barrier, then the copies
    into the slot those read; with `+release` the slot is released instead of the barrier
    (`async_tile_release`), so only the work-item issuing the copies waits for the others.
    With `+store` C is a 2-D buffer too, written by tile stores (`async_tile_store`, one per
    128 bytes of columns, TMA on sm_90a) from an area in the tile layout, so the work-group
    goes on to the next block while they run (Triton's persistent TMA epilogue): after the
    ring for C in the inputs' type (`+half`), else (f32 C) a second launch-sized array,
    `carea`."""
    element, size, width, depth, name = facts(input)
    chosen = options(input)
    if element == "f32" or not {"persist", "staged"} <= chosen or not base_input(input).partition("/")[0].endswith("a"):
        raise SystemExit("+tma needs f16a or bf16a with +persist+staged")
    if not chosen & {"half", "store"}:
        raise SystemExit("+tma stages C in the ring's type: it needs +half, or +store (f32 C through its own area)")
    if stages > 8:
        raise SystemExit("+tma: at most 8 stages (tile copy slots)")
    rows, a_stage, stage, ring = shape(input, groups, tiles, columns, stages)
    if rows > 256:
        raise SystemExit("+tma: a tile copy moves at most 256 rows")
    store = "store" in chosen
    c_type = output(input)
    threads = 128 * groups
    per_row = 128 // size
    name = name.replace("wgmma", "tma")
    band = int(input.partition("+")[0].partition(":")[2] or 0)
    ahead = stages - 1

    def stage_copies(indent, slot, depth_expr):
        out = [f"{indent}async_tile_copy(ring[{slot} * STAGE], a[block_row, {depth_expr}], {rows}, {slot});"]
        for p in range(columns // 64):
            out.append(f"{indent}async_tile_copy(ring[{slot} * STAGE + A_STAGE + {p * depth * per_row}], b[{depth_expr}, block_column + {p * 64}], {depth}, {slot});")
        return out

    prologue = [f"    for s in 0u32..{ahead} {{", "        if s < stages && tile < tiles {"]
    prologue += stage_copies("            ", "s", "s * BK")
    prologue += ["        }", "    }"]
    lines = [
        f"// {dict(f16='HGEMM', bf16='BF16 GEMM')[element]} on matrix-group tiles copied by tile copies: {threads} work-items, a {rows} x {columns}",
        f"// block of C, a ring of {stages} stages of depth {depth} ({ring * size} bytes). (Generated by",
        f"// benchmarks/matrix/wgmma_variants.py {input} {groups} {tiles} {columns} {stages}.) Launch: global",
        f"// ({threads} * G, 1) for any G work-groups (one per SM is best), local ({threads}, 1).",
        f"const BK: u32 = {depth};",
        f"const STAGES: u32 = {stages};",
        f"const A_CHUNK: u32 = {rows * per_row};",
        f"const B_CHUNK: u32 = {depth * per_row};",
        f"const A_STAGE: u32 = {a_stage};",
        f"const STAGE: u32 = {stage};",
        f"const C_AREA: u32 = {stage * stages};",
        "",
        f"#[work_group_size({threads})]",
        f"kernel {name}(c: global mut [{'[' + c_type + ']' if store else c_type}], a: global [[{element}]], b: global [[{element}]], ring: local mut [{element}]"
        + (", carea: local mut [f32]) {" if store_area(input, groups, tiles, columns) else ") {"),
        "    let item = get_local_id(0);",
        "    let group = get_matrix_group_id();",
        "    let m = a.shape(0);",
        "    let k = a.shape(1);",
        "    let n = b.shape(1);",
        f"    let blocks = n / {columns};",
        f"    let block_rows = m / {rows};",
        "    let tiles = blocks * block_rows;",
        "    let mut tile = get_group_id(0);",
        "    let mut block_row = 0u32;",
        "    let mut block_column = 0u32;",
    ] + persistent_block(band, rows, columns) + ["    let stages = k / BK;"]
    for t in range(tiles):
        lines += [f"    let mut acc{t}: [f32; {columns // 2}];", f"    for i in 0u32..{columns // 2} unroll {{",
                  f"        acc{t}[i] = 0.0;", "    }"]
    if "flat" in chosen:
        if "release" in chosen:
            raise SystemExit("+flat: not with +release")
        return "\n".join(lines + flat_loop(band, rows, columns, tiles, threads, element, per_row, ring - stage * stages,
                                            store and c_type, parts(input), ahead, stage_copies)) + "\n"
    lines += prologue
    body = ["    for t in 0..stages {", "        let slot = t % STAGES;", "        async_tile_wait(slot);",
            "        let base = slot * STAGE;"]
    for t in range(tiles):
        body.append(f"        matrix_group_mma_async(acc{t}, ring, base + (group * {tiles} + {t}) * {64 * per_row}, A_CHUNK, ring, base + A_STAGE, B_CHUNK, BK);")
    sync = ["        if t > 0 {", "            async_tile_release((t - 1) % STAGES);", "        }"] if "release" in chosen else ["        barrier();"]
    body += ["        matrix_group_wait(1);"] + sync + [f"        let next = t + {ahead};",
             "        if next < stages {", "            let next_slot = next % STAGES;"]
    body += stage_copies("            ", "next_slot", "next * BK")
    # The last stage's slot is released too, so every slot's next copy has a release to wait for
    # or none pending (the first copies of the next block need every work-item done).
    last = ["    if stages > 0 {", "        async_tile_release((stages - 1) % STAGES);", "    }"] if "release" in chosen else []
    body += ["        }", "    }", "    matrix_group_wait(0);"] + last + ["    barrier();",
             "    let done_row = block_row;", "    let done_column = block_column;",
             "    tile += get_num_groups(0);"]
    body += persistent_block(band, rows, columns) + prologue + ["    let lane = item % 32;"]
    if store:
        body += tile_store_epilogue(tiles, rows, columns, c_type, parts(input), *area_of(c_type))
    else:
        body += staged_epilogue(tiles, rows, columns, threads, ring - stage * stages, element,
                                lambda value: f"{value} as {element}", True)
    for t in range(tiles):
        body += [f"    for i in 0u32..{columns // 2} unroll {{", f"        acc{t}[i] = 0.0;", "    }"]
    lines += ["    while tile < tiles {"] + ["    " + line for line in body] + ["    }", "}"]
    return "\n".join(lines) + "\n"


def area_of(c_type):
    """(array, first index) of `+store`'s staging area for C of C_TYPE."""
    return ("carea", "0") if c_type == "f32" else ("ring", "C_AREA")


def flat_loop(band, rows, columns, tiles, threads, element, per_row, area, store, parts, ahead, stage_copies):
    """`+tma+flat`: the ring runs across blocks, as in Triton's persistent loop (flattened over
    blocks and K): the next block's first stages are copied during this block's last products,
    not after them. A copy cursor (`copy_row`, `copy_column`, `copy_stage`) walks this
    work-group's (block, stage) iterations AHEAD in front of the products (`u`). The loops stay
    nested, so the accumulators are read and cleared only after a block's loop: inside the
    loop, under a branch, ptxas would serialize every wgmma (C7518)."""
    lines = [
        "    let groups = get_num_groups(0);",
        "    let mut mine = 0u32;",
        "    if tile < tiles {",
        "        mine = (tiles - tile + groups - 1) / groups;",
        "    }",
        "    let iterations = mine * stages;",
        "    let mut copy_tile = tile;",
        "    let mut copy_row = block_row;",
        "    let mut copy_column = block_column;",
        "    let mut copy_stage = 0u32;",
    ]
    advance = ["copy_stage += 1;", "if copy_stage == stages {", "    copy_stage = 0;", "    copy_tile += groups;"]
    advance += persistent_block(band, rows, columns, "copy_tile", "copy_row", "copy_column")
    advance += ["}"]

    def copy_at(indent, slot):
        out = [line.replace("block_row", "copy_row").replace("block_column", "copy_column")
               for line in stage_copies(indent, slot, "copy_stage * BK")]
        return out + [indent + line for line in advance]

    lines += [f"    for s in 0u32..{ahead} {{", "        if s < iterations {"]
    lines += copy_at("            ", "s")
    lines += ["        }", "    }", "    let lane = item % 32;", "    let mut u = 0u32;", "    while tile < tiles {",
              "        for t in 0..stages {", "            let slot = u % STAGES;", "            async_tile_wait(slot);",
              "            let base = slot * STAGE;"]
    for t in range(tiles):
        lines.append(f"            matrix_group_mma_async(acc{t}, ring, base + (group * {tiles} + {t}) * {64 * per_row}, A_CHUNK, ring, base + A_STAGE, B_CHUNK, BK);")
    lines += ["            matrix_group_wait(1);", "            barrier();", f"            if u + {ahead} < iterations {{"]
    lines += copy_at("                ", f"(u + {ahead}) % STAGES")
    lines += ["            }", "            u += 1;", "        }", "        matrix_group_wait(0);",
              "        let done_row = block_row;", "        let done_column = block_column;"]
    if store:
        epilogue = tile_store_epilogue(tiles, rows, columns, store, parts, *area_of(store))
    else:
        # The barrier of the block's last stage covers the previous block's reads of C's area.
        epilogue = staged_epilogue(tiles, rows, columns, threads, area, element,
                                   lambda value: f"{value} as {element}", True, parts)
    for t in range(tiles):
        epilogue += [f"    for i in 0u32..{columns // 2} unroll {{", f"        acc{t}[i] = 0.0;", "    }"]
    epilogue += ["    tile += groups;"] + persistent_block(band, rows, columns)
    lines += ["    " + line for line in epilogue]
    return lines + ["    }", "}"]


def kernel(input, groups, tiles, columns, stages):
    if "tma" in options(input):
        return tma_kernel(input, groups, tiles, columns, stages)
    element, size, width, depth, name = facts(input)
    tf32 = element == "f32"
    rows, a_stage, stage, ring = shape(input, groups, tiles, columns, stages)
    threads = 128 * groups
    length = columns // 2
    # Elements between 128-byte-wide blocks: of A along K, of B along N (f16) or K (tf32).
    per_row = 128 // size
    a_chunk = rows * per_row
    b_chunk = columns * per_row if tf32 else depth * per_row
    lines = [
        f"// {dict(f32='TF32 SGEMM', f16='HGEMM', bf16='BF16 GEMM')[element]} on matrix-group tiles: {threads} work-items, a {rows} x {columns} block of C, a ring",
        f"// of {stages} stages of depth {depth} ({ring * size} bytes). (Generated by benchmarks/matrix/wgmma_variants.py",
        f"// {input} {groups} {tiles} {columns} {stages}.) Launch: " + (
            f"global ({threads} * G, 1) for any G work-groups (one per SM is best), local ({threads}, 1)."
            if "persist" in options(input) else
            f"global ({threads} * n / {columns}, m / {rows}), local ({threads}, 1)."),
        f"const BK: u32 = {depth};",
        f"const STAGES: u32 = {stages};",
        f"const A_CHUNK: u32 = {a_chunk};",
        f"const B_CHUNK: u32 = {b_chunk};",
        f"const A_STAGE: u32 = {a_stage};",
        f"const STAGE: u32 = {stage};",
    ] + ([f"const C_AREA: u32 = {stage * stages};"] if {"persist", "staged"} <= options(input) else []) + [
        "",
        f"#[work_group_size({threads})]",
        f"kernel {name}(c: global mut [{output(input)}], a: global [{element}], b: global [{element}], m: u32, n: u32, k: u32, ring: local mut [{element}]"
        + (", partials: global mut [f32], arrived: global mut [u32]" if "streamk" in options(input) else "") + ") {",
        "    let item = get_local_id(0);",
        "    let group = get_matrix_group_id();",
    ]
    band = int(input.partition("+")[0].partition(":")[2] or 0)
    persist = "persist" in options(input)
    streamk = "streamk" in options(input)
    if streamk and (not persist or "ring" in options(input)):
        raise SystemExit("+streamk needs +persist, and not +ring")
    if persist:
        lines += [
            f"    let blocks = n / {columns};",
            f"    let block_rows = m / {rows};",
            "    let tiles = blocks * block_rows;",
        ]
        if streamk:
            lines += ["    let stages = k / BK;"] + streamk_setup() + streamk_unit()
        else:
            lines.append("    let mut tile = get_group_id(0);")
        lines += [
            "    let mut block_row = 0u32;",
            "    let mut block_column = 0u32;",
        ]
        lines += persistent_block(band, rows, columns)
    elif band:
        lines += [
            f"    // Bands of {band} block rows, walked column by column.",
            "    let blocks = get_num_groups(0);",
            "    let linear = get_group_id(1) * blocks + get_group_id(0);",
            f"    let band = linear / ({band} * blocks);",
            f"    let band_rows = min(get_num_groups(1) - band * {band}, {band}u32);",
            f"    let in_band = linear % ({band} * blocks);",
            f"    let block_row = (band * {band} + in_band % band_rows) * {rows};",
            f"    let block_column = in_band / band_rows * {columns};",
        ]
    else:
        lines += [
            f"    let block_row = get_group_id(1) * {rows};",
            f"    let block_column = get_group_id(0) * {columns};",
        ]
    if not streamk:
        lines.append("    let stages = k / BK;")
    for t in range(tiles):
        lines.append(f"    let mut acc{t}: [f32; {length}];")
        lines.append(f"    for i in 0u32..{length} unroll {{")
        lines.append(f"        acc{t}[i] = 0.0;")
        lines.append("    }")
    asynchronous = base_input(input).partition("/")[0].endswith("a")
    chosen = options(input)
    lean = "lean" in chosen
    offsets = "offsets" in chosen
    if offsets and (not lean or "ring" in chosen):
        raise SystemExit("+offsets needs +lean, and not +ring")
    for option in ("pinned", "narrow"):
        if option in chosen and not lean:
            raise SystemExit(f"+{option} needs +lean")
    # `+streamk`: a unit starts at iteration `kb` of its block.
    skip = ["    a_from += ((kb * BK) as u64);", "    b_from += (kb as u64) * b_stage;"] if streamk else []
    if lean:
        lines += lean_setup(threads, rows, columns, input) + skip
    if offsets:
        lines += offsets_setup(threads, rows, columns, input, True)
    advance = ["        a_from += BK as u64;", "        b_from += b_stage;"] if lean else []
    if offsets:
        advance = offsets_advance(threads, rows, columns, input)
    first = "first" in chosen
    if first and not asynchronous:
        raise SystemExit("+first needs the asynchronous form: a synchronous stage's products end before its copies could start")
    late = "late" in chosen
    if late and not asynchronous:
        raise SystemExit("+late needs the asynchronous form")
    # Synchronous: copies run STAGES - 1 stages ahead, into the slot the previous stage's
    # products read. Asynchronous: each stage's products go on while the next stage's start,
    # so copies run STAGES - 2 ahead, into the slot of the stage before the previous; with
    # `+late` the copies wait for the previous stage's products and run STAGES - 1 ahead.
    ahead = stages - 2 if asynchronous and not late else stages - 1
    if persist and (not lean or not asynchronous):
        raise SystemExit("+persist needs the asynchronous form and +lean")
    ring_form = "ring" in chosen
    if ring_form and not persist:
        raise SystemExit("+ring needs +persist")
    restart = [line.replace("let mut ", "") for line in lean_setup(threads, rows, columns, input)
               if "let mut " in line] + skip if lean else []
    if offsets:
        restart += offsets_setup(threads, rows, columns, input, False)
    if ring_form:
        # One copy cursor walks (block, stage) across blocks, the products' slot follows it
        # STAGES - 1 (or - 2) behind: the ring never drains between blocks.
        lines += ["    let mut copy_tile = tile;", "    let mut copy_row = block_row;",
                  "    let mut copy_column = block_column;", "    let mut copy_stage = 0u32;",
                  "    let mut copy_slot = 0u32;", "    let mut slot = 0u32;",
                  f"    for s in 0u32..{ahead} {{"]
        lines += ring_copy(band, rows, columns, threads, input, restart)
        lines += ["    }"]
    steps = "ke - kb" if streamk else "stages"
    prologue = [f"    for s in 0u32..{ahead} {{",
                f"        if s < {steps} && tile < tiles {{" if persist else "        if s < stages {"]
    if lean:
        prologue += lean_copies("            ", "s * STAGE", threads, rows, columns, input)
    else:
        prologue += copies("            ", "s * STAGE", "s * BK", threads, rows, columns, input)
    prologue += ["        }"] + advance + ["        async_commit();", "    }"]
    if not ring_form:
        lines += prologue
    if persist:
        lines.append("    while tile < tiles {")
        body_start = len(lines)
    lines.append(f"    for t in 0..{steps} {{")
    lines.append(f"        async_wait({ahead - 1});")
    lines.append("        barrier();")
    products = ["        let base = slot * STAGE;" if ring_form else "        let base = t % STAGES * STAGE;"]
    for t in range(tiles):
        mma = "matrix_group_mma_async" if asynchronous else "matrix_group_mma"
        products.append(f"        {mma}(acc{t}, ring, base + (group * {tiles} + {t}) * {64 * per_row}, A_CHUNK, ring, base + A_STAGE, B_CHUNK, BK);")
    refill = [f"        let next = t + {ahead};", f"        if next < {steps} {{",
              "            let base = next % STAGES * STAGE;"]
    if lean:
        refill += lean_copies("            ", "base", threads, rows, columns, input)
    else:
        refill += copies("            ", "base", "next * BK", threads, rows, columns, input)
    refill += ["        }"] + advance + ["        async_commit();"]
    if ring_form:
        products += ["        slot += 1;", "        if slot == STAGES {", "            slot = 0;", "        }"]
        refill = ring_copy(band, rows, columns, threads, input, restart)
    # The slot the copies fill was last read by the products of stage t - 2 (asynchronous)
    # or t - 1 (synchronous), which every group finished before this iteration's barrier,
    # so either order is safe.
    if late:
        # The previous stage's products are done in every group before its slot is refilled.
        lines += products + ["        matrix_group_wait(1);", "        barrier();"] + refill
    else:
        lines += products + refill if first else refill + products
    if asynchronous and not late:
        lines.append("        matrix_group_wait(1);")
    lines.append("    }")
    if asynchronous:
        lines.append("    matrix_group_wait(0);")
    if persist:
        # Without `+ring` the block's products are done in every group before the ring takes
        # the next block's first stages (stored while C is); with `+ring+staged` every
        # work-item is past the previous block's reads of C's area, even where K is below
        # one stage and no loop barrier came between.
        if not ring_form or "staged" in chosen:
            lines.append("    barrier();")
        lines += ["    let done_row = block_row;", "    let done_column = block_column;"]
        if streamk:
            lines += ["    let done_tile = tile;", "    let done_kb = kb;", "    let done_ke = ke;",
                      "    unit += 1;"] + streamk_unit()
        else:
            lines.append("    tile += get_num_groups(0);")
        lines += persistent_block(band, rows, columns)
        if not ring_form:
            lines += restart + prologue
    lines.append("    let lane = item % 32;")
    c_type = output(input)
    convert = (lambda value: value) if c_type == "f32" else (lambda value: f"{value} as {c_type}")
    if "staged" in chosen:
        if c_type != element:
            raise SystemExit("+staged needs C in the ring's type: tf32, or f16 and bf16 with +half")
        parts = 2 if persist and "halves" in chosen else 1
        epilogue = staged_epilogue(tiles, rows, columns, threads, ring - (stage * stages if persist else 0), c_type, convert, persist, parts)
    else:
        epilogue = register_epilogue(tiles, length, chosen, persist, c_type, convert)
    if streamk:
        lines += streamk_fixup(tiles, length, threads) + ["    if finish == 1 {"] + ["    " + line for line in epilogue] + ["    }"]
    else:
        lines += epilogue
    if persist:
        for t in range(tiles):
            lines += [f"    for i in 0u32..{length} unroll {{", f"        acc{t}[i] = 0.0;", "    }"]
        lines[body_start:] = ["    " + line for line in lines[body_start:]]
        lines.append("    }")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    if "narrow" in chosen:
        text = re.sub(r" as u64\b", "", text).replace("u64", "u32")
    return text


def register_epilogue(tiles, length, chosen, persist, c_type, convert):
    """C stored from the accumulators' registers: one element or (`+pairs`) two a store."""
    lines = []
    done_row, done_column = ("done_row", "done_column") if persist else ("block_row", "block_column")
    lines.append(f"    let column = {done_column} + lane % 4 * 2;")
    for t in range(tiles):
        lines.append(f"    let row{t} = {done_row} + (group * {tiles} + {t}) * 64 + item % 128 / 32 * 16 + lane / 4;")
        if "pairs" in chosen:
            # Elements i and i + 1 are neighbours in a row; n is a multiple of COLUMNS and
            # `column` even, so the pair's index is exact in f32x2 units.
            lines.append(f"    for p in 0u32..{length // 2} unroll {{")
            lines.append("        let i = 2 * p;")
            lines.append(f"        vstore2(c, ((row{t} + i % 4 / 2 * 8) * n + column + i / 4 * 8) / 2, {c_type}x2({convert(f'acc{t}[i]')}, {convert(f'acc{t}[i + 1]')}));")
            lines.append("    }")
        else:
            lines.append(f"    for i in 0u32..{length} unroll {{")
            lines.append(f"        c[(row{t} + i % 4 / 2 * 8) * n + column + i / 4 * 8 + i % 2] = {convert(f'acc{t}[i]')};")
            lines.append("    }")
    return lines


if __name__ == "__main__":
    if sys.argv[1] == "launch":
        print(launch(sys.argv[2], *map(int, sys.argv[3:7])))
    elif sys.argv[1] == "kernel":
        name = facts(sys.argv[2])[4]
        print(name.replace("wgmma", "tma") + "$contiguous" if "tma" in options(sys.argv[2]) else name)
    else:
        groups, tiles, columns, stages = map(int, sys.argv[2:6])
        open(sys.argv[6], "w").write(kernel(sys.argv[1], groups, tiles, columns, stages))
