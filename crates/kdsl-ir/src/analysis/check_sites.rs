//! Checked mode's check sites: every bounds check (one per dimension of a place), integer
//! division and remainder, overflowing `+ - *` and negation, and dimension index of a
//! module, numbered in one fixed walk in evaluation order, so that every image of a bundle
//! agrees with the site list in its metadata. Sites are found by node id ([`ExprId`],
//! [`PlaceId`]), so a copy of the IR between planning and lowering keeps them.
//!
//! Also here: which functions synchronize with other work-items, which checked mode needs to
//! decide whether a loop may be left once its work-item has faulted.

use crate::ir::*;
use crate::span::Span;
use crate::types::{AddressSpace, ParameterType};
use crate::visit::{visit_block, Access, Visitor};
use std::collections::{BTreeSet, HashMap};

/// One check: what it checks (`buffer `a``, `division`), where, and in which function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckSite {
    /// The site's number, its index in [`CheckSites::sites`].
    pub id: u32,
    pub function: String,
    pub what: String,
    pub span: Span,
    /// Whether the checked index is of a signed type (a negative index reads as such).
    pub signed_index: bool,
}

/// The check sites of a module.
#[derive(Clone, Debug, Default)]
pub struct CheckSites {
    pub sites: Vec<CheckSite>,
    functions: Vec<FunctionSites>,
}

#[derive(Clone, Debug, Default)]
struct FunctionSites {
    /// The first site of a place (one per dimension; one for a vector access).
    places: HashMap<PlaceId, u32>,
    /// The site of a checked operation or dimension index.
    operations: HashMap<ExprId, u32>,
    /// The sites of the function: `first..end`.
    first: u32,
    end: u32,
    /// The functions it calls directly (and a kernel's contiguous copy).
    callees: BTreeSet<usize>,
    /// Whether it synchronizes with other work-items (a barrier, a sub-group or work-group
    /// operation), itself or through the functions it calls.
    synchronizing: bool,
}

/// Integer division and remainder, checked for a zero divisor and `MIN / -1`.
pub fn is_checked_division(op: BinaryOp, ty: crate::ScalarType) -> bool {
    matches!(op, BinaryOp::Divide | BinaryOp::Remainder) && ty.is_integer()
}

/// Integer `+ - *`, whose overflow is undefined (docs/language.md, "Semantics").
pub fn is_checked_arithmetic(op: BinaryOp, ty: crate::ScalarType) -> bool {
    matches!(op, BinaryOp::Add | BinaryOp::Subtract | BinaryOp::Multiply) && ty.is_integer()
}

/// Unary `-` of a signed integer, which overflows at the type's minimum.
pub fn is_checked_negation(op: UnaryOp, ty: crate::ScalarType) -> bool {
    op == UnaryOp::Negate && ty.is_signed_integer()
}

impl CheckSites {
    /// Numbers the sites of every function of `module`, in order. The module's ids must be
    /// numbered ([`crate::ids`]).
    pub fn new(module: &Module) -> CheckSites {
        let mut result = CheckSites::default();
        for function in &module.functions {
            // Functions come callees first, so every callee's answer is known here.
            let synchronizing = result.synchronizes(&function.body);
            let first = result.sites.len() as u32;
            // A contiguous copy's sites are its kernel's: the kernel reports them (the copy
            // runs in its place) and names itself in them.
            let copy_of = function.contiguous_copy_of.map(|kernel| kernel.0 as usize);
            let name = copy_of
                .and_then(|kernel| module.functions.get(kernel))
                .map_or(&function.name, |kernel| &kernel.name);
            let mut walk = Walk {
                sites: &mut result.sites,
                function,
                name,
                own: FunctionSites {
                    first,
                    synchronizing,
                    ..FunctionSites::default()
                },
            };
            visit_block(&function.body, &mut walk);
            let mut own = walk.own;
            own.end = result.sites.len() as u32;
            let index = result.functions.len();
            if let Some(kernel) = copy_of.and_then(|kernel| result.functions.get_mut(kernel)) {
                kernel.callees.insert(index);
            }
            result.functions.push(own);
        }
        result
    }

    /// Whether `block` synchronizes with other work-items, itself or through a call.
    pub fn synchronizes(&self, block: &Block) -> bool {
        let mut finder = Synchronizing {
            known: &self.functions,
            found: false,
        };
        visit_block(block, &mut finder);
        finder.found
    }

    /// The first site of `place` in function `function` (one per dimension follow it).
    pub fn place_site(&self, function: FunctionId, place: &Place) -> Option<u32> {
        let sites = self.functions.get(function.0 as usize)?;
        sites.places.get(&place.id).copied()
    }

    /// The site of a checked operation or dimension index in function `function`.
    pub fn operation_site(&self, function: FunctionId, expression: &Expression) -> Option<u32> {
        let sites = self.functions.get(function.0 as usize)?;
        sites.operations.get(&expression.id).copied()
    }

    /// The sites a kernel can report: its own and those of the device functions it calls.
    pub fn sites_of_kernel(&self, kernel: FunctionId) -> Vec<&CheckSite> {
        let mut reached = BTreeSet::new();
        let mut pending = vec![kernel.0 as usize];
        while let Some(index) = pending.pop() {
            if let Some(sites) = self.functions.get(index) {
                if reached.insert(index) {
                    pending.extend(sites.callees.iter().copied());
                }
            }
        }
        reached
            .into_iter()
            .flat_map(|index| {
                let sites = &self.functions[index];
                &self.sites[sites.first as usize..sites.end as usize]
            })
            .collect()
    }
}

struct Synchronizing<'a> {
    known: &'a [FunctionSites],
    found: bool,
}

impl Visitor for Synchronizing<'_> {
    fn enter_statement(&mut self, statement: &Statement) {
        self.found |= matches!(
            statement.kind,
            StatementKind::Barrier { .. } | StatementKind::TileCopy(_)
        );
    }

    fn enter_expression(&mut self, expression: &Expression) {
        self.found |= match &expression.kind {
            ExpressionKind::SubGroup { .. } | ExpressionKind::WorkGroup { .. } => true,
            ExpressionKind::Call { function, .. } => self
                .known
                .get(function.0 as usize)
                .is_none_or(|callee| callee.synchronizing),
            _ => false,
        };
    }
}

/// Numbers the checks of one function in evaluation order: a place's sites after its
/// indices, an operation's after its operands.
struct Walk<'s, 'm> {
    sites: &'s mut Vec<CheckSite>,
    function: &'m Function,
    /// The name the sites give: the function's, or a contiguous copy's kernel's.
    name: &'m str,
    own: FunctionSites,
}

impl Walk<'_, '_> {
    fn add(&mut self, what: String, span: Span, signed_index: bool) -> u32 {
        let id = self.sites.len() as u32;
        self.sites.push(CheckSite {
            id,
            function: self.name.to_string(),
            what,
            span,
            signed_index,
        });
        id
    }

    /// A vector access: one site, its index counting vectors.
    fn vector_place(&mut self, place: &Place, width: u8, span: Span) {
        if let (PlaceBase::Parameter(id), Some(index)) = (place.base, place.indices.first()) {
            let name = &self.function.parameter(id).name;
            let what = format!("buffer `{name}` (as vectors of {width})");
            let site = self.add(what, span, index.ty.is_signed_integer());
            self.own.places.insert(place.id, site);
        }
    }

    fn place(&mut self, place: &Place, span: Span) {
        let (name, dimensions) = match place.base {
            PlaceBase::Parameter(id) => {
                let parameter = self.function.parameter(id);
                let kind = match parameter.ty {
                    ParameterType::Buffer {
                        space: AddressSpace::Local,
                        ..
                    } => "local array",
                    _ => "buffer",
                };
                (format!("{kind} `{}`", parameter.name), 1)
            }
            PlaceBase::Variable(id) => {
                let variable = self.function.variable(id);
                let kind = if variable.space == AddressSpace::Local {
                    "local array"
                } else {
                    "array"
                };
                (format!("{kind} `{}`", variable.name), place.indices.len())
            }
        };
        let mut first = None;
        for (dimension, index) in place.indices.iter().enumerate() {
            let what = if dimensions > 1 {
                format!("{name} (dimension {} of {dimensions})", dimension + 1)
            } else {
                name.clone()
            };
            let id = self.add(what, span, index.ty.is_signed_integer());
            first.get_or_insert(id);
        }
        if let Some(first) = first {
            self.own.places.insert(place.id, first);
        }
    }

    fn operation(&mut self, expression: &Expression, what: String, signed_index: bool) {
        let id = self.add(what, expression.span, signed_index);
        self.own.operations.insert(expression.id, id);
    }
}

impl Visitor for Walk<'_, '_> {
    fn leave_place(&mut self, place: &Place, access: Access, span: Span) {
        match access {
            Access::VectorLoad(width) | Access::VectorStore(width) => {
                self.vector_place(place, width, span)
            }
            // Copies are plain loads and stores in checked mode (`async_copy::expand_plain`).
            Access::Load
            | Access::Store
            | Access::Atomic
            | Access::CopyTo(_)
            | Access::CopyFrom(_)
            | Access::TileTo
            | Access::TileFrom => self.place(place, span),
        }
    }

    fn enter_expression(&mut self, expression: &Expression) {
        if let ExpressionKind::Call { function, .. } = expression.kind {
            self.own.callees.insert(function.0 as usize);
        }
    }

    fn leave_expression(&mut self, expression: &Expression) {
        match &expression.kind {
            ExpressionKind::Unary { op, operand } if is_checked_negation(*op, operand.ty) => {
                self.operation(expression, format!("`-` on `{}`", operand.ty), false);
            }
            ExpressionKind::Binary { op, left, .. } if is_checked_division(*op, left.ty) => {
                let what = if *op == BinaryOp::Divide {
                    "division"
                } else {
                    "remainder"
                };
                self.operation(expression, what.to_string(), false);
            }
            ExpressionKind::Binary { op, left, .. } if is_checked_arithmetic(*op, left.ty) => {
                let what = format!("`{}` on `{}`", op.symbol(), left.ty);
                self.operation(expression, what, false);
            }
            ExpressionKind::DimensionIndex {
                index,
                buffer,
                dimension,
                ..
            } => {
                let shaped = self
                    .function
                    .shaped_buffers
                    .iter()
                    .find(|shaped| shaped.buffer == *buffer);
                let rank = shaped.map_or(0, |shaped| shaped.rank());
                let name = &self.function.parameter(*buffer).name;
                let what = format!("buffer `{name}` (dimension {} of {rank})", dimension + 1);
                self.operation(expression, what, index.ty.is_signed_integer());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ScalarType;

    fn expression(kind: ExpressionKind, ty: ScalarType) -> Expression {
        Expression {
            id: ExprId::UNNUMBERED,
            kind,
            ty,
            span: Span::new(1, 2),
        }
    }

    /// `out[i] = in[i] / d` in a kernel `k(out: global mut [i32], in: global [i32], d: i32)`.
    fn module() -> Module {
        let parameter =
            |id| expression(ExpressionKind::Parameter(ParameterId(id)), ScalarType::I32);
        let place = |buffer| Place {
            id: PlaceId::UNNUMBERED,
            base: PlaceBase::Parameter(ParameterId(buffer)),
            indices: vec![expression(
                ExpressionKind::Literal(Literal::Integer(0)),
                ScalarType::U32,
            )],
            element: ScalarType::I32,
            space: AddressSpace::Global,
            field: None,
        };
        let quotient = expression(
            ExpressionKind::Binary {
                op: BinaryOp::Divide,
                left: Box::new(expression(
                    ExpressionKind::Load(Box::new(place(1))),
                    ScalarType::I32,
                )),
                right: Box::new(parameter(2)),
            },
            ScalarType::I32,
        );
        let buffer = |name: &str, writable| crate::Parameter {
            name: name.into(),
            ty: ParameterType::Buffer {
                element: ScalarType::I32,
                space: AddressSpace::Global,
                writable,
                record: None,
            },
            span: Span::default(),
        };
        let mut function = Function {
            name: "k".into(),
            kind: FunctionKind::Kernel,
            parameters: vec![
                buffer("out", true),
                buffer("in", false),
                crate::Parameter {
                    name: "d".into(),
                    ty: ParameterType::Scalar {
                        ty: ScalarType::I32,
                    },
                    span: Span::default(),
                },
            ],
            return_type: None,
            variables: Vec::new(),
            body: vec![Statement {
                kind: StatementKind::Store {
                    place: place(0),
                    value: quotient,
                },
                span: Span::new(0, 9),
            }],
            span: Span::default(),
            work_group_size: None,
            shaped_buffers: Vec::new(),
            contiguous_entry: None,
            contiguous_copy_of: None,
        };
        crate::ids::number_function(&mut function);
        Module {
            functions: vec![function],
            constants: Vec::new(),
        }
    }

    #[test]
    fn sites_are_numbered_in_evaluation_order_and_found_by_id_in_a_copy() {
        let module = module();
        let sites = CheckSites::new(&module);
        let what: Vec<&str> = sites.sites.iter().map(|s| s.what.as_str()).collect();
        // The value (its load, then the division) before the stored-to place.
        assert_eq!(what, ["buffer `in`", "division", "buffer `out`"]);
        assert_eq!(sites.sites_of_kernel(FunctionId(0)).len(), 3);
        // A copy of the IR finds the same sites: they are keyed by id, not by address.
        let copy = module.clone();
        let StatementKind::Store { place, value } = &copy.functions[0].body[0].kind else {
            unreachable!()
        };
        let kernel = FunctionId(0);
        assert_eq!(sites.place_site(kernel, place), Some(2));
        assert_eq!(sites.operation_site(kernel, value), Some(1));
        let ExpressionKind::Binary { left, .. } = &value.kind else {
            unreachable!()
        };
        let ExpressionKind::Load(loaded) = &left.kind else {
            unreachable!()
        };
        assert_eq!(sites.place_site(kernel, loaded), Some(0));
        assert!(!sites.synchronizes(&copy.functions[0].body));
    }
}
