//! The kernel skeleton: the launch shape, the parameters and their data, module constants,
//! device functions, local arrays, the body, and the runs of each kernel (one per instance of
//! a generic kernel).

use crate::expression::{default_exact_need, FloatNeed};
use crate::facts::{Facts, FloatFacts, Uniformity, ValueFacts};
use crate::generator::{Accumulator, Generator, Geometry};
use crate::run::{bytes_of, ArgumentValue, Comparison, KernelRun, RecordLayout, RunArgument};
use crate::scope::{
    BufferParameter, BufferUse, Constant, GrowthBudget, LocalArray, LocalShape, LocalUse,
    RecordBuffer, ScalarParameter, Shape, Variable,
};
use crate::types::{
    float_bits, float_literal, integer_bits, integer_literal, integer_range, GenericDomain,
    ValueType, ATOMIC_INTEGER_TYPES,
};
use crate::{GeneratedKernel, GeneratorOptions};
use kdsl_ir::ScalarType;

/// One value of a buffer or scalar, before it is given a type (a `T` value is converted to
/// each instance).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Datum {
    Integer(i128),
    Float(f64),
}

/// A kernel parameter in declaration order, with its launch data.
#[derive(Clone, Debug)]
enum Parameter {
    Buffer {
        index: usize,
        data: Vec<Datum>,
    },
    /// A buffer of records: each record's fields in order.
    Records {
        index: usize,
        data: Vec<Datum>,
    },
    Scalar {
        index: usize,
        value: Datum,
    },
    /// A launch-sized local array (index into the locals) and the length the launch gives.
    Local {
        index: usize,
        length: u32,
    },
}

/// Names the record fields take (a few of them, in random order).
const FIELD_NAMES: [&str; 8] = [
    "start", "edges", "mass", "tag", "flag", "speed", "weight", "count",
];

const KERNEL_NAME: &str = "fuzz";
const RECORD_NAME: &str = "Rec";

impl Generator<'_> {
    fn choose_geometry(&mut self, synchronizes: bool) -> Geometry {
        let dimensions = match self.random.weighted(&[6, 3, 1]) {
            0 => 1,
            1 => 2,
            _ => 3,
        };
        let local: [u32; 3] = if synchronizes {
            // A multiple of every sub-group size a device picks.
            match dimensions {
                1 => [*self.random.pick(&[64, 128]), 1, 1],
                2 => {
                    *self
                        .random
                        .pick(&[[16, 4, 1], [8, 8, 1], [32, 2, 1], [4, 16, 1], [64, 2, 1]])
                }
                _ => *self.random.pick(&[[4, 4, 4], [8, 4, 2], [16, 2, 2]]),
            }
        } else {
            match dimensions {
                1 => [
                    *self.random.pick(&[1, 3, 8, 16, 17, 32, 64, 100, 128]),
                    1,
                    1,
                ],
                2 => *self
                    .random
                    .pick(&[[4, 4, 1], [8, 2, 1], [5, 3, 1], [16, 8, 1], [1, 7, 1]]),
                _ => *self.random.pick(&[[2, 2, 2], [4, 2, 3], [8, 4, 2]]),
            }
        };
        let mut global = [1u32; 3];
        for dimension in 0..3 {
            let most = (512 / local.iter().product::<u32>()).clamp(1, 4);
            let groups = if dimension < dimensions {
                1 + self.random.below(u64::from(most)) as u32
            } else {
                1
            };
            global[dimension] = local[dimension] * groups;
        }
        while global.iter().product::<u32>() > 512 {
            let largest = (0..3).max_by_key(|&d| global[d] / local[d]).unwrap();
            global[largest] -= local[largest];
        }
        Geometry {
            dimensions: dimensions as u32,
            global,
            local,
        }
    }

    /// `atomic_add` on floats may be generated in this kernel.
    pub fn float_atomics_allowed(&self) -> bool {
        self.options.float_atomics
    }

    /// A type for a buffer element or a kernel parameter (never `bool`).
    fn parameter_type(&mut self) -> ScalarType {
        loop {
            let ty = self.random_type();
            if ty != ScalarType::Bool && (ty != ScalarType::F16 || self.options.f16_parameters) {
                return ty;
            }
        }
    }

    /// What the data of an input buffer or scalar of `ty` is bounded by.
    fn data_facts(ty: ValueType, generic: &Option<GenericDomain>) -> ValueFacts {
        match ty {
            ValueType::Generic => {
                let domain = generic.as_ref().unwrap();
                ValueFacts::interval(domain.low, domain.high)
            }
            ValueType::Scalar(ScalarType::F16) => ValueFacts::exact(8.0, -2),
            ValueType::Scalar(ScalarType::Bf16) => ValueFacts::exact(4.0, -1),
            ValueType::Scalar(ScalarType::F32) => ValueFacts::exact(64.0, -3),
            ValueType::Scalar(ScalarType::F64) => ValueFacts::exact(1024.0, -4),
            ValueType::Scalar(ty) => ValueFacts::anything(ty),
        }
    }

    fn datum(&mut self, ty: ValueType, facts: ValueFacts) -> Datum {
        match (ty, facts) {
            (
                _,
                ValueFacts::Float(FloatFacts::Exact {
                    magnitude,
                    granularity,
                }),
            ) => {
                let step = 2f64.powi(granularity);
                let limit = (magnitude / step).floor() as i128;
                Datum::Float(self.random.between(-limit, limit) as f64 * step)
            }
            (ValueType::Generic, ValueFacts::Integer { low, high }) => {
                Datum::Integer(self.random.between(low, high))
            }
            (ValueType::Scalar(ty), ValueFacts::Integer { low, high }) => {
                let value = if self.percent(80) {
                    self.integer_literal_value(ty)
                } else {
                    self.random.between(low, high)
                };
                Datum::Integer(value.clamp(low, high))
            }
            _ => Datum::Float(0.0),
        }
    }

    fn buffer_data(&mut self, buffer: &BufferParameter) -> Vec<Datum> {
        (0..buffer.length)
            .map(|_| self.datum(buffer.element, buffer.data_facts))
            .collect()
    }

    /// Now and then a 2-D or 3-D shape for an input of `length` elements: rows of 2 to 16
    /// columns (or planes of 2 to 8 by 2 to 8), stored row-major (the contiguous fast path) or
    /// in another order of the dimensions (strided).
    fn input_shape(&mut self, length: u32) -> Option<Shape> {
        if !self.options.multi_dimensional_buffers || !self.percent(30) {
            return None;
        }
        let divisors = |n: u32, most: u32| -> Vec<u32> {
            (2..=most).filter(|c| n.is_multiple_of(*c)).collect()
        };
        let three = self.options.three_dimensional_buffers && self.percent(35);
        let columns = divisors(length, if three { 8 } else { 16 });
        if columns.is_empty() {
            return None;
        }
        let inner = *self.random.pick(&columns);
        let mut extents = vec![length / inner, inner];
        if three {
            let middle = divisors(length / inner, 8);
            if !middle.is_empty() {
                let middle = *self.random.pick(&middle);
                extents = vec![length / inner / middle, middle, inner];
            }
        }
        let strides = self.layout(&extents, false);
        Some(Shape {
            extents,
            strides,
            owner: None,
        })
    }

    /// Strides for `extents`: row-major (60%), the dimensions in reverse order (column-major)
    /// or in a random order; with `padding`, a dimension's stride may leave a gap of elements
    /// that no index reaches.
    fn layout(&mut self, extents: &[u32], padding: bool) -> Vec<u64> {
        let rank = extents.len();
        // Dimensions from the fastest-varying to the slowest.
        let mut order: Vec<usize> = (0..rank).rev().collect();
        match self.random.weighted(&[6, 3, 1]) {
            0 => {}
            1 => order.reverse(),
            _ => {
                for position in (1..rank).rev() {
                    let other = self.random.below(position as u64 + 1) as usize;
                    order.swap(position, other);
                }
            }
        }
        let mut strides = vec![0u64; rank];
        let mut next = 1u64;
        for &dimension in &order {
            strides[dimension] = next;
            let gap = if padding && self.percent(25) {
                1 + self.random.below(3)
            } else {
                0
            };
            next = next * u64::from(extents[dimension]) + gap;
        }
        strides
    }

    /// Now and then a 2-D or 3-D shape for an output: the work-item's own elements are one
    /// row (`out[gid, j]`), one column or one plane, in any layout, sometimes with gaps of
    /// elements no work-item writes. `slots` becomes the number of own elements.
    fn output_shape(&mut self, slots: &mut u32) -> Option<Shape> {
        if !self.options.multi_dimensional_outputs || !self.percent(10) {
            return None;
        }
        let total = self.geometry.total_items();
        let mut own: Vec<u32> = vec![*slots];
        if self.options.three_dimensional_buffers && self.percent(40) {
            own = vec![
                1 + self.random.below(2) as u32,
                1 + self.random.below(2) as u32,
            ];
        }
        *slots = own.iter().product();
        let owner = self.random.below(own.len() as u64 + 1) as usize;
        let mut extents = own;
        extents.insert(owner, total);
        let strides = self.layout(&extents, true);
        Some(Shape {
            extents,
            strides,
            owner: Some(owner),
        })
    }

    fn add_buffer(&mut self, buffer: BufferParameter, parameters: &mut Vec<Parameter>) -> usize {
        let data = self.buffer_data(&buffer);
        self.buffers.push(buffer);
        let index = self.buffers.len() - 1;
        parameters.push(Parameter::Buffer { index, data });
        index
    }

    /// A 2-D buffer that tile stores write, one box of whole rows per work-group: a row holds
    /// what a tile's does (128 bytes) and a work-group's items fill its rows exactly, as the
    /// stored exchange array has one element per work-item. Its shape may cut the last rows
    /// and columns short; its rows may be padded.
    fn tile_store_buffer(&mut self, parameters: &mut Vec<Parameter>) {
        let element = self.parameter_type();
        let group_items = self.geometry.group_items();
        let Some(columns) = kdsl_ir::tile_copy::columns(element) else {
            return;
        };
        let rows = group_items / columns;
        if !group_items.is_multiple_of(columns)
            || !(1..=kdsl_ir::tile_copy::MAX_ROWS).contains(&rows)
        {
            return;
        }
        let groups = self.geometry.total_items() / group_items;
        let cut_rows = self.random.below(u64::from(rows)) as u32;
        let cut_columns = *self.random.pick(&[0u32, 0, 1, 3]);
        let padding = *self.random.pick(&[0u64, 0, 1, 4]);
        let extents = vec![groups * rows - cut_rows, columns - cut_columns];
        let strides = vec![u64::from(columns) + padding, 1];
        let shape = Shape {
            extents,
            strides,
            owner: None,
        };
        let length = u32::try_from(shape.span()).expect("a small buffer");
        let name = self.fresh("tiles");
        let ty = ValueType::Scalar(element);
        let data_facts = Self::data_facts(ty, &self.generic);
        self.note("tile store buffer");
        self.add_buffer(
            BufferParameter {
                name,
                element: ty,
                length,
                usage: BufferUse::TileStores { rows },
                data_facts,
                shape: Some(shape),
            },
            parameters,
        );
    }

    /// The module's record type and its buffers: an input read anywhere, an output holding
    /// one record per work-item, or both.
    fn record_buffers(&mut self, parameters: &mut Vec<Parameter>) {
        let mut names = FIELD_NAMES.to_vec();
        for position in (1..names.len()).rev() {
            let other = self.random.below(position as u64 + 1) as usize;
            names.swap(position, other);
        }
        let count = 2 + self.random.below(3) as usize;
        self.record_fields = names[..count]
            .iter()
            .map(|name| {
                let ty = if self.percent(12) {
                    ScalarType::Bool
                } else {
                    self.parameter_type()
                };
                (name.to_string(), ty)
            })
            .collect();
        let (input, output) = match self.random.below(3) {
            0 => (true, false),
            1 => (false, true),
            _ => (true, true),
        };
        let total = self.geometry.total_items();
        for (wanted, output, length) in [
            (input, false, 4 + self.random.below(60) as u32),
            (output, true, total),
        ] {
            if !wanted {
                continue;
            }
            let name = self.fresh(if output { "records" } else { "nodes" });
            let mut data = Vec::new();
            for _ in 0..length {
                for (_, ty) in self.record_fields.clone() {
                    data.push(self.field_datum(ty));
                }
            }
            self.record_buffers.push(RecordBuffer {
                name,
                length,
                output,
            });
            parameters.push(Parameter::Records {
                index: self.record_buffers.len() - 1,
                data,
            });
        }
    }

    fn field_datum(&mut self, ty: ScalarType) -> Datum {
        if ty == ScalarType::Bool {
            return Datum::Integer(i128::from(self.percent(50)));
        }
        self.datum(ValueType::Scalar(ty), field_facts(ty))
    }

    fn choose_generic_domain(&mut self) -> Option<GenericDomain> {
        let mut families: Vec<Vec<ScalarType>> = vec![
            vec![ScalarType::I32, ScalarType::I64],
            vec![ScalarType::U32, ScalarType::U64],
            vec![ScalarType::I32, ScalarType::F32],
            vec![ScalarType::U8, ScalarType::U16, ScalarType::U32],
            vec![ScalarType::I16, ScalarType::I32, ScalarType::F32],
            vec![ScalarType::U32, ScalarType::F32],
        ];
        if self.options.f64 {
            families.push(vec![ScalarType::F32, ScalarType::F64]);
            families.push(vec![ScalarType::I64, ScalarType::F64, ScalarType::U64]);
        }
        if self.options.f16 && self.options.f16_parameters {
            families.push(vec![ScalarType::F16, ScalarType::F32, ScalarType::I8]);
        }
        if self.options.bf16 {
            families.push(vec![ScalarType::Bf16, ScalarType::F32, ScalarType::I16]);
        }
        let family = self.random.pick(&families).clone();
        Some(GenericDomain::new(family))
    }

    fn constants(&mut self) {
        let count = self.random.below(4);
        for _ in 0..count {
            let ty = self.random_type();
            let name = self.fresh("K");
            let (text, facts) = if ty == ScalarType::Bool {
                let value = self.percent(50);
                (value.to_string(), ValueFacts::Bool)
            } else if ty.is_float() {
                let value = self.random.between(-64, 64) as f64 * 0.25;
                (float_literal(value, ty), ValueFacts::exact(value.abs(), -2))
            } else {
                let value = self.integer_literal_value(ty);
                // Sometimes computed from an earlier integer constant of the same type.
                let earlier = self.constants.iter().find(|c| c.ty == ty).cloned();
                match earlier {
                    Some(Constant {
                        name: other,
                        facts: ValueFacts::Integer { low: known, .. },
                        ..
                    }) if self.percent(50) => {
                        let offset = self.random.between(0, 5);
                        let (_, high) = integer_range(ty);
                        if known + offset <= high {
                            (
                                format!(
                                    "{other} + {}",
                                    integer_literal(offset, ty, &mut self.random)
                                ),
                                ValueFacts::interval(known + offset, known + offset),
                            )
                        } else {
                            (
                                integer_literal(value, ty, &mut self.random),
                                ValueFacts::interval(value, value),
                            )
                        }
                    }
                    _ => (
                        integer_literal(value, ty, &mut self.random),
                        ValueFacts::interval(value, value),
                    ),
                }
            };
            self.note("module constant");
            self.code
                .line(format!("const {name}: {} = {text};", ty.name()));
            self.constants.push(Constant { name, ty, facts });
        }
        if count > 0 {
            self.code.line("");
        }
    }

    /// The kernel's parameters, with their data, in declaration order.
    fn parameters(&mut self) -> Vec<Parameter> {
        let mut parameters = Vec::new();
        let total = self.geometry.total_items();
        let input_length = 16 + self.random.below(240) as u32;
        let input_count = 1 + self.random.below(3);
        for _ in 0..input_count {
            let ty = ValueType::Scalar(self.parameter_type());
            let name = self.fresh("input");
            let usage = if self.percent(25) {
                BufferUse::Constant
            } else {
                BufferUse::Input
            };
            let data_facts = Self::data_facts(ty, &self.generic);
            let shape = self.input_shape(input_length);
            self.add_buffer(
                BufferParameter {
                    name,
                    element: ty,
                    length: input_length,
                    usage,
                    data_facts,
                    shape,
                },
                &mut parameters,
            );
        }
        let generic = self.generic.is_some();
        if generic && self.percent(70) {
            let name = self.fresh("input");
            let data_facts = Self::data_facts(ValueType::Generic, &self.generic);
            self.add_buffer(
                BufferParameter {
                    name,
                    element: ValueType::Generic,
                    length: input_length,
                    usage: BufferUse::Input,
                    data_facts,
                    shape: None,
                },
                &mut parameters,
            );
        }
        let scalar_count = self.random.below(4);
        for index in 0..scalar_count + u64::from(generic) {
            let ty = if index == scalar_count {
                ValueType::Generic
            } else {
                ValueType::Scalar(self.parameter_type())
            };
            let name = self.fresh("s");
            let data_facts = Self::data_facts(ty, &self.generic);
            let value = self.datum(ty, data_facts);
            // The generator may rely on the value it launches with, or only on the type.
            let facts = match (value, ty) {
                (Datum::Integer(v), ValueType::Scalar(_)) if self.percent(50) => {
                    ValueFacts::interval(v, v)
                }
                (Datum::Integer(v), ValueType::Generic) => ValueFacts::interval(v, v),
                (Datum::Float(v), _) if self.percent(50) => ValueFacts::exact(v.abs(), -4),
                _ => data_facts,
            };
            self.scalars.push(ScalarParameter {
                name,
                ty,
                facts: Facts::new(Uniformity::WorkGroup, facts),
            });
            parameters.push(Parameter::Scalar {
                index: self.scalars.len() - 1,
                value,
            });
        }
        if self.percent(50) {
            self.scalars.push(ScalarParameter {
                name: "n".into(),
                ty: ValueType::Scalar(ScalarType::U32),
                facts: Facts::new(
                    Uniformity::WorkGroup,
                    ValueFacts::interval(total.into(), total.into()),
                ),
            });
            parameters.push(Parameter::Scalar {
                index: self.scalars.len() - 1,
                value: Datum::Integer(total.into()),
            });
        }
        let output_count = 1 + self.random.below(3);
        for index in 0..output_count {
            let ty = if generic && index == 0 {
                ValueType::Generic
            } else {
                ValueType::Scalar(self.parameter_type())
            };
            let mut slots = 1 + self.random.below(3) as u32;
            let avoided = self.barriers
                && ty == ValueType::Scalar(ScalarType::F16)
                && self
                    .options
                    .known_bugs
                    .avoid_intel_cpu_f16_multi_dimensional_output_with_barrier;
            let shape = match ty {
                ValueType::Scalar(_) if !avoided => self.output_shape(&mut slots),
                _ => None,
            };
            let length = shape.as_ref().map_or(total * slots, |shape| {
                u32::try_from(shape.span()).expect("a small output")
            });
            let name = self.fresh("output");
            let data_facts = Self::data_facts(ty, &self.generic);
            self.add_buffer(
                BufferParameter {
                    name,
                    element: ty,
                    length,
                    usage: BufferUse::Output {
                        slots,
                        approximate: false,
                    },
                    data_facts,
                    shape,
                },
                &mut parameters,
            );
        }
        if self.options.async_copies && self.percent(25) {
            self.tile_store_buffer(&mut parameters);
        }
        if self.options.record_buffers && self.percent(30) {
            self.record_buffers(&mut parameters);
        }
        if self.options.approximate_math && self.percent(35) {
            let ty = if self.options.f64 && self.percent(40) {
                ScalarType::F64
            } else {
                ScalarType::F32
            };
            let slots = 1 + self.random.below(2) as u32;
            let name = self.fresh("approximate");
            self.add_buffer(
                BufferParameter {
                    name,
                    element: ValueType::Scalar(ty),
                    length: total * slots,
                    usage: BufferUse::Output {
                        slots,
                        approximate: true,
                    },
                    data_facts: ValueFacts::exact(0.0, 0),
                    shape: None,
                },
                &mut parameters,
            );
        }
        if self.options.atomics && self.percent(40) {
            let mut types: Vec<ScalarType> = ATOMIC_INTEGER_TYPES.to_vec();
            if self.float_atomics_allowed() {
                types.push(ScalarType::F32);
                if self.options.f64 {
                    types.push(ScalarType::F64);
                }
            }
            let ty = *self.random.pick(&types);
            let length = 1 + self.random.below(16) as u32;
            let name = self.fresh("counts");
            let (data_facts, budget, operation) = if ty.is_float() {
                let magnitude = if ty == ScalarType::F32 {
                    8388608.0
                } else {
                    1099511627776.0
                };
                let mut budget = GrowthBudget::new(magnitude, 0);
                budget.plain_bound = 16.0;
                (ValueFacts::exact(16.0, 0), Some(budget), "atomic_add")
            } else {
                let operation = *self.random.pick(&[
                    "atomic_add",
                    "atomic_sub",
                    "atomic_min",
                    "atomic_max",
                    "atomic_and",
                    "atomic_or",
                    "atomic_xor",
                ]);
                (ValueFacts::anything(ty), None, operation)
            };
            let buffer = self.add_buffer(
                BufferParameter {
                    name,
                    element: ValueType::Scalar(ty),
                    length,
                    usage: BufferUse::Accumulator,
                    data_facts,
                    shape: None,
                },
                &mut parameters,
            );
            self.accumulators.push(Accumulator {
                buffer,
                operation,
                budget,
            });
        }
        if self.sub_groups {
            self.add_buffer(
                BufferParameter {
                    name: "sub_group_lanes".into(),
                    element: ValueType::Scalar(ScalarType::U32),
                    length: 1,
                    usage: BufferUse::SubGroupProbe,
                    data_facts: ValueFacts::interval(0, 0),
                    shape: None,
                },
                &mut parameters,
            );
        }
        // Declaration order is shuffled; the probe's data is its zero.
        self.random.shuffle(&mut parameters);
        parameters
    }

    fn local_arrays(&mut self) {
        let group_items = self.geometry.group_items();
        let count = 1 + self.random.below(2);
        for _ in 0..count {
            // Often the element type of a flat input, which an asynchronous copy can fill it
            // from, or of a 2-D one, which a tile copy can, or of a buffer tile stores write.
            let copyable: Vec<ScalarType> = self
                .buffers
                .iter()
                .filter(|b| {
                    (matches!(b.usage, BufferUse::Input | BufferUse::Constant)
                        && b.shape.as_ref().is_none_or(|shape| shape.rank() == 2))
                        || matches!(b.usage, BufferUse::TileStores { .. })
                })
                .filter_map(|b| b.element.scalar())
                .collect();
            let stored: Vec<ScalarType> = self
                .buffers
                .iter()
                .filter(|b| matches!(b.usage, BufferUse::TileStores { .. }))
                .filter_map(|b| b.element.scalar())
                .collect();
            let element = if !stored.is_empty() && self.percent(60) {
                *self.random.pick(&stored)
            } else if self.options.async_copies && !copyable.is_empty() && self.percent(40) {
                *self.random.pick(&copyable)
            } else {
                self.parameter_type()
            };
            let element_facts = if element.is_float() {
                let FloatNeed::Exact {
                    magnitude,
                    granularity,
                } = default_exact_need(element)
                else {
                    unreachable!()
                };
                ValueFacts::exact(magnitude, granularity)
            } else {
                ValueFacts::anything(element)
            };
            let name = self.fresh("shared");
            let shape = self.local_shape(true);
            self.locals.push(LocalArray {
                name,
                element,
                length: group_items,
                shape,
                usage: LocalUse::Exchange,
                element_facts,
                atomic_magnitude: 0.0,
            });
        }
        if self.options.atomics && self.percent(50) {
            let mut types: Vec<ScalarType> = ATOMIC_INTEGER_TYPES.to_vec();
            if self.float_atomics_allowed() {
                types.push(ScalarType::F32);
                if self.options.f64 {
                    types.push(ScalarType::F64);
                }
            }
            let element = *self.random.pick(&types);
            let name = self.fresh("tally");
            let shape = self.local_shape(false);
            let atomic_magnitude = match element {
                ScalarType::F32 => 1048576.0,
                ScalarType::F64 => 1099511627776.0,
                _ => 0.0,
            };
            self.locals.push(LocalArray {
                name,
                element,
                length: group_items,
                shape,
                usage: LocalUse::Atomics,
                element_facts: ValueFacts::anything(element),
                atomic_magnitude,
            });
        }
    }

    /// A local array's form: fixed and flat, sized at launch, or (`grid`) two-dimensional.
    fn local_shape(&mut self, grid: bool) -> LocalShape {
        let group_items = self.geometry.group_items();
        if self.options.launch_sized_local_arrays && self.percent(30) {
            let extra = *self.random.pick(&[0, 0, 1, 7, 64]);
            self.note("launch-sized local array");
            return LocalShape::Launched {
                length: group_items + extra,
            };
        }
        if grid && self.options.two_dimensional_local_arrays && self.percent(30) {
            let divisors: Vec<u32> = (2..=32)
                .filter(|c| group_items.is_multiple_of(*c))
                .collect();
            if !divisors.is_empty() {
                let columns = *self.random.pick(&divisors);
                let padded = columns + *self.random.pick(&[0, 0, 1, 3]);
                self.note("2-D local array");
                return LocalShape::Grid {
                    rows: group_items / columns,
                    columns,
                    padded,
                };
            }
        }
        LocalShape::Flat
    }

    /// `gid`, `lid` (linear ids) and the sub-group probe.
    fn kernel_prologue(&mut self) {
        let linear = |query: &str, size: &str, dimensions: u32| match dimensions {
            1 => format!("{query}(0)"),
            2 => format!("(({query}(1) * {size}(0)) + {query}(0))"),
            _ => format!("(((({query}(2) * {size}(1)) + {query}(1)) * {size}(0)) + {query}(0))"),
        };
        let dimensions = self.geometry.dimensions;
        self.code.line(format!(
            "let gid = {};",
            linear("get_global_id", "get_global_size", dimensions)
        ));
        self.code.line(format!(
            "let lid = {};",
            linear("get_local_id", "get_local_size", dimensions)
        ));
        let total = i128::from(self.geometry.total_items());
        let group = i128::from(self.geometry.group_items());
        for (name, high) in [("gid", total - 1), ("lid", group - 1)] {
            self.scope.add_variable(Variable {
                name: name.into(),
                ty: ValueType::Scalar(ScalarType::U32),
                facts: Facts::new(Uniformity::Varying, ValueFacts::interval(0, high)),
                mutability: None,
            });
        }
        if self.sub_groups {
            self.note("sub-group size probe");
            self.code.line("let lanes = sub_group_size();");
            self.code.open("if gid == 0u32 {");
            self.code.line("sub_group_lanes[0] = lanes;");
            self.code.close("}");
        }
    }

    /// One unconditional store into every output slot and own record, so every result is
    /// observed.
    fn kernel_epilogue(&mut self) {
        for index in 0..self.buffers.len() {
            let BufferUse::Output { slots, .. } = self.buffers[index].usage else {
                continue;
            };
            for slot in 0..slots {
                self.store_into_output(index, Some(slot));
            }
        }
        for index in 0..self.record_buffers.len() {
            if self.record_buffers[index].output {
                self.store_whole_record(index);
            }
        }
    }
}

/// What the data of an input record's field is bounded by.
pub fn field_facts(ty: ScalarType) -> ValueFacts {
    match ty {
        ScalarType::Bool => ValueFacts::Bool,
        ty => Generator::data_facts(ValueType::Scalar(ty), &None),
    }
}

/// Writes the module for `seed` and the runs of its kernels.
pub fn generate_module(seed: u64, options: &GeneratorOptions) -> GeneratedKernel {
    let placeholder = Geometry {
        dimensions: 1,
        global: [1; 3],
        local: [1; 3],
    };
    let mut g = Generator::new(seed, options, placeholder);
    g.sub_groups = options.sub_groups && g.percent(35);
    g.barriers = options.local_memory && g.percent(40);
    g.unguarded = options.possibly_undefined_percent > 0
        && !g.sub_groups
        && g.percent(options.possibly_undefined_percent);
    if options
        .known_bugs
        .avoid_intel_cpu_o0_private_array_with_float_to_integer
        && g.private_arrays
    {
        // One or the other in a module.
        if g.percent(50) {
            g.private_arrays = false;
        } else {
            g.float_to_integer_conversions = false;
        }
    }
    let synchronizes = g.sub_groups || g.barriers;
    g.geometry = g.choose_geometry(synchronizes);
    if options.generics && g.percent(25) {
        g.generic = g.choose_generic_domain();
    }
    g.constants();
    let mut parameters = g.parameters();
    let inputs: Vec<BufferParameter> = g
        .buffers
        .iter()
        // Device functions take flat input buffers.
        .filter(|b| {
            b.usage == BufferUse::Input && b.shape.is_none() && b.element.scalar().is_some()
        })
        .cloned()
        .collect();
    if options.device_functions {
        for _ in 0..g.random.below(4) {
            g.device_function(&inputs);
        }
    }
    if g.barriers {
        g.local_arrays();
        for index in 0..g.locals.len() {
            if let LocalShape::Launched { length } = g.locals[index].shape {
                let position = g.random.below(parameters.len() as u64 + 1) as usize;
                parameters.insert(position, Parameter::Local { index, length });
            }
        }
    }
    let preamble = std::mem::take(&mut g.code);

    // The body first, so that the local declarations and the attribute can go above it.
    g.code.indent = 1;
    g.scope.push();
    g.control = crate::scope::Control::top_level(true);
    g.kernel_prologue();
    g.statements(options.max_statements);
    g.kernel_epilogue();
    g.scope.pop();
    let body = std::mem::take(&mut g.code);

    let mut text = preamble.text();
    if !g.record_fields.is_empty() {
        let fields: Vec<String> = g
            .record_fields
            .iter()
            .map(|(name, ty)| format!("{name}: {}", ty.name()))
            .collect();
        g.note("record type");
        text += &format!("struct {RECORD_NAME} {{ {} }}\n\n", fields.join(", "));
    }
    let attribute = synchronizes && g.percent(30);
    if attribute {
        let local = g.geometry.local;
        let sizes: Vec<String> = local[..g.geometry.dimensions as usize]
            .iter()
            .map(|s| s.to_string())
            .collect();
        g.note("work_group_size attribute");
        text += &format!("#[work_group_size({})]\n", sizes.join(", "));
    }
    let declarations: Vec<String> = parameters
        .iter()
        .map(|p| match p {
            Parameter::Buffer { index, .. } => g.buffers[*index].declaration(),
            Parameter::Records { index, .. } => {
                let buffer = &g.record_buffers[*index];
                let access = if buffer.output {
                    "global mut"
                } else {
                    "global"
                };
                format!("{}: {access} [{RECORD_NAME}]", buffer.name)
            }
            Parameter::Local { index, .. } => {
                let local = &g.locals[*index];
                format!("{}: local mut [{}]", local.name, local.element.name())
            }
            Parameter::Scalar { index, .. } => {
                let scalar = &g.scalars[*index];
                format!("{}: {}", scalar.name, scalar.ty.name())
            }
        })
        .collect();
    let type_parameters = if g.generic.is_some() { "<T>" } else { "" };
    text += &format!(
        "kernel {KERNEL_NAME}{type_parameters}({}) {{\n",
        declarations.join(", ")
    );
    for local in &g.locals {
        let element = local.element.name();
        let ty = match local.shape {
            LocalShape::Launched { .. } => continue,
            LocalShape::Grid { rows, padded, .. } => format!("[[{element}; {padded}]; {rows}]"),
            LocalShape::Flat if attribute && g.geometry.dimensions == 1 && g.random.percent(50) => {
                format!("[{element}; WORK_GROUP_SIZE_X]")
            }
            LocalShape::Flat => format!("[{element}; {}]", local.length),
        };
        text += &format!("    local {}: {ty};\n", local.name);
    }
    text += &body.text();
    text += "}\n";

    let instances: Vec<(String, Option<ScalarType>)> = match &g.generic {
        Some(domain) => domain
            .instances
            .iter()
            .map(|ty| (format!("{KERNEL_NAME}_{}", ty.name()), Some(*ty)))
            .collect(),
        None => vec![(KERNEL_NAME.to_string(), None)],
    };
    if g.generic.is_some() {
        text += "\n";
        for (name, ty) in &instances {
            g.note("generic kernel instance");
            text += &format!("instance {name} = {KERNEL_NAME}<{}>;\n", ty.unwrap().name());
        }
    }
    let tolerance = 4.0 * g.approximate_error;
    let runs = instances
        .iter()
        .map(|(name, instance)| kernel_run(&g, name, *instance, &parameters, tolerance))
        .collect();
    GeneratedKernel {
        seed,
        source: text,
        runs,
        uses_sub_groups: g.sub_groups,
        may_be_undefined: g.unguarded,
        coverage: g
            .coverage
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        needs_sm: 0,
        matrix_groups: false,
    }
}

fn bits_of(datum: Datum, ty: ScalarType) -> u64 {
    match datum {
        Datum::Integer(value) if ty.is_float() => float_bits(value as f64, ty),
        Datum::Integer(value) => integer_bits(value, ty),
        Datum::Float(value) if ty.is_float() => float_bits(value, ty),
        Datum::Float(value) => integer_bits(value as i128, ty),
    }
}

/// The bytes of records holding `data` (each record's fields in order) in `layout`; padding
/// bytes get a pattern that no store may overwrite.
fn record_bytes(layout: &RecordLayout, data: &[Datum]) -> Vec<u8> {
    let size = layout.size as usize;
    let records = data.len() / layout.fields.len().max(1);
    let mut bytes: Vec<u8> = (0..records * size).map(|i| 0xA5 ^ (i as u8)).collect();
    for (record, values) in data.chunks(layout.fields.len()).enumerate() {
        for ((_, ty, offset), value) in layout.fields.iter().zip(values) {
            let start = record * size + *offset as usize;
            let field = bytes_of(&[bits_of(*value, *ty)], *ty);
            bytes[start..start + field.len()].copy_from_slice(&field);
        }
    }
    bytes
}

fn kernel_run(
    g: &Generator,
    name: &str,
    instance: Option<ScalarType>,
    parameters: &[Parameter],
    tolerance: f64,
) -> KernelRun {
    let concrete = |ty: ValueType| match ty {
        ValueType::Scalar(ty) => ty,
        ValueType::Generic => instance.expect("an instance type"),
    };
    let mut probe = None;
    let mut arguments: Vec<RunArgument> = Vec::new();
    for parameter in parameters {
        let argument = match parameter {
            Parameter::Scalar { index, value } => {
                let scalar = &g.scalars[*index];
                let ty = concrete(scalar.ty);
                RunArgument {
                    name: scalar.name.clone(),
                    value: ArgumentValue::Scalar {
                        ty,
                        bits: bits_of(*value, ty),
                    },
                    comparison: Comparison::Ignored,
                }
            }
            Parameter::Records { index, data } => {
                let buffer = &g.record_buffers[*index];
                let layout = RecordLayout::c_layout(&g.record_fields);
                RunArgument {
                    name: buffer.name.clone(),
                    value: ArgumentValue::Buffer {
                        element: ScalarType::U8,
                        writable: buffer.output,
                        length: layout.size as usize * buffer.length as usize,
                        data: record_bytes(&layout, data),
                        record: Some(layout),
                    },
                    comparison: if buffer.output {
                        Comparison::SameNumbers
                    } else {
                        Comparison::Ignored
                    },
                }
            }
            Parameter::Local { index, length } => RunArgument {
                name: g.locals[*index].name.clone(),
                value: ArgumentValue::Local {
                    element: g.locals[*index].element,
                    length: u64::from(*length),
                },
                comparison: Comparison::Ignored,
            },
            Parameter::Buffer { index, data } => {
                let buffer = &g.buffers[*index];
                let element = concrete(buffer.element);
                let bits: Vec<u64> = data.iter().map(|d| bits_of(*d, element)).collect();
                let numbers = if element.is_float() {
                    Comparison::SameNumbers
                } else {
                    Comparison::Exact
                };
                let (writable, comparison) = match buffer.usage {
                    BufferUse::Input | BufferUse::Constant => (false, Comparison::Ignored),
                    BufferUse::Output {
                        approximate: true, ..
                    } => (true, Comparison::Within(tolerance)),
                    BufferUse::SubGroupProbe => {
                        probe = Some(arguments.len());
                        (true, Comparison::Exact)
                    }
                    _ => (true, numbers),
                };
                RunArgument {
                    name: buffer.name.clone(),
                    value: ArgumentValue::Buffer {
                        element,
                        writable,
                        length: bits.len(),
                        data: bytes_of(&bits, element),
                        record: None,
                    },
                    comparison,
                }
            }
        };
        arguments.push(argument);
        // A multi-dimensional buffer's hidden parameters follow it: its extents, then its
        // strides.
        if let Parameter::Buffer { index, .. } = parameter {
            if let Some(shape) = &g.buffers[*index].shape {
                let name = &g.buffers[*index].name;
                let scalar = |suffix: String, ty: ScalarType, bits: u64| RunArgument {
                    name: format!("{name}.{suffix}"),
                    value: ArgumentValue::Scalar { ty, bits },
                    comparison: Comparison::Ignored,
                };
                for (k, &extent) in shape.extents.iter().enumerate() {
                    arguments.push(scalar(format!("shape{k}"), ScalarType::U32, extent.into()));
                }
                for (k, &stride) in shape.strides.iter().enumerate() {
                    arguments.push(scalar(format!("stride{k}"), ScalarType::U64, stride));
                }
            }
        }
    }
    KernelRun {
        kernel: name.to_string(),
        dimensions: g.geometry.dimensions,
        global: g.geometry.global,
        local: g.geometry.local,
        arguments,
        sub_group_size_probe: probe,
    }
}
