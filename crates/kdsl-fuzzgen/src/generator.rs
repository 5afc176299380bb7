//! The generator's state while it writes one module: the random stream, what is in scope,
//! where control is, and the text written so far.

use crate::facts::{Facts, Uniformity};
use crate::random::Random;
use crate::scope::{
    BufferParameter, Constant, Control, FunctionSignature, GrowthBudget, LocalArray, RecordBuffer,
    ScalarParameter, Scope,
};
use crate::types::{GenericDomain, ValueType};
use crate::GeneratorOptions;
use kdsl_ir::ScalarType;
use std::collections::BTreeMap;

/// Source lines with their indentation.
#[derive(Clone, Debug, Default)]
pub struct Code {
    pub lines: Vec<String>,
    pub indent: usize,
}

impl Code {
    pub fn line(&mut self, text: impl AsRef<str>) {
        self.lines
            .push(format!("{}{}", "    ".repeat(self.indent), text.as_ref()));
    }

    pub fn open(&mut self, text: impl AsRef<str>) {
        self.line(text);
        self.indent += 1;
    }

    pub fn close(&mut self, text: impl AsRef<str>) {
        self.indent -= 1;
        self.line(text);
    }

    pub fn text(&self) -> String {
        let mut text = self.lines.join("\n");
        text.push('\n');
        text
    }
}

/// The launch shape a kernel is generated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub dimensions: u32,
    pub global: [u32; 3],
    pub local: [u32; 3],
}

impl Geometry {
    pub fn total_items(&self) -> u32 {
        self.global.iter().product()
    }

    pub fn group_items(&self) -> u32 {
        self.local.iter().product()
    }

    pub fn groups(&self, dimension: usize) -> u32 {
        self.global[dimension] / self.local[dimension]
    }
}

/// A generated value: its text, type and what is known about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub text: String,
    pub ty: ValueType,
    pub facts: Facts,
}

impl Expr {
    pub fn new(text: impl Into<String>, ty: ValueType, facts: Facts) -> Expr {
        Expr {
            text: text.into(),
            ty,
            facts,
        }
    }

    pub fn uniformity(&self) -> Uniformity {
        self.facts.uniformity
    }
}

/// Where the generator is writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Kernel,
    /// A device function: no work-item queries, synchronization, local memory or atomics.
    Function,
}

/// A buffer that every work-item updates with one commutative atomic operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Accumulator {
    /// Index into the generator's buffers.
    pub buffer: usize,
    /// `atomic_add`, `atomic_min`, ...: one operation for the whole kernel, so the final
    /// contents do not depend on the order of the updates.
    pub operation: &'static str,
    /// For floats: what all additions together may add and stay exact.
    pub budget: Option<GrowthBudget>,
}

pub struct Generator<'a> {
    pub random: Random,
    pub options: &'a GeneratorOptions,
    pub code: Code,
    pub scope: Scope,
    pub control: Control,
    pub place: Place,
    next_name: u32,
    pub constants: Vec<Constant>,
    pub functions: Vec<FunctionSignature>,
    /// The function being written returns its result in a `(T, u32)` tuple.
    pub function_tuple_result: bool,
    /// Calls returning a tuple may be bound on a line before the current expression's
    /// statement (not so in an `else if` condition).
    pub tuple_bindings: bool,
    pub buffers: Vec<BufferParameter>,
    /// The fields of the module's record type `Rec` (empty when it has none).
    pub record_fields: Vec<(String, ScalarType)>,
    pub record_buffers: Vec<RecordBuffer>,
    pub scalars: Vec<ScalarParameter>,
    pub locals: Vec<LocalArray>,
    pub accumulators: Vec<Accumulator>,
    pub generic: Option<GenericDomain>,
    pub geometry: Geometry,
    /// The kernel may use sub-group operations (and reports the sub-group size).
    pub sub_groups: bool,
    /// The kernel may use barriers and local memory.
    pub barriers: bool,
    /// This kernel may contain operations whose operands the generator does not guard, so
    /// the interpreter may report undefined behaviour.
    pub unguarded: bool,
    /// Statements written so far, to bound the module's size.
    pub statements: u32,
    /// How often each construct was generated, for coverage figures.
    pub coverage: BTreeMap<&'static str, u64>,
    /// For the float output compared with a tolerance: the largest error bound stored.
    pub approximate_error: f64,
    /// Float-to-integer conversions may be generated (see
    /// [`crate::KnownBugs::avoid_intel_cpu_o0_private_array_with_float_to_integer`]).
    pub float_to_integer_conversions: bool,
    /// Private arrays may be declared.
    pub private_arrays: bool,
    /// The local array whose slots are being written (between two barriers): reading it
    /// there would race with the writes.
    pub local_being_written: Option<usize>,
    /// In a device function with a result: its type and the facts every return must meet.
    pub function_result: Option<(ScalarType, crate::facts::ValueFacts)>,
}

impl<'a> Generator<'a> {
    pub fn new(seed: u64, options: &'a GeneratorOptions, geometry: Geometry) -> Generator<'a> {
        Generator {
            random: Random::new(seed),
            options,
            code: Code::default(),
            scope: Scope::default(),
            control: Control::top_level(true),
            place: Place::Kernel,
            next_name: 0,
            constants: Vec::new(),
            functions: Vec::new(),
            function_tuple_result: false,
            tuple_bindings: true,
            buffers: Vec::new(),
            record_fields: Vec::new(),
            record_buffers: Vec::new(),
            scalars: Vec::new(),
            locals: Vec::new(),
            accumulators: Vec::new(),
            generic: None,
            geometry,
            sub_groups: false,
            barriers: false,
            unguarded: false,
            statements: 0,
            coverage: BTreeMap::new(),
            approximate_error: 0.0,
            function_result: None,
            local_being_written: None,
            float_to_integer_conversions: true,
            private_arrays: options.private_arrays,
        }
    }

    /// A fresh name with the given prefix.
    pub fn fresh(&mut self, prefix: &str) -> String {
        self.next_name += 1;
        format!("{prefix}{}", self.next_name)
    }

    pub fn note(&mut self, construct: &'static str) {
        *self.coverage.entry(construct).or_insert(0) += 1;
    }

    pub fn percent(&mut self, percent: u64) -> bool {
        self.random.percent(percent)
    }

    /// The scalar types expressions may have here.
    pub fn value_types(&self) -> Vec<ScalarType> {
        ScalarType::ALL
            .into_iter()
            .filter(|&ty| self.type_allowed(ty))
            .collect()
    }

    pub fn type_allowed(&self, ty: ScalarType) -> bool {
        match ty {
            ScalarType::F16 => self.options.f16,
            ScalarType::Bf16 => self.options.bf16,
            ScalarType::F64 => self.options.f64,
            _ => true,
        }
    }

    /// The generic domain's integer interval.
    pub fn generic_interval(&self) -> (i128, i128) {
        self.generic
            .as_ref()
            .map(|domain| (domain.low, domain.high))
            .unwrap_or((0, 0))
    }

    /// Own output elements are not read back (nor updated atomically or by compound
    /// assignment): see [`crate::KnownBugs::avoid_intel_cpu_noalias_reload_after_barrier`].
    pub fn output_reads_avoided(&self) -> bool {
        self.barriers
            && self
                .options
                .known_bugs
                .avoid_intel_cpu_noalias_reload_after_barrier
    }

    /// Sub-group operations are allowed at this point of the program.
    pub fn sub_group_operations_allowed(&self) -> bool {
        self.sub_groups && self.place == Place::Kernel && self.control.sub_group_uniform
    }
}
