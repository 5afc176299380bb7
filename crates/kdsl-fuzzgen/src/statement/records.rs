//! Records: stores of whole records and fields, and bindings of records read back.

use super::integer_update_line;
use crate::facts::{Facts, Uniformity};
use crate::generator::{Expr, Generator};
use crate::scope::Variable;
use crate::types::{ValueType, ATOMIC_INTEGER_TYPES};

impl Generator<'_> {
    /// A value for record field `field`, with or without effects.
    pub(super) fn field_value(&mut self, field: usize, depth: u32) -> Expr {
        let ty = self.record_fields[field].1;
        self.value(ValueType::Scalar(ty), Uniformity::Varying, depth)
    }

    /// `out[gid] = Rec { ... }` with every field once, in any order (shallow values: every
    /// module with an output record ends with one, and a module's size is its compile time).
    pub fn store_whole_record(&mut self, index: usize) {
        let buffer = self.record_buffers[index].clone();
        let mut order: Vec<usize> = (0..self.record_fields.len()).collect();
        for position in (1..order.len()).rev() {
            let other = self.random.below(position as u64 + 1) as usize;
            order.swap(position, other);
        }
        let mut fields = Vec::new();
        for field in order {
            let depth = self.expression_depth().min(2);
            let value = self.field_value(field, depth);
            fields.push(format!("{}: {}", self.record_fields[field].0, value.text));
        }
        self.note("record literal store");
        self.code.line(format!(
            "{}[gid] = Rec {{ {} }};",
            buffer.name,
            fields.join(", ")
        ));
    }

    /// A store into this work-item's own record: one field (plainly, by compound assignment or
    /// by an atomic), the whole record as a literal, a copy of an input record, or an input
    /// record bound with `let mut`, changed and stored.
    pub(super) fn record_store(&mut self) {
        let outputs: Vec<usize> = (0..self.record_buffers.len())
            .filter(|&i| self.record_buffers[i].output)
            .collect();
        let index = *self.random.pick(&outputs);
        let name = self.record_buffers[index].name.clone();
        let input = (0..self.record_buffers.len()).find(|&i| !self.record_buffers[i].output);
        let field = self.random.below(self.record_fields.len() as u64) as usize;
        let (field_name, ty) = self.record_fields[field].clone();
        let depth = self.expression_depth();
        let place = format!("{name}[gid].{field_name}");
        let reads_allowed = !self.output_reads_avoided();
        match self.random.weighted(&[5, 2, 2, 2, 2, 2]) {
            1 if reads_allowed && ty.is_integer() => {
                let (operator, value) = self.integer_update(ty, Uniformity::Varying);
                self.note("record field compound assignment");
                self.code
                    .line(integer_update_line(&place, &operator, &value.text));
            }
            5 if reads_allowed && self.options.atomics && ATOMIC_INTEGER_TYPES.contains(&ty) => {
                let operation = *self.random.pick(&[
                    "atomic_add",
                    "atomic_max",
                    "atomic_xor",
                    "atomic_exchange",
                ]);
                let value = self.integer_value(ty, Uniformity::Varying, depth);
                self.note("record field atomic");
                self.code
                    .line(format!("{operation}({place}, {});", value.text));
            }
            2 => self.store_whole_record(index),
            3 if input.is_some() => {
                let input = self.record_buffers[input.unwrap()].clone();
                let position = self.index_into(input.length, Uniformity::Varying, depth);
                self.note("record copy");
                self.code
                    .line(format!("{name}[gid] = {}[{}];", input.name, position.text));
            }
            4 if input.is_some() => {
                let input = self.record_buffers[input.unwrap()].clone();
                let position = self.index_into(input.length, Uniformity::Varying, depth);
                let value = self.field_value(field, depth);
                let copy = self.fresh("rec");
                self.note("record bound, changed and stored");
                self.code.line(format!(
                    "let mut {copy} = {}[{}];",
                    input.name, position.text
                ));
                self.code
                    .line(format!("{copy}.{field_name} = {};", value.text));
                self.code.line(format!("{name}[gid] = {copy};"));
            }
            _ => {
                let value = self.field_value(field, depth);
                self.note("record field store");
                self.code.line(format!("{place} = {};", value.text));
            }
        }
    }

    /// `let r = nodes[i];`: its fields become readable values `r.field`.
    pub(super) fn record_let(&mut self) {
        let inputs: Vec<usize> = (0..self.record_buffers.len())
            .filter(|&i| !self.record_buffers[i].output)
            .collect();
        let input = self.record_buffers[*self.random.pick(&inputs)].clone();
        let depth = self.expression_depth();
        let position = self.index_into(input.length, Uniformity::Varying, depth);
        let name = self.fresh("rec");
        self.note("record let");
        self.code
            .line(format!("let {name} = {}[{}];", input.name, position.text));
        for (field, ty) in self.record_fields.clone() {
            self.scope.add_variable(Variable {
                name: format!("{name}.{field}"),
                ty: ValueType::Scalar(ty),
                facts: Facts::new(position.uniformity(), crate::kernel::field_facts(ty)),
                mutability: None,
            });
        }
    }
}
