//! The walk of one function for given levels of its arguments: flow-sensitive over the
//! structured body, walked again while a loop's state rises.

use super::levels::{join_values, same_levels, CauseKind, Control, Need, Origin, Value};
use super::report::condition_span;
use super::{sub_group_operation, work_group_operation, work_item_query, Uniformity};
use super::{Analyzer, Key, Summary};
use crate::diagnostic::Diagnostic;
use crate::ir::*;
use crate::span::Span;
use crate::types::{AddressSpace, ParameterType};
use std::collections::HashMap;

/// What the analysis keeps of a loop from one pass to the next.
#[derive(Clone, Debug)]
struct LoopState {
    /// The variables' levels at the head of the loop, joined over the entry and every back edge.
    head: Vec<Value>,
    /// The join of the control under which work-items leave the loop (`break`, `return`,
    /// its own condition): from then on the others run it without them.
    exit: Control,
}

/// A loop being walked.
struct Frame {
    /// The loop statement, the key of its [`LoopState`].
    key: *const Statement,
    span: Span,
    /// The variables' levels at the `break`s, joined; `None` while none was reached.
    broken: Option<Vec<Value>>,
    /// The same at the `continue`s.
    continued: Option<Vec<Value>>,
}

fn join_into(slot: &mut Option<Vec<Value>>, values: &[Value]) {
    match slot {
        Some(slot) => join_values(slot, values),
        None => *slot = Some(values.to_vec()),
    }
}

pub(super) struct FunctionAnalysis<'a, 'm> {
    pub(super) analyzer: &'a mut Analyzer<'m>,
    id: FunctionId,
    function: &'m Function,
    parameters: Vec<Value>,
    /// Kept across passes, by the loop statement's address: statements have no ids, and the
    /// key lives only while this walk borrows the module (no result refers to it).
    loops: HashMap<*const Statement, LoopState>,
    /// A loop's state rose after its body was walked in this pass: walk again.
    changed: bool,
    // What follows is reset at every pass.
    values: Vec<Value>,
    /// Whether the point walked can run (not after an unconditional exit).
    reachable: bool,
    control: Control,
    /// The join of the control at the `return`s walked since the innermost enclosing `if` or
    /// loop began: code after it runs without the work-items that returned.
    escaped_return: Control,
    /// The same for `break` and `continue` of the innermost loop.
    escaped_loop: Control,
    frames: Vec<Frame>,
    result: Value,
    pub(super) needs: Option<Need>,
    pub(super) diagnostics: Vec<Diagnostic>,
    calls: Vec<Key>,
    array_stores: Vec<Value>,
}

impl<'a, 'm> FunctionAnalysis<'a, 'm> {
    pub(super) fn run(analyzer: &'a mut Analyzer<'m>, key: &Key) -> Summary {
        let module = analyzer.module;
        let (id, levels) = key;
        let function = module.function(*id);
        let parameters = levels
            .iter()
            .enumerate()
            .map(|(index, &level)| {
                Value::new(level, Origin::Parameter(*id, ParameterId(index as u32)))
            })
            .collect();
        let mut analysis = FunctionAnalysis {
            analyzer,
            id: *id,
            function,
            parameters,
            loops: HashMap::new(),
            changed: false,
            values: Vec::new(),
            reachable: true,
            control: Control::UNIFORM,
            escaped_return: Control::UNIFORM,
            escaped_loop: Control::UNIFORM,
            frames: Vec::new(),
            result: Value::UNIFORM,
            needs: None,
            diagnostics: Vec::new(),
            calls: Vec::new(),
            array_stores: Vec::new(),
        };
        loop {
            analysis.pass();
            if !analysis.changed {
                break;
            }
        }
        Summary {
            result: analysis.result,
            needs: analysis.needs,
            diagnostics: analysis.diagnostics,
            calls: analysis.calls,
            array_stores: analysis.array_stores,
        }
    }

    /// One walk of the whole body; only the last one's findings count.
    fn pass(&mut self) {
        self.changed = false;
        self.values = vec![Value::UNIFORM; self.function.variables.len()];
        self.reachable = true;
        self.control = Control::UNIFORM;
        self.escaped_return = Control::UNIFORM;
        self.escaped_loop = Control::UNIFORM;
        self.frames.clear();
        self.result = Value::UNIFORM;
        self.needs = None;
        self.diagnostics.clear();
        self.calls.clear();
        self.array_stores = vec![Value::UNIFORM; self.function.parameters.len()];
        let body = &self.function.body;
        self.block(body);
    }

    fn block(&mut self, block: &'m Block) {
        for statement in block {
            if !self.reachable {
                // After an unconditional exit: never runs.
                break;
            }
            self.statement(statement);
        }
    }

    fn statement(&mut self, statement: &'m Statement) {
        let span = statement.span;
        let control = self.control;
        match &statement.kind {
            StatementKind::Assign { variable, value } => {
                let value = self.expression(value, control);
                let assigned = value.join(control.assigned(self.id, *variable));
                if let Some(slot) = self.values.get_mut(variable.0 as usize) {
                    *slot = assigned;
                }
            }
            StatementKind::Store { place, value } => {
                let index = self.place(place, control);
                let value = self.expression(value, control);
                // A private array is the work-item's own: as uniform as everything stored in it
                // (it starts zeroed), where and under which control.
                if let PlaceBase::Variable(id) = place.base {
                    if place.space == AddressSpace::Private {
                        let stored = value
                            .join(Value::new(index, Origin::Assigned(self.id, id)))
                            .join(control.assigned(self.id, id));
                        if let Some(slot) = self.values.get_mut(id.0 as usize) {
                            *slot = slot.join(stored);
                        }
                    }
                }
                // The same for a private array parameter, which the caller then reads.
                if let (PlaceBase::Parameter(id), AddressSpace::Private) = (place.base, place.space)
                {
                    let stored = value
                        .join(Value::new(index, Origin::Load(self.id, place.base)))
                        .join(control.as_value());
                    if let Some(slot) = self.array_stores.get_mut(id.0 as usize) {
                        *slot = slot.join(stored);
                    }
                }
            }
            StatementKind::VectorStore { place, values } => {
                self.place(place, control);
                for value in values {
                    self.expression(value, control);
                }
            }
            StatementKind::Print { arguments, .. } => {
                for argument in arguments {
                    self.expression(argument, control);
                }
            }
            StatementKind::If {
                condition,
                accept,
                reject,
            } => self.if_statement(condition, accept, reject, span),
            StatementKind::Loop {
                body, continuing, ..
            } => self.loop_statement(statement, body, continuing),
            StatementKind::Break => {
                // `while` and `for` lower to a loop whose body starts with
                // `if !(condition) { break; }`, the `break` spanning the whole loop.
                let own_condition = self.frames.last().is_some_and(|frame| frame.span == span);
                let kind = if own_condition {
                    CauseKind::LoopCondition
                } else {
                    CauseKind::Break
                };
                let exit = control.exit(span, kind);
                if let Some(key) = self.frames.last().map(|frame| frame.key) {
                    self.raise_exit(key, exit);
                }
                if let Some(frame) = self.frames.last_mut() {
                    join_into(&mut frame.broken, &self.values);
                }
                self.escaped_loop = self.escaped_loop.join(exit);
                self.reachable = false;
            }
            StatementKind::Continue => {
                let exit = control.exit(span, CauseKind::Continue);
                if let Some(frame) = self.frames.last_mut() {
                    join_into(&mut frame.continued, &self.values);
                }
                self.escaped_loop = self.escaped_loop.join(exit);
                self.reachable = false;
            }
            StatementKind::Return { value } => {
                if let Some(value) = value {
                    let value = self.expression(value, control);
                    self.result = self.result.join(value).join(control.as_value());
                }
                let exit = control.exit(span, CauseKind::Return);
                // Every enclosing loop is left too.
                let keys: Vec<_> = self.frames.iter().map(|frame| frame.key).collect();
                for key in keys {
                    self.raise_exit(key, exit);
                }
                self.escaped_return = self.escaped_return.join(exit);
                self.reachable = false;
            }
            StatementKind::Matrix(op) => {
                // A sub-group (or matrix group) operation on operands the whole group agrees
                // on; the tiles it writes hold different elements in each work-item.
                for value in op.expressions() {
                    let level = self.expression(value, control);
                    self.require_same_operand(op.name(), value, level, Uniformity::SubGroup);
                }
                let need = Need {
                    allowed: Uniformity::SubGroup,
                    operation: op.name(),
                };
                self.require(need, span, control, None);
                let written = Value::new(Uniformity::Varying, Origin::Builtin(op.name()));
                for tile in op.tiles().0 {
                    let slot = match tile {
                        PlaceBase::Variable(id) => self.values.get_mut(id.0 as usize),
                        PlaceBase::Parameter(id) => self.array_stores.get_mut(id.0 as usize),
                    };
                    if let Some(slot) = slot {
                        *slot = slot.join(written);
                    }
                }
            }
            // Each work-item copies, commits and waits on its own: any control will do.
            StatementKind::AsyncCopy(crate::AsyncCopyOp::Copy {
                destination,
                source,
                ..
            }) => {
                self.place(destination, control);
                self.place(source, control);
            }
            StatementKind::AsyncCopy(_) | StatementKind::DeviceFence => {}
            // A work-group collective: every work-item reaches it, with the same operands.
            StatementKind::TileCopy(op) => {
                for value in op.expressions() {
                    let level = self.expression(value, control);
                    self.require_same_operand(op.name(), value, level, Uniformity::Uniform);
                }
                if let crate::TileCopyOp::Copy {
                    destination: local, ..
                }
                | crate::TileCopyOp::Store { source: local, .. } = op
                {
                    self.place(local, control);
                }
                let need = Need {
                    allowed: Uniformity::Uniform,
                    operation: op.name(),
                };
                self.require(need, span, control, None);
            }
            StatementKind::Barrier { .. } => {
                let need = Need {
                    allowed: Uniformity::Uniform,
                    operation: "barrier()",
                };
                self.require(need, span, control, None);
            }
            StatementKind::Evaluate { value } => {
                self.expression(value, control);
            }
        }
    }

    fn if_statement(
        &mut self,
        condition: &'m Expression,
        accept: &'m Block,
        reject: &'m Block,
        span: Span,
    ) {
        let control = self.control;
        let value = self.expression(condition, control);
        let branch = control.join(Control::condition(value, condition_span(condition, span)));
        let saved = (self.escaped_return, self.escaped_loop);
        self.escaped_return = Control::UNIFORM;
        self.escaped_loop = Control::UNIFORM;
        let entry = self.values.clone();
        self.control = branch;
        self.block(accept);
        let accepted = std::mem::replace(&mut self.values, entry);
        let accepted = self.reachable.then_some(accepted);
        self.reachable = true;
        self.control = branch;
        self.block(reject);
        match (accepted, self.reachable) {
            (Some(accepted), true) => join_values(&mut self.values, &accepted),
            (Some(accepted), false) => {
                self.values = accepted;
                self.reachable = true;
            }
            (None, _) => {}
        }
        let inner = self.escaped_return.join(self.escaped_loop);
        self.escaped_return = saved.0.join(self.escaped_return);
        self.escaped_loop = saved.1.join(self.escaped_loop);
        // Whoever left inside the `if` is not there after it.
        self.control = control.join(inner);
    }

    fn loop_statement(&mut self, statement: &'m Statement, body: &'m Block, continuing: &'m Block) {
        let key: *const Statement = statement;
        let control = self.control;
        let variables = self.values.len();
        let state = self.loops.entry(key).or_insert_with(|| LoopState {
            head: vec![Value::UNIFORM; variables],
            exit: Control::UNIFORM,
        });
        join_values(&mut state.head, &self.values);
        self.values = state.head.clone();
        let saved = (self.escaped_return, self.escaped_loop);
        self.escaped_return = Control::UNIFORM;
        self.escaped_loop = Control::UNIFORM;
        self.frames.push(Frame {
            key,
            span: statement.span,
            broken: None,
            continued: None,
        });
        self.control = control.join(self.loop_exit(key));
        self.block(body);
        let mut next = self.reachable.then(|| std::mem::take(&mut self.values));
        if let Some(continued) = self.frames.last_mut().and_then(|f| f.continued.take()) {
            match &mut next {
                Some(next) => join_values(next, &continued),
                None => next = Some(continued),
            }
        }
        if let Some(next) = next {
            // Everyone still in the loop, whether it finished the body or continued.
            self.values = next;
            self.reachable = true;
            self.escaped_loop = Control::UNIFORM;
            self.control = control.join(self.loop_exit(key));
            self.block(continuing);
            if self.reachable {
                if let Some(state) = self.loops.get_mut(&key) {
                    let before = state.head.clone();
                    join_values(&mut state.head, &self.values);
                    if !same_levels(&before, &state.head) {
                        self.changed = true;
                    }
                }
            }
        }
        let frame = self.frames.pop();
        match frame.and_then(|frame| frame.broken) {
            Some(broken) => {
                self.values = broken;
                self.reachable = true;
            }
            None => {
                // Left only by `return`, if at all.
                self.values = vec![Value::UNIFORM; variables];
                self.reachable = false;
            }
        }
        let returned = self.escaped_return;
        self.escaped_return = saved.0.join(returned);
        self.escaped_loop = saved.1;
        // Every work-item leaves the loop in the end, but those that returned are gone.
        self.control = control.join(returned);
    }

    fn loop_exit(&self, key: *const Statement) -> Control {
        self.loops
            .get(&key)
            .map_or(Control::UNIFORM, |state| state.exit)
    }

    /// Work-items leave the loop under `exit`; the next iterations run without them.
    fn raise_exit(&mut self, key: *const Statement, exit: Control) {
        if let Some(state) = self.loops.get_mut(&key) {
            let raised = state.exit.join(exit);
            if raised.level != state.exit.level {
                state.exit = raised;
                self.changed = true;
            }
        }
    }

    /// Walks a place's indices; gives their join.
    fn place(&mut self, place: &'m Place, control: Control) -> Uniformity {
        let mut level = Uniformity::Uniform;
        for index in &place.indices {
            level = level.max(self.expression(index, control).level);
        }
        level
    }

    fn expression(&mut self, expression: &'m Expression, control: Control) -> Value {
        match &expression.kind {
            ExpressionKind::Literal(_) => Value::UNIFORM,
            ExpressionKind::Parameter(id) => self
                .parameters
                .get(id.0 as usize)
                .copied()
                .unwrap_or(Value::UNIFORM),
            ExpressionKind::Variable(id) => self
                .values
                .get(id.0 as usize)
                .copied()
                .unwrap_or(Value::UNIFORM),
            ExpressionKind::Load(place) | ExpressionKind::VectorLoad { place, .. } => {
                let index = self.place(place, control);
                // A kernel's read-only buffers overlap no writable one (docs/language.md,
                // "Types"), so nothing changes them during the launch: the same element is the
                // same value everywhere. Writable buffers and arrays may hold anything.
                // Private arrays are as uniform as what was stored in them.
                let contents = match place.base {
                    PlaceBase::Parameter(_) if place.space == AddressSpace::Private => {
                        self.private_array_contents(place.base).level
                    }
                    PlaceBase::Parameter(id) if self.buffer_is_invariant(id) => Uniformity::Uniform,
                    PlaceBase::Parameter(_) => Uniformity::Varying,
                    PlaceBase::Variable(id) if place.space == AddressSpace::Private => self
                        .values
                        .get(id.0 as usize)
                        .map_or(Uniformity::Varying, |value| value.level),
                    PlaceBase::Variable(_) => Uniformity::Varying,
                };
                Value::new(index.max(contents), Origin::Load(self.id, place.base))
            }
            ExpressionKind::Unary { operand, .. } => self.expression(operand, control),
            ExpressionKind::Binary { left, right, .. } => {
                let left = self.expression(left, control);
                let right = self.expression(right, control);
                left.join(right)
            }
            ExpressionKind::ShortCircuit { left, right, .. } => {
                let left_value = self.expression(left, control);
                // The right side runs only where the left one does not decide.
                let right_control = control.join(Control::condition(left_value, left.span));
                let right = self.expression(right, right_control);
                left_value.join(right)
            }
            ExpressionKind::Conditional {
                condition,
                accept,
                reject,
            } => {
                let condition_value = self.expression(condition, control);
                // Each arm runs only where the condition chose it.
                let arm_control = control.join(Control::condition(condition_value, condition.span));
                let accept = self.expression(accept, arm_control);
                let reject = self.expression(reject, arm_control);
                condition_value.join(accept).join(reject)
            }
            ExpressionKind::Cast { value } => self.expression(value, control),
            // The extent is a kernel argument: uniform, like every parameter.
            ExpressionKind::DimensionIndex { index, .. } => self.expression(index, control),
            ExpressionKind::Select {
                condition,
                accept,
                reject,
            } => {
                let condition = self.expression(condition, control);
                let accept = self.expression(accept, control);
                let reject = self.expression(reject, control);
                condition.join(accept).join(reject)
            }
            ExpressionKind::Call {
                function,
                arguments,
            } => self.call(*function, arguments, expression.span, control),
            ExpressionKind::WorkItem { query, .. } => {
                Value::new(work_item_query(*query), Origin::Builtin(query.name()))
            }
            ExpressionKind::Math { arguments, .. } => {
                let mut value = Value::UNIFORM;
                for argument in arguments {
                    value = value.join(self.expression(argument, control));
                }
                value
            }
            ExpressionKind::Atomic {
                op,
                place,
                value,
                comparand,
            } => {
                self.place(place, control);
                self.expression(value, control);
                if let Some(comparand) = comparand {
                    self.expression(comparand, control);
                }
                Value::new(Uniformity::Varying, Origin::Atomic(op.name()))
            }
            ExpressionKind::SubGroup { op, arguments } => {
                let values: Vec<Value> = arguments
                    .iter()
                    .map(|argument| self.expression(argument, control))
                    .collect();
                let levels: Vec<Uniformity> = values.iter().map(|v| v.level).collect();
                if *op == SubGroupOp::Broadcast {
                    self.require_same_argument(
                        op.name(),
                        &arguments[1],
                        values[1],
                        Uniformity::SubGroup,
                    );
                }
                let rules = sub_group_operation(*op, &levels);
                if let Some(allowed) = rules.needs {
                    let need = Need {
                        allowed,
                        operation: op.name(),
                    };
                    self.require(need, expression.span, control, None);
                }
                // Where the result is as uniform as an operand, the operand says why.
                values
                    .into_iter()
                    .find(|value| value.level == rules.result)
                    .unwrap_or(Value::new(rules.result, Origin::Builtin(op.name())))
            }
            ExpressionKind::WorkGroup { op, arguments } => {
                let values: Vec<Value> = arguments
                    .iter()
                    .map(|argument| self.expression(argument, control))
                    .collect();
                if *op == WorkGroupOp::Broadcast {
                    self.require_same_argument(
                        op.name(),
                        &arguments[1],
                        values[1],
                        Uniformity::Uniform,
                    );
                }
                let rules = work_group_operation(*op);
                if let Some(allowed) = rules.needs {
                    let need = Need {
                        allowed,
                        operation: op.name(),
                    };
                    self.require(need, expression.span, control, None);
                }
                Value::new(rules.result, Origin::Builtin(op.name()))
            }
        }
    }

    /// Whether nothing writes the buffer parameter during the launch: it is declared read-only
    /// and, in a device function, every caller passed it a buffer nothing writes (its level is
    /// uniform; a kernel's parameters all are).
    fn buffer_is_invariant(&self, id: ParameterId) -> bool {
        let read_only = matches!(
            self.function.parameters.get(id.0 as usize),
            Some(Parameter {
                ty: ParameterType::Buffer {
                    writable: false,
                    space: AddressSpace::Global | AddressSpace::Constant,
                    ..
                },
                ..
            })
        );
        let level = self.parameters.get(id.0 as usize).map(|value| value.level);
        read_only && level == Some(Uniformity::Uniform)
    }

    /// What a private array variable or array parameter holds, as uniform as it is: for a
    /// parameter, what the caller passed joined with what this function stored since.
    fn private_array_contents(&self, base: PlaceBase) -> Value {
        match base {
            PlaceBase::Variable(id) => self
                .values
                .get(id.0 as usize)
                .copied()
                .unwrap_or(Value::UNIFORM),
            PlaceBase::Parameter(id) => {
                let passed = self.parameters.get(id.0 as usize).copied();
                let stored = self.array_stores.get(id.0 as usize).copied();
                passed
                    .unwrap_or(Value::UNIFORM)
                    .join(stored.unwrap_or(Value::UNIFORM))
            }
        }
    }

    fn call(
        &mut self,
        function: FunctionId,
        arguments: &'m [Argument],
        span: Span,
        control: Control,
    ) -> Value {
        let mut levels = Vec::with_capacity(arguments.len());
        for argument in arguments {
            levels.push(match argument {
                Argument::Value(value) => self.expression(value, control).level,
                // What the callee reads of a buffer is as uniform as the caller's buffer
                // really is: a writable one passed as read-only still changes.
                Argument::Buffer(id) if self.buffer_is_invariant(*id) => Uniformity::Uniform,
                Argument::Buffer(_) => Uniformity::Varying,
                // A private array's level is that of its contents; local memory is varying
                // in the callee whatever is passed.
                Argument::Array(base) => self.private_array_contents(*base).level,
            });
        }
        if function.0 as usize >= self.analyzer.module.functions.len() {
            return Value::new(Uniformity::Varying, Origin::Builtin("call"));
        }
        let key = (function, levels);
        let summary = self.analyzer.summary(&key);
        self.calls.push(key);
        // A private array the callee writes holds, besides what it held, what the callee
        // stored, as uniform as the call's control.
        for (argument, stored) in arguments.iter().zip(&summary.array_stores) {
            let Argument::Array(base) = argument else {
                continue;
            };
            let stored = stored.join(control.as_value());
            let slot = match *base {
                PlaceBase::Variable(id) => self.values.get_mut(id.0 as usize),
                PlaceBase::Parameter(id) => self.array_stores.get_mut(id.0 as usize),
            };
            if let Some(slot) = slot {
                *slot = slot.join(stored);
            }
        }
        if let Some(need) = summary.needs {
            self.require(need, span, control, Some(function));
        }
        summary.result
    }
}
