//! Modules on matrix-group tiles (docs/language.md, "Matrix-group tiles"): one kernel whose
//! matrix groups (128 work-items each) multiply `A` blocks of their own by a shared `B` block
//! in local memory into one or two accumulators, in rounds. Each round lays its blocks out
//! anew (a random depth, block strides with padding, offsets that are multiples of 16 bytes,
//! a fixed local array or launch-sized local memory), copying them from the inputs into the
//! swizzled layout the language defines, then runs one statement over the whole depth or
//! two over its halves, synchronously or asynchronously with a wait. The accumulators start
//! from an input (they are plain arrays between statements) and every work-item stores its
//! own elements. Inputs are multiples of 1/8 below 4 in magnitude, so every result is exact:
//! the plain definition (the CPU device), `mma.sync` (sm_80 on) and `wgmma` (sm_90a) must
//! all give the interpreter's bits for every accumulator width N (8 to 256) and depth.

use crate::generator::Code;
use crate::random::Random;
use crate::run::{ArgumentValue, Comparison, KernelRun, RunArgument};
use crate::{GeneratedKernel, GeneratorOptions};
use kdsl_ir::ScalarType;
use std::collections::BTreeMap;

/// Whether `seed`'s module is a matrix-group module: seeds 2 and 18 modulo 20, one in ten,
/// none of those docs/fuzzgen.md names.
pub(crate) fn takes(seed: u64) -> bool {
    matches!(seed % 20, 2 | 18)
}

/// Local memory the blocks may take in fixed local arrays, in bytes: below the 48 KiB of
/// static local memory every GPU target gives a work-group.
const FIXED_LOCAL_BYTES: u32 = 44 * 1024;
/// In launch-sized local memory (dynamic shared memory above 48 KiB by opt-in on CUDA).
const LAUNCHED_LOCAL_BYTES: u32 = 96 * 1024;

/// Elements of each input.
const INPUT_LENGTH: u32 = 32 * 1024;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Input {
    F16,
    Bf16,
    Tf32,
}

impl Input {
    fn element(self) -> ScalarType {
        match self {
            Input::F16 => ScalarType::F16,
            Input::Bf16 => ScalarType::Bf16,
            Input::Tf32 => ScalarType::F32,
        }
    }

    /// Elements in a swizzle row of 128 bytes (`W`) and in a 16-byte chunk (`E`).
    fn row(self) -> u32 {
        128 / self.element().size_in_bytes()
    }

    fn chunk(self) -> u32 {
        16 / self.element().size_in_bytes()
    }

    /// The statements' depth step.
    fn step(self) -> u32 {
        match self {
            Input::Tf32 => 8,
            _ => 16,
        }
    }
}

/// One round's layout: depth, offsets and block strides (elements).
struct Layout {
    depth: u32,
    a_offset: u32,
    a_chunk: u32,
    /// From one matrix group's `A` to the next.
    a_group: u32,
    b_offset: u32,
    b_chunk: u32,
    a_length: u32,
    b_length: u32,
}

struct GroupGenerator {
    random: Random,
    input: Input,
    /// N of each accumulator.
    columns: Vec<u32>,
    groups_per_work_group: u32,
    work_group: u32,
    code: Code,
    /// Kernel parameters (declaration, argument) so far.
    parameters: Vec<(String, RunArgument)>,
    /// The lengths the local arrays `a_tiles` and `b_tiles` need: the largest of the rounds'.
    a_length: u32,
    b_length: u32,
    coverage: BTreeMap<String, u64>,
}

pub(crate) fn generate_module(seed: u64, options: &GeneratorOptions) -> GeneratedKernel {
    let mut random = Random::new(seed ^ 0x6772_6f75_7073_5f66);
    let inputs: Vec<Input> = [Input::F16, Input::Bf16, Input::Tf32]
        .into_iter()
        .filter(|i| options.bf16 || *i != Input::Bf16)
        .collect();
    let input = *random.pick(&inputs);
    let groups_per_work_group = 1 + random.below(2) as u32;
    let work_groups = 1 + random.below(2) as u32;
    let accumulators = 1 + random.below(2) as usize;
    let columns = (0..accumulators)
        .map(|_| {
            // N from 8 to 256 in steps of 8, the wide ones often.
            if random.percent(40) {
                *random.pick(&[64u32, 128, 256])
            } else {
                8 * (1 + random.below(32) as u32)
            }
        })
        .collect();
    let mut g = GroupGenerator {
        random,
        input,
        columns,
        groups_per_work_group,
        work_group: 128 * groups_per_work_group,
        code: Code {
            lines: Vec::new(),
            indent: 1,
        },
        parameters: Vec::new(),
        a_length: 0,
        b_length: 0,
        coverage: BTreeMap::new(),
    };
    g.note("matrix groups");
    g.note(&format!("matrix groups: {input:?}"));
    for name in ["a_in", "b_in", "c_in"] {
        let element = input.element();
        let ty = if name == "c_in" {
            ScalarType::F32
        } else {
            element
        };
        let data = g.exact_data(INPUT_LENGTH);
        g.parameters.push((
            format!("{name}: global [{ty}]"),
            RunArgument::buffer(name, ty, false, &data, Comparison::Ignored),
        ));
    }

    // Accumulators from `c_in`, as plain arrays: work-item t's element i anywhere.
    for (index, &n) in g.columns.clone().iter().enumerate() {
        let length = n / 2;
        let from = g.random.below(u64::from(INPUT_LENGTH - 256 * length)) as u32;
        g.code.line(format!("let mut acc{index}: [f32; {length}];"));
        g.code.open(format!("for i in 0u32..{length} {{"));
        g.code.line(format!(
            "acc{index}[i] = c_in[{from}u32 + get_local_id(0) * {length}u32 + i];"
        ));
        g.code.close("}");
    }
    let rounds = 1 + g.random.below(3);
    for round in 0..rounds {
        g.round(round as u32);
    }
    for (index, &n) in g.columns.clone().iter().enumerate() {
        let length = n / 2;
        g.code.open(format!("for i in 0u32..{length} {{"));
        g.code.line(format!(
            "out{index}[get_global_id(0) * {length}u32 + i] = acc{index}[i];"
        ));
        g.code.close("}");
        let items = g.work_group * work_groups;
        let data = vec![-0.375; (items * length) as usize];
        g.parameters.push((
            format!("out{index}: global mut [f32]"),
            RunArgument::buffer(
                &format!("out{index}"),
                ScalarType::F32,
                true,
                &data,
                Comparison::SameNumbers,
            ),
        ));
    }
    // The blocks in fixed local arrays where they fit, else (or sometimes) in launch-sized
    // local memory.
    let element = input.element();
    let bytes = (g.a_length + g.b_length) * element.size_in_bytes();
    let mut locals = Vec::new();
    let launched = bytes > FIXED_LOCAL_BYTES || g.random.percent(30);
    for (memory, length) in [("a_tiles", g.a_length), ("b_tiles", g.b_length)] {
        if launched {
            g.note("matrix groups: launch-sized local memory");
            g.parameters.push((
                format!("{memory}: local mut [{element}]"),
                RunArgument {
                    name: memory.into(),
                    value: ArgumentValue::Local {
                        element,
                        length: u64::from(length),
                    },
                    comparison: Comparison::Ignored,
                },
            ));
        } else {
            locals.push(format!("local {memory}: [{element}; {length}];"));
        }
    }

    let mut shuffled = std::mem::take(&mut g.parameters);
    g.random.shuffle(&mut shuffled);
    let (width, chunk) = (input.row(), input.chunk());
    let mut source = vec![
        format!("// fuzzgen seed {seed}: matrix-group tiles, {input:?} inputs"),
        "// Where element x of a local array lies in the swizzled layout.".into(),
        "fn swizzled(x: u32) -> u32 {".into(),
        format!("    return x ^ (x / {width}u32 % 8u32 * {chunk}u32);"),
        "}".into(),
        String::new(),
    ];
    if g.random.percent(50) {
        source.push(format!("#[work_group_size({})]", g.work_group));
    }
    let declarations: Vec<&str> = shuffled.iter().map(|(d, _)| d.as_str()).collect();
    source.push(format!(
        "kernel fuzz_groups({}) {{",
        declarations.join(", ")
    ));
    for local in &locals {
        source.push(format!("    {local}"));
    }
    source.push("    let group = get_matrix_group_id();".into());
    source.extend(std::mem::take(&mut g.code.lines));
    source.push("}".into());
    let run = KernelRun {
        kernel: "fuzz_groups".into(),
        dimensions: 1,
        global: [g.work_group * work_groups, 1, 1],
        local: [g.work_group, 1, 1],
        arguments: shuffled.into_iter().map(|(_, a)| a).collect(),
        sub_group_size_probe: None,
    };
    GeneratedKernel {
        seed,
        source: source.join("\n") + "\n",
        runs: vec![run],
        uses_sub_groups: false,
        may_be_undefined: false,
        coverage: g.coverage,
        needs_sm: 0,
        matrix_groups: true,
    }
}

impl GroupGenerator {
    fn note(&mut self, construct: &str) {
        *self.coverage.entry(construct.to_string()).or_default() += 1;
    }

    /// Multiples of 1/8 below 4 in magnitude: products and their sums are exact in `f32`.
    fn exact_data(&mut self, length: u32) -> Vec<f64> {
        (0..length)
            .map(|_| self.random.between(-31, 31) as f64 / 8.0)
            .collect()
    }

    /// Padding of 0 to 3 chunks (16 bytes each), in elements.
    fn padding(&mut self) -> u32 {
        self.random.below(4) as u32 * self.input.chunk()
    }

    /// A layout for depth `depth` and accumulator width `n` that fits launch-sized local
    /// memory ([`LAUNCHED_LOCAL_BYTES`]).
    fn layout(&mut self, depth: u32, n: u32) -> Option<Layout> {
        let input = self.input;
        let (width, chunk) = (input.row(), input.chunk());
        let a_offset = self.padding()
            + if self.random.percent(30) {
                64 * chunk
            } else {
                0
            };
        let a_chunk = 64 * width + self.padding();
        let a_blocks = depth.div_ceil(width);
        let a_group = a_blocks * a_chunk + self.padding();
        // The last row of a block is whole: the swizzle moves elements within 128-byte rows.
        let a_length = a_offset + self.groups_per_work_group * a_group + width;
        let b_offset = self.padding();
        let (b_chunk, b_blocks) = match input {
            Input::Tf32 => (n * 32 + self.padding(), depth.div_ceil(32)),
            _ => (depth * 64 + self.padding(), n.div_ceil(64)),
        };
        let b_length = b_offset + b_blocks * b_chunk + width;
        let bytes = (a_length + b_length) * input.element().size_in_bytes();
        (bytes <= LAUNCHED_LOCAL_BYTES).then_some(Layout {
            depth,
            a_offset,
            a_chunk,
            a_group,
            b_offset,
            b_chunk,
            a_length,
            b_length,
        })
    }

    /// One round: new blocks for one accumulator, copied into local memory, multiplied.
    fn round(&mut self, round: u32) {
        let input = self.input;
        let accumulator = self.random.below(self.columns.len() as u64) as usize;
        let n = self.columns[accumulator];
        let step = input.step();
        // A depth whose layout fits: halved until it does (the shallowest always fits).
        let mut depth = step * (1 + self.random.below(u64::from(128 / step)) as u32);
        let layout = loop {
            match self.layout(depth, n) {
                Some(layout) => break layout,
                None if depth > step => depth = (depth / 2).max(step) / step * step,
                None => panic!("no layout of depth {depth} for N = {n} fits"),
            }
        };
        self.a_length = self.a_length.max(layout.a_length);
        self.b_length = self.b_length.max(layout.b_length);
        let (a_memory, b_memory) = ("a_tiles", "b_tiles");
        if round > 0 {
            // Every group is done with the last round's blocks before they are overwritten.
            self.code.line("barrier();");
        }
        let (w, items) = (input.row(), self.work_group);
        let depth = layout.depth;
        let groups = self.groups_per_work_group;
        // A: each group's 64 x depth block from a_in, row-major there.
        let a_from = self
            .random
            .below(u64::from(INPUT_LENGTH - groups * 64 * depth)) as u32;
        self.code.open(format!(
            "for e in get_local_id(0)..{}u32 step {items}u32 {{",
            groups * 64 * depth
        ));
        self.code.line(format!("let g = e / {}u32;", 64 * depth));
        self.code
            .line(format!("let r = e % {}u32 / {depth}u32;", 64 * depth));
        self.code.line(format!("let c = e % {depth}u32;"));
        self.code.line(format!(
            "{a_memory}[swizzled({}u32 + g * {}u32 + c / {w}u32 * {}u32 + r * {w}u32 + c % {w}u32)] = a_in[{a_from}u32 + e];",
            layout.a_offset, layout.a_group, layout.a_chunk
        ));
        self.code.close("}");
        // B: depth x n, row-major in b_in.
        let b_from = self.random.below(u64::from(INPUT_LENGTH - depth * n)) as u32;
        let b_index = match input {
            Input::Tf32 => format!(
                "{}u32 + r / 32u32 * {}u32 + c * 32u32 + r % 32u32",
                layout.b_offset, layout.b_chunk
            ),
            _ => format!(
                "{}u32 + c / 64u32 * {}u32 + r * 64u32 + c % 64u32",
                layout.b_offset, layout.b_chunk
            ),
        };
        self.code.open(format!(
            "for e in get_local_id(0)..{}u32 step {items}u32 {{",
            depth * n
        ));
        self.code.line(format!("let r = e / {n}u32;"));
        self.code.line(format!("let c = e % {n}u32;"));
        self.code.line(format!(
            "{b_memory}[swizzled({b_index})] = b_in[{b_from}u32 + e];"
        ));
        self.code.close("}");
        self.code.line("barrier();");

        // One statement over the whole depth, or two over its halves where each half stays
        // inside one 128-byte row of A (and of tf32 B).
        let half = depth / 2;
        let halves = half % input.step() == 0
            && depth <= w
            && (input != Input::Tf32 || depth <= 32)
            && self.random.percent(40);
        let asynchronous = self.random.percent(50);
        let name = if asynchronous {
            self.note("matrix groups: asynchronous");
            "matrix_group_mma_async"
        } else {
            "matrix_group_mma"
        };
        let a_base = format!("{}u32 + group * {}u32", layout.a_offset, layout.a_group);
        let statements: Vec<(String, String, u32)> = if halves {
            self.note("matrix groups: two statements over halves of the depth");
            let b_step = match input {
                Input::Tf32 => half,
                _ => half * 64,
            };
            vec![
                (a_base.clone(), format!("{}u32", layout.b_offset), half),
                (
                    format!("{a_base} + {half}u32"),
                    format!("{}u32", layout.b_offset + b_step),
                    half,
                ),
            ]
        } else {
            vec![(a_base, format!("{}u32", layout.b_offset), depth)]
        };
        for (a_offset, b_offset, statement_depth) in &statements {
            self.code.line(format!(
                "{name}(acc{accumulator}, {a_memory}, {a_offset}, {}u32, {b_memory}, {b_offset}, {}u32, {statement_depth});",
                layout.a_chunk, layout.b_chunk
            ));
        }
        if asynchronous {
            if statements.len() == 2 && self.random.percent(50) {
                self.code.line("matrix_group_wait(1);");
            }
            self.code.line("matrix_group_wait(0);");
        }
        // Before the next round's copies overwrite nothing this round reads (they go to
        // arrays of their own), but the accumulator may be read: nothing to wait for.
        self.note(&format!("matrix groups: N = {n}"));
    }
}
