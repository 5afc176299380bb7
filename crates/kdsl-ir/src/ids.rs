//! Node identities: every [`Expression`] and [`Place`] of a function carries an id, dense
//! within the function ([`ExprId`], [`PlaceId`]), so that analyses ([`crate::analysis`]) can
//! key their results by node instead of by memory address, and a copy of the IR keeps them.
//!
//! Builders write [`ExprId::UNNUMBERED`]; the front end numbers each function once it is built
//! ([`number_module`]), and a pass that creates nodes (such as [`crate::matrix::expand_plain`])
//! numbers the functions it changed again. [`crate::validate()`] checks the numbering
//! ([`check_function`]). The ids are not serialized and not printed.

use crate::ir::*;
use crate::visit::walk_block;
use crate::visit_mut::walk_block_mut;

/// Numbers every function of `module` ([`number_function`]).
pub fn number_module(module: &mut Module) {
    for function in &mut module.functions {
        number_function(function);
    }
}

/// Gives the expressions of `function` the ids `0..n` and its places `0..m`, inner nodes
/// before those holding them, in statement order. Returns `(n, m)`.
pub fn number_function(function: &mut Function) -> (u32, u32) {
    let mut expressions = 0u32;
    let mut places = 0u32;
    walk_block_mut(
        &mut function.body,
        &mut |expression| {
            expression.id = ExprId(expressions);
            expressions += 1;
        },
        &mut |place| {
            place.id = PlaceId(places);
            places += 1;
        },
    );
    (expressions, places)
}

/// The number of expressions and places of `function`: one more than their largest ids when
/// it is numbered.
pub fn node_counts(function: &Function) -> (usize, usize) {
    let mut expressions = 0;
    let mut places = 0;
    walk_block(&function.body, &mut |_| expressions += 1, &mut |_| {
        places += 1
    });
    (expressions, places)
}

/// Checks that the expressions of `function` have the ids `0..n` in some order, each once,
/// and likewise its places. The error names the first problem.
pub fn check_function(function: &Function) -> Result<(), String> {
    let mut expression_ids = Vec::new();
    let mut place_ids = Vec::new();
    walk_block(
        &function.body,
        &mut |expression| expression_ids.push(expression.id.0),
        &mut |place| place_ids.push(place.id.0),
    );
    check_dense(&expression_ids, "expression")?;
    check_dense(&place_ids, "place")
}

fn check_dense(ids: &[u32], what: &str) -> Result<(), String> {
    let mut seen = vec![false; ids.len()];
    for &id in ids {
        if let Some(problem) = mark(&mut seen, id, what) {
            return Err(problem);
        }
    }
    Ok(())
}

fn mark(seen: &mut [bool], id: u32, what: &str) -> Option<String> {
    let count = seen.len();
    match seen.get_mut(id as usize) {
        None if id == u32::MAX => Some(format!(
            "{what} without an id (the function is not numbered)"
        )),
        None => Some(format!("{what} id {id} is outside 0..{count}")),
        Some(true) => Some(format!("{what} id {id} is used twice")),
        Some(flag) => {
            *flag = true;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Span;
    use crate::types::{AddressSpace, ScalarType};

    fn leaf(value: u64) -> Expression {
        Expression {
            id: ExprId::UNNUMBERED,
            kind: ExpressionKind::Literal(Literal::Integer(value)),
            ty: ScalarType::U32,
            span: Span::default(),
        }
    }

    fn function() -> Function {
        let place = Place {
            id: PlaceId::UNNUMBERED,
            base: PlaceBase::Parameter(ParameterId(0)),
            indices: vec![leaf(0)],
            element: ScalarType::U32,
            space: AddressSpace::Global,
            field: None,
        };
        let sum = Expression {
            id: ExprId::UNNUMBERED,
            kind: ExpressionKind::Binary {
                op: BinaryOp::Add,
                left: Box::new(leaf(1)),
                right: Box::new(leaf(2)),
            },
            ty: ScalarType::U32,
            span: Span::default(),
        };
        Function {
            name: "f".into(),
            kind: FunctionKind::Kernel,
            parameters: Vec::new(),
            return_type: None,
            variables: Vec::new(),
            body: vec![Statement {
                kind: StatementKind::Store { place, value: sum },
                span: Span::default(),
            }],
            span: Span::default(),
            work_group_size: None,
            shaped_buffers: Vec::new(),
            contiguous_entry: None,
            contiguous_copy_of: None,
        }
    }

    #[test]
    fn numbering_is_dense_inner_nodes_first_and_checked() {
        let mut function = function();
        assert!(check_function(&function)
            .unwrap_err()
            .contains("not numbered"));
        assert_eq!(number_function(&mut function), (4, 1));
        assert_eq!(node_counts(&function), (4, 1));
        check_function(&function).unwrap();
        let StatementKind::Store { place, value } = &function.body[0].kind else {
            unreachable!()
        };
        // The place's index, then the value's operands, then the value.
        assert_eq!(place.id, PlaceId(0));
        assert_eq!(place.indices[0].id, ExprId(0));
        assert_eq!(value.id, ExprId(3));
        // A copy keeps the ids; a duplicated node is found.
        let mut twice = function.clone();
        let copy = value.clone();
        twice.body.push(Statement {
            kind: StatementKind::Evaluate { value: copy },
            span: Span::default(),
        });
        assert!(check_function(&twice).unwrap_err().contains("used twice"));
    }
}
