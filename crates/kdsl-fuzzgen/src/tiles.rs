//! Modules on sub-group matrix tiles (docs/language.md, "Matrix tiles"): one kernel whose
//! sub-groups load `A`, `B` and `C` tiles from buffers, local arrays or launch-sized local
//! memory, at offsets and strides that depend on the sub-group and on uniform loops, multiply
//! them (also under sub-group uniform branches) and store their accumulators to regions of
//! their own. Float inputs are multiples of 1/8 below 4 in magnitude, so every product and
//! every partial sum is exact in `f32` whatever the order (the matrix units' too) and tf32
//! rounding changes nothing; integer inputs are any 8-bit values, whose `i32` sums wrap the
//! same way everywhere. Every target must so give the interpreter's bits.
//!
//! Offsets and strides keep the alignment that matrix units need (a tile's first element
//! 32 bytes aligned, 16 for 8-bit inputs; strides a multiple of 16 bytes), so the modules
//! also run on a GPU (`fuzzgen-pack`).

use crate::generator::Code;
use crate::random::Random;
use crate::run::{ArgumentValue, Comparison, KernelRun, RunArgument};
use crate::{GeneratedKernel, GeneratorOptions};
use kdsl_ir::ScalarType;
use std::collections::BTreeMap;

/// Whether `seed`'s module is a tile module: one seed in ten, none of those docs/fuzzgen.md
/// names (their modules stay what they were).
pub(crate) fn takes(seed: u64) -> bool {
    seed % 10 == 6
}

/// A tile shape of the language, with what the generator needs to know of it.
#[derive(Clone, Copy, Debug)]
struct Shape {
    name: &'static str,
    input: ScalarType,
    accumulator: ScalarType,
    /// Rows and columns of `A` and of `B`.
    a: (u32, u32),
    b: (u32, u32),
    /// The first NVIDIA processor (sm_XX) with tensor-core instructions for it.
    needs_sm: u32,
}

const SHAPES: [Shape; 5] = [
    Shape {
        name: "f16 m16n16k16",
        input: ScalarType::F16,
        accumulator: ScalarType::F32,
        a: (16, 16),
        b: (16, 16),
        needs_sm: 70,
    },
    Shape {
        name: "bf16 m16n16k16",
        input: ScalarType::Bf16,
        accumulator: ScalarType::F32,
        a: (16, 16),
        b: (16, 16),
        needs_sm: 80,
    },
    Shape {
        name: "tf32 m16n16k8",
        input: ScalarType::F32,
        accumulator: ScalarType::F32,
        a: (16, 8),
        b: (8, 16),
        needs_sm: 80,
    },
    Shape {
        name: "i8 m16n16k16",
        input: ScalarType::I8,
        accumulator: ScalarType::I32,
        a: (16, 16),
        b: (16, 16),
        needs_sm: 72,
    },
    Shape {
        name: "u8 m16n16k16",
        input: ScalarType::U8,
        accumulator: ScalarType::I32,
        a: (16, 16),
        b: (16, 16),
        needs_sm: 72,
    },
];

/// Elements of every input buffer and local copy.
const INPUT_LENGTH: u32 = 2048;
/// Elements of `f32` or `i32` from one stored accumulator to the next: room for 16 rows at
/// the widest store stride, 32.
const STORE_REGION: u32 = 512;
/// Store strides (`f32` or `i32` elements): multiples of 16 bytes, at least a row.
const STORE_STRIDES: [u32; 4] = [16, 20, 24, 32];
/// The values a stride parameter may take: multiples of 16 bytes for every input type.
const STRIDE_PARAMETER_VALUES: [u32; 3] = [16, 32, 48];

/// Elements of `ty` in `bytes` bytes.
fn elements(bytes: u32, ty: ScalarType) -> u32 {
    bytes / ty.size_in_bytes()
}

impl Shape {
    fn tile_length(&self, (rows, columns): (u32, u32)) -> u32 {
        rows * columns
    }

    fn integer(&self) -> bool {
        self.accumulator == ScalarType::I32
    }

    /// Offsets of `A` and `B` tiles are multiples of this many elements (32 bytes; 16 for
    /// 8-bit inputs).
    fn input_offset_unit(&self) -> u32 {
        if self.integer() {
            16
        } else {
            elements(32, self.input)
        }
    }

    /// Strides of `A` and `B` tiles are multiples of this many elements (16 bytes).
    fn input_stride_unit(&self) -> u32 {
        elements(16, self.input)
    }
}

/// The state of one module being written.
struct TileGenerator {
    random: Random,
    shape: Shape,
    code: Code,
    /// Where `A`, `B` and `C` tiles are loaded from: an input buffer, and maybe its copy in a
    /// local array or in launch-sized local memory.
    a_sources: Vec<String>,
    b_sources: Vec<String>,
    c_sources: Vec<String>,
    a_tiles: u32,
    b_tiles: u32,
    accumulators: u32,
    /// Store statements written so far: each has a region per sub-group.
    stores: u32,
    /// The stride parameter's value, when the kernel has one.
    stride_parameter: Option<u32>,
    /// The uniform loop being written: its variable's name and trip count.
    loop_variable: Option<(String, u32)>,
    statements: u32,
    coverage: BTreeMap<String, u64>,
}

/// A kernel parameter of the tile module and its run argument.
struct Parameter {
    declaration: String,
    argument: RunArgument,
}

pub(crate) fn generate_module(seed: u64, options: &GeneratorOptions) -> GeneratedKernel {
    let mut random = Random::new(seed ^ 0x7469_6c65_735f_6675);
    let shapes: Vec<Shape> = SHAPES
        .iter()
        .copied()
        .filter(|s| options.bf16 || s.input != ScalarType::Bf16)
        .collect();
    let shape = *random.pick(&shapes);
    let group_size = *random.pick(&[64u32, 128]);
    let groups = 1 + random.below(2) as u32;
    let mut g = TileGenerator {
        random,
        shape,
        code: Code {
            lines: Vec::new(),
            indent: 1,
        },
        a_sources: Vec::new(),
        b_sources: Vec::new(),
        c_sources: Vec::new(),
        a_tiles: 0,
        b_tiles: 0,
        accumulators: 0,
        stores: 0,
        stride_parameter: None,
        loop_variable: None,
        statements: 0,
        coverage: BTreeMap::new(),
    };
    g.note("matrix tiles");
    g.note(&format!("matrix tiles: {}", shape.name));
    let mut parameters = Vec::new();
    let mut locals = Vec::new();
    let mut staging = Code {
        lines: Vec::new(),
        indent: 1,
    };
    for (role, element) in [
        ("a", shape.input),
        ("b", shape.input),
        ("c", shape.accumulator),
    ] {
        let input = format!("{role}_in");
        let data = g.input_data(element);
        parameters.push(Parameter {
            declaration: format!("{input}: global [{element}]"),
            argument: RunArgument::buffer(&input, element, false, &data, Comparison::Ignored),
        });
        let mut sources = vec![input.clone()];
        // A copy in local memory, fixed or sized at launch, filled by the whole group.
        if g.random.percent(50) {
            let copy = format!("{role}_local");
            if g.random.percent(50) {
                locals.push(format!("local {copy}: [{element}; {INPUT_LENGTH}];"));
                g.note("matrix tiles: from a local array");
            } else {
                parameters.push(Parameter {
                    declaration: format!("{copy}: local mut [{element}]"),
                    argument: RunArgument {
                        name: copy.clone(),
                        value: ArgumentValue::Local {
                            element,
                            length: u64::from(INPUT_LENGTH),
                        },
                        comparison: Comparison::Ignored,
                    },
                });
                g.note("matrix tiles: from launch-sized local memory");
            }
            staging.open(format!(
                "for e in get_local_id(0)..{INPUT_LENGTH}u32 step {group_size}u32 {{"
            ));
            staging.line(format!("{copy}[e] = {input}[e];"));
            staging.close("}");
            sources.push(copy);
        }
        match role {
            "a" => g.a_sources = sources,
            "b" => g.b_sources = sources,
            _ => g.c_sources = sources,
        }
    }
    if g.random.percent(40) {
        let value = *g.random.pick(&STRIDE_PARAMETER_VALUES);
        g.stride_parameter = Some(value);
        parameters.push(Parameter {
            declaration: "stride: u32".into(),
            argument: RunArgument {
                name: "stride".into(),
                value: ArgumentValue::Scalar {
                    ty: ScalarType::U32,
                    bits: u64::from(value),
                },
                comparison: Comparison::Ignored,
            },
        });
    }

    // Every tile starts loaded (or filled), then random statements, then every accumulator
    // is stored.
    g.a_tiles = 1 + g.random.below(2) as u32;
    g.b_tiles = 1 + g.random.below(2) as u32;
    g.accumulators = 1 + g.random.below(2) as u32;
    for tile in 0..g.a_tiles {
        g.load_input(true, tile);
    }
    for tile in 0..g.b_tiles {
        g.load_input(false, tile);
    }
    for accumulator in 0..g.accumulators {
        g.start_accumulator(accumulator);
    }
    let count = 2 + g.random.below(5);
    for _ in 0..count {
        g.statement(0);
    }
    for accumulator in 0..g.accumulators {
        g.store(accumulator);
    }

    let (accumulator, input) = (shape.accumulator, shape.input);
    let max_sub_groups = group_size / 4;
    let out_length = groups * max_sub_groups * g.stores * STORE_REGION;
    let pattern = if shape.integer() { -3.0 } else { -0.375 };
    let out_data = vec![pattern; out_length as usize];
    let out_comparison = if shape.integer() {
        Comparison::Exact
    } else {
        Comparison::SameNumbers
    };
    parameters.push(Parameter {
        declaration: format!("out: global mut [{accumulator}]"),
        argument: RunArgument::buffer("out", accumulator, true, &out_data, out_comparison),
    });
    parameters.push(Parameter {
        declaration: "sub_group_lanes: global mut [u32]".into(),
        argument: RunArgument::buffer(
            "sub_group_lanes",
            ScalarType::U32,
            true,
            &[0.0],
            Comparison::Exact,
        ),
    });
    // Parameters in any order.
    let mut shuffled = parameters;
    g.random.shuffle(&mut shuffled);
    let probe = shuffled
        .iter()
        .position(|p| p.argument.name == "sub_group_lanes");

    let mut source = vec![
        format!(
            "// fuzzgen seed {seed}: sub-group matrix tiles, {}",
            shape.name
        ),
        format!("const STORES: u32 = {};", g.stores),
        format!("const REGION: u32 = {STORE_REGION};"),
        String::new(),
    ];
    if g.random.percent(50) {
        source.push(format!("#[work_group_size({group_size})]"));
    }
    let declarations: Vec<&str> = shuffled.iter().map(|p| p.declaration.as_str()).collect();
    source.push(format!("kernel fuzz_tiles({}) {{", declarations.join(", ")));
    for local in &locals {
        source.push(format!("    {local}"));
    }
    source.push("    let lanes = sub_group_size();".into());
    source.push("    if get_global_id(0) == 0u32 {".into());
    source.push("        sub_group_lanes[0] = lanes;".into());
    source.push("    }".into());
    source.push("    let sg = get_group_id(0) * get_num_sub_groups() + get_sub_group_id();".into());
    if !staging.lines.is_empty() {
        source.extend(staging.lines);
        source.push("    barrier();".into());
    }
    for tile in 0..g.a_tiles {
        source.push(format!(
            "    let mut a{tile}: [{input}; {}];",
            shape.tile_length(shape.a)
        ));
    }
    for tile in 0..g.b_tiles {
        source.push(format!(
            "    let mut b{tile}: [{input}; {}];",
            shape.tile_length(shape.b)
        ));
    }
    for tile in 0..g.accumulators {
        source.push(format!("    let mut acc{tile}: [{accumulator}; 256];"));
    }
    source.extend(g.code.lines);
    source.push("}".into());

    let run = KernelRun {
        kernel: "fuzz_tiles".into(),
        dimensions: 1,
        global: [group_size * groups, 1, 1],
        local: [group_size, 1, 1],
        arguments: shuffled.into_iter().map(|p| p.argument).collect(),
        sub_group_size_probe: probe,
    };
    GeneratedKernel {
        seed,
        source: source.join("\n") + "\n",
        runs: vec![run],
        uses_sub_groups: true,
        may_be_undefined: false,
        coverage: g.coverage,
        needs_sm: shape.needs_sm,
        matrix_groups: false,
    }
}

impl TileGenerator {
    fn note(&mut self, construct: &str) {
        *self.coverage.entry(construct.to_string()).or_default() += 1;
    }

    /// An input's data: floats k / 8 with |k| <= 31, so products are multiples of 1/64 below
    /// 16 and sums of them stay exact in `f32`; integers anywhere in the type's range.
    fn input_data(&mut self, element: ScalarType) -> Vec<f64> {
        (0..INPUT_LENGTH)
            .map(|_| match element {
                ScalarType::I8 => self.random.between(-128, 127) as f64,
                ScalarType::U8 => self.random.between(0, 255) as f64,
                ScalarType::I32 => self.random.between(-100_000, 100_000) as f64,
                _ => self.random.between(-31, 31) as f64 / 8.0,
            })
            .collect()
    }

    /// A stride of `unit`-element steps for a tile of `columns` columns: the parameter, or a
    /// constant from `unit` (rows overlapping, which loads allow) to four rows' worth.
    fn input_stride(&mut self, unit: u32, columns: u32) -> (String, u32) {
        if let Some(value) = self.stride_parameter {
            if self.random.percent(40) {
                self.note("matrix tiles: stride parameter");
                return ("stride".into(), value);
            }
        }
        let steps = 1 + self.random.below(u64::from(4 * columns / unit)) as u32;
        let stride = steps * unit;
        (format!("{stride}u32"), stride)
    }

    /// An offset, a multiple of `unit`, that keeps a tile of `extent` elements inside
    /// `length`: a constant, plus sometimes a term of the sub-group and of the loop variable.
    fn offset(&mut self, unit: u32, extent: u32, length: u32) -> String {
        let mut room = (length - extent) / unit;
        let mut terms = Vec::new();
        if let Some((variable, trips)) = self.loop_variable.clone() {
            if trips > 1 && room >= trips - 1 && self.random.percent(70) {
                let step = 1 + self.random.below(u64::from(room / (trips - 1)).min(8)) as u32;
                room -= step * (trips - 1);
                terms.push(format!("{variable} * {}u32", step * unit));
                self.note("matrix tiles: offset from a loop");
            }
        }
        if room >= 1 && self.random.percent(60) {
            let period = 2 + self.random.below(3) as u32;
            let step = 1 + self.random.below(u64::from(room / (period - 1)).min(6)) as u32;
            if step * (period - 1) <= room {
                room -= step * (period - 1);
                terms.push(format!("sg % {period}u32 * {}u32", step * unit));
                self.note("matrix tiles: offset from the sub-group");
            }
        }
        let base = self.random.below(u64::from(room.min(16)) + 1) as u32 * unit;
        terms.insert(0, format!("{base}u32"));
        terms.join(" + ")
    }

    /// `matrix_load_a` (`a`) or `matrix_load_b` into tile `tile`.
    fn load_input(&mut self, a: bool, tile: u32) {
        let shape = self.shape;
        let (rows, columns) = if a { shape.a } else { shape.b };
        let sources = if a { &self.a_sources } else { &self.b_sources };
        let memory = self.random.pick(sources).clone();
        let (stride, stride_value) = self.input_stride(shape.input_stride_unit(), columns);
        let extent = (rows - 1) * stride_value + columns;
        let offset = self.offset(shape.input_offset_unit(), extent, INPUT_LENGTH);
        let (operation, name) = if a {
            ("matrix_load_a", format!("a{tile}"))
        } else {
            ("matrix_load_b", format!("b{tile}"))
        };
        self.note(&format!("matrix tiles: {operation}"));
        self.code.line(format!(
            "{operation}({name}, {memory}, {offset}, {stride});"
        ));
        self.statements += 1;
    }

    /// `matrix_fill` or `matrix_load_c` into accumulator `tile`.
    fn start_accumulator(&mut self, tile: u32) {
        if self.random.percent(50) {
            let value = if self.shape.integer() {
                format!("{}i32", self.random.between(-50, 50))
            } else {
                let value = self.random.between(-31, 31) as f64 / 8.0;
                format!("{value:?}")
            };
            self.note("matrix tiles: matrix_fill");
            self.code.line(format!("matrix_fill(acc{tile}, {value});"));
        } else {
            let memory = self.random.pick(&self.c_sources).clone();
            let (stride, stride_value) = self.input_stride(4, 16);
            let extent = 15 * stride_value + 16;
            let offset = self.offset(8, extent, INPUT_LENGTH);
            self.note("matrix tiles: matrix_load_c");
            self.code.line(format!(
                "matrix_load_c(acc{tile}, {memory}, {offset}, {stride});"
            ));
        }
        self.statements += 1;
    }

    /// `matrix_store` of accumulator `tile` to a region of its own in every sub-group.
    fn store(&mut self, tile: u32) {
        let stride = *self.random.pick(&STORE_STRIDES);
        let room = (STORE_REGION - (15 * stride + 16)) / 8;
        let within = self.random.below(u64::from(room.min(4)) + 1) as u32 * 8;
        let slot = self.stores;
        self.stores += 1;
        self.note("matrix tiles: matrix_store");
        self.code.line(format!(
            "matrix_store(acc{tile}, out, (sg * STORES + {slot}u32) * REGION + {within}u32, {stride}u32);"
        ));
        self.statements += 1;
    }

    fn mma(&mut self) {
        let d = self.random.below(u64::from(self.accumulators)) as u32;
        let c = if self.random.percent(70) {
            d
        } else {
            self.random.below(u64::from(self.accumulators)) as u32
        };
        let a = self.random.below(u64::from(self.a_tiles));
        let b = self.random.below(u64::from(self.b_tiles));
        self.note("matrix tiles: matrix_mma");
        self.code
            .line(format!("matrix_mma(acc{d}, a{a}, b{b}, acc{c});"));
        self.statements += 1;
    }

    /// One statement at loop and branch depth `depth`.
    fn statement(&mut self, depth: u32) {
        let nested = depth < 2 && self.statements < 24;
        let weights = [
            4,                              // reload A
            4,                              // reload B
            2,                              // restart an accumulator
            8,                              // multiply
            if depth == 0 { 2 } else { 1 }, // store
            if nested && self.loop_variable.is_none() {
                3
            } else {
                0
            },
            if nested { 2 } else { 0 },
        ];
        match self.random.weighted(&weights) {
            0 => {
                let tile = self.random.below(u64::from(self.a_tiles)) as u32;
                self.load_input(true, tile);
            }
            1 => {
                let tile = self.random.below(u64::from(self.b_tiles)) as u32;
                self.load_input(false, tile);
            }
            2 => {
                let tile = self.random.below(u64::from(self.accumulators)) as u32;
                self.start_accumulator(tile);
            }
            3 => self.mma(),
            4 => {
                let tile = self.random.below(u64::from(self.accumulators)) as u32;
                self.store(tile);
            }
            5 => {
                // A uniform loop: every sub-group takes every trip.
                let trips = 2 + self.random.below(2) as u32;
                let variable = format!("r{depth}");
                self.note("matrix tiles: in a loop");
                self.code
                    .open(format!("for {variable} in 0u32..{trips} {{"));
                self.loop_variable = Some((variable, trips));
                for _ in 0..1 + self.random.below(3) {
                    self.statement(depth + 1);
                }
                self.loop_variable = None;
                self.code.close("}");
            }
            _ => {
                // A branch the whole sub-group takes one way.
                let condition = if self.random.percent(50) {
                    "get_sub_group_id() % 2u32 == 0u32".to_string()
                } else {
                    format!("sg % 3u32 == {}u32", self.random.below(3))
                };
                self.note("matrix tiles: under a sub-group uniform branch");
                self.code.open(format!("if {condition} {{"));
                self.statement(depth + 1);
                if self.random.percent(50) {
                    self.code.close("} else {");
                    self.code.indent += 1;
                    self.statement(depth + 1);
                }
                self.code.close("}");
            }
        }
    }
}
