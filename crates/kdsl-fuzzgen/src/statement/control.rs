//! Branches and loops: conditions, `if`, constant and dynamic `for`, `while`, and loop exits,
//! each keeping its trip count and uniformity known.

use crate::facts::{Facts, Uniformity, ValueFacts};
use crate::generator::{Expr, Generator};
use crate::scope::{Control, Variable};
use crate::types::{integer_literal, ValueType};
use kdsl_ir::ScalarType;

impl Generator<'_> {
    /// A condition for a branch or loop exit here: uniform enough to keep the control as it
    /// is, or (when `keep_uniform` is false) anything.
    pub(super) fn condition(&mut self, keep_uniform: bool) -> Expr {
        let uniformity = if keep_uniform {
            self.control.uniformity_needed()
        } else {
            Uniformity::Varying
        };
        let depth = self.expression_depth();
        self.bool_value(uniformity, depth)
    }

    /// Generates with control treated as divergent: for expressions that only some
    /// work-items evaluate (loop conditions re-evaluated after others left).
    pub(super) fn divergently<T>(
        &mut self,
        divergent: bool,
        generate: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let saved = self.control;
        if divergent {
            self.control.work_group_uniform = false;
            self.control.sub_group_uniform = false;
        }
        let result = generate(self);
        self.control = saved;
        result
    }

    pub(super) fn block_size(&mut self) -> u32 {
        1 + self.random.below(u64::from(self.options.block_statements)) as u32
    }

    pub(super) fn if_statement(&mut self) {
        let keep_uniform = self.control.work_group_uniform && self.percent(60);
        let condition = self.condition(keep_uniform);
        self.note("if");
        self.code.open(format!("if {} {{", condition.text));
        let inner = self.control.branch(condition.uniformity());
        let size = self.block_size();
        self.nested_block(inner, size);
        let mut chain = 0;
        let mut decided = condition.uniformity();
        while self.percent(35) && chain < 2 {
            chain += 1;
            // Only work-items that failed the earlier conditions evaluate this one.
            let saved = self.control;
            self.control = saved.branch(decided);
            // The condition is written after the previous branch's `}`: nothing may be bound
            // for it before, where the previous branch still is.
            self.tuple_bindings = false;
            let next = self.condition(keep_uniform);
            self.tuple_bindings = true;
            self.control = saved;
            decided = decided.join(next.uniformity());
            self.note("else if");
            self.code.close("}");
            self.code.open(format!("else if {} {{", next.text));
            let inner = self.control.branch(decided);
            let size = self.block_size();
            self.nested_block(inner, size);
        }
        if self.percent(40) {
            self.note("else");
            self.code.close("}");
            self.code.open("else {");
            let inner = self.control.branch(decided);
            let size = self.block_size();
            self.nested_block(inner, size);
        }
        self.code.close("}");
    }

    /// The control of a loop body that runs up to `trips` times, whose bounds have
    /// uniformity `bounds`.
    pub(super) fn loop_control(&mut self, trips: u64, bounds: Uniformity) -> Control {
        let outer = self.control;
        let uniform_body =
            outer.work_group_uniform && bounds == Uniformity::WorkGroup && self.percent(60);
        let sub_group_body = outer.sub_group_uniform
            && bounds <= Uniformity::SubGroup
            && (uniform_body || self.percent(30));
        Control {
            work_group_uniform: uniform_body,
            sub_group_uniform: sub_group_body,
            in_loop: true,
            loop_exits_uniform: uniform_body || sub_group_body,
            execution_bound: outer.execution_bound * trips.max(1),
            depth: outer.depth + 1,
        }
    }

    pub(super) fn loop_body(
        &mut self,
        control: Control,
        index: Option<(String, ValueType, Facts)>,
    ) {
        let saved = self.control;
        self.control = control;
        self.scope.push();
        if let Some((name, ty, facts)) = index {
            self.scope.add_variable(Variable {
                name,
                ty,
                facts,
                mutability: None,
            });
        }
        let size = self.block_size();
        self.statements(size);
        self.scope.pop();
        self.control = saved;
    }

    pub(super) fn unroll_hint(&mut self, constant_trip_count: bool) -> &'static str {
        match self.random.below(8) {
            0 if constant_trip_count => " unroll",
            1 => " unroll(2)",
            2 => " unroll(1)",
            _ => "",
        }
    }

    pub(super) fn constant_loop(&mut self) {
        let ty = *self.random.pick(&crate::types::INTEGER_TYPES);
        let start: i128 = if ty.is_signed_integer() && self.percent(30) {
            -self.random.between(1, 3)
        } else {
            self.random.between(0, 3)
        };
        let step = if self.percent(30) {
            self.random.between(2, 3)
        } else {
            1
        };
        let trips = self.random.between(1, 6);
        let end = start + trips * step - self.random.between(0, step - 1);
        let last = start + ((end - start - 1) / step) * step;
        let name = self.fresh("i");
        let step_text = if step == 1 && self.percent(70) {
            String::new()
        } else {
            format!(" step {}", integer_literal(step, ty, &mut self.random))
        };
        let hint = self.unroll_hint(true);
        // A descending range visits `end - 1`, `end - 1 - step`, ... down to `start` or above.
        let descending = self.percent(30);
        let range = format!(
            "{}..{}",
            integer_literal(start, ty, &mut self.random),
            integer_literal(end, ty, &mut self.random)
        );
        let (range, low, high) = if descending {
            self.note("for loop, constant bounds, descending");
            (format!("({range}).rev()"), start, end - 1)
        } else {
            self.note("for loop, constant bounds");
            (range, start, last)
        };
        self.code
            .open(format!("for {name} in {range}{step_text}{hint} {{"));
        let control = self.loop_control(trips as u64, Uniformity::WorkGroup);
        let facts = Facts::new(
            if control.work_group_uniform {
                Uniformity::WorkGroup
            } else {
                Uniformity::Varying
            },
            ValueFacts::interval(low, high),
        );
        self.loop_body(control, Some((name, ValueType::Scalar(ty), facts)));
        self.code.close("}");
    }

    pub(super) fn dynamic_loop(&mut self) {
        let ty = *self.random.pick(&[
            ScalarType::U32,
            ScalarType::I32,
            ScalarType::U64,
            ScalarType::I64,
            ScalarType::U16,
        ]);
        let keep_uniform = self.control.work_group_uniform && self.percent(60);
        let uniformity = if keep_uniform {
            Uniformity::WorkGroup
        } else {
            Uniformity::Varying
        };
        let depth = self.expression_depth().min(3);
        let limit = self.random.between(1, 8);
        let signed = ty.is_signed_integer();
        // Ascending, the end and the step are evaluated before every iteration (by the
        // work-items still in the loop); descending, the start and the step.
        let descending = self.percent(25);
        // start: 0..=2 (or -2..=2 when signed); end at most `limit`; step 1..=3.
        let start = if self.percent(50) {
            let first = self.random.between(0, 2);
            self.integer_constant(first, ty)
        } else {
            let raw = self.divergently(!keep_uniform && descending, |me| {
                me.integer_value(ty, uniformity, depth)
            });
            let three = integer_literal(3, ty, &mut self.random);
            Expr::new(format!("({} % {three})", raw.text), raw.ty, raw.facts)
        };
        let raw_end = self.divergently(!keep_uniform && !descending, |me| {
            me.integer_value(ty, uniformity, depth)
        });
        let end = format!(
            "min({}, {})",
            raw_end.text,
            integer_literal(limit, ty, &mut self.random)
        );
        let step = if self.percent(50) {
            None
        } else {
            let raw = self.divergently(!keep_uniform, |me| me.integer_value(ty, uniformity, depth));
            let three = integer_literal(3, ty, &mut self.random);
            let one = integer_literal(1, ty, &mut self.random);
            Some(if signed {
                format!("(abs(({} % {three})) + {one})", raw.text)
            } else {
                format!("(({} % {three}) + {one})", raw.text)
            })
        };
        let bounds = start.uniformity().join(raw_end.uniformity());
        let name = self.fresh("j");
        let step_text = step.map(|s| format!(" step {s}")).unwrap_or_default();
        let hint = self.unroll_hint(false);
        // Descending, the values visited stay in the same interval.
        let range = if descending {
            self.note("for loop, data-dependent bounds, descending");
            format!("({}..{end}).rev()", start.text)
        } else {
            self.note("for loop, data-dependent bounds");
            format!("{}..{end}", start.text)
        };
        self.code
            .open(format!("for {name} in {range}{step_text}{hint} {{"));
        let trips = (limit + 2) as u64;
        let control = self.loop_control(
            trips,
            if keep_uniform {
                bounds
            } else {
                Uniformity::Varying
            },
        );
        let low = if signed { -2 } else { 0 };
        let facts = Facts::new(
            if control.work_group_uniform {
                Uniformity::WorkGroup
            } else {
                Uniformity::Varying
            },
            ValueFacts::interval(low, limit - 1),
        );
        self.loop_body(control, Some((name, ValueType::Scalar(ty), facts)));
        self.code.close("}");
    }

    pub(super) fn while_loop(&mut self) {
        let keep_uniform = self.control.work_group_uniform && self.percent(50);
        let counter = self.fresh("w");
        let limit = self.random.between(1, 6);
        let condition = self.divergently(!keep_uniform, |me| me.condition(keep_uniform));
        self.note("while loop");
        self.code.line(format!("let mut {counter}: u32 = 0u32;"));
        self.code.open(format!(
            "while ({counter} < {limit}u32) && {} {{",
            condition.text
        ));
        self.code.line(format!("{counter} += 1u32;"));
        let control = self.loop_control(
            limit as u64,
            if keep_uniform {
                condition.uniformity()
            } else {
                Uniformity::Varying
            },
        );
        self.loop_body(control, None);
        self.code.close("}");
    }

    pub(super) fn loop_exit(&mut self) {
        let keep_uniform = self.control.loop_exits_uniform;
        let condition = self.condition(keep_uniform);
        if keep_uniform && condition.uniformity() > self.control.uniformity_needed() {
            return;
        }
        let exit = if self.percent(50) {
            "break"
        } else {
            "continue"
        };
        self.note(if exit == "break" { "break" } else { "continue" });
        self.code.open(format!("if {} {{", condition.text));
        self.code.line(format!("{exit};"));
        self.code.close("}");
    }
}
