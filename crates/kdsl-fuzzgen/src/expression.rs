//! Typed expression trees: every expression is built for a type and a need (how exact and how
//! uniform it must be), so the module type-checks by construction and its results are the
//! same on every target.

use crate::facts::{
    cast_to_float, cast_to_integer, exactly_representable, interval_or_wrapped, Facts, FloatFacts,
    Uniformity, ValueFacts,
};
use crate::generator::{Expr, Generator, Place};
use crate::scope::{BufferUse, FunctionParameter, LocalShape, LocalUse};
use crate::types::{
    float_literal, integer_literal, integer_range, plain_integer_literal, precision_bits,
    unit_in_last_place, ValueType, INTEGER_TYPES, SUB_GROUP_TYPES,
};
use kdsl_ir::ScalarType;

/// What a consumer of a float value accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FloatNeed {
    /// Exact, `|v| <= magnitude`, a multiple of `2^granularity` (`granularity <= 0`).
    Exact { magnitude: f64, granularity: i32 },
    /// Exact or rounded once: the same on every target, but not for further arithmetic.
    Deterministic,
    /// May carry the error of transcendental math (only tolerance-compared outputs).
    Approximate { magnitude: f64 },
}

/// The exact need a float gets when nothing else asks: magnitudes leave room for products.
pub fn default_exact_need(ty: ScalarType) -> FloatNeed {
    let (magnitude, granularity) = match ty {
        ScalarType::F16 => (64.0, -2),
        ScalarType::F32 => (65536.0, -4),
        _ => (1073741824.0, -8),
    };
    FloatNeed::Exact {
        magnitude,
        granularity,
    }
}

/// The largest magnitude of an exact need with this granularity, capped to keep room.
fn widest_magnitude(ty: ScalarType, granularity: i32) -> f64 {
    2f64.powi(granularity + precision_bits(ty)).min(1e12)
}

/// What the result of a sub-group operation must stay within.
#[derive(Clone, Copy, Debug, PartialEq)]
enum OperandBound {
    /// An exact float need: magnitude and granularity.
    Float(f64, i32),
    /// A `T` interval.
    Generic(i128, i128),
    /// Integers wrap: no bound.
    Integer,
}

/// A value a leaf can read.
#[derive(Clone, Debug)]
enum Read {
    /// A variable, parameter or constant: its name and facts.
    Named(String, Facts),
    Buffer(usize),
    /// A field of a record buffer: the buffer's index and the field's.
    RecordField(usize, usize),
    PrivateArray(String),
    LocalArray(usize),
    /// `get_global_id(d)` and friends, with their facts.
    WorkItem(String, Facts),
}

/// Whether an expression's value comes from a `min` or `clamp` (under parentheses and casts).
fn is_minimum(text: &str) -> bool {
    let inner = text.trim_start_matches('(');
    inner.starts_with("min(") || inner.starts_with("clamp(")
}

fn interval_facts(uniformity: Uniformity, low: i128, high: i128) -> Facts {
    Facts::new(uniformity, ValueFacts::interval(low, high))
}

fn checked_interval_product(a: (i128, i128), b: (i128, i128)) -> Option<(i128, i128)> {
    let products = [
        a.0.checked_mul(b.0)?,
        a.0.checked_mul(b.1)?,
        a.1.checked_mul(b.0)?,
        a.1.checked_mul(b.1)?,
    ];
    Some((
        *products.iter().min().unwrap(),
        *products.iter().max().unwrap(),
    ))
}

impl Generator<'_> {
    // -----------------------------------------------------------------------------------------
    // Entry points.

    /// Any value of `ty` that is the same on every target (for floats: exact or rounded).
    pub fn value(&mut self, ty: ValueType, uniformity: Uniformity, depth: u32) -> Expr {
        match ty {
            ValueType::Generic => {
                let (low, high) = self.generic_interval();
                self.generic_value(low, high, uniformity, depth)
            }
            ValueType::Scalar(ScalarType::Bool) => self.bool_value(uniformity, depth),
            ValueType::Scalar(scalar) if scalar.is_float() => {
                self.float_value(scalar, FloatNeed::Deterministic, uniformity, depth)
            }
            ValueType::Scalar(scalar) => self.integer_value(scalar, uniformity, depth),
        }
    }

    /// A random scalar type for a sub-expression.
    pub fn random_type(&mut self) -> ScalarType {
        let types = self.value_types();
        *self.random.pick(&types)
    }

    pub fn random_integer_type(&mut self) -> ScalarType {
        *self.random.pick(&INTEGER_TYPES)
    }

    pub fn random_float_type(&mut self) -> ScalarType {
        let types: Vec<ScalarType> = self
            .value_types()
            .into_iter()
            .filter(|t| t.is_float())
            .collect();
        *self.random.pick(&types)
    }

    // -----------------------------------------------------------------------------------------
    // Leaves.

    /// Every readable value of type `ty` at least as uniform as `uniformity`.
    fn reads(&self, ty: ValueType, uniformity: Uniformity, approximate_allowed: bool) -> Vec<Read> {
        let mut reads = Vec::new();
        let fits = |facts: &Facts| {
            facts.uniformity <= uniformity && (approximate_allowed || !facts.is_approximate())
        };
        for variable in self.scope.variables() {
            let facts = variable.read_facts();
            if variable.ty == ty && fits(&facts) {
                reads.push(Read::Named(variable.name.clone(), facts));
            }
        }
        for parameter in &self.scalars {
            if parameter.ty == ty && fits(&parameter.facts) {
                reads.push(Read::Named(parameter.name.clone(), parameter.facts));
            }
        }
        for constant in &self.constants {
            if ValueType::Scalar(constant.ty) == ty {
                let facts = Facts::new(Uniformity::WorkGroup, constant.facts);
                reads.push(Read::Named(constant.name.clone(), facts));
            }
        }
        for (index, buffer) in self.buffers.iter().enumerate() {
            if buffer.element != ty {
                continue;
            }
            let readable = match buffer.usage {
                BufferUse::Input | BufferUse::Constant => true,
                BufferUse::Output { approximate, .. } => {
                    !approximate
                        && uniformity == Uniformity::Varying
                        && self.place == Place::Kernel
                        && !self.output_reads_avoided()
                }
                BufferUse::Accumulator | BufferUse::SubGroupProbe => false,
            };
            if readable {
                reads.push(Read::Buffer(index));
            }
        }
        for (index, buffer) in self.record_buffers.iter().enumerate() {
            let readable = if buffer.output {
                uniformity == Uniformity::Varying
                    && self.place == Place::Kernel
                    && !self.output_reads_avoided()
            } else {
                self.place == Place::Kernel
            };
            for (field, (_, field_type)) in self.record_fields.iter().enumerate() {
                if readable && ValueType::Scalar(*field_type) == ty {
                    reads.push(Read::RecordField(index, field));
                }
            }
        }
        if uniformity == Uniformity::Varying {
            for array in self.scope.arrays() {
                if ValueType::Scalar(array.element) == ty {
                    reads.push(Read::PrivateArray(array.name.clone()));
                }
            }
            if self.place == Place::Kernel {
                for (index, local) in self.locals.iter().enumerate() {
                    if ValueType::Scalar(local.element) == ty
                        && self.scope.local_readable(index)
                        && self.local_being_written != Some(index)
                    {
                        reads.push(Read::LocalArray(index));
                    }
                }
            }
        }
        if ty == ValueType::Scalar(ScalarType::U32) && self.place == Place::Kernel {
            reads.extend(self.work_item_reads(uniformity));
        }
        // One extent of each multi-dimensional buffer, where the type holds it.
        if let ValueType::Scalar(scalar) = ty {
            if scalar.is_integer() {
                for (index, buffer) in self.buffers.iter().enumerate() {
                    let Some(shape) = &buffer.shape else {
                        continue;
                    };
                    let dimension = (index + self.buffers.len()) % shape.rank();
                    let extent = i128::from(shape.extents[dimension]);
                    if extent > integer_range(scalar).1 {
                        continue;
                    }
                    let text = format!("({}.shape({dimension}) as {})", buffer.name, scalar.name());
                    let facts = interval_facts(Uniformity::WorkGroup, extent, extent);
                    reads.push(Read::Named(text, facts));
                }
            }
        }
        reads
    }

    fn work_item_reads(&self, uniformity: Uniformity) -> Vec<Read> {
        let geometry = self.geometry;
        let mut reads = Vec::new();
        for dimension in 0..geometry.dimensions as usize {
            let global = geometry.global[dimension];
            let local = geometry.local[dimension];
            let groups = geometry.groups(dimension);
            let uniform = |name: &str, value: u32| {
                Read::WorkItem(
                    format!("{name}({dimension})"),
                    interval_facts(Uniformity::WorkGroup, value.into(), value.into()),
                )
            };
            reads.push(uniform("get_local_size", local));
            reads.push(uniform("get_global_size", global));
            reads.push(uniform("get_num_groups", groups));
            reads.push(Read::WorkItem(
                format!("get_group_id({dimension})"),
                interval_facts(Uniformity::WorkGroup, 0, i128::from(groups) - 1),
            ));
            if uniformity == Uniformity::Varying {
                reads.push(Read::WorkItem(
                    format!("get_global_id({dimension})"),
                    interval_facts(Uniformity::Varying, 0, i128::from(global) - 1),
                ));
                reads.push(Read::WorkItem(
                    format!("get_local_id({dimension})"),
                    interval_facts(Uniformity::Varying, 0, i128::from(local) - 1),
                ));
            }
        }
        if self.sub_group_operations_allowed() {
            // The last sub-group of a work-group may be smaller than the others.
            if uniformity >= Uniformity::SubGroup {
                reads.push(Read::WorkItem(
                    "sub_group_size()".into(),
                    interval_facts(Uniformity::SubGroup, 1, 64),
                ));
            }
            if uniformity == Uniformity::Varying {
                reads.push(Read::WorkItem(
                    "sub_group_local_id()".into(),
                    interval_facts(Uniformity::Varying, 0, 63),
                ));
            }
        }
        reads
    }

    /// Reads one value of type `ty`, or `None` if nothing of that type is readable.
    fn read(
        &mut self,
        ty: ValueType,
        uniformity: Uniformity,
        approximate_allowed: bool,
        depth: u32,
    ) -> Option<Expr> {
        let reads = self.reads(ty, uniformity, approximate_allowed);
        if reads.is_empty() {
            return None;
        }
        let read = self.random.pick(&reads).clone();
        Some(self.materialize(read, ty, uniformity, depth))
    }

    fn materialize(
        &mut self,
        read: Read,
        ty: ValueType,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        match read {
            Read::Named(name, facts) | Read::WorkItem(name, facts) => Expr::new(name, ty, facts),
            Read::Buffer(index) => {
                let buffer = self.buffers[index].clone();
                match buffer.usage {
                    BufferUse::Output { .. } => {
                        self.note("read own output slot");
                        let place = self.own_place(index, None);
                        let facts = match ty {
                            ValueType::Scalar(scalar) => {
                                Facts::anything(scalar, Uniformity::Varying)
                            }
                            ValueType::Generic => {
                                Facts::new(Uniformity::Varying, buffer.data_facts)
                            }
                        };
                        Expr::new(place, ty, facts)
                    }
                    _ => match &buffer.shape {
                        Some(shape) => {
                            self.note(if shape.rank() == 2 {
                                "2-D buffer load"
                            } else {
                                "3-D buffer load"
                            });
                            let mut indices = Vec::new();
                            let mut joined = Uniformity::WorkGroup;
                            for &extent in &shape.extents {
                                let index = self.index_into(extent, uniformity, depth);
                                joined = joined.join(index.uniformity());
                                indices.push(index.text);
                            }
                            let facts = Facts::new(joined, buffer.data_facts);
                            let text = format!("{}[{}]", buffer.name, indices.join(", "));
                            Expr::new(text, ty, facts)
                        }
                        None => {
                            self.note("buffer load");
                            let index = self.index_into(buffer.length, uniformity, depth);
                            let facts = Facts::new(index.uniformity(), buffer.data_facts);
                            Expr::new(format!("{}[{}]", buffer.name, index.text), ty, facts)
                        }
                    },
                }
            }
            Read::PrivateArray(name) => {
                self.note("private array load");
                let array = self
                    .scope
                    .arrays()
                    .into_iter()
                    .find(|a| a.name == name)
                    .cloned()
                    .expect("a visible array");
                let mut text = array.name.clone();
                for &length in &array.dimensions {
                    let index = self.index_into(length, Uniformity::Varying, depth);
                    text += &format!("[{}]", index.text);
                }
                let value = match array.budget {
                    Some(budget) => budget.facts(),
                    None => ValueFacts::anything(array.element),
                };
                Expr::new(text, ty, Facts::new(Uniformity::Varying, value))
            }
            Read::RecordField(index, field) => {
                let buffer = self.record_buffers[index].clone();
                let (field_name, field_type) = self.record_fields[field].clone();
                if buffer.output {
                    self.note("read own record field");
                    return Expr::new(
                        format!("{}[gid].{field_name}", buffer.name),
                        ty,
                        Facts::anything(field_type, Uniformity::Varying),
                    );
                }
                self.note("record field load");
                let position = self.index_into(buffer.length, uniformity, depth);
                let facts = Facts::new(
                    position.uniformity(),
                    crate::kernel::field_facts(field_type),
                );
                Expr::new(
                    format!("{}[{}].{field_name}", buffer.name, position.text),
                    ty,
                    facts,
                )
            }
            Read::LocalArray(index) => {
                self.note("local array load");
                let local = self.locals[index].clone();
                let place = match local.shape {
                    LocalShape::Grid { rows, columns, .. } => {
                        let row = self.index_into(rows, Uniformity::Varying, depth);
                        let column = self.index_into(columns, Uniformity::Varying, depth);
                        format!("{}[{}][{}]", local.name, row.text, column.text)
                    }
                    _ => {
                        let position = self.index_into(local.length, Uniformity::Varying, depth);
                        format!("{}[{}]", local.name, position.text)
                    }
                };
                let value = match local.usage {
                    LocalUse::Exchange => local.element_facts,
                    LocalUse::Atomics if local.element.is_float() => {
                        ValueFacts::exact(local.atomic_magnitude, 0)
                    }
                    LocalUse::Atomics => ValueFacts::anything(local.element),
                };
                Expr::new(place, ty, Facts::new(Uniformity::Varying, value))
            }
        }
    }

    /// One of this work-item's own elements of output buffer `index`, as a place: the one
    /// numbered `slot` (in `0..slots`) or any.
    pub fn own_place(&mut self, index: usize, slot: Option<u32>) -> String {
        let buffer = self.buffers[index].clone();
        let BufferUse::Output { slots, .. } = buffer.usage else {
            unreachable!("an output buffer")
        };
        let Some(shape) = &buffer.shape else {
            let position = match slot {
                Some(slot) if slots > 1 => format!("((gid * {slots}u32) + {slot}u32)"),
                Some(_) => "gid".to_string(),
                None => self.own_slot(slots),
            };
            return format!("{}[{position}]", buffer.name);
        };
        // The slot's index in each of the work-item's own dimensions, the last fastest.
        let owner = shape.owner.expect("an output's shape has an owner");
        let mut rest = slot;
        let mut indices = vec![String::new(); shape.rank()];
        for dimension in (0..shape.rank()).rev() {
            let extent = shape.extents[dimension];
            indices[dimension] = if dimension == owner {
                "gid".to_string()
            } else if let Some(number) = rest {
                rest = Some(number / extent);
                format!("{}u32", number % extent)
            } else if extent > 1 && self.percent(30) {
                let depth = self.expression_depth_for_index();
                self.index_into(extent, Uniformity::Varying, depth).text
            } else {
                let value = self.random.below(u64::from(extent)) as i128;
                let ty = self.random_integer_type();
                integer_literal(value, ty, &mut self.random)
            };
        }
        self.note(if shape.rank() == 2 {
            "2-D output element"
        } else {
            "3-D output element"
        });
        format!("{}[{}]", buffer.name, indices.join(", "))
    }

    fn expression_depth_for_index(&mut self) -> u32 {
        1 + self.random.below(2) as u32
    }

    /// A shift amount of any integer type for a shifted value of type `ty`. One of another
    /// type is cast to its own type: the front end types a work-item query (`get_group_id(0)`)
    /// by its use, which for an amount is the shifted value's type, not the `u32` generated.
    pub fn shift_amount(&mut self, ty: ScalarType, uniformity: Uniformity, depth: u32) -> Expr {
        let amount_type = self.random_integer_type();
        let amount = self.integer_value(amount_type, uniformity, depth);
        if amount_type == ty {
            return amount;
        }
        let text = format!("({} as {})", amount.text, amount_type.name());
        Expr::new(text, amount.ty, amount.facts)
    }

    /// The index of one of this work-item's own output slots.
    pub fn own_slot(&mut self, slots: u32) -> String {
        let slot = self.random.below(u64::from(slots));
        if slots == 1 {
            "gid".to_string()
        } else {
            format!("((gid * {slots}u32) + {slot}u32)")
        }
    }

    /// An index in `0..length` of some integer type.
    pub fn index_into(&mut self, length: u32, uniformity: Uniformity, depth: u32) -> Expr {
        let length = i128::from(length);
        let ty = self.random_integer_type();
        let avoid_minimum = self.barriers
            && self
                .options
                .known_bugs
                .avoid_intel_cpu_minimum_index_across_barrier;
        let mut value = self.integer_value(ty, uniformity, depth.saturating_sub(1));
        if avoid_minimum && is_minimum(&value.text) {
            value = self.integer_literal(ty);
        }
        if let Some((low, high)) = value.facts.integer_interval() {
            if low >= 0 && high < length {
                return value;
            }
        }
        // A constant out of bounds is a compile-time error (E0517), not undefined behaviour:
        // only a varying index (from ids or data, never a constant) goes unguarded.
        let may_be_constant = value.uniformity() != Uniformity::Varying;
        if self.unguarded && !may_be_constant && self.percent(3) {
            self.note("unguarded index");
            return value;
        }
        let facts = interval_facts(value.uniformity(), 0, length - 1);
        let form = match self.random.below(4) {
            1 if avoid_minimum => 3,
            form => form,
        };
        let (text, index_type) = match form {
            0 => (
                format!("(({} as u64) % {length}u64)", value.text),
                ScalarType::U64,
            ),
            1 => (
                format!("min(({} as u32), {}u32)", value.text, length - 1),
                ScalarType::U32,
            ),
            2 => (
                format!("((({} as i32) & 2147483647i32) % {length}i32)", value.text),
                ScalarType::I32,
            ),
            _ => (
                format!("(({} as u32) % {length}u32)", value.text),
                ScalarType::U32,
            ),
        };
        Expr::new(text, ValueType::Scalar(index_type), facts)
    }

    // -----------------------------------------------------------------------------------------
    // Integers.

    pub fn integer_literal_value(&mut self, ty: ScalarType) -> i128 {
        let (low, high) = integer_range(ty);
        match self.random.below(8) {
            0 => low,
            1 => high,
            2 if low < 0 => -1,
            3 => self.random.between(low, high),
            _ => self.random.between(0, 16.min(high)),
        }
    }

    fn integer_literal(&mut self, ty: ScalarType) -> Expr {
        let value = self.integer_literal_value(ty);
        self.integer_constant(value, ty)
    }

    pub fn integer_constant(&mut self, value: i128, ty: ScalarType) -> Expr {
        let text = integer_literal(value, ty, &mut self.random);
        Expr::new(
            text,
            ValueType::Scalar(ty),
            interval_facts(Uniformity::WorkGroup, value, value),
        )
    }

    /// `select(c, a, b)` or, as often, the `if` expression that gives the same value (the
    /// operands have no effects, so evaluating one arm or both cannot differ). An arm holding
    /// a sub-group operation stays in `select` unless the condition is work-group uniform, where
    /// running it in one arm only would be a divergent collective.
    fn choice(&mut self, condition: &Expr, a: &Expr, b: &Expr) -> String {
        let collective = |e: &Expr| {
            ["sub_group_reduce", "sub_group_scan", "sub_group_shuffle"]
                .iter()
                .any(|name| e.text.contains(name))
        };
        let divergent = condition.uniformity() != Uniformity::WorkGroup;
        if !(divergent && (collective(a) || collective(b))) && self.random.percent(50) {
            self.note("if expression");
            format!(
                "(if {} {{ {} }} else {{ {} }})",
                condition.text, a.text, b.text
            )
        } else {
            format!("select({}, {}, {})", condition.text, a.text, b.text)
        }
    }

    pub fn integer_value(&mut self, ty: ScalarType, uniformity: Uniformity, depth: u32) -> Expr {
        let vt = ValueType::Scalar(ty);
        if depth == 0 || self.percent(20) {
            if self.percent(70) {
                if let Some(read) = self.read(vt, uniformity, false, depth) {
                    return read;
                }
            }
            return self.integer_literal(ty);
        }
        let inner = depth - 1;
        let signed = ty.is_signed_integer();
        let wide = SUB_GROUP_TYPES.contains(&ty);
        // Add, Sub, Mul, Div, Rem, And/Or/Xor, Not, Shift, Neg, Abs, Min/Max, Clamp, Select,
        // cast from integer, cast from float, cast from bool, cast from T, sub-group, call.
        let weights = [
            10,
            8,
            8,
            4,
            4,
            8,
            2,
            5,
            if signed { 2 } else { 0 },
            2,
            4,
            2,
            3,
            6,
            if self.float_to_integer_conversions {
                4
            } else {
                0
            },
            2,
            if self.generic.is_some() { 3 } else { 0 },
            if wide && self.sub_group_operations_allowed() {
                4
            } else {
                0
            },
            if self.callable(ty).is_empty() { 0 } else { 3 },
        ];
        let choice = self.random.weighted(&weights);
        let generic_range = self.generic_interval();
        let binary = |me: &mut Self, op: &str| {
            let a = me.integer_value(ty, uniformity, inner);
            let b = me.integer_value(ty, uniformity, inner);
            (a, b, op.to_string())
        };
        match choice {
            0..=2 => {
                let op = ["+", "-", "*"][choice];
                let (a, b, op) = binary(self, op);
                self.note("integer arithmetic");
                let (ia, ib) = (
                    a.facts.integer_interval().unwrap(),
                    b.facts.integer_interval().unwrap(),
                );
                let interval = match choice {
                    0 => Some((ia.0 + ib.0, ia.1 + ib.1)),
                    1 => Some((ia.0 - ib.1, ia.1 - ib.0)),
                    _ => checked_interval_product(ia, ib),
                };
                let (type_low, type_high) = integer_range(ty);
                let value = match interval {
                    Some((low, high)) => interval_or_wrapped(vt, low, high, generic_range),
                    None => ValueFacts::interval(type_low, type_high),
                };
                // Overflow is an error: where the operands' intervals allow one, wrap
                // explicitly.
                let fits = interval.is_some_and(|(low, high)| low >= type_low && high <= type_high);
                let text = if fits {
                    format!("({} {op} {})", a.text, b.text)
                } else {
                    self.note("wrapping arithmetic");
                    let wrapping = ["wrapping_add", "wrapping_sub", "wrapping_mul"][choice];
                    format!("{wrapping}({}, {})", a.text, b.text)
                };
                let uniformity_out = a.uniformity().join(b.uniformity());
                Expr::new(text, vt, Facts::new(uniformity_out, value))
            }
            3 | 4 => {
                let a = self.integer_value(ty, uniformity, inner);
                let op = if choice == 3 { "/" } else { "%" };
                let b = self.integer_value(ty, uniformity, inner);
                let (divisor, divisor_interval) = self.guarded_divisor(ty, b);
                self.note(if op == "/" {
                    "integer division"
                } else {
                    "integer remainder"
                });
                let (low, high) = a.facts.integer_interval().unwrap();
                let value = match (op, divisor_interval) {
                    // The divisor is at least 1: the quotient lies between 0 and the dividend.
                    ("/", Some(_)) => ValueFacts::interval(low.min(0), high.max(0)),
                    ("%", Some((_, largest))) => {
                        let bound = largest - 1;
                        ValueFacts::interval(low.max(-bound).min(0), high.min(bound).max(0))
                    }
                    _ => ValueFacts::anything(ty),
                };
                let uniformity_out = a.uniformity().join(divisor.uniformity());
                Expr::new(
                    format!("({} {op} {})", a.text, divisor.text),
                    vt,
                    Facts::new(uniformity_out, value),
                )
            }
            5 => {
                let op = *self.random.pick(&["&", "|", "^"]);
                let (a, b, op) = binary(self, op);
                self.note("bitwise");
                let value = match (
                    op.as_str(),
                    a.facts.integer_interval(),
                    b.facts.integer_interval(),
                ) {
                    ("&", Some((la, ha)), Some((lb, hb))) if la >= 0 || lb >= 0 => {
                        let bound = if la >= 0 && lb >= 0 {
                            ha.min(hb)
                        } else if la >= 0 {
                            ha
                        } else {
                            hb
                        };
                        ValueFacts::interval(0, bound)
                    }
                    _ => ValueFacts::anything(ty),
                };
                let uniformity_out = a.uniformity().join(b.uniformity());
                Expr::new(
                    format!("({} {op} {})", a.text, b.text),
                    vt,
                    Facts::new(uniformity_out, value),
                )
            }
            6 => {
                let a = self.integer_value(ty, uniformity, inner);
                self.note("bitwise not");
                Expr::new(
                    format!("(~{})", a.text),
                    vt,
                    Facts::anything(ty, a.uniformity()),
                )
            }
            7 => {
                let a = self.integer_value(ty, uniformity, inner);
                let amount = self.shift_amount(ty, uniformity, inner);
                let op = *self.random.pick(&["<<", ">>"]);
                self.note("shift");
                let value = match (op, a.facts.integer_interval()) {
                    (">>", Some((low, high))) if low >= 0 => ValueFacts::interval(0, high),
                    _ => ValueFacts::anything(ty),
                };
                Expr::new(
                    format!("({} {op} {})", a.text, amount.text),
                    vt,
                    Facts::new(a.uniformity().join(amount.uniformity()), value),
                )
            }
            8 => {
                let a = self.integer_value(ty, uniformity, inner);
                self.note("integer negation");
                let (low, high) = a.facts.integer_interval().unwrap();
                let value = interval_or_wrapped(vt, -high, -low, generic_range);
                // `-MIN` overflows: negate through `wrapping_sub` where MIN is possible.
                let text = if low == integer_range(ty).0 {
                    format!("wrapping_sub(0{}, {})", ty.name(), a.text)
                } else {
                    format!("(-{})", a.text)
                };
                Expr::new(text, vt, Facts::new(a.uniformity(), value))
            }
            9 => {
                let a = self.integer_value(ty, uniformity, inner);
                self.note("integer abs");
                let (low, high) = a.facts.integer_interval().unwrap();
                let (type_low, _) = integer_range(ty);
                let value = if low == type_low && signed {
                    ValueFacts::anything(ty)
                } else if low >= 0 {
                    ValueFacts::interval(low, high)
                } else {
                    ValueFacts::interval(0, low.abs().max(high.abs()))
                };
                Expr::new(
                    format!("abs({})", a.text),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            10 => {
                let (a, b, _) = binary(self, "");
                let minimum = self.percent(50);
                self.note("integer min/max");
                let (ia, ib) = (
                    a.facts.integer_interval().unwrap(),
                    b.facts.integer_interval().unwrap(),
                );
                let value = if minimum {
                    ValueFacts::interval(ia.0.min(ib.0), ia.1.min(ib.1))
                } else {
                    ValueFacts::interval(ia.0.max(ib.0), ia.1.max(ib.1))
                };
                let name = if minimum { "min" } else { "max" };
                Expr::new(
                    format!("{name}({}, {})", a.text, b.text),
                    vt,
                    Facts::new(a.uniformity().join(b.uniformity()), value),
                )
            }
            11 => {
                let a = self.integer_value(ty, uniformity, inner);
                let mut low = self.integer_literal_value(ty);
                let mut high = self.integer_literal_value(ty);
                if low > high {
                    std::mem::swap(&mut low, &mut high);
                }
                self.note("integer clamp");
                let low_text = integer_literal(low, ty, &mut self.random);
                let high_text = integer_literal(high, ty, &mut self.random);
                Expr::new(
                    format!("clamp({}, {low_text}, {high_text})", a.text),
                    vt,
                    interval_facts(a.uniformity(), low, high),
                )
            }
            12 => {
                let condition = self.bool_value(uniformity, inner);
                let (a, b, _) = binary(self, "");
                self.note("select");
                let (ia, ib) = (
                    a.facts.integer_interval().unwrap(),
                    b.facts.integer_interval().unwrap(),
                );
                let uniformity_out = condition
                    .uniformity()
                    .join(a.uniformity())
                    .join(b.uniformity());
                Expr::new(
                    self.choice(&condition, &a, &b),
                    vt,
                    interval_facts(uniformity_out, ia.0.min(ib.0), ia.1.max(ib.1)),
                )
            }
            13 => {
                let from = self.random_integer_type();
                let a = self.integer_value(from, uniformity, inner);
                self.note("cast integer to integer");
                let value = cast_to_integer(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            14 => {
                let from = self.random_float_type();
                let a = self.float_value(from, FloatNeed::Deterministic, uniformity, inner);
                self.note("cast float to integer");
                let value = cast_to_integer(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            15 => {
                let a = self.bool_value(uniformity, inner);
                self.note("cast bool to integer");
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    interval_facts(a.uniformity(), 0, 1),
                )
            }
            16 => {
                let (low, high) = self.generic_interval();
                let a = self.generic_value(low, high, uniformity, inner);
                self.note("cast T to integer");
                let (type_low, type_high) = integer_range(ty);
                let value = if low >= type_low && high <= type_high {
                    ValueFacts::interval(low, high)
                } else {
                    ValueFacts::anything(ty)
                };
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            17 => self.sub_group_operation(vt, uniformity, inner, OperandBound::Integer),
            _ => self.call(ty, uniformity, inner),
        }
    }

    /// A divisor that is never zero and never -1 (unless this kernel leaves it unguarded),
    /// with the interval it lies in.
    fn guarded_divisor(&mut self, ty: ScalarType, divisor: Expr) -> (Expr, Option<(i128, i128)>) {
        let vt = ValueType::Scalar(ty);
        if self.unguarded && self.percent(10) {
            self.note("unguarded division");
            return (divisor, None);
        }
        let (_, type_high) = integer_range(ty);
        let mask = 127.min(type_high);
        let (text, interval) = match self.random.below(3) {
            0 => (
                format!(
                    "max({}, {})",
                    divisor.text,
                    integer_literal(1, ty, &mut self.random)
                ),
                (1, type_high),
            ),
            1 if !ty.is_signed_integer() => (
                format!(
                    "({} | {})",
                    divisor.text,
                    integer_literal(1, ty, &mut self.random)
                ),
                (1, type_high),
            ),
            _ => (
                format!(
                    "(({} & {}) | {})",
                    divisor.text,
                    integer_literal(mask, ty, &mut self.random),
                    integer_literal(1, ty, &mut self.random)
                ),
                (1, mask),
            ),
        };
        (
            Expr::new(
                text,
                vt,
                interval_facts(divisor.uniformity(), interval.0, interval.1),
            ),
            Some(interval),
        )
    }

    /// `value` forced into `low..=high` (an integer type).
    pub fn fit_integer(&mut self, value: Expr, low: i128, high: i128) -> Expr {
        let ty = value.ty.scalar().expect("a scalar integer");
        if let Some((have_low, have_high)) = value.facts.integer_interval() {
            if have_low >= low && have_high <= high {
                return value;
            }
        }
        let (_, type_high) = integer_range(ty);
        let uniformity = value.uniformity();
        let vt = ValueType::Scalar(ty);
        if low == 0 && !ty.is_signed_integer() && high < type_high && self.percent(50) {
            let modulus = integer_literal(high + 1, ty, &mut self.random);
            return Expr::new(
                format!("({} % {modulus})", value.text),
                vt,
                interval_facts(uniformity, 0, high),
            );
        }
        let low_text = integer_literal(low, ty, &mut self.random);
        let high_text = integer_literal(high, ty, &mut self.random);
        Expr::new(
            format!("clamp({}, {low_text}, {high_text})", value.text),
            vt,
            interval_facts(uniformity, low, high),
        )
    }

    // -----------------------------------------------------------------------------------------
    // Booleans.

    pub fn bool_value(&mut self, uniformity: Uniformity, depth: u32) -> Expr {
        let vt = ValueType::Scalar(ScalarType::Bool);
        let bool_facts = |u| Facts::new(u, ValueFacts::Bool);
        if depth == 0 || self.percent(10) {
            if self.percent(50) {
                if let Some(read) = self.read(vt, uniformity, false, depth) {
                    return read;
                }
            }
            let value = self.percent(50);
            return Expr::new(value.to_string(), vt, bool_facts(Uniformity::WorkGroup));
        }
        let inner = depth - 1;
        // integer comparison, float comparison, T comparison, not, &&/||, &|^, ==/!= on
        // bools, cast to bool, select.
        let weights = [
            12,
            6,
            if self.generic.is_some() { 3 } else { 0 },
            3,
            5,
            3,
            2,
            3,
            2,
        ];
        let comparison = *self.random.pick(&["==", "!=", "<", "<=", ">", ">="]);
        match self.random.weighted(&weights) {
            0 => {
                let ty = self.random_integer_type();
                let a = self.integer_value(ty, uniformity, inner);
                let b = self.integer_value(ty, uniformity, inner);
                self.note("integer comparison");
                let u = a.uniformity().join(b.uniformity());
                Expr::new(
                    format!("({} {comparison} {})", a.text, b.text),
                    vt,
                    bool_facts(u),
                )
            }
            1 => {
                let ty = self.random_float_type();
                let a = self.float_value(ty, FloatNeed::Deterministic, uniformity, inner);
                let b = self.float_value(ty, FloatNeed::Deterministic, uniformity, inner);
                self.note("float comparison");
                let u = a.uniformity().join(b.uniformity());
                Expr::new(
                    format!("({} {comparison} {})", a.text, b.text),
                    vt,
                    bool_facts(u),
                )
            }
            2 => {
                let (low, high) = self.generic_interval();
                let a = self.generic_value(low, high, uniformity, inner);
                let b = self.generic_value(low, high, uniformity, inner);
                self.note("T comparison");
                let u = a.uniformity().join(b.uniformity());
                Expr::new(
                    format!("({} {comparison} {})", a.text, b.text),
                    vt,
                    bool_facts(u),
                )
            }
            3 => {
                let a = self.bool_value(uniformity, inner);
                self.note("logical not");
                Expr::new(format!("(!{})", a.text), vt, bool_facts(a.uniformity()))
            }
            4 => {
                let op = *self.random.pick(&["&&", "||"]);
                let a = self.bool_value(uniformity, inner);
                // The right side runs only where the left does not decide: if the left
                // differs between lanes, so does whether the right runs.
                let saved = self.control;
                if a.uniformity() > Uniformity::WorkGroup {
                    self.control.work_group_uniform = false;
                }
                if a.uniformity() > Uniformity::SubGroup {
                    self.control.sub_group_uniform = false;
                }
                let b = self.bool_value(uniformity, inner);
                self.control = saved;
                self.note("short-circuit logic");
                let u = a.uniformity().join(b.uniformity());
                Expr::new(format!("({} {op} {})", a.text, b.text), vt, bool_facts(u))
            }
            5 => {
                let op = *self.random.pick(&["&", "|", "^"]);
                let a = self.bool_value(uniformity, inner);
                let b = self.bool_value(uniformity, inner);
                self.note("bool bitwise");
                let u = a.uniformity().join(b.uniformity());
                Expr::new(format!("({} {op} {})", a.text, b.text), vt, bool_facts(u))
            }
            6 => {
                let op = *self.random.pick(&["==", "!="]);
                let a = self.bool_value(uniformity, inner);
                let b = self.bool_value(uniformity, inner);
                self.note("bool equality");
                let u = a.uniformity().join(b.uniformity());
                Expr::new(format!("({} {op} {})", a.text, b.text), vt, bool_facts(u))
            }
            7 => {
                let a = if self.percent(50) {
                    let ty = self.random_integer_type();
                    self.integer_value(ty, uniformity, inner)
                } else {
                    let ty = self.random_float_type();
                    self.float_value(ty, FloatNeed::Deterministic, uniformity, inner)
                };
                self.note("cast to bool");
                Expr::new(
                    format!("({} as bool)", a.text),
                    vt,
                    bool_facts(a.uniformity()),
                )
            }
            _ => {
                let condition = self.bool_value(uniformity, inner);
                let a = self.bool_value(uniformity, inner);
                let b = self.bool_value(uniformity, inner);
                self.note("select");
                let u = condition
                    .uniformity()
                    .join(a.uniformity())
                    .join(b.uniformity());
                Expr::new(self.choice(&condition, &a, &b), vt, bool_facts(u))
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Floats.

    /// A literal within an exact need.
    fn float_literal_within(&mut self, ty: ScalarType, magnitude: f64, granularity: i32) -> Expr {
        let literal_granularity = self.random.between(i128::from(granularity.max(-4)), 0) as i32;
        let step = 2f64.powi(literal_granularity);
        let limit = (magnitude / step).floor().clamp(0.0, 64.0) as i128;
        let steps = self.random.between(-limit, limit);
        let value = steps as f64 * step;
        let (magnitude_out, granularity_out) = if value == 0.0 {
            (0.0, 0)
        } else {
            (value.abs(), literal_granularity)
        };
        Expr::new(
            float_literal(value, ty),
            ValueType::Scalar(ty),
            Facts::new(
                Uniformity::WorkGroup,
                ValueFacts::exact(magnitude_out, granularity_out),
            ),
        )
    }

    /// `value` (deterministic) made to fit an exact need.
    pub fn fit_exact(&mut self, value: Expr, magnitude: f64, granularity: i32) -> Expr {
        let ty = value.ty.scalar().expect("a float");
        let vt = value.ty;
        let uniformity = value.uniformity();
        match value.facts.float() {
            Some(FloatFacts::Exact {
                magnitude: have,
                granularity: have_granularity,
            }) if have_granularity >= granularity => {
                if have <= magnitude {
                    return value;
                }
                if magnitude >= 1.0 {
                    let bound = self.random.between(1, magnitude.min(64.0) as i128) as f64;
                    let (text, out) = if self.percent(50) {
                        (
                            format!("({} % {})", value.text, float_literal(bound, ty)),
                            bound,
                        )
                    } else {
                        (
                            format!(
                                "clamp({}, {}, {})",
                                value.text,
                                float_literal(-bound, ty),
                                float_literal(bound, ty)
                            ),
                            bound,
                        )
                    };
                    self.note("exact range reduction");
                    return Expr::new(
                        text,
                        vt,
                        Facts::new(uniformity, ValueFacts::exact(out, have_granularity.min(0))),
                    );
                }
            }
            Some(FloatFacts::Approximate { .. }) | None => {
                return self.float_literal_within(ty, magnitude, granularity);
            }
            _ => {}
        }
        if magnitude < 1.0 || granularity > 0 {
            return self.float_literal_within(ty, magnitude, granularity);
        }
        let bound = self.random.between(1, magnitude.min(1024.0) as i128) as f64;
        let rounding = *self.random.pick(&["floor", "ceil", "round"]);
        self.note("integer-valued range reduction");
        Expr::new(
            format!(
                "clamp({rounding}({}), {}, {})",
                value.text,
                float_literal(-bound, ty),
                float_literal(bound, ty)
            ),
            vt,
            Facts::new(uniformity, ValueFacts::exact(bound, 0)),
        )
    }

    pub fn float_value(
        &mut self,
        ty: ScalarType,
        need: FloatNeed,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        match need {
            FloatNeed::Exact {
                magnitude,
                granularity,
            } => self.exact_float(ty, magnitude, granularity, uniformity, depth),
            FloatNeed::Deterministic => self.deterministic_float(ty, uniformity, depth),
            FloatNeed::Approximate { magnitude } => {
                self.approximate_float(ty, magnitude, uniformity, depth)
            }
        }
    }

    fn exact_leaf(
        &mut self,
        ty: ScalarType,
        magnitude: f64,
        granularity: i32,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        if self.percent(70) {
            if let Some(read) = self.read(ValueType::Scalar(ty), uniformity, false, depth) {
                return self.fit_exact(read, magnitude, granularity);
            }
        }
        self.float_literal_within(ty, magnitude, granularity)
    }

    fn exact_float(
        &mut self,
        ty: ScalarType,
        magnitude: f64,
        granularity: i32,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        let vt = ValueType::Scalar(ty);
        debug_assert!(exactly_representable(ty, magnitude, granularity));
        if depth == 0 || self.percent(20) {
            return self.exact_leaf(ty, magnitude, granularity, uniformity, depth);
        }
        let inner = depth - 1;
        let exact = |me: &mut Self, m: f64, g: i32| {
            if exactly_representable(ty, m, g) {
                me.exact_float(ty, m, g, uniformity, inner)
            } else {
                me.float_literal_within(ty, m.min(1.0), 0)
            }
        };
        let join = |a: &Expr, b: &Expr| a.uniformity().join(b.uniformity());
        let exact_facts = |e: &Expr| match e.facts.float() {
            Some(FloatFacts::Exact {
                magnitude,
                granularity,
            }) => (magnitude, granularity),
            _ => (0.0, 0),
        };
        let sub_groups = self.sub_group_operations_allowed() && SUB_GROUP_TYPES.contains(&ty);
        let other_float = self
            .value_types()
            .into_iter()
            .filter(|&t| {
                t.is_float() && t != ty && exactly_representable(t, magnitude, granularity)
            })
            .collect::<Vec<_>>();
        // add/sub, mul, fma, neg, abs, min/max, clamp, floor/ceil/round, halving, fmod by a
        // literal, fmod by a guarded value, select, from integer, from float, from bool, from
        // T, sub-group, call.
        let weights = [
            10,
            8,
            3,
            2,
            2,
            4,
            3,
            3,
            if granularity < 0 { 2 } else { 0 },
            2,
            2,
            3,
            6,
            if other_float.is_empty() { 0 } else { 4 },
            1,
            if self.generic.is_some() { 2 } else { 0 },
            if sub_groups { 4 } else { 0 },
            if self.callable(ty).is_empty() { 0 } else { 3 },
        ];
        let result = match self.random.weighted(&weights) {
            0 => {
                let op = *self.random.pick(&["+", "-"]);
                let a = exact(self, magnitude / 2.0, granularity);
                let b = exact(self, magnitude / 2.0, granularity);
                self.note("exact float add/sub");
                let ((ma, ga), (mb, gb)) = (exact_facts(&a), exact_facts(&b));
                Expr::new(
                    format!("({} {op} {})", a.text, b.text),
                    vt,
                    Facts::new(join(&a, &b), ValueFacts::exact(ma + mb, ga.min(gb))),
                )
            }
            1 => {
                let left_magnitude = 2f64.powi((magnitude.max(1.0).log2() / 2.0).floor() as i32);
                let right_magnitude = magnitude / left_magnitude;
                let left_granularity = granularity / 2;
                let right_granularity = granularity - left_granularity;
                let a = exact(self, left_magnitude, left_granularity);
                let b = exact(self, right_magnitude, right_granularity);
                self.note("exact float multiply");
                let ((ma, ga), (mb, gb)) = (exact_facts(&a), exact_facts(&b));
                Expr::new(
                    format!("({} * {})", a.text, b.text),
                    vt,
                    Facts::new(join(&a, &b), ValueFacts::exact(ma * mb, ga + gb)),
                )
            }
            2 => {
                let half = magnitude / 2.0;
                let left_magnitude = 2f64.powi((half.max(1.0).log2() / 2.0).floor() as i32);
                let right_magnitude = half / left_magnitude;
                let left_granularity = granularity / 2;
                let right_granularity = granularity - left_granularity;
                let a = exact(self, left_magnitude, left_granularity);
                let b = exact(self, right_magnitude, right_granularity);
                let c = exact(self, half, granularity);
                self.note("exact fma");
                let ((ma, ga), (mb, gb), (mc, gc)) =
                    (exact_facts(&a), exact_facts(&b), exact_facts(&c));
                Expr::new(
                    format!("fma({}, {}, {})", a.text, b.text, c.text),
                    vt,
                    Facts::new(
                        join(&a, &b).join(c.uniformity()),
                        ValueFacts::exact(ma * mb + mc, (ga + gb).min(gc)),
                    ),
                )
            }
            3 => {
                let a = exact(self, magnitude, granularity);
                self.note("float negation");
                Expr::new(format!("(-{})", a.text), vt, a.facts)
            }
            4 => {
                let a = exact(self, magnitude, granularity);
                self.note("float abs");
                Expr::new(format!("abs({})", a.text), vt, a.facts)
            }
            5 => {
                let name = *self.random.pick(&["min", "max"]);
                let a = exact(self, magnitude, granularity);
                let b = exact(self, magnitude, granularity);
                self.note("float min/max");
                let ((ma, ga), (mb, gb)) = (exact_facts(&a), exact_facts(&b));
                Expr::new(
                    format!("{name}({}, {})", a.text, b.text),
                    vt,
                    Facts::new(join(&a, &b), ValueFacts::exact(ma.max(mb), ga.min(gb))),
                )
            }
            6 => {
                let wide = self.deterministic_float(ty, uniformity, inner);
                self.note("float clamp");
                self.fit_exact(wide, magnitude, granularity)
            }
            7 => {
                let name = *self.random.pick(&["floor", "ceil", "round"]);
                let a = exact(self, (magnitude - 1.0).max(0.0), granularity.max(-4));
                self.note("floor/ceil/round");
                let (ma, _) = exact_facts(&a);
                Expr::new(
                    format!("{name}({})", a.text),
                    vt,
                    Facts::new(a.uniformity(), ValueFacts::exact(ma.ceil(), 0)),
                )
            }
            8 => {
                let shift = self.random.between(1, i128::from(-granularity).min(3)) as i32;
                let scale = 2f64.powi(shift);
                let a = exact(self, magnitude * scale, granularity + shift);
                self.note("exact scaling");
                let (ma, ga) = exact_facts(&a);
                let text = if self.percent(50) {
                    format!("({} / {})", a.text, float_literal(scale, ty))
                } else {
                    format!("({} * {})", a.text, float_literal(1.0 / scale, ty))
                };
                Expr::new(
                    text,
                    vt,
                    Facts::new(a.uniformity(), ValueFacts::exact(ma / scale, ga - shift)),
                )
            }
            9 => {
                let wide = widest_magnitude(ty, granularity).min(magnitude * 64.0);
                let a = exact(self, wide, granularity);
                let divisor_granularity =
                    self.random.between(i128::from(granularity.max(-3)), 0) as i32;
                let step = 2f64.powi(divisor_granularity);
                let steps = self
                    .random
                    .between(1, (magnitude / step).floor().clamp(1.0, 64.0) as i128);
                let divisor_value = steps as f64 * step;
                let divisor = Expr::new(
                    float_literal(divisor_value, ty),
                    vt,
                    Facts::new(
                        Uniformity::WorkGroup,
                        ValueFacts::exact(divisor_value, divisor_granularity),
                    ),
                );
                self.note("float remainder by a constant");
                let ((ma, ga), (md, gd)) = (exact_facts(&a), exact_facts(&divisor));
                let text = format!("({} % {})", a.text, divisor.text);
                Expr::new(
                    text,
                    vt,
                    Facts::new(a.uniformity(), ValueFacts::exact(ma.min(md), ga.min(gd))),
                )
            }
            10 => {
                let a = exact(self, magnitude, granularity);
                let b = exact(self, magnitude, granularity.max(-4));
                self.note("float remainder");
                let (ma, ga) = exact_facts(&a);
                let (_, gb) = exact_facts(&b);
                let offset = float_literal(1.0, ty);
                Expr::new(
                    format!("({} % (abs({}) + {offset}))", a.text, b.text),
                    vt,
                    Facts::new(join(&a, &b), ValueFacts::exact(ma, ga.min(gb).min(0))),
                )
            }
            11 => {
                let condition = self.bool_value(uniformity, inner);
                let a = exact(self, magnitude, granularity);
                let b = exact(self, magnitude, granularity);
                self.note("select");
                let ((ma, ga), (mb, gb)) = (exact_facts(&a), exact_facts(&b));
                Expr::new(
                    self.choice(&condition, &a, &b),
                    vt,
                    Facts::new(
                        join(&a, &b).join(condition.uniformity()),
                        ValueFacts::exact(ma.max(mb), ga.min(gb)),
                    ),
                )
            }
            12 => {
                let from = self.random_integer_type();
                let a = self.integer_value(from, uniformity, inner);
                let (from_low, from_high) = integer_range(from);
                let limit = (magnitude.min(2f64.powi(precision_bits(ty))).floor() as i128)
                    .min(from_high)
                    .max(0);
                let a = self.fit_integer(a, (-limit).max(from_low), limit);
                self.note("cast integer to float");
                let value = cast_to_float(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            13 => {
                let from = *self.random.pick(&other_float);
                let a = self.exact_float(from, magnitude, granularity, uniformity, inner);
                self.note("cast float to float");
                let value = cast_to_float(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            14 => {
                let a = self.bool_value(uniformity, inner);
                self.note("cast bool to float");
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), ValueFacts::exact(1.0, 0)),
                )
            }
            15 => {
                let (low, high) = self.generic_interval();
                let a = self.generic_value(low, high, uniformity, inner);
                self.note("cast T to float");
                let value = cast_to_float(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            16 => self.sub_group_operation(
                vt,
                uniformity,
                inner,
                OperandBound::Float(magnitude, granularity),
            ),
            _ => self.call(ty, uniformity, inner),
        };
        if result.facts.uniformity > uniformity {
            return self.float_literal_within(ty, magnitude, granularity);
        }
        self.fit_exact(result, magnitude, granularity)
    }

    /// A float that is the same on every target, exact or rounded once.
    fn deterministic_float(&mut self, ty: ScalarType, uniformity: Uniformity, depth: u32) -> Expr {
        let vt = ValueType::Scalar(ty);
        let FloatNeed::Exact {
            magnitude,
            granularity,
        } = default_exact_need(ty)
        else {
            unreachable!()
        };
        if depth == 0 {
            if let Some(read) = self.read(vt, uniformity, false, 0) {
                return read;
            }
            return self.float_literal_within(ty, magnitude, granularity);
        }
        let inner = depth - 1;
        let rounded = |u| Facts::new(u, ValueFacts::Float(FloatFacts::Rounded));
        // exact, read, sqrt, division, wide integer conversion, other float conversion,
        // min/max/abs/neg of deterministic operands, rounding functions.
        let weights = [12, 4, 2, 3, 2, 3, 2, 1];
        match self.random.weighted(&weights) {
            0 => self.exact_float(ty, magnitude, granularity, uniformity, depth),
            1 => self
                .read(vt, uniformity, false, inner)
                .unwrap_or_else(|| self.float_literal_within(ty, magnitude, granularity)),
            2 => {
                let a = self.exact_float(ty, magnitude, granularity, uniformity, inner);
                self.note("sqrt");
                Expr::new(
                    format!("sqrt(abs({}))", a.text),
                    vt,
                    rounded(a.uniformity()),
                )
            }
            3 => {
                let a = self.exact_float(ty, magnitude, granularity, uniformity, inner);
                let b = self.exact_float(ty, magnitude, granularity, uniformity, inner);
                let offset = float_literal(1.0, ty);
                self.note("float division");
                Expr::new(
                    format!("({} / (abs({}) + {offset}))", a.text, b.text),
                    vt,
                    rounded(a.uniformity().join(b.uniformity())),
                )
            }
            4 => {
                let from = self.random_integer_type();
                let a = self.integer_value(from, uniformity, inner);
                self.note("cast integer to float");
                let value = cast_to_float(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            5 => {
                let from = self.random_float_type();
                let a = self.deterministic_float(from, uniformity, inner);
                self.note("cast float to float");
                let value = cast_to_float(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            6 => {
                let a = self.deterministic_float(ty, uniformity, inner);
                let b = self.deterministic_float(ty, uniformity, inner);
                let (text, name) = match self.random.below(4) {
                    0 => (format!("min({}, {})", a.text, b.text), "float min/max"),
                    1 => (format!("max({}, {})", a.text, b.text), "float min/max"),
                    2 => (format!("abs({})", a.text), "float abs"),
                    _ => (format!("(-{})", a.text), "float negation"),
                };
                self.note(name);
                let both_exact = matches!(a.facts.float(), Some(FloatFacts::Exact { .. }))
                    && matches!(b.facts.float(), Some(FloatFacts::Exact { .. }));
                if both_exact && !text.starts_with("min") && !text.starts_with("max") {
                    return Expr::new(text, vt, a.facts);
                }
                Expr::new(text, vt, rounded(a.uniformity().join(b.uniformity())))
            }
            _ => {
                let a = self.deterministic_float(ty, uniformity, inner);
                let name = *self.random.pick(&["floor", "ceil", "round"]);
                self.note("floor/ceil/round");
                Expr::new(format!("{name}({})", a.text), vt, rounded(a.uniformity()))
            }
        }
    }

    /// A float that may carry the error of transcendental math, `|v| <= magnitude`.
    fn approximate_float(
        &mut self,
        ty: ScalarType,
        magnitude: f64,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        let vt = ValueType::Scalar(ty);
        let approximate = |u, magnitude: f64, error: f64| {
            Facts::new(
                u,
                ValueFacts::Float(FloatFacts::Approximate { magnitude, error }),
            )
        };
        // (magnitude, error) of an exact or approximate expression.
        let bounds = |e: &Expr| match e.facts.float() {
            Some(FloatFacts::Exact { magnitude, .. }) => (magnitude, 0.0),
            Some(FloatFacts::Approximate { magnitude, error }) => (magnitude, error),
            _ => (f64::INFINITY, f64::INFINITY),
        };
        let ulp = |m: f64| unit_in_last_place(ty, m);
        if depth == 0 || magnitude < 4.0 {
            return self.exact_float(ty, 1.0, 0, uniformity, 0);
        }
        let inner = depth - 1;
        let (exact_magnitude, exact_granularity) = match default_exact_need(ty) {
            FloatNeed::Exact {
                magnitude,
                granularity,
            } => (magnitude, granularity),
            _ => unreachable!(),
        };
        match self.random.weighted(&[3, 10, 4, 3, 2, 2, 1]) {
            0 => {
                if self.percent(50) {
                    if let Some(read) = self.read(vt, uniformity, true, inner) {
                        if read.facts.is_approximate() && bounds(&read).0 <= magnitude {
                            return read;
                        }
                    }
                }
                self.exact_float(
                    ty,
                    magnitude.min(exact_magnitude),
                    exact_granularity,
                    uniformity,
                    inner,
                )
            }
            1 => self.transcendental(ty, magnitude, uniformity, inner),
            2 => {
                let op = *self.random.pick(&["+", "-"]);
                let a = self.approximate_float(ty, magnitude / 2.0, uniformity, inner);
                let b = self.approximate_float(ty, magnitude / 2.0, uniformity, inner);
                let ((ma, ea), (mb, eb)) = (bounds(&a), bounds(&b));
                self.note("approximate add/sub");
                Expr::new(
                    format!("({} {op} {})", a.text, b.text),
                    vt,
                    approximate(
                        a.uniformity().join(b.uniformity()),
                        ma + mb,
                        ea + eb + 2.0 * ulp(ma + mb),
                    ),
                )
            }
            3 => {
                let root = magnitude.sqrt();
                let fused = self.percent(30);
                let a = self.approximate_float(ty, root, uniformity, inner);
                let b = self.approximate_float(ty, root, uniformity, inner);
                let ((ma, ea), (mb, eb)) = (bounds(&a), bounds(&b));
                let product = ma * mb;
                let error = ma * eb + mb * ea + ea * eb + 2.0 * ulp(product);
                if fused {
                    let c = self.exact_float(ty, 1.0, 0, uniformity, inner);
                    self.note("approximate fma");
                    return Expr::new(
                        format!("fma({}, {}, {})", a.text, b.text, c.text),
                        vt,
                        approximate(
                            a.uniformity().join(b.uniformity()),
                            product + 1.0,
                            error + 2.0 * ulp(product + 1.0),
                        ),
                    );
                }
                self.note("approximate multiply");
                Expr::new(
                    format!("({} * {})", a.text, b.text),
                    vt,
                    approximate(a.uniformity().join(b.uniformity()), product, error),
                )
            }
            4 => {
                let a = self.approximate_float(ty, magnitude, uniformity, inner);
                let b = self.approximate_float(ty, magnitude, uniformity, inner);
                let ((ma, ea), (mb, eb)) = (bounds(&a), bounds(&b));
                let name = *self.random.pick(&["min", "max"]);
                self.note("approximate min/max");
                Expr::new(
                    format!("{name}({}, {})", a.text, b.text),
                    vt,
                    approximate(a.uniformity().join(b.uniformity()), ma.max(mb), ea.max(eb)),
                )
            }
            5 => {
                let condition = self.bool_value(uniformity, inner);
                let a = self.approximate_float(ty, magnitude, uniformity, inner);
                let b = self.approximate_float(ty, magnitude, uniformity, inner);
                let ((ma, ea), (mb, eb)) = (bounds(&a), bounds(&b));
                self.note("select");
                let u = condition
                    .uniformity()
                    .join(a.uniformity())
                    .join(b.uniformity());
                Expr::new(
                    self.choice(&condition, &a, &b),
                    vt,
                    approximate(u, ma.max(mb), ea.max(eb)),
                )
            }
            _ => {
                let from = self.random_float_type();
                let a = self.approximate_float(from, magnitude.min(1000.0), uniformity, inner);
                let (ma, ea) = bounds(&a);
                self.note("approximate conversion");
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    approximate(
                        a.uniformity(),
                        ma,
                        ea + ulp(ma) + unit_in_last_place(from, ma),
                    ),
                )
            }
        }
    }

    /// A math function on an exact argument within its well-conditioned domain.
    fn transcendental(
        &mut self,
        ty: ScalarType,
        magnitude: f64,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        let vt = ValueType::Scalar(ty);
        let literal = |value: f64| float_literal(value, ty);
        let argument = |me: &mut Self, m: f64| me.exact_float(ty, m, -2, uniformity, depth);
        let name = *self.random.pick(&[
            "sin", "cos", "tan", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "pow",
        ]);
        // (text, bound of the result, allowed error in units in the last place)
        let (text, bound, ulps, u) = match name {
            "sin" | "cos" | "tanh" => {
                let x = argument(self, 32.0);
                (format!("{name}({})", x.text), 1.0, 16.0, x.uniformity())
            }
            "tan" => {
                let x = argument(self, 16.0);
                (
                    format!(
                        "tan(clamp({}, {}, {}))",
                        x.text,
                        literal(-1.25),
                        literal(1.25)
                    ),
                    3.1,
                    32.0,
                    x.uniformity(),
                )
            }
            "exp" => {
                let x = argument(self, 16.0);
                (
                    format!(
                        "exp(clamp({}, {}, {}))",
                        x.text,
                        literal(-8.0),
                        literal(8.0)
                    ),
                    2981.0,
                    16.0,
                    x.uniformity(),
                )
            }
            "exp2" => {
                let x = argument(self, 16.0);
                (
                    format!(
                        "exp2(clamp({}, {}, {}))",
                        x.text,
                        literal(-10.0),
                        literal(10.0)
                    ),
                    1024.0,
                    16.0,
                    x.uniformity(),
                )
            }
            "log" | "log2" => {
                let x = argument(self, 60.0);
                (
                    format!("{name}((abs({}) + {}))", x.text, literal(1.0)),
                    6.0,
                    16.0,
                    x.uniformity(),
                )
            }
            "sqrt" => {
                let x = argument(self, 60.0);
                (format!("sqrt(abs({}))", x.text), 8.0, 4.0, x.uniformity())
            }
            "rsqrt" => {
                let x = argument(self, 60.0);
                (
                    format!("rsqrt((abs({}) + {}))", x.text, literal(1.0)),
                    1.0,
                    8.0,
                    x.uniformity(),
                )
            }
            _ => {
                let base = argument(self, 4.0);
                let exponent = argument(self, 3.0);
                (
                    format!(
                        "pow((abs({}) + {}), {})",
                        base.text,
                        literal(0.5),
                        exponent.text
                    ),
                    92.0,
                    64.0,
                    base.uniformity().join(exponent.uniformity()),
                )
            }
        };
        if bound > magnitude {
            return self.exact_float(ty, magnitude.min(1.0), 0, uniformity, 0);
        }
        self.note(match name {
            "sin" => "sin",
            "cos" => "cos",
            "tan" => "tan",
            "exp" => "exp",
            "exp2" => "exp2",
            "log" => "log",
            "log2" => "log2",
            "sqrt" => "sqrt",
            "rsqrt" => "rsqrt",
            "tanh" => "tanh",
            _ => "pow",
        });
        let error = ulps * unit_in_last_place(ty, bound)
            + if ty == ScalarType::F16 {
                4.0 * unit_in_last_place(ScalarType::F16, bound)
            } else {
                0.0
            };
        Expr::new(
            text,
            vt,
            Facts::new(
                u,
                ValueFacts::Float(FloatFacts::Approximate {
                    magnitude: bound,
                    error,
                }),
            ),
        )
    }

    // -----------------------------------------------------------------------------------------
    // The generic type `T`: values stay integers in the domain every instance holds exactly.

    pub fn generic_literal(&mut self, low: i128, high: i128) -> Expr {
        let value = self.random.between(low.max(-20), high.min(20));
        let value = value.clamp(low, high);
        Expr::new(
            format!("({} as T)", plain_integer_literal(value)),
            ValueType::Generic,
            interval_facts(Uniformity::WorkGroup, value, value),
        )
    }

    /// `value` (of type `T`) forced into `low..=high`.
    pub fn fit_generic(&mut self, value: Expr, low: i128, high: i128) -> Expr {
        if let Some((have_low, have_high)) = value.facts.integer_interval() {
            if have_low >= low && have_high <= high {
                return value;
            }
        }
        Expr::new(
            format!(
                "clamp({}, ({} as T), ({} as T))",
                value.text,
                plain_integer_literal(low),
                plain_integer_literal(high)
            ),
            ValueType::Generic,
            interval_facts(value.uniformity(), low, high),
        )
    }

    pub fn generic_value(
        &mut self,
        low: i128,
        high: i128,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        let domain = self.generic.clone().expect("a generic kernel");
        let vt = ValueType::Generic;
        if depth == 0 || self.percent(25) || high - low < 4 {
            if self.percent(70) {
                if let Some(read) = self.read(vt, uniformity, false, depth) {
                    return self.fit_generic(read, low, high);
                }
            }
            return self.generic_literal(low, high);
        }
        let inner = depth - 1;
        let join = |a: &Expr, b: &Expr| a.uniformity().join(b.uniformity());
        let interval = |e: &Expr| e.facts.integer_interval().unwrap_or((0, 0));
        let sub_groups = self.sub_group_operations_allowed() && domain.all_in(&SUB_GROUP_TYPES);
        let negation = domain.all_signed_or_float() && low == -high;
        // add, multiply, min/max, clamp, abs, negate, remainder, select, from integer, from
        // float, sub-group.
        let weights = [
            10,
            6,
            4,
            2,
            2,
            if negation { 2 } else { 0 },
            3,
            2,
            5,
            if self.float_to_integer_conversions {
                3
            } else {
                0
            },
            if sub_groups { 3 } else { 0 },
        ];
        let result = match self.random.weighted(&weights) {
            0 => {
                let a = self.generic_value(low / 2, high / 2, uniformity, inner);
                let b = self.generic_value(low / 2, high / 2, uniformity, inner);
                self.note("T arithmetic");
                let ((la, ha), (lb, hb)) = (interval(&a), interval(&b));
                Expr::new(
                    format!("({} + {})", a.text, b.text),
                    vt,
                    interval_facts(join(&a, &b), la + lb, ha + hb),
                )
            }
            1 => {
                let root = ((high.max(-low)) as f64).sqrt().floor() as i128;
                let (sub_low, sub_high) = if low < 0 { (-root, root) } else { (0, root) };
                let a = self.generic_value(sub_low, sub_high, uniformity, inner);
                let b = self.generic_value(sub_low, sub_high, uniformity, inner);
                self.note("T arithmetic");
                let (l, h) =
                    checked_interval_product(interval(&a), interval(&b)).unwrap_or((low, high));
                Expr::new(
                    format!("({} * {})", a.text, b.text),
                    vt,
                    interval_facts(join(&a, &b), l, h),
                )
            }
            2 => {
                let a = self.generic_value(low, high, uniformity, inner);
                let b = self.generic_value(low, high, uniformity, inner);
                let minimum = self.percent(50);
                self.note("T min/max");
                let ((la, ha), (lb, hb)) = (interval(&a), interval(&b));
                let (l, h) = if minimum {
                    (la.min(lb), ha.min(hb))
                } else {
                    (la.max(lb), ha.max(hb))
                };
                Expr::new(
                    format!(
                        "{}({}, {})",
                        if minimum { "min" } else { "max" },
                        a.text,
                        b.text
                    ),
                    vt,
                    interval_facts(join(&a, &b), l, h),
                )
            }
            3 => {
                let a = self.generic_value(domain.low, domain.high, uniformity, inner);
                self.note("T clamp");
                self.fit_generic(
                    Expr::new(
                        a.text.clone(),
                        vt,
                        interval_facts(a.uniformity(), domain.low, domain.high),
                    ),
                    low,
                    high,
                )
            }
            4 => {
                let limit = high.min(-low.min(0)).max(0);
                let (sub_low, sub_high) = if low < 0 { (-limit, limit) } else { (0, high) };
                let a = self.generic_value(sub_low, sub_high, uniformity, inner);
                self.note("T abs");
                let (la, ha) = interval(&a);
                Expr::new(
                    format!("abs({})", a.text),
                    vt,
                    interval_facts(a.uniformity(), 0, la.abs().max(ha.abs())),
                )
            }
            5 => {
                let a = self.generic_value(low, high, uniformity, inner);
                self.note("T negation");
                let (la, ha) = interval(&a);
                Expr::new(
                    format!("(-{})", a.text),
                    vt,
                    interval_facts(a.uniformity(), -ha, -la),
                )
            }
            6 => {
                let modulus = self.random.between(2, high.clamp(2, 16));
                let a = self.generic_value(domain.low, domain.high, uniformity, inner);
                self.note("T remainder");
                let (la, ha) = interval(&a);
                let bound = modulus - 1;
                Expr::new(
                    format!("({} % ({modulus} as T))", a.text),
                    vt,
                    interval_facts(a.uniformity(), la.max(-bound).min(0), ha.min(bound).max(0)),
                )
            }
            7 => {
                let condition = self.bool_value(uniformity, inner);
                let a = self.generic_value(low, high, uniformity, inner);
                let b = self.generic_value(low, high, uniformity, inner);
                self.note("select");
                let ((la, ha), (lb, hb)) = (interval(&a), interval(&b));
                Expr::new(
                    self.choice(&condition, &a, &b),
                    vt,
                    interval_facts(
                        join(&a, &b).join(condition.uniformity()),
                        la.min(lb),
                        ha.max(hb),
                    ),
                )
            }
            8 => {
                let from = self.random_integer_type();
                let (from_low, from_high) = integer_range(from);
                let (fit_low, fit_high) = (low.max(from_low), high.min(from_high));
                if fit_low > fit_high {
                    return self.generic_literal(low, high);
                }
                let a = self.integer_value(from, uniformity, inner);
                let a = self.fit_integer(a, fit_low, fit_high);
                self.note("cast integer to T");
                let (la, ha) = interval(&a);
                Expr::new(
                    format!("({} as T)", a.text),
                    vt,
                    interval_facts(a.uniformity(), la, ha),
                )
            }
            9 => {
                let from = self.random_float_type();
                let a = self.float_value(from, FloatNeed::Deterministic, uniformity, inner);
                self.note("cast float to T");
                Expr::new(
                    format!(
                        "(clamp(floor({}), {}, {}) as T)",
                        a.text,
                        float_literal(low as f64, from),
                        float_literal(high as f64, from)
                    ),
                    vt,
                    interval_facts(a.uniformity(), low, high),
                )
            }
            _ => self.sub_group_operation(vt, uniformity, inner, OperandBound::Generic(low, high)),
        };
        if result.facts.uniformity > uniformity {
            return self.generic_literal(low, high);
        }
        self.fit_generic(result, low, high)
    }

    // -----------------------------------------------------------------------------------------
    // Sub-groups and calls.

    /// A sub-group operation on a value of `ty` whose result must stay within `bound`.
    fn sub_group_operation(
        &mut self,
        ty: ValueType,
        uniformity: Uniformity,
        depth: u32,
        bound: OperandBound,
    ) -> Expr {
        // Reductions are uniform within the sub-group, shuffles are not; nothing here is
        // uniform across the work-group.
        let operation = match uniformity {
            Uniformity::WorkGroup => return self.fallback_literal(ty, bound),
            Uniformity::SubGroup => self.random.below(3),
            Uniformity::Varying => self.random.below(8),
        };
        // A lane to read: any lane of the sub-group.
        let lane = |me: &mut Self, u: Uniformity| {
            let raw = me.integer_value(ScalarType::U32, u, depth.min(1));
            Expr::new(
                format!("({} % sub_group_size())", raw.text),
                ValueType::Scalar(ScalarType::U32),
                interval_facts(raw.uniformity(), 0, 63),
            )
        };
        // An operand of which `lanes` together stay within the bound.
        let operand = |me: &mut Self, lanes: f64| -> Expr {
            match (ty, bound) {
                (ValueType::Scalar(scalar), OperandBound::Float(magnitude, granularity)) => me
                    .exact_float(
                        scalar,
                        (magnitude / lanes).floor().max(0.0),
                        granularity,
                        Uniformity::Varying,
                        depth,
                    ),
                (ValueType::Generic, OperandBound::Generic(low, high)) => {
                    let lanes = lanes as i128;
                    me.generic_value(low / lanes, high / lanes, Uniformity::Varying, depth)
                }
                (ValueType::Scalar(scalar), _) => {
                    me.integer_value(scalar, Uniformity::Varying, depth)
                }
                (ValueType::Generic, _) => {
                    let (low, high) = me.generic_interval();
                    me.generic_value(low / 64, high / 64, Uniformity::Varying, depth)
                }
            }
        };
        match operation {
            0 => {
                let x = operand(self, 64.0);
                self.note("sub_group_reduce_add");
                let value = match (x.facts.value, ty) {
                    (
                        ValueFacts::Float(FloatFacts::Exact {
                            magnitude,
                            granularity,
                        }),
                        _,
                    ) => ValueFacts::exact(magnitude * 64.0, granularity),
                    (ValueFacts::Integer { low, high }, ValueType::Generic) => {
                        ValueFacts::interval(low * 64, high * 64)
                    }
                    (_, ValueType::Scalar(scalar)) => ValueFacts::anything(scalar),
                    (other, _) => other,
                };
                Expr::new(
                    format!("sub_group_reduce_add({})", x.text),
                    ty,
                    Facts::new(Uniformity::SubGroup, value),
                )
            }
            1 | 2 => {
                let x = operand(self, 1.0);
                let name = if operation == 1 {
                    "sub_group_reduce_min"
                } else {
                    "sub_group_reduce_max"
                };
                self.note(if operation == 1 {
                    "sub_group_reduce_min"
                } else {
                    "sub_group_reduce_max"
                });
                Expr::new(
                    format!("{name}({})", x.text),
                    ty,
                    Facts::new(Uniformity::SubGroup, x.facts.value),
                )
            }
            3 => {
                let x = operand(self, 1.0);
                let from = lane(self, Uniformity::Varying);
                self.note("sub_group_shuffle");
                let u = if from.uniformity() <= Uniformity::SubGroup {
                    Uniformity::SubGroup
                } else {
                    Uniformity::Varying
                };
                Expr::new(
                    format!("sub_group_shuffle({}, {})", x.text, from.text),
                    ty,
                    Facts::new(u, x.facts.value),
                )
            }
            5 => {
                // A scan's prefixes stay within what the whole sub-group's sum does.
                let inclusive = self.random.below(2) == 0;
                let which = self.random.below(3);
                let x = operand(self, if which == 0 { 64.0 } else { 1.0 });
                let kind = if inclusive { "inclusive" } else { "exclusive" };
                let (combine, value) = match which {
                    0 => {
                        let value = match (x.facts.value, ty) {
                            (
                                ValueFacts::Float(FloatFacts::Exact {
                                    magnitude,
                                    granularity,
                                }),
                                _,
                            ) => ValueFacts::exact(magnitude * 64.0, granularity),
                            (ValueFacts::Integer { low, high }, ValueType::Generic) => {
                                ValueFacts::interval(low.min(0) * 64, high.max(0) * 64)
                            }
                            (_, ValueType::Scalar(scalar)) => ValueFacts::anything(scalar),
                            (other, _) => other,
                        };
                        ("add", value)
                    }
                    // An exclusive min/max gives lane 0 the type's extreme: anything.
                    1 | 2 if !inclusive => match ty {
                        ValueType::Scalar(scalar) => (
                            if which == 1 { "min" } else { "max" },
                            ValueFacts::anything(scalar),
                        ),
                        ValueType::Generic => return x,
                    },
                    1 => ("min", x.facts.value),
                    _ => ("max", x.facts.value),
                };
                let name = format!("sub_group_scan_{kind}_{combine}");
                self.note(match name.as_str() {
                    "sub_group_scan_inclusive_add" => "sub_group_scan_inclusive_add",
                    "sub_group_scan_exclusive_add" => "sub_group_scan_exclusive_add",
                    _ => "sub_group_scan_min_max",
                });
                Expr::new(
                    format!("{name}({})", x.text),
                    ty,
                    Facts::new(Uniformity::Varying, value),
                )
            }
            6 | 7 => {
                let x = operand(self, 1.0);
                let delta = lane(self, Uniformity::WorkGroup);
                let name = if operation == 6 {
                    "sub_group_shuffle_up"
                } else {
                    "sub_group_shuffle_down"
                };
                self.note(name);
                Expr::new(
                    format!("{name}({}, {})", x.text, delta.text),
                    ty,
                    Facts::new(Uniformity::Varying, x.facts.value),
                )
            }
            _ => {
                let x = operand(self, 1.0);
                let mask = lane(self, Uniformity::WorkGroup);
                self.note("sub_group_shuffle_xor");
                Expr::new(
                    format!("sub_group_shuffle_xor({}, {})", x.text, mask.text),
                    ty,
                    Facts::new(Uniformity::Varying, x.facts.value),
                )
            }
        }
    }

    /// A literal within `bound`, for where a sub-group operation cannot go.
    fn fallback_literal(&mut self, ty: ValueType, bound: OperandBound) -> Expr {
        match (ty, bound) {
            (ValueType::Scalar(scalar), OperandBound::Float(magnitude, granularity)) => {
                self.float_literal_within(scalar, magnitude, granularity)
            }
            (ValueType::Generic, OperandBound::Generic(low, high)) => {
                self.generic_literal(low, high)
            }
            (ValueType::Generic, _) => {
                let (low, high) = self.generic_interval();
                self.generic_literal(low, high)
            }
            (ValueType::Scalar(scalar), _) => self.integer_literal(scalar),
        }
    }

    /// Functions returning `ty` that can be called here.
    pub fn callable(&self, ty: ScalarType) -> Vec<usize> {
        self.functions
            .iter()
            .enumerate()
            .filter(|(_, f)| matches!(f.result, Some((result, _)) if result == ty))
            .filter(|(_, f)| !f.tuple_result || self.tuple_bindings)
            .filter(|(_, f)| {
                f.parameters.iter().all(|p| match p {
                    FunctionParameter::InputBuffer { element, .. } => {
                        self.buffers.iter().any(|b| {
                            b.usage == BufferUse::Input
                                && b.shape.is_none()
                                && b.element == ValueType::Scalar(*element)
                        })
                    }
                    FunctionParameter::Scalar { .. } | FunctionParameter::Pair { .. } => true,
                    _ => false,
                })
            })
            .map(|(index, _)| index)
            .collect()
    }

    /// A call of a device function returning `ty` (there is one: see [`Self::callable`]).
    fn call(&mut self, ty: ScalarType, uniformity: Uniformity, depth: u32) -> Expr {
        let candidates = self.callable(ty);
        let index = *self.random.pick(&candidates);
        let function = self.functions[index].clone();
        let mut arguments = Vec::new();
        let mut joined = Uniformity::WorkGroup;
        for parameter in &function.parameters {
            match parameter {
                FunctionParameter::Scalar { ty, facts, .. } => {
                    let argument = self.argument_within(*ty, *facts, uniformity, depth);
                    joined = joined.join(argument.uniformity());
                    arguments.push(argument.text);
                }
                FunctionParameter::InputBuffer { element, .. } => {
                    let buffers: Vec<String> = self
                        .buffers
                        .iter()
                        .filter(|b| {
                            b.usage == BufferUse::Input
                                && b.shape.is_none()
                                && b.element == ValueType::Scalar(*element)
                        })
                        .map(|b| b.name.clone())
                        .collect();
                    arguments.push(self.random.pick(&buffers).clone());
                }
                FunctionParameter::Pair { types, facts, .. } => {
                    let first = self.argument_within(types[0], facts[0], uniformity, depth);
                    let second = self.argument_within(types[1], facts[1], uniformity, depth);
                    joined = joined.join(first.uniformity()).join(second.uniformity());
                    arguments.push(format!("({}, {})", first.text, second.text));
                    self.note("tuple argument");
                }
                _ => unreachable!("value functions take scalars, tuples and input buffers"),
            }
        }
        self.note("device function call");
        let (_, result_facts) = function.result.expect("a value function");
        let call = format!("{}({})", function.name, arguments.join(", "));
        let text = if function.tuple_result {
            // A call returning a tuple is a statement of its own: bind it just before the
            // statement this expression is for (the generator writes code in order).
            let value = self.fresh("t");
            self.code
                .line(format!("let ({value}, {value}_tag) = {call};"));
            self.note("tuple binding");
            value
        } else {
            call
        };
        Expr::new(
            text,
            ValueType::Scalar(ty),
            Facts::new(joined, result_facts),
        )
    }

    /// A value of `ty` within a parameter's declared facts.
    pub fn argument_within(
        &mut self,
        ty: ScalarType,
        facts: ValueFacts,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        match facts {
            ValueFacts::Float(FloatFacts::Exact {
                magnitude,
                granularity,
            }) => self.exact_float(ty, magnitude, granularity, uniformity, depth),
            ValueFacts::Float(_) => self.deterministic_float(ty, uniformity, depth),
            ValueFacts::Integer { low, high } => {
                let value = self.integer_value(ty, uniformity, depth);
                self.fit_integer(value, low, high)
            }
            ValueFacts::Bool => self.bool_value(uniformity, depth),
        }
    }
}
