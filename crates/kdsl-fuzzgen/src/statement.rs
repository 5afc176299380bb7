//! Statements: bindings, assignments, stores, branches, loops, local memory with barriers,
//! atomics, calls and returns, each placed only where its result is defined and the same on
//! every target.

use crate::expression::{default_exact_need, FloatNeed};
use crate::facts::{Facts, FloatFacts, Uniformity, ValueFacts};
use crate::generator::{Expr, Generator, Place};
use crate::scope::{
    BufferParameter, BufferUse, Control, FunctionParameter, GrowthBudget, LocalShape, LocalUse,
    Mutability, PrivateArray, Variable,
};
use crate::types::{
    float_literal, integer_literal, integer_range, ValueType, ATOMIC_INTEGER_TYPES,
};
use kdsl_ir::ScalarType;

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

    /// A condition for a branch or loop exit here: uniform enough to keep the control as it
    /// is, or (when `keep_uniform` is false) anything.
    fn condition(&mut self, keep_uniform: bool) -> Expr {
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
    fn divergently<T>(&mut self, divergent: bool, generate: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.control;
        if divergent {
            self.control.work_group_uniform = false;
            self.control.sub_group_uniform = false;
        }
        let result = generate(self);
        self.control = saved;
        result
    }

    fn block_size(&mut self) -> u32 {
        1 + self.random.below(u64::from(self.options.block_statements)) as u32
    }

    fn if_statement(&mut self) {
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
    fn loop_control(&mut self, trips: u64, bounds: Uniformity) -> Control {
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

    fn loop_body(&mut self, control: Control, index: Option<(String, ValueType, Facts)>) {
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

    fn unroll_hint(&mut self, constant_trip_count: bool) -> &'static str {
        match self.random.below(8) {
            0 if constant_trip_count => " unroll",
            1 => " unroll(2)",
            2 => " unroll(1)",
            _ => "",
        }
    }

    fn constant_loop(&mut self) {
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

    fn dynamic_loop(&mut self) {
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

    fn while_loop(&mut self) {
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

    fn loop_exit(&mut self) {
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

    fn local_exchange(&mut self) {
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
    fn async_copy_plans(&self) -> Vec<(usize, usize, u32)> {
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
    fn tile_copy_plans(&self) -> Vec<(usize, usize, u32)> {
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
    fn local_tile_copy(&mut self) {
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
    fn tile_store_plans(&self) -> Vec<(usize, usize)> {
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
    fn local_tile_store(&mut self) {
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

    fn local_async_copy(&mut self) {
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

    fn local_atomics(&mut self) {
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

    fn global_atomic(&mut self) {
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

    fn own_slot_atomic(&mut self) {
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

    /// A value for record field `field`, with or without effects.
    fn field_value(&mut self, field: usize, depth: u32) -> Expr {
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
    fn record_store(&mut self) {
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
    fn record_let(&mut self) {
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
