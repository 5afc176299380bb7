//! Local memory and atomics: exchanges through local arrays with barriers, asynchronous and
//! tile copies, tile stores, and local and global atomics.

use crate::expression::{default_exact_need, FloatNeed};
use crate::facts::{Facts, FloatFacts, Uniformity, ValueFacts};
use crate::generator::Generator;
use crate::scope::{BufferUse, Control, LocalShape, LocalUse, Variable};
use crate::types::{float_literal, ValueType};

impl Generator<'_> {
    pub(super) fn local_exchange(&mut self) {
        let candidates: Vec<usize> = (0..self.locals.len())
            .filter(|&i| self.locals[i].usage == LocalUse::Exchange)
            .collect();
        let index = *self.random.pick(&candidates);
        let local = self.locals[index].clone();
        self.local_being_written = Some(index);
        let depth = self.expression_depth();
        let value = match local.element_facts {
            ValueFacts::Float(FloatFacts::Exact {
                magnitude,
                granularity,
            }) => self.float_value(
                local.element,
                FloatNeed::Exact {
                    magnitude,
                    granularity,
                },
                Uniformity::Varying,
                depth,
            ),
            _ => self.value(ValueType::Scalar(local.element), Uniformity::Varying, depth),
        };
        self.note("local memory exchange");
        self.code.line("barrier();");
        self.code
            .line(format!("{} = {};", local.own_slot(), value.text));
        self.code.line("barrier();");
        self.local_being_written = None;
        self.scope.mark_local_readable(index);
    }

    /// The (local array, input buffer, elements per copy) triples an asynchronous copy can
    /// fill a whole exchange array from: a flat local array (not 2-D), a flat input of the
    /// same element type whose values the local array may hold, and copies of 4, 8 or 16
    /// bytes that split the group's slots evenly.
    pub(super) fn async_copy_plans(&self) -> Vec<(usize, usize, u32)> {
        if !self.options.async_copies {
            return Vec::new();
        }
        let group_items = self.geometry.group_items();
        let mut plans = Vec::new();
        for (local_index, local) in self.locals.iter().enumerate() {
            if local.usage != LocalUse::Exchange || matches!(local.shape, LocalShape::Grid { .. }) {
                continue;
            }
            for (buffer_index, buffer) in self.buffers.iter().enumerate() {
                let same_values = buffer.element == ValueType::Scalar(local.element)
                    && (!local.element.is_float() || buffer.data_facts == local.element_facts);
                if !matches!(buffer.usage, BufferUse::Input | BufferUse::Constant)
                    || buffer.shape.is_some()
                    || !same_values
                {
                    continue;
                }
                let size = local.element.size_in_bytes();
                for count in [1u32, 2, 4, 8, 16] {
                    if matches!(count * size, 4 | 8 | 16)
                        && group_items.is_multiple_of(count)
                        && buffer.length >= count
                    {
                        plans.push((local_index, buffer_index, count));
                    }
                }
            }
        }
        plans
    }

    /// Fills an exchange array from an input with `async_copy`: each of the first
    /// `group_items / count` work-items copies `count` elements (the input's, from a uniform
    /// start, wrapping around), then every work-item commits,
    /// waits and passes a barrier, after which any slot may be read.
    /// (local array, 2-D input, rows) of every tile copy that fills a flat exchange array
    /// exactly: its length a whole number of 128-byte rows of the input's element type.
    pub(super) fn tile_copy_plans(&self) -> Vec<(usize, usize, u32)> {
        if !self.options.async_copies {
            return Vec::new();
        }
        let mut plans = Vec::new();
        for (local_index, local) in self.locals.iter().enumerate() {
            let Some(columns) = kdsl_ir::tile_copy::columns(local.element) else {
                continue;
            };
            let rows = local.length / columns;
            if local.usage != LocalUse::Exchange
                || local.shape != LocalShape::Flat
                || !local.length.is_multiple_of(columns)
                || !(1..=kdsl_ir::tile_copy::MAX_ROWS).contains(&rows)
            {
                continue;
            }
            for (buffer_index, buffer) in self.buffers.iter().enumerate() {
                let same_values = buffer.element == ValueType::Scalar(local.element)
                    && (!local.element.is_float() || buffer.data_facts == local.element_facts);
                if matches!(buffer.usage, BufferUse::Input | BufferUse::Constant)
                    && buffer.shape.as_ref().is_some_and(|shape| shape.rank() == 2)
                    && same_values
                {
                    plans.push((local_index, buffer_index, rows));
                }
            }
        }
        plans
    }

    /// A tile copy filling a flat exchange array from a 2-D input, its corner anywhere from
    /// the input's first element to past its last row and column (so edges read as zeros),
    /// on a random slot; the wait publishes it to the whole group.
    pub(super) fn local_tile_copy(&mut self) {
        let plans = self.tile_copy_plans();
        let (index, buffer, rows) = *self.random.pick(&plans);
        let local = self.locals[index].clone();
        let input = self.buffers[buffer].clone();
        let extents = input
            .shape
            .as_ref()
            .map_or(vec![1, 1], |shape| shape.extents.clone());
        let row = self.random.below(u64::from(extents[0]) + 2);
        let column = self.random.below(u64::from(extents[1]) + 3);
        let slot = self.random.below(u64::from(kdsl_ir::tile_copy::SLOTS));
        self.local_being_written = Some(index);
        self.note("tile copy");
        self.code.line("barrier();");
        self.code.line(format!(
            "async_tile_copy({}[0u32], {}[{row}u32, {column}u32], {rows}, {slot}u32);",
            local.name, input.name
        ));
        self.code.line(format!("async_tile_wait({slot}u32);"));
        self.local_being_written = None;
        self.scope.mark_local_readable(index);
    }

    /// (local array, buffer) pairs a tile store can go between: an exchange array every
    /// work-item has written (one element each: a work-group's box of the buffer) and a
    /// buffer that tile stores write, of the same element type.
    pub(super) fn tile_store_plans(&self) -> Vec<(usize, usize)> {
        let mut plans = Vec::new();
        for (local_index, local) in self.locals.iter().enumerate() {
            if local.usage != LocalUse::Exchange
                || local.shape != LocalShape::Flat
                || !self.scope.local_readable(local_index)
                || self.local_being_written.is_some()
            {
                continue;
            }
            for (buffer_index, buffer) in self.buffers.iter().enumerate() {
                if let BufferUse::TileStores { rows } = buffer.usage {
                    let columns = kdsl_ir::tile_copy::columns(local.element).unwrap_or(0);
                    if buffer.element == ValueType::Scalar(local.element)
                        && local.length == rows * columns
                    {
                        plans.push((local_index, buffer_index));
                    }
                }
            }
        }
        plans
    }

    /// The work-group stores its exchange array into its box of a tile-store buffer (the
    /// array's element `e` in the tile layout), and waits, so the array may change again.
    pub(super) fn local_tile_store(&mut self) {
        let plans = self.tile_store_plans();
        let (index, buffer) = *self.random.pick(&plans);
        let local = self.locals[index].clone();
        let output = self.buffers[buffer].clone();
        let BufferUse::TileStores { rows } = output.usage else {
            return;
        };
        let group = match self.geometry.dimensions {
            1 => "get_group_id(0)".to_string(),
            2 => "(get_group_id(0) + get_num_groups(0) * get_group_id(1))".to_string(),
            _ => "(get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2)))".to_string(),
        };
        self.note("tile store");
        self.code.line(format!(
            "async_tile_store({}[{group} * {rows}u32, 0u32], {}[0u32], {rows});",
            output.name, local.name
        ));
        self.code.line("async_tile_store_wait();");
    }

    pub(super) fn local_async_copy(&mut self) {
        let plans = self.async_copy_plans();
        let (index, buffer, count) = *self.random.pick(&plans);
        let local = self.locals[index].clone();
        let input = self.buffers[buffer].clone();
        let group_items = self.geometry.group_items();
        // Copies start at a uniform multiple of `count` and wrap around within the input.
        let first = count
            * self
                .random
                .below(u64::from((input.length - count) / count) + 1) as u32;
        let span = (input.length - first) / count * count;
        let copiers = group_items / count;
        self.local_being_written = Some(index);
        self.note("asynchronous copy");
        self.code.line("barrier();");
        let copy = format!(
            "async_copy({}[lid * {count}u32], {}[{first}u32 + (lid * {count}u32) % {span}u32], {count});",
            local.name, input.name
        );
        if copiers == group_items {
            self.code.line(copy);
        } else {
            self.code.open(format!("if lid < {copiers}u32 {{"));
            self.code.line(copy);
            self.code.close("}");
        }
        // Sometimes an empty group committed after the copy's, so that waiting for all but
        // the newest group still completes the copy.
        if self.percent(30) {
            self.code.line("async_commit();");
            self.code.line("async_commit();");
            self.code.line("async_wait(1);");
        } else {
            self.code.line("async_commit();");
            self.code.line("async_wait(0);");
        }
        self.code.line("barrier();");
        self.local_being_written = None;
        self.scope.mark_local_readable(index);
    }

    pub(super) fn local_atomics(&mut self) {
        let candidates: Vec<usize> = (0..self.locals.len())
            .filter(|&i| self.locals[i].usage == LocalUse::Atomics)
            .collect();
        let index = *self.random.pick(&candidates);
        let local = self.locals[index].clone();
        let ty = local.element;
        let operation = if ty.is_float() {
            "atomic_add"
        } else if self.options.known_bugs.avoid_intel_cpu_local_atomic_min_max {
            *self.random.pick(&[
                "atomic_add",
                "atomic_sub",
                "atomic_and",
                "atomic_or",
                "atomic_xor",
            ])
        } else {
            *self.random.pick(&[
                "atomic_add",
                "atomic_sub",
                "atomic_min",
                "atomic_max",
                "atomic_and",
                "atomic_or",
                "atomic_xor",
            ])
        };
        self.local_being_written = Some(index);
        let depth = self.expression_depth();
        self.note("local memory atomics");
        self.code.line("barrier();");
        let initial = if ty.is_float() {
            float_literal(0.0, ty)
        } else {
            self.value(ValueType::Scalar(ty), Uniformity::Varying, depth)
                .text
        };
        self.code.line(format!("{} = {initial};", local.own_slot()));
        self.code.line("barrier();");
        // The updates: some in a short loop, some under a condition.
        let updates = 1 + self.random.below(3) as u32;
        let group_items = u64::from(self.geometry.group_items());
        let repeat = self.percent(40);
        let trips = if repeat { 1 + self.random.below(4) } else { 1 };
        if repeat {
            let name = self.fresh("r");
            self.code.open(format!("for {name} in 0u32..{trips}u32 {{"));
        }
        let saved = self.control;
        self.control = Control {
            work_group_uniform: false,
            sub_group_uniform: false,
            in_loop: false,
            execution_bound: saved.execution_bound * trips,
            depth: saved.depth + 1,
            ..saved
        };
        let total_updates = group_items * trips * u64::from(updates);
        for _ in 0..updates {
            let position = self.index_into(local.length, Uniformity::Varying, depth);
            let value = if ty.is_float() {
                let bound = (local.atomic_magnitude / total_updates as f64)
                    .floor()
                    .min(64.0);
                self.float_value(
                    ty,
                    FloatNeed::Exact {
                        magnitude: bound,
                        granularity: 0,
                    },
                    Uniformity::Varying,
                    depth,
                )
            } else {
                self.integer_value(ty, Uniformity::Varying, depth)
            };
            let guarded = self.percent(40);
            if guarded {
                let condition = self.condition(false);
                self.code.open(format!("if {} {{", condition.text));
            }
            self.code.line(format!(
                "{operation}({}[{}], {});",
                local.name, position.text, value.text
            ));
            if guarded {
                self.code.close("}");
            }
        }
        self.control = saved;
        if repeat {
            self.code.close("}");
        }
        self.code.line("barrier();");
        self.local_being_written = None;
        self.scope.mark_local_readable(index);
    }

    pub(super) fn global_atomic(&mut self) {
        let which = self.random.below(self.accumulators.len() as u64) as usize;
        let accumulator = self.accumulators[which].clone();
        let buffer = self.buffers[accumulator.buffer].clone();
        let ty = buffer.element.scalar().expect("accumulators are scalar");
        let depth = self.expression_depth();
        let value = match accumulator.budget {
            Some(mut budget) => {
                let updates = self.control.execution_bound * u64::from(self.geometry.total_items());
                let bound = (budget.headroom() / updates as f64).floor().min(64.0);
                if bound < 1.0 {
                    return;
                }
                budget.accumulated += bound * updates as f64;
                self.accumulators[which].budget = Some(budget);
                self.float_value(
                    ty,
                    FloatNeed::Exact {
                        magnitude: bound,
                        granularity: 0,
                    },
                    Uniformity::Varying,
                    depth,
                )
            }
            None => self.integer_value(ty, Uniformity::Varying, depth),
        };
        let position = self.index_into(buffer.length, Uniformity::Varying, depth);
        self.note("global atomics");
        // Sometimes fenced, as work-groups that hand values to each other do: the fence
        // changes no result, and every target must still lower it where it stands.
        if self.percent(25) {
            self.note("device fence");
            self.code.line("device_fence();");
        }
        self.code.line(format!(
            "{}({}[{}], {});",
            accumulator.operation, buffer.name, position.text, value.text
        ));
    }

    pub(super) fn own_slot_atomic(&mut self) {
        let outputs: Vec<usize> = self.atomic_outputs().collect();
        let index = *self.random.pick(&outputs);
        let buffer = self.buffers[index].clone();
        let ty = buffer.element.scalar().unwrap();
        let place = self.own_place(index, None);
        let depth = self.expression_depth();
        let call = if ty.is_float() {
            let FloatNeed::Exact {
                magnitude,
                granularity,
            } = default_exact_need(ty)
            else {
                unreachable!()
            };
            let value = self.float_value(
                ty,
                FloatNeed::Exact {
                    magnitude,
                    granularity,
                },
                Uniformity::Varying,
                depth,
            );
            format!("atomic_add({place}, {})", value.text)
        } else if self.percent(25) {
            let expected = self.integer_value(ty, Uniformity::Varying, depth);
            let desired = self.integer_value(ty, Uniformity::Varying, depth);
            self.note("atomic_compare_exchange");
            format!(
                "atomic_compare_exchange({place}, {}, {})",
                expected.text, desired.text
            )
        } else {
            let operation = *self.random.pick(&[
                "atomic_add",
                "atomic_sub",
                "atomic_min",
                "atomic_max",
                "atomic_and",
                "atomic_or",
                "atomic_xor",
                "atomic_exchange",
            ]);
            let value = self.integer_value(ty, Uniformity::Varying, depth);
            format!("{operation}({place}, {})", value.text)
        };
        self.note("own-slot atomics");
        if self.percent(60) {
            let name = self.fresh("old");
            self.code.line(format!("let {name} = {call};"));
            self.scope.add_variable(Variable {
                name,
                ty: ValueType::Scalar(ty),
                facts: Facts::anything(ty, Uniformity::Varying),
                mutability: None,
            });
        } else {
            self.code.line(format!("{call};"));
        }
    }
}
