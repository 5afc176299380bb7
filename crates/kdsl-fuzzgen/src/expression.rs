//! Typed expression trees: every expression is built for a type and a need (how exact and how
//! uniform it must be), so the module type-checks by construction and its results are the
//! same on every target.

mod floats;
mod generic;
mod integers;

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
        // 5 of bf16's 8 bits, as f16's need uses 8 of its 11.
        ScalarType::Bf16 => (16.0, -1),
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
                BufferUse::Accumulator
                | BufferUse::SubGroupProbe
                | BufferUse::TileStores { .. } => false,
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
                    // A component of a vector load of launch-sized local memory (a buffer
                    // parameter, so `vloadN` takes it); the index is free of calls, which
                    // `vloadN` refuses, being evaluated once per component.
                    LocalShape::Launched { .. }
                        if self.options.vectors
                            && local.length >= 4
                            && local.element != ScalarType::Bool
                            && self.percent(25) =>
                    {
                        self.note("vector load of local memory");
                        let width = 2 + self.random.below(3) as u32;
                        // Within the slots the work-items write (`local.length`), not the
                        // unwritten ones the launch may add.
                        let vectors = local.length / width;
                        let shift = self.random.below(u64::from(vectors));
                        let component =
                            ["x", "y", "z", "w"][self.random.below(u64::from(width)) as usize];
                        format!(
                            "vload{width}({}, (lid + {shift}u32) % {vectors}u32).{component}",
                            local.name
                        )
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
}
