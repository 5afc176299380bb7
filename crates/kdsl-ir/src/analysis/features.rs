//! What each function uses that a target may lack or that changes how it runs: scalar types,
//! built-ins with the types of their operands, matrix shapes, `print`s by their number of
//! `bool`s, barriers, each with the span of its first use; and the functions it calls.
//!
//! The code generator compares these with the target's feature table (`support.rs`) and reads
//! whether and which matrix tiles a module has; the interpreter reads whether a kernel's
//! work-items synchronize.

use crate::builtins::Builtin;
use crate::ir::*;
use crate::matrix::MatrixShape;
use crate::span::Span;
use crate::types::{ParameterType, ScalarType};
use crate::visit::{visit_block, Visitor};
use std::collections::HashSet;

/// One kind of thing a function uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Use {
    /// Values of a scalar type: declared (a parameter, a record field, a variable) or computed.
    Scalar(ScalarType),
    /// A math function, atomic, sub-group or work-group operation on operands (for an atomic:
    /// a memory element) of a type.
    Builtin(Builtin, ScalarType),
    /// A sub-group matrix statement of a shape.
    Matrix(MatrixShape),
    /// A matrix group's statement (`matrix_group_mma`).
    GroupMatrix,
    /// A `print` of this many `bool` values.
    Print { bools: usize },
    /// A `barrier()`.
    Barrier,
    /// An asynchronous copy (`async_copy`, `async_commit`, `async_wait`).
    AsyncCopy,
    /// A tile copy or its wait (`async_tile_copy`, `async_tile_wait`).
    TileCopy,
}

/// A use and where it first happens in its function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstUse {
    pub used: Use,
    pub span: Span,
}

/// The features of one function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionFeatures {
    /// The scalar types of its parameters (record fields before their buffer), then of its
    /// variables, each once, at its first declaration.
    pub declared: Vec<FirstUse>,
    /// What its body uses, each once, at its first use in evaluation order ([`crate::visit`]);
    /// a type already declared is not repeated.
    pub body: Vec<FirstUse>,
    /// The functions it calls, once per call site, in evaluation order.
    pub calls: Vec<FunctionId>,
}

impl FunctionFeatures {
    pub fn new(function: &Function) -> FunctionFeatures {
        let mut collector = Collector::default();
        for parameter in &function.parameters {
            if let ParameterType::Buffer {
                record: Some(record),
                ..
            } = &parameter.ty
            {
                for field in &record.fields {
                    collector.add(Use::Scalar(field.ty), parameter.span);
                }
            }
            let ty = match &parameter.ty {
                ParameterType::Scalar { ty } => *ty,
                ParameterType::Buffer { element, .. } => *element,
                ParameterType::Array { ty, .. } => ty.element,
            };
            collector.add(Use::Scalar(ty), parameter.span);
        }
        for variable in &function.variables {
            let ty = match &variable.ty {
                VariableType::Scalar { ty } => *ty,
                VariableType::Array { ty } => ty.element,
            };
            collector.add(Use::Scalar(ty), variable.span);
        }
        let declared = std::mem::take(&mut collector.uses);
        visit_block(&function.body, &mut collector);
        FunctionFeatures {
            declared,
            body: collector.uses,
            calls: collector.calls,
        }
    }

    /// Every use: the declared ones, then the body's.
    pub fn uses(&self) -> impl Iterator<Item = &FirstUse> {
        self.declared.iter().chain(&self.body)
    }

    /// Whether its own body has a matrix statement.
    pub fn uses_matrix(&self) -> bool {
        self.body
            .iter()
            .any(|first| matches!(first.used, Use::Matrix(_) | Use::GroupMatrix))
    }

    /// Whether its own body waits for or exchanges values with other work-items: a barrier, a
    /// work-group collective, or a sub-group operation with operands (the queries without
    /// operands exchange nothing). Matrix statements do not count: their plain definition
    /// ([`crate::matrix::expand_plain`]), which the interpreter runs, exchanges nothing.
    pub fn synchronizes_itself(&self) -> bool {
        self.body.iter().any(|first| match first.used {
            Use::Barrier | Use::TileCopy | Use::Builtin(Builtin::WorkGroup(_), _) => true,
            Use::Builtin(Builtin::SubGroup(op), _) => op.arity() != 0,
            _ => false,
        })
    }
}

/// The features of every function of a module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleFeatures {
    /// Per function (indexed by [`FunctionId`]).
    pub functions: Vec<FunctionFeatures>,
}

impl ModuleFeatures {
    pub fn new(module: &Module) -> ModuleFeatures {
        ModuleFeatures {
            functions: module.functions.iter().map(FunctionFeatures::new).collect(),
        }
    }

    pub fn function(&self, id: FunctionId) -> &FunctionFeatures {
        &self.functions[id.0 as usize]
    }

    /// Whether any function has a matrix statement.
    pub fn uses_matrix(&self) -> bool {
        self.functions.iter().any(FunctionFeatures::uses_matrix)
    }

    /// Whether any function has a matrix group's statement (`matrix_group_mma`).
    pub fn uses_group_matrix(&self) -> bool {
        self.functions
            .iter()
            .flat_map(|function| &function.body)
            .any(|first| first.used == Use::GroupMatrix)
    }

    /// The shapes of the module's matrix statements, each once, in the order of
    /// [`MatrixShape::ALL`].
    pub fn matrix_shapes(&self) -> Vec<MatrixShape> {
        let used: HashSet<MatrixShape> = self
            .functions
            .iter()
            .flat_map(|function| &function.body)
            .filter_map(|first| match first.used {
                Use::Matrix(shape) => Some(shape),
                _ => None,
            })
            .collect();
        MatrixShape::ALL
            .into_iter()
            .filter(|shape| used.contains(shape))
            .collect()
    }

    /// Whether any function has an asynchronous copy, commit or wait.
    pub fn uses_async_copies(&self) -> bool {
        self.functions
            .iter()
            .flat_map(|function| &function.body)
            .any(|first| first.used == Use::AsyncCopy)
    }

    /// Whether any function has a tile copy or wait.
    pub fn uses_tile_copies(&self) -> bool {
        self.functions
            .iter()
            .flat_map(|function| &function.body)
            .any(|first| first.used == Use::TileCopy)
    }

    /// Whether any function has a work-group collective.
    pub fn uses_work_group_collectives(&self) -> bool {
        self.functions
            .iter()
            .flat_map(|f| &f.body)
            .any(|first| matches!(first.used, Use::Builtin(Builtin::WorkGroup(_), _)))
    }

    /// Whether `function`'s work-items wait for or exchange values with each other
    /// ([`FunctionFeatures::synchronizes_itself`]), in it or in a function it calls.
    pub fn synchronizes(&self, function: FunctionId) -> bool {
        self.reaches(function, FunctionFeatures::synchronizes_itself)
    }

    /// Whether `function` or a function it calls has a matrix group's statement.
    pub fn runs_group_matrix(&self, function: FunctionId) -> bool {
        self.reaches(function, |features| {
            features
                .body
                .iter()
                .any(|first| first.used == Use::GroupMatrix)
        })
    }

    /// Whether `function` or a function it calls has a sub-group tile statement.
    pub fn runs_matrix_tiles(&self, function: FunctionId) -> bool {
        self.reaches(function, |features| {
            features
                .body
                .iter()
                .any(|first| matches!(first.used, Use::Matrix(_)))
        })
    }

    /// Whether `test` holds for `function` or a function it calls, directly or not.
    fn reaches(&self, function: FunctionId, test: impl Fn(&FunctionFeatures) -> bool) -> bool {
        let mut reached = HashSet::new();
        let mut pending = vec![function];
        while let Some(id) = pending.pop() {
            let Some(features) = self.functions.get(id.0 as usize) else {
                continue;
            };
            if !reached.insert(id) {
                continue;
            }
            if test(features) {
                return true;
            }
            pending.extend(features.calls.iter().copied());
        }
        false
    }
}

/// Collects the first use of each kind, and the calls, in the visitor's order.
#[derive(Default)]
struct Collector {
    seen: HashSet<Use>,
    uses: Vec<FirstUse>,
    calls: Vec<FunctionId>,
}

impl Collector {
    fn add(&mut self, used: Use, span: Span) {
        if self.seen.insert(used) {
            self.uses.push(FirstUse { used, span });
        }
    }
}

impl Visitor for Collector {
    fn enter_expression(&mut self, expression: &Expression) {
        let span = expression.span;
        self.add(Use::Scalar(expression.ty), span);
        // Operations with operands count at the type of the first; queries at `u32`.
        let first_type =
            |arguments: &[Expression]| arguments.first().map_or(ScalarType::U32, |a| a.ty);
        let builtin = match &expression.kind {
            ExpressionKind::Math {
                function,
                arguments,
            } => Some((
                Builtin::Math(*function),
                MathFunction::operand_type(arguments, expression.ty),
            )),
            ExpressionKind::Atomic { op, place, .. } => Some((Builtin::Atomic(*op), place.element)),
            ExpressionKind::SubGroup { op, arguments } => {
                Some((Builtin::SubGroup(*op), first_type(arguments)))
            }
            ExpressionKind::WorkGroup { op, arguments } => {
                Some((Builtin::WorkGroup(*op), first_type(arguments)))
            }
            ExpressionKind::Call { function, .. } => {
                self.calls.push(*function);
                None
            }
            _ => None,
        };
        if let Some((builtin, ty)) = builtin {
            self.add(Use::Builtin(builtin, ty), span);
        }
    }

    // After the statement's operands, which come first in evaluation order.
    fn leave_statement(&mut self, statement: &Statement) {
        let span = statement.span;
        match &statement.kind {
            StatementKind::Print { arguments, .. } => {
                let bools = arguments
                    .iter()
                    .filter(|a| a.ty == ScalarType::Bool)
                    .count();
                self.add(Use::Print { bools }, span);
            }
            StatementKind::Matrix(op) => match op.shape() {
                Some(shape) => self.add(Use::Matrix(shape), span),
                None => self.add(Use::GroupMatrix, span),
            },
            StatementKind::Barrier { .. } => self.add(Use::Barrier, span),
            StatementKind::AsyncCopy(_) => self.add(Use::AsyncCopy, span),
            StatementKind::TileCopy(_) => self.add(Use::TileCopy, span),
            _ => {}
        }
    }
}
