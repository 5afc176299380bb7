//! Statements: bindings, assignments, stores, branches, loops, local memory with barriers,
//! atomics, calls and returns, each placed only where its result is defined and the same on
//! every target.

use crate::expression::{default_exact_need, FloatNeed};
use crate::facts::{Facts, FloatFacts, Uniformity, ValueFacts};
use crate::generator::{Expr, Generator, Place};
use crate::scope::{
    BufferParameter, BufferUse, Control, FunctionParameter, GrowthBudget, LocalUse, Mutability,
    PrivateArray, Variable,
};
use crate::types::{
    float_literal, integer_literal, integer_range, ValueType, ATOMIC_INTEGER_TYPES,
};
use kdsl_ir::ScalarType;

mod control;
mod memory;
mod records;

/// The kinds of statement, for weighting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Let,
    LetMutable,
    Assign,
    DeclareArray,
    StoreArray,
    StoreOutput,
    If,
    ForConstant,
    ForDynamic,
    While,
    Exit,
    LocalExchange,
    LocalAsyncCopy,
    LocalTileCopy,
    LocalTileStore,
    LocalAtomics,
    GlobalAtomic,
    OwnSlotAtomic,
    Barrier,
    CallStore,
    EarlyReturn,
    VectorLet,
    RecordStore,
    RecordLet,
}

const INTEGER_COMPOUND_OPERATORS: [&str; 10] =
    ["+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="];

/// `target op= value` for an integer whose value the generator does not bound: `+ - *` may
/// overflow, which is an error, so those are written as the wrapping operations.
fn integer_update_line(target: &str, operator: &str, value: &str) -> String {
    let wrapping = match operator {
        "+=" => "wrapping_add",
        "-=" => "wrapping_sub",
        "*=" => "wrapping_mul",
        _ => return format!("{target} {operator} {value};"),
    };
    format!("{target} = {wrapping}({target}, {value});")
}

impl Generator<'_> {
    /// Up to `count` statements in the current block.
    pub fn statements(&mut self, count: u32) {
        for _ in 0..count {
            if self.statements >= self.options.max_statements {
                return;
            }
            self.statement();
        }
    }

    /// Statements in a new block with control `control`.
    fn nested_block(&mut self, control: Control, count: u32) {
        let saved = self.control;
        self.control = control;
        self.scope.push();
        self.statements(count);
        self.scope.pop();
        self.control = saved;
    }

    fn expression_depth(&mut self) -> u32 {
        1 + self.random.below(u64::from(self.options.expression_depth)) as u32
    }

    fn kind_weight(&self, kind: Kind) -> u64 {
        let control = self.control;
        let kernel = self.place == Place::Kernel;
        let nested_ok = control.depth < self.options.max_block_depth;
        let has_mutable = self
            .scope
            .variables()
            .iter()
            .any(|v| v.mutability.is_some());
        match kind {
            Kind::Let => 14,
            Kind::LetMutable => 6,
            Kind::Assign if has_mutable => 12,
            Kind::DeclareArray if self.private_arrays => 3,
            Kind::StoreArray if !self.scope.arrays().is_empty() => 6,
            Kind::StoreOutput if kernel => 8,
            Kind::If if nested_ok => 6,
            Kind::ForConstant if nested_ok => 4,
            Kind::ForDynamic if nested_ok => 3,
            Kind::While if nested_ok => 2,
            Kind::Exit if control.in_loop => 3,
            Kind::LocalExchange
                if kernel
                    && control.work_group_uniform
                    && self.locals.iter().any(|l| l.usage == LocalUse::Exchange) =>
            {
                5
            }
            Kind::LocalAsyncCopy
                if kernel && control.work_group_uniform && !self.async_copy_plans().is_empty() =>
            {
                5
            }
            Kind::LocalTileCopy
                if kernel && control.work_group_uniform && !self.tile_copy_plans().is_empty() =>
            {
                4
            }
            Kind::LocalTileStore
                if kernel && control.work_group_uniform && !self.tile_store_plans().is_empty() =>
            {
                4
            }
            Kind::LocalAtomics
                if kernel
                    && control.work_group_uniform
                    && self.locals.iter().any(|l| l.usage == LocalUse::Atomics) =>
            {
                3
            }
            Kind::GlobalAtomic if kernel && !self.accumulators.is_empty() => 4,
            Kind::OwnSlotAtomic
                if kernel
                    && self.options.atomics
                    && !self.output_reads_avoided()
                    && self.atomic_outputs().next().is_some() =>
            {
                3
            }
            Kind::Barrier if kernel && self.barriers && control.work_group_uniform => 1,
            Kind::CallStore if kernel && self.functions.iter().any(|f| f.result.is_none()) => 3,
            Kind::EarlyReturn if self.early_return_allowed() => 1,
            Kind::VectorLet if self.options.vectors && self.vector_inputs().next().is_some() => 3,
            Kind::RecordStore if kernel && self.record_buffers.iter().any(|b| b.output) => 6,
            Kind::RecordLet if kernel && self.record_buffers.iter().any(|b| !b.output) => 3,
            _ => 0,
        }
    }

    fn early_return_allowed(&self) -> bool {
        match self.place {
            Place::Function => self.control.depth > 0,
            Place::Kernel => !self.barriers && !self.sub_groups && self.control.depth > 0,
        }
    }

    fn statement(&mut self) {
        const KINDS: [Kind; 24] = [
            Kind::Let,
            Kind::LetMutable,
            Kind::Assign,
            Kind::DeclareArray,
            Kind::StoreArray,
            Kind::StoreOutput,
            Kind::If,
            Kind::ForConstant,
            Kind::ForDynamic,
            Kind::While,
            Kind::Exit,
            Kind::LocalExchange,
            Kind::LocalAsyncCopy,
            Kind::LocalTileCopy,
            Kind::LocalTileStore,
            Kind::LocalAtomics,
            Kind::GlobalAtomic,
            Kind::OwnSlotAtomic,
            Kind::Barrier,
            Kind::CallStore,
            Kind::EarlyReturn,
            Kind::VectorLet,
            Kind::RecordStore,
            Kind::RecordLet,
        ];
        let weights: Vec<u64> = KINDS.iter().map(|&k| self.kind_weight(k)).collect();
        let kind = KINDS[self.random.weighted(&weights)];
        self.statements += 1;
        match kind {
            Kind::Let => self.let_binding(),
            Kind::LetMutable => self.mutable_binding(),
            Kind::Assign => self.assignment(),
            Kind::DeclareArray => self.array_declaration(),
            Kind::StoreArray => self.array_store(),
            Kind::VectorLet => self.vector_let(),
            Kind::StoreOutput => self.output_store(),
            Kind::If => self.if_statement(),
            Kind::ForConstant => self.constant_loop(),
            Kind::ForDynamic => self.dynamic_loop(),
            Kind::While => self.while_loop(),
            Kind::Exit => self.loop_exit(),
            Kind::LocalExchange => self.local_exchange(),
            Kind::LocalAsyncCopy => self.local_async_copy(),
            Kind::LocalTileCopy => self.local_tile_copy(),
            Kind::LocalTileStore => self.local_tile_store(),
            Kind::LocalAtomics => self.local_atomics(),
            Kind::GlobalAtomic => self.global_atomic(),
            Kind::OwnSlotAtomic => self.own_slot_atomic(),
            Kind::Barrier => {
                self.note("barrier");
                self.code.line("barrier();");
            }
            Kind::CallStore => self.call_store(),
            Kind::EarlyReturn => self.early_return(),
            Kind::RecordStore => self.record_store(),
            Kind::RecordLet => self.record_let(),
        }
    }

    /// A type for a new variable: a scalar, or `T` in a generic kernel.
    fn variable_type(&mut self) -> ValueType {
        if self.generic.is_some() && self.percent(25) {
            ValueType::Generic
        } else {
            ValueType::Scalar(self.random_type())
        }
    }

    fn let_binding(&mut self) {
        let depth = self.expression_depth();
        let approximate_output = self.buffers.iter().any(|b| {
            matches!(
                b.usage,
                BufferUse::Output {
                    approximate: true,
                    ..
                }
            )
        });
        let ty = self.variable_type();
        let value = if approximate_output && ty.is_float() && self.percent(20) {
            let scalar = ty.scalar().unwrap();
            self.float_value(
                scalar,
                FloatNeed::Approximate { magnitude: 1000.0 },
                Uniformity::Varying,
                depth,
            )
        } else {
            self.value(ty, Uniformity::Varying, depth)
        };
        let name = self.fresh("v");
        self.note("let");
        if self.percent(30) {
            self.code
                .line(format!("let {name}: {} = {};", ty.name(), value.text));
        } else {
            self.code.line(format!("let {name} = {};", value.text));
        }
        self.scope.add_variable(Variable {
            name,
            ty,
            facts: value.facts,
            mutability: None,
        });
    }

    /// The budget a new mutable float gets, and the need of its first value.
    fn new_budget(&mut self, ty: ScalarType) -> GrowthBudget {
        let FloatNeed::Exact {
            magnitude,
            granularity,
        } = default_exact_need(ty)
        else {
            unreachable!()
        };
        GrowthBudget::new(magnitude, granularity)
    }

    /// A value for a plain store into something under `budget`, updating the budget.
    fn budgeted_plain_value(
        &mut self,
        ty: ScalarType,
        budget: &mut GrowthBudget,
        uniformity: Uniformity,
    ) -> Expr {
        let available = (budget.magnitude - budget.accumulated).max(0.0);
        let bound = budget
            .plain_bound
            .max(available / 2.0)
            .min(available)
            .floor();
        budget.plain_bound = budget.plain_bound.max(bound);
        let depth = self.expression_depth();
        self.float_value(
            ty,
            FloatNeed::Exact {
                magnitude: bound,
                granularity: budget.granularity,
            },
            uniformity,
            depth,
        )
    }

    fn mutable_binding(&mut self) {
        let ty = self.variable_type();
        let uniform = self.control.work_group_uniform && self.percent(40);
        let uniformity = if uniform {
            Uniformity::WorkGroup
        } else {
            Uniformity::Varying
        };
        let name = self.fresh("m");
        let depth = self.expression_depth();
        let mut mutability = Mutability {
            uniform,
            budget: None,
            declared_at_bound: self.control.execution_bound,
        };
        let (value, facts) = match ty {
            ValueType::Scalar(scalar) if scalar.is_float() => {
                let mut budget = self.new_budget(scalar);
                let value = if self.percent(25) {
                    None
                } else {
                    Some(self.budgeted_plain_value(scalar, &mut budget, uniformity))
                };
                mutability.budget = Some(budget);
                (value, Facts::new(uniformity, budget.facts()))
            }
            ValueType::Generic => {
                let (low, high) = self.generic_interval();
                let value = self.generic_value(low, high, uniformity, depth);
                (
                    Some(value),
                    Facts::new(uniformity, ValueFacts::interval(low, high)),
                )
            }
            ValueType::Scalar(scalar) => {
                let value = if self.percent(25) {
                    None
                } else {
                    Some(self.value(ty, uniformity, depth))
                };
                (value, Facts::anything(scalar, uniformity))
            }
        };
        self.note("let mut");
        match value {
            Some(value) => {
                self.code
                    .line(format!("let mut {name}: {} = {};", ty.name(), value.text))
            }
            None => {
                self.note("zero-initialized variable");
                self.code.line(format!("let mut {name}: {};", ty.name()));
            }
        }
        self.scope.add_variable(Variable {
            name,
            ty,
            facts,
            mutability: Some(mutability),
        });
    }

    /// How many times a statement here can run for each run of the statement at
    /// `declared_at_bound`.
    fn repetitions_since(&self, declared_at_bound: u64) -> u64 {
        (self.control.execution_bound / declared_at_bound.max(1)).max(1)
    }

    /// An update `target op= value` of a float under `budget` (`+=`, `-=`, `*=`, `%=`) or
    /// `None` if the budget has no room.
    fn float_update(
        &mut self,
        ty: ScalarType,
        budget: &mut GrowthBudget,
        declared_at_bound: u64,
        uniformity: Uniformity,
    ) -> Option<(String, Expr)> {
        let depth = self.expression_depth();
        match self.random.below(4) {
            0 | 1 => {
                let repetitions = self.repetitions_since(declared_at_bound) as f64;
                let bound = (budget.headroom() / repetitions).floor().min(1024.0);
                if bound < 1.0 {
                    return None;
                }
                budget.accumulated += bound * repetitions;
                let value = self.float_value(
                    ty,
                    FloatNeed::Exact {
                        magnitude: bound,
                        granularity: budget.granularity.max(-2),
                    },
                    uniformity,
                    depth,
                );
                self.note("float accumulation");
                Some((self.random.pick(&["+=", "-="]).to_string(), value))
            }
            2 => {
                let value = self.float_value(
                    ty,
                    FloatNeed::Exact {
                        magnitude: 1.0,
                        granularity: 0,
                    },
                    uniformity,
                    depth,
                );
                self.note("float compound multiply");
                Some(("*=".to_string(), value))
            }
            _ => {
                let divisor = self.random.between(1, 16) as f64;
                self.note("float compound remainder");
                Some((
                    "%=".to_string(),
                    Expr::new(
                        float_literal(divisor, ty),
                        ValueType::Scalar(ty),
                        Facts::new(Uniformity::WorkGroup, ValueFacts::exact(divisor, 0)),
                    ),
                ))
            }
        }
    }

    /// A compound update of an integer (`/=` and `%=` with a guarded divisor).
    fn integer_update(&mut self, ty: ScalarType, uniformity: Uniformity) -> (String, Expr) {
        let depth = self.expression_depth();
        let operator = *self.random.pick(&INTEGER_COMPOUND_OPERATORS);
        let value = if operator == "<<=" || operator == ">>=" {
            self.shift_amount(ty, uniformity, depth)
        } else {
            self.integer_value(ty, uniformity, depth)
        };
        let value = if operator == "/=" || operator == "%=" {
            let mask = integer_literal(127.min(integer_range(ty).1), ty, &mut self.random);
            let one = integer_literal(1, ty, &mut self.random);
            Expr::new(
                format!("(({} & {mask}) | {one})", value.text),
                value.ty,
                value.facts,
            )
        } else {
            value
        };
        self.note("integer compound assignment");
        (operator.to_string(), value)
    }

    fn assignment(&mut self) {
        let work_group_uniform = self.control.work_group_uniform;
        let candidates: Vec<Variable> = self
            .scope
            .variables()
            .into_iter()
            .filter(|v| matches!(&v.mutability, Some(m) if !m.uniform || work_group_uniform))
            .cloned()
            .collect();
        if candidates.is_empty() {
            return self.let_binding();
        }
        let variable = self.random.pick(&candidates).clone();
        let mut rules = variable.mutability.clone().unwrap();
        let uniformity = if rules.uniform {
            Uniformity::WorkGroup
        } else {
            Uniformity::Varying
        };
        let depth = self.expression_depth();
        let name = variable.name.clone();
        match variable.ty {
            ValueType::Scalar(ty) if ty.is_float() => {
                let mut budget = rules.budget.expect("floats have budgets");
                let update = if self.percent(50) {
                    self.float_update(ty, &mut budget, rules.declared_at_bound, uniformity)
                } else {
                    None
                };
                match update {
                    Some((operator, value)) => {
                        self.code.line(format!("{name} {operator} {};", value.text))
                    }
                    None => {
                        let value = self.budgeted_plain_value(ty, &mut budget, uniformity);
                        self.note("assignment");
                        self.code.line(format!("{name} = {};", value.text));
                    }
                }
                rules.budget = Some(budget);
            }
            ValueType::Generic => {
                let (low, high) = self.generic_interval();
                let value = self.generic_value(low, high, uniformity, depth);
                self.note("assignment");
                self.code.line(format!("{name} = {};", value.text));
            }
            ValueType::Scalar(ScalarType::Bool) => {
                let value = self.bool_value(uniformity, depth);
                let operator = *self.random.pick(&["=", "=", "&=", "|=", "^="]);
                self.note("assignment");
                self.code.line(format!("{name} {operator} {};", value.text));
            }
            ValueType::Scalar(ty) => {
                if self.percent(50) {
                    let (operator, value) = self.integer_update(ty, uniformity);
                    self.code
                        .line(integer_update_line(&name, &operator, &value.text));
                } else {
                    let value = self.integer_value(ty, uniformity, depth);
                    self.note("assignment");
                    self.code.line(format!("{name} = {};", value.text));
                }
            }
        }
        if let Some(target) = self.scope.variable_mut(&name) {
            target.mutability = Some(rules);
        }
    }

    fn array_declaration(&mut self) {
        let element = loop {
            let ty = self.random_type();
            if ty != ScalarType::Bool {
                break ty;
            }
        };
        let dimensions = if self.percent(25) {
            vec![
                2 + self.random.below(3) as u32,
                2 + self.random.below(4) as u32,
            ]
        } else {
            vec![2 + self.random.below(7) as u32]
        };
        let name = self.fresh("a");
        let mut ty_text = element.name().to_string();
        for length in dimensions.iter().rev() {
            ty_text = format!("[{ty_text}; {length}]");
        }
        let budget = element.is_float().then(|| self.new_budget(element));
        self.note(if dimensions.len() == 2 {
            "private 2-D array"
        } else {
            "private array"
        });
        self.code.line(format!("let mut {name}: {ty_text};"));
        let array = PrivateArray {
            name: name.clone(),
            element,
            dimensions: dimensions.clone(),
            budget,
            declared_at_bound: self.control.execution_bound,
        };
        self.scope.add_array(array);
        // Often filled by a loop right away, as real kernels do.
        let filled = dimensions.len() == 1 && self.percent(50);
        if !filled
            && self
                .options
                .known_bugs
                .avoid_intel_cpu_never_written_private_array
        {
            let one = if element.is_float() { "1.0" } else { "1" };
            let zeros = "[0u32]".repeat(dimensions.len());
            self.code
                .line(format!("{name}{zeros} = {one}{};", element.name()));
            if let Some(budget) = &mut self.scope.array_mut(&name).unwrap().budget {
                budget.plain_bound = budget.plain_bound.max(1.0);
            }
        }
        if filled {
            let index = self.fresh("k");
            let length = dimensions[0];
            self.code
                .open(format!("for {index} in 0u32..{length}u32 {{"));
            let saved = self.control;
            self.control = Control {
                in_loop: true,
                loop_exits_uniform: true,
                execution_bound: saved.execution_bound * u64::from(length),
                depth: saved.depth + 1,
                ..saved
            };
            self.scope.push();
            self.scope.add_variable(Variable {
                name: index.clone(),
                ty: ValueType::Scalar(ScalarType::U32),
                facts: Facts::new(
                    saved.uniformity_needed(),
                    ValueFacts::interval(0, i128::from(length) - 1),
                ),
                mutability: None,
            });
            let value = self.array_value(&name, Uniformity::Varying);
            self.code.line(format!("{name}[{index}] = {};", value.text));
            self.scope.pop();
            self.control = saved;
            self.code.close("}");
        }
    }

    /// Input buffers of a scalar, non-`bool` type that hold at least one vector of 4.
    fn vector_inputs(&self) -> impl Iterator<Item = &BufferParameter> + '_ {
        self.buffers.iter().filter(|b| {
            matches!(b.usage, BufferUse::Input | BufferUse::Constant)
                && b.shape.is_none()
                && matches!(b.element, ValueType::Scalar(t) if t != ScalarType::Bool)
                && b.length >= 4
        })
    }

    /// `let vecN = vloadW(input, i);`, then a scalar from it by vector operations (floats:
    /// exact ones only, so the value keeps the buffer's facts).
    fn vector_let(&mut self) {
        let inputs: Vec<BufferParameter> = self.vector_inputs().cloned().collect();
        let buffer = self.random.pick(&inputs).clone();
        let ValueType::Scalar(element) = buffer.element else {
            return;
        };
        let width = 2 + self.random.below(3) as u32;
        let depth = self.expression_depth();
        let index = self.index_into(buffer.length / width, Uniformity::Varying, depth);
        // Every component reads the index, so it is bound first (it may call functions).
        let index_name = self.fresh("i");
        self.code
            .line(format!("let {index_name} = {};", index.text));
        let vector = self.fresh("vec");
        let vector_type = format!("{}x{width}", element.name());
        self.note("vector load");
        self.code.line(format!(
            "let {vector} = vload{width}({}, {index_name});",
            buffer.name
        ));
        let component = ["x", "y", "z", "w"][self.random.below(u64::from(width)) as usize];
        let (text, facts) = if element.is_float() {
            let text = match self.random.below(3) {
                0 => format!("{vector}.{component}"),
                1 => format!("(-{vector}).{component}"),
                _ => format!("max({vector}, -{vector}).{component}"),
            };
            (text, buffer.data_facts)
        } else {
            match self.random.below(3) {
                0 => (format!("{vector}.{component}"), buffer.data_facts),
                1 => {
                    self.note("vector arithmetic");
                    let splat = 1 + self.random.below(7);
                    (
                        format!(
                            "wrapping_add(wrapping_mul({vector}, {vector}), {vector_type}({splat})).{component}"
                        ),
                        ValueFacts::anything(element),
                    )
                }
                _ => {
                    self.note("vector arithmetic");
                    (
                        format!("({vector} ^ ({vector} >> {vector_type}(1))).{component}"),
                        ValueFacts::anything(element),
                    )
                }
            }
        };
        let name = self.fresh("v");
        self.code.line(format!("let {name} = {text};"));
        self.scope.add_variable(Variable {
            name,
            ty: ValueType::Scalar(element),
            facts: Facts::new(Uniformity::Varying, facts),
            mutability: None,
        });
    }

    /// A value to store into private array `name`, charging its budget.
    fn array_value(&mut self, name: &str, uniformity: Uniformity) -> Expr {
        let array = self
            .scope
            .arrays()
            .into_iter()
            .find(|a| a.name == name)
            .cloned()
            .expect("a visible array");
        let depth = self.expression_depth();
        match array.budget {
            Some(mut budget) => {
                let value = self.budgeted_plain_value(array.element, &mut budget, uniformity);
                self.scope.array_mut(name).unwrap().budget = Some(budget);
                value
            }
            None => self.integer_value(array.element, uniformity, depth),
        }
    }

    fn array_store(&mut self) {
        let arrays: Vec<PrivateArray> = self.scope.arrays().into_iter().cloned().collect();
        let array = self.random.pick(&arrays).clone();
        let depth = self.expression_depth();
        let mut place = array.name.clone();
        for &length in &array.dimensions {
            let index = self.index_into(length, Uniformity::Varying, depth);
            place += &format!("[{}]", index.text);
        }
        self.note("private array store");
        match array.budget {
            Some(mut budget) if self.percent(40) => {
                let update = self.float_update(
                    array.element,
                    &mut budget,
                    array.declared_at_bound,
                    Uniformity::Varying,
                );
                self.scope.array_mut(&array.name).unwrap().budget = Some(budget);
                match update {
                    Some((operator, value)) => self
                        .code
                        .line(format!("{place} {operator} {};", value.text)),
                    None => {
                        let value = self.array_value(&array.name, Uniformity::Varying);
                        self.code.line(format!("{place} = {};", value.text));
                    }
                }
            }
            None if self.percent(40) => {
                let (operator, value) = self.integer_update(array.element, Uniformity::Varying);
                self.code
                    .line(integer_update_line(&place, &operator, &value.text));
            }
            _ => {
                let value = self.array_value(&array.name, Uniformity::Varying);
                self.code.line(format!("{place} = {};", value.text));
            }
        }
    }

    /// Output buffers whose elements atomics work on.
    fn atomic_outputs(&self) -> impl Iterator<Item = usize> + '_ {
        self.buffers
            .iter()
            .enumerate()
            .filter_map(|(index, buffer)| {
                let atomic_type = match buffer.element {
                    ValueType::Scalar(ty) => {
                        ATOMIC_INTEGER_TYPES.contains(&ty)
                            || (self.float_atomics_allowed()
                                && matches!(ty, ScalarType::F32 | ScalarType::F64))
                    }
                    ValueType::Generic => false,
                };
                matches!(buffer.usage, BufferUse::Output { approximate: false, .. } if atomic_type)
                    .then_some(index)
            })
    }

    pub fn output_store(&mut self) {
        let outputs: Vec<usize> = self
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| matches!(b.usage, BufferUse::Output { .. }))
            .map(|(index, _)| index)
            .collect();
        if outputs.is_empty() {
            return;
        }
        let index = *self.random.pick(&outputs);
        self.store_into_output(index, None);
    }

    /// One store into an own slot of output `index`: slot `slot`, or a random one.
    pub fn store_into_output(&mut self, index: usize, slot: Option<u32>) {
        let buffer = self.buffers[index].clone();
        let BufferUse::Output { approximate, .. } = buffer.usage else {
            unreachable!()
        };
        let place = self.own_place(index, slot);
        let depth = self.expression_depth();
        match buffer.element {
            ValueType::Scalar(ty) if approximate => {
                let value = self.float_value(
                    ty,
                    FloatNeed::Approximate { magnitude: 1000.0 },
                    Uniformity::Varying,
                    depth + 1,
                );
                let error = match value.facts.float() {
                    Some(FloatFacts::Approximate { error, .. }) => error,
                    _ => 0.0,
                };
                self.approximate_error = self.approximate_error.max(error);
                self.note("approximate output store");
                self.code.line(format!("{place} = {};", value.text));
            }
            ValueType::Scalar(ty)
                if ty.is_integer() && !self.output_reads_avoided() && self.percent(25) =>
            {
                let (operator, value) = self.integer_update(ty, Uniformity::Varying);
                self.code
                    .line(integer_update_line(&place, &operator, &value.text));
            }
            ty => {
                let value = self.value(ty, Uniformity::Varying, depth);
                self.note("output store");
                self.code.line(format!("{place} = {};", value.text));
            }
        }
    }

    fn call_store(&mut self) {
        let candidates: Vec<usize> = self
            .functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.result.is_none())
            .map(|(i, _)| i)
            .collect();
        let function = self.functions[*self.random.pick(&candidates)].clone();
        let mut arguments = Vec::new();
        let depth = self.expression_depth();
        let mut slots = 1;
        for parameter in &function.parameters {
            match parameter {
                FunctionParameter::OutputBuffer {
                    element, length, ..
                } => {
                    let targets: Vec<(String, u32)> = self
                        .buffers
                        .iter()
                        .filter(|b| {
                            b.element == ValueType::Scalar(*element)
                                && b.length == *length
                                && b.shape.is_none()
                                && matches!(
                                    b.usage,
                                    BufferUse::Output {
                                        approximate: false,
                                        ..
                                    }
                                )
                        })
                        .map(|b| match b.usage {
                            BufferUse::Output { slots, .. } => (b.name.clone(), slots),
                            _ => unreachable!(),
                        })
                        .collect();
                    let Some(target) = targets.first().cloned() else {
                        return;
                    };
                    slots = target.1;
                    arguments.push(target.0);
                }
                FunctionParameter::Slot { .. } => arguments.push(self.own_slot(slots)),
                FunctionParameter::Scalar { ty, facts, .. } => {
                    let value = self.argument_within(*ty, *facts, Uniformity::Varying, depth);
                    arguments.push(value.text);
                }
                FunctionParameter::InputBuffer { element, .. } => {
                    let inputs: Vec<String> = self
                        .buffers
                        .iter()
                        .filter(|b| {
                            b.usage == BufferUse::Input
                                && b.shape.is_none()
                                && b.element == ValueType::Scalar(*element)
                        })
                        .map(|b| b.name.clone())
                        .collect();
                    let Some(input) = inputs.first().cloned() else {
                        return;
                    };
                    arguments.push(input);
                }
                FunctionParameter::Pair { types, facts, .. } => {
                    let first =
                        self.argument_within(types[0], facts[0], Uniformity::Varying, depth);
                    let second =
                        self.argument_within(types[1], facts[1], Uniformity::Varying, depth);
                    arguments.push(format!("({}, {})", first.text, second.text));
                }
            }
        }
        self.note("device function storing into a buffer");
        self.code
            .line(format!("{}({});", function.name, arguments.join(", ")));
    }

    fn early_return(&mut self) {
        let condition = self.condition(false);
        self.note("early return");
        self.code.open(format!("if {} {{", condition.text));
        match self.function_result {
            Some((ty, facts)) => {
                let depth = self.expression_depth();
                let value = self.argument_within(ty, facts, Uniformity::Varying, depth);
                let returned = self.returned(value.text);
                self.code.line(format!("return {returned};"));
            }
            None => self.code.line("return;"),
        }
        self.code.close("}");
    }
}
