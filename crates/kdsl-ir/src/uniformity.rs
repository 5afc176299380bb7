//! The uniformity analysis: every `barrier()` (and work-group collective) must be reached by
//! every work-item of the work-group, every sub-group operation by every work-item of the
//! sub-group.
//!
//! Each value gets a level of a three-level lattice, [`Uniformity`]: the same in the whole
//! work-group, the same within each sub-group, or possibly different in every work-item.
//! Literals, scalar kernel parameters and group-wide queries are uniform; ids vary, and so does
//! anything read from memory except an element of a private array that only uniform values
//! were stored in, or of a buffer nothing writes during the launch, at a uniform index. A
//! kernel's read-only buffer is such a buffer (no writable one overlaps it); a device
//! function's read-only buffer parameter is one only in a call that passes such a buffer, not
//! a writable one. Operators take the join of their operands, and a variable assigned where
//! control is divergent becomes at least as varying as that control.
//!
//! The control flow has a level too: the join of the conditions of the enclosing `if`s, of
//! every earlier divergent `return` of the function (whoever took it is gone), and for a loop
//! of the conditions under which some work-items leave it (`break`, `return`, its own condition)
//! while others go round again. After a loop control is back at the loop's level (every
//! work-item leaves it in the end), unless a divergent `return` happened inside.
//!
//! The analysis is flow-sensitive and structured: it walks a function's body in order, joins
//! the branches of an `if`, and keeps, for every loop, the state at its head and the level of
//! its exits. When a pass raised either after the loop's body had been walked, it walks the
//! whole function again; the lattice is finite and every step only raises levels, so this
//! ends, and each pass is linear in the size of the function (nested loops do not multiply).
//!
//! A device function is analysed with the uniformity of its actual arguments, once per
//! function and vector of argument levels, and reports inside itself only for the levels it
//! is called with. A call to a function that (transitively) contains a barrier or a sub-group
//! operation is itself such an operation at the call site.

use crate::codes::ErrorCode;
use crate::diagnostic::Diagnostic;
use crate::ir::*;
use crate::span::Span;
use crate::types::{AddressSpace, ParameterType};
use std::collections::{HashMap, HashSet};

/// How far a value (or the control flow at a point) is the same across work-items.
/// Ordered from most to least uniform; the join of two levels is their maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Uniformity {
    /// The same in every work-item of the work-group.
    Uniform,
    /// The same in every work-item of a sub-group, possibly different between sub-groups.
    SubGroup,
    /// Possibly different in every work-item.
    Varying,
}

/// What a built-in needs of the control flow around it, and how uniform its result is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperationUniformity {
    /// The most divergent control the operation may run under; `None` when it may run
    /// anywhere. `Uniform` for barriers and work-group collectives, `SubGroup` for sub-group
    /// operations.
    pub needs: Option<Uniformity>,
    /// The level of its result.
    pub result: Uniformity,
}

/// The uniformity rules of every sub-group operation, given the levels of its arguments.
/// New operations get their row here (no wildcard, so adding a `SubGroupOp` variant fails to
/// compile until it has one). A lane out of range is undefined behaviour, so the rules may
/// assume every lane read exists.
pub fn sub_group_operation(op: SubGroupOp, arguments: &[Uniformity]) -> OperationUniformity {
    use Uniformity::*;
    let argument = |index: usize| arguments.get(index).copied().unwrap_or(Varying);
    let (needs, result) = match op {
        // Queries: no communication between lanes. A work-group need not be a multiple of the
        // sub-group size, so its last sub-group may have fewer lanes than the others.
        SubGroupOp::LocalId => (None, Varying),
        SubGroupOp::GroupCount => (None, Uniform),
        SubGroupOp::Size | SubGroupOp::GroupId => (None, SubGroup),
        // Every lane reads another lane's value, so the whole sub-group must be there. A value
        // already the same in the sub-group stays what it is; a varying one read from the same
        // lane everywhere (a broadcast) becomes the same in the sub-group.
        SubGroupOp::Shuffle | SubGroupOp::Broadcast => {
            let (value, lane) = (argument(0), argument(1));
            let result = if value <= SubGroup {
                value
            } else if lane <= SubGroup {
                SubGroup
            } else {
                Varying
            };
            (Some(SubGroup), result)
        }
        SubGroupOp::ShuffleXor | SubGroupOp::ShuffleUp | SubGroupOp::ShuffleDown => {
            let value = argument(0);
            let result = if value <= SubGroup { value } else { Varying };
            (Some(SubGroup), result)
        }
        // One value for the whole sub-group. Of a work-group-uniform operand, `any`, `all`,
        // `min` and `max` give that operand in every sub-group; a sum and a ballot count the
        // lanes, which differ between sub-groups.
        SubGroupOp::Reduce(Reduction::Min | Reduction::Max) | SubGroupOp::Any | SubGroupOp::All => {
            (Some(SubGroup), argument(0).min(SubGroup))
        }
        SubGroupOp::Reduce(Reduction::Add) | SubGroupOp::Ballot => (Some(SubGroup), SubGroup),
        // Each lane gets its own prefix; a scan of a uniform value still differs by lane.
        SubGroupOp::InclusiveScan(_) | SubGroupOp::ExclusiveScan(_) => (Some(SubGroup), Varying),
    };
    OperationUniformity { needs, result }
}

/// The uniformity rules of every work-group collective: each needs uniform control, like a
/// barrier; reductions and broadcasts give one value for the whole group, scans one per
/// work-item.
pub fn work_group_operation(op: WorkGroupOp) -> OperationUniformity {
    let result = match op {
        WorkGroupOp::Broadcast | WorkGroupOp::Reduce(_) => Uniformity::Uniform,
        WorkGroupOp::InclusiveScan(_) | WorkGroupOp::ExclusiveScan(_) => Uniformity::Varying,
    };
    OperationUniformity {
        needs: Some(Uniformity::Uniform),
        result,
    }
}

/// The uniformity of a work-item query's result.
pub fn work_item_query(query: WorkItemQuery) -> Uniformity {
    match query {
        WorkItemQuery::GlobalId | WorkItemQuery::LocalId => Uniformity::Varying,
        WorkItemQuery::GroupId
        | WorkItemQuery::LocalSize
        | WorkItemQuery::GlobalSize
        | WorkItemQuery::NumGroups => Uniformity::Uniform,
    }
}

/// Checks that every barrier and sub-group operation of the module's kernels (and of the
/// device functions they call) runs under control flow that is uniform enough. Returns the
/// errors, `E0518` for barriers and `E0519` for sub-group operations. The module must be valid
/// ([`crate::validate`]).
pub fn check_uniformity(module: &Module) -> Vec<Diagnostic> {
    let mut analyzer = Analyzer {
        module,
        summaries: HashMap::new(),
    };
    let mut roots = Vec::new();
    for (index, function) in module.functions.iter().enumerate() {
        if function.kind == FunctionKind::Kernel {
            let id = FunctionId(index as u32);
            let levels = vec![Uniformity::Uniform; function.parameters.len()];
            let key = (id, levels);
            analyzer.summary(&key);
            roots.push(key);
        }
    }
    // Every analysis reached from a kernel, each once, in the order found.
    let mut seen: HashSet<Key> = HashSet::new();
    let mut stack: Vec<Key> = roots.into_iter().rev().collect();
    let mut reported: HashSet<(ErrorCode, Option<(u32, u32)>)> = HashSet::new();
    let mut diagnostics = Vec::new();
    while let Some(key) = stack.pop() {
        if !seen.insert(key.clone()) {
            continue;
        }
        let Some(summary) = analyzer.summaries.get(&key) else {
            continue;
        };
        for diagnostic in &summary.diagnostics {
            let place = diagnostic.primary_span().map(|s| (s.start, s.end));
            if reported.insert((diagnostic.code, place)) {
                diagnostics.push(diagnostic.clone());
            }
        }
        stack.extend(summary.calls.iter().rev().cloned());
    }
    diagnostics.sort_by_key(|d| d.primary_span().map(|s| (s.start, s.end)));
    diagnostics
}

/// A function and the levels of its parameters (a buffer's is uniform when nothing writes it
/// during the launch, varying otherwise).
type Key = (FunctionId, Vec<Uniformity>);

struct Analyzer<'m> {
    module: &'m Module,
    summaries: HashMap<Key, Summary>,
}

/// What a caller needs to know of a callee analysed for some argument levels.
#[derive(Clone, Debug)]
struct Summary {
    /// The join of the returned values.
    result: Value,
    /// The strictest requirement of the operations it contains.
    needs: Option<Need>,
    /// Errors inside the function, for these argument levels.
    diagnostics: Vec<Diagnostic>,
    /// The analyses of the functions it calls.
    calls: Vec<Key>,
    /// Per parameter: the join of what the function stores through it when it is a private
    /// array (a tuple result's hidden array, say), with the control of each store.
    array_stores: Vec<Value>,
}

impl Analyzer<'_> {
    fn summary(&mut self, key: &Key) -> Summary {
        if let Some(summary) = self.summaries.get(key) {
            return summary.clone();
        }
        let summary = FunctionAnalysis::run(self, key);
        self.summaries.insert(key.clone(), summary.clone());
        summary
    }
}

/// Where a non-uniform value comes from, for the diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// A built-in query or operation.
    Builtin(&'static str),
    /// A read of memory.
    Load(FunctionId, PlaceBase),
    /// The old value an atomic returns.
    Atomic(&'static str),
    /// A variable assigned under divergent control.
    Assigned(FunctionId, VariableId),
    /// A parameter of a device function given a non-uniform argument.
    Parameter(FunctionId, ParameterId),
}

/// A value's level and, unless uniform, where the non-uniformity comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Value {
    level: Uniformity,
    origin: Option<Origin>,
}

impl Value {
    const UNIFORM: Value = Value {
        level: Uniformity::Uniform,
        origin: None,
    };

    fn new(level: Uniformity, origin: Origin) -> Value {
        if level == Uniformity::Uniform {
            Value::UNIFORM
        } else {
            Value {
                level,
                origin: Some(origin),
            }
        }
    }

    /// The least uniform of both; on a tie the first, so an origin once found stays.
    fn join(self, other: Value) -> Value {
        if other.level > self.level {
            other
        } else {
            self
        }
    }
}

fn join_values(into: &mut [Value], other: &[Value]) {
    for (value, other) in into.iter_mut().zip(other) {
        *value = value.join(*other);
    }
}

fn same_levels(a: &[Value], b: &[Value]) -> bool {
    a.iter().zip(b).all(|(a, b)| a.level == b.level)
}

/// Why control is divergent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CauseKind {
    /// An `if` (or `&&`, `||`) condition.
    Condition,
    /// A loop's own condition: work-items run different numbers of iterations.
    LoopCondition,
    /// An earlier `return` taken by some work-items only.
    Return,
    /// A `break` taken by some work-items only.
    Break,
    /// A `continue` taken by some work-items only.
    Continue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cause {
    span: Span,
    kind: CauseKind,
    /// What the deciding condition depends on.
    origin: Origin,
}

/// The level of the control flow at a point, with the place that made it divergent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Control {
    level: Uniformity,
    cause: Option<Cause>,
}

impl Control {
    const UNIFORM: Control = Control {
        level: Uniformity::Uniform,
        cause: None,
    };

    /// Control under a condition of value `condition`.
    fn condition(condition: Value, span: Span) -> Control {
        match condition.origin {
            Some(origin) if condition.level > Uniformity::Uniform => Control {
                level: condition.level,
                cause: Some(Cause {
                    span,
                    kind: CauseKind::Condition,
                    origin,
                }),
            },
            _ => Control::UNIFORM,
        }
    }

    fn join(self, other: Control) -> Control {
        if other.level > self.level {
            other
        } else {
            self
        }
    }

    /// What an exit (`return`, `break`, `continue`) under this control does to the code that
    /// some work-items still run after it. An exit under control that an earlier exit already
    /// made divergent keeps that earlier cause.
    fn exit(self, span: Span, kind: CauseKind) -> Control {
        match self.cause {
            Some(cause)
                if matches!(cause.kind, CauseKind::Condition | CauseKind::LoopCondition) =>
            {
                let span = if kind == CauseKind::LoopCondition {
                    cause.span
                } else {
                    span
                };
                Control {
                    level: self.level,
                    cause: Some(Cause {
                        span,
                        kind,
                        origin: cause.origin,
                    }),
                }
            }
            _ => self,
        }
    }

    /// The control's level as a value's, for a value computed under it.
    fn as_value(self) -> Value {
        match self.cause {
            Some(cause) => Value::new(self.level, cause.origin),
            None => Value::UNIFORM,
        }
    }

    /// The value of a variable assigned under this control.
    fn assigned(self, function: FunctionId, variable: VariableId) -> Value {
        Value::new(self.level, Origin::Assigned(function, variable))
    }
}

/// An operation that needs control at most this divergent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Need {
    allowed: Uniformity,
    /// The operation as written: `barrier()`, `sub_group_reduce_add`.
    operation: &'static str,
}

impl Need {
    /// The strictest of both; on a tie the first.
    fn join(this: Option<Need>, other: Need) -> Option<Need> {
        match this {
            Some(this) if this.allowed <= other.allowed => Some(this),
            _ => Some(other),
        }
    }
}

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

struct FunctionAnalysis<'a, 'm> {
    analyzer: &'a mut Analyzer<'m>,
    id: FunctionId,
    function: &'m Function,
    parameters: Vec<Value>,
    /// Kept across passes.
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
    needs: Option<Need>,
    diagnostics: Vec<Diagnostic>,
    calls: Vec<Key>,
    array_stores: Vec<Value>,
}

impl<'a, 'm> FunctionAnalysis<'a, 'm> {
    fn run(analyzer: &'a mut Analyzer<'m>, key: &Key) -> Summary {
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
                // A sub-group operation on operands the whole sub-group agrees on; the tiles
                // it writes hold different elements in each work-item.
                for value in op.expressions() {
                    let level = self.expression(value, control);
                    self.require_same_argument(op.name(), value, level, Uniformity::SubGroup);
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
            StatementKind::AsyncCopy(_) => {}
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

    /// A broadcast's source (lane or local id) must be the same in every work-item of the
    /// sub-group (`allowed` = `SubGroup`) or work-group (`Uniform`).
    fn require_same_argument(
        &mut self,
        operation: &str,
        argument: &Expression,
        value: Value,
        allowed: Uniformity,
    ) {
        if value.level <= allowed {
            return;
        }
        let (code, group, instead) = if allowed == Uniformity::Uniform {
            (ErrorCode::E0518, "work-group", "local memory and a barrier")
        } else {
            (ErrorCode::E0519, "sub-group", "`sub_group_shuffle`")
        };
        let label = match value.origin {
            Some(origin) => format!(
                "depends on {}",
                describe_origin(self.analyzer.module, origin)
            ),
            None => "differs between work-items".to_string(),
        };
        self.diagnostics.push(
            Diagnostic::error(
                code,
                format!(
                    "the source of `{operation}` must be the same in every work-item of the {group}"
                ),
                argument.span,
                label,
            )
            .with_hint(format!(
                "to read a different work-item's value in each work-item, use {instead}"
            )),
        );
    }

    /// Checks an operation that needs control at most `need.allowed` divergent.
    fn require(&mut self, need: Need, span: Span, control: Control, callee: Option<FunctionId>) {
        self.needs = Need::join(self.needs, need);
        if control.level <= need.allowed {
            return;
        }
        let module = self.analyzer.module;
        let (code, group) = if need.allowed == Uniformity::Uniform {
            (ErrorCode::E0518, "work-group")
        } else {
            (ErrorCode::E0519, "sub-group")
        };
        let operation = format!("`{}`", need.operation);
        let (message, label) = match callee {
            None => (
                format!("{operation} is not reached by every work-item of the {group}"),
                format!("not every work-item of the {group} gets here"),
            ),
            Some(callee) => {
                let name = &module.function(callee).name;
                (
                    format!(
                        "`{name}` calls {operation} but is not called by every work-item of the \
                         {group}"
                    ),
                    format!("not every work-item of the {group} makes this call"),
                )
            }
        };
        let mut diagnostic = Diagnostic::error(code, message, span, label);
        if let Some(cause) = control.cause {
            diagnostic = diagnostic.with_label(cause.span, describe_cause(module, cause, control));
        }
        let hint = if need.allowed == Uniformity::Uniform {
            format!(
                "move {operation} out of the divergent code, or make the conditions that lead to \
                 it depend only on kernel arguments, constants and group ids"
            )
        } else {
            format!(
                "move {operation} out of the divergent code, or make the conditions that lead to \
                 it the same in every work-item of a sub-group (kernel arguments, constants, \
                 group ids, sub-group reductions)"
            )
        };
        self.diagnostics.push(diagnostic.with_hint(hint));
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

/// Where to point at a condition. A `for` loop lowers to a loop that starts with
/// `if !(i < end) { break; }`, all of it spanning the whole loop: point at the loop's head,
/// `for i in start..end`, instead.
fn condition_span(condition: &Expression, statement: Span) -> Span {
    if condition.span == statement {
        if let ExpressionKind::Unary {
            op: UnaryOp::Not,
            operand,
        } = &condition.kind
        {
            if let ExpressionKind::Binary { right, .. } = &operand.kind {
                if operand.span == statement && right.span.end > statement.start {
                    return Span {
                        start: statement.start,
                        end: right.span.end.min(statement.end),
                    };
                }
            }
        }
    }
    condition.span
}

/// The secondary label: why control is divergent at the operation.
fn describe_cause(module: &Module, cause: Cause, control: Control) -> String {
    let origin = describe_origin(module, cause.origin);
    let qualifier = if control.level == Uniformity::SubGroup {
        ", which is the same only within a sub-group"
    } else {
        ""
    };
    match cause.kind {
        CauseKind::Condition => format!("this condition depends on {origin}{qualifier}"),
        CauseKind::LoopCondition => format!(
            "work-items run this loop a different number of times: its condition depends on \
             {origin}{qualifier}"
        ),
        CauseKind::Return => {
            format!("some work-items return here: the condition depends on {origin}{qualifier}")
        }
        CauseKind::Break => format!(
            "some work-items leave the loop here: the condition depends on {origin}{qualifier}"
        ),
        CauseKind::Continue => format!(
            "some work-items skip the rest of the loop body here: the condition depends on \
             {origin}{qualifier}"
        ),
    }
}

fn describe_origin(module: &Module, origin: Origin) -> String {
    match origin {
        Origin::Builtin(name) => format!("`{name}`"),
        Origin::Load(function, base) => {
            let function = module.function(function);
            let name = match base {
                PlaceBase::Parameter(id) => &function.parameter(id).name,
                PlaceBase::Variable(id) => &function.variable(id).name,
            };
            format!("a value read from `{name}`")
        }
        Origin::Atomic(name) => format!("the result of `{name}`"),
        Origin::Assigned(function, variable) => format!(
            "`{}`, which is assigned under a condition that differs between work-items",
            module.function(function).variable(variable).name
        ),
        Origin::Parameter(function, parameter) => format!(
            "the parameter `{}`, which is given a value that differs between work-items",
            module.function(function).parameter(parameter).name
        ),
    }
}
