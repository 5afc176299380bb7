//! The order device functions are checked in (callees first), and recursion reported.

use super::{Checker, Global};
use crate::ast::{self, FunctionKind as AstFunctionKind};
use kdsl_ir::{Diagnostic, ErrorCode, Span};
use std::collections::HashMap;

impl Checker<'_> {
    /// Orders device functions callees first and reports recursion.
    pub(super) fn order_device_functions(&mut self) -> Vec<usize> {
        let device: Vec<usize> = (0..self.functions.len())
            .filter(|&i| {
                self.functions[i].kind == AstFunctionKind::Device
                    && self.functions[i].type_parameters.is_empty()
                    && self.globals.get(&self.functions[i].name.name) == Some(&Global::Function(i))
            })
            .collect();
        let mut calls: HashMap<usize, Vec<(usize, Span)>> = HashMap::new();
        for &index in &device {
            let mut found = Vec::new();
            collect_calls_in_block(&self.functions[index].body, &mut found);
            let mut callees = Vec::new();
            for (name, span) in found {
                if let Some(Global::Function(callee)) = self.globals.get(&name) {
                    if self.functions[*callee].kind == AstFunctionKind::Device {
                        callees.push((*callee, span));
                    }
                }
            }
            calls.insert(index, callees);
        }
        // Depth-first search; a back edge to a function on the stack is a cycle.
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Active,
            Finished,
        }
        let mut marks: HashMap<usize, Mark> = device.iter().map(|&i| (i, Mark::New)).collect();
        let mut order = Vec::new();
        let mut cycles: Vec<Vec<(usize, Span)>> = Vec::new();
        for &root in &device {
            if marks[&root] != Mark::New {
                continue;
            }
            // Iterative DFS: the stack holds (function, next callee position, call span into it).
            let mut stack: Vec<(usize, usize, Span)> = vec![(root, 0, Span::default())];
            marks.insert(root, Mark::Active);
            while let Some(&mut (function, ref mut next, _)) = stack.last_mut() {
                let callees = &calls[&function];
                if *next < callees.len() {
                    let (callee, span) = callees[*next];
                    *next += 1;
                    match marks[&callee] {
                        Mark::New => {
                            marks.insert(callee, Mark::Active);
                            stack.push((callee, 0, span));
                        }
                        Mark::Active => {
                            let start =
                                stack.iter().position(|(f, _, _)| *f == callee).unwrap_or(0);
                            // The cycle: each function with the call that leads to the next.
                            let mut cycle: Vec<(usize, Span)> = Vec::new();
                            for position in start..stack.len() {
                                let call = if position + 1 < stack.len() {
                                    stack[position + 1].2
                                } else {
                                    span
                                };
                                cycle.push((stack[position].0, call));
                            }
                            cycles.push(cycle);
                        }
                        Mark::Finished => {}
                    }
                } else {
                    marks.insert(function, Mark::Finished);
                    order.push(function);
                    stack.pop();
                }
            }
        }
        for cycle in cycles {
            let names: Vec<String> = cycle
                .iter()
                .map(|(f, _)| format!("`{}`", self.functions[*f].name.name))
                .collect();
            let first = self.functions[cycle[0].0];
            let message = if cycle.len() == 1 {
                format!("function `{}` calls itself", first.name.name)
            } else {
                format!(
                    "functions call each other in a cycle: {} -> {}",
                    names.join(" -> "),
                    names[0]
                )
            };
            let mut diagnostic = Diagnostic::error(
                ErrorCode::E0508,
                message,
                first.name.span,
                "recursion is not allowed",
            );
            for (function, call) in &cycle {
                diagnostic = diagnostic.with_label(
                    *call,
                    format!("`{}` makes this call", self.functions[*function].name.name),
                );
            }
            self.report(
                diagnostic
                    .with_hint("GPU kernels have no call stack: rewrite the recursion as a loop"),
            );
        }
        order
    }
}

/// Appends every call in `block` (callee name and span), in source order.
fn collect_calls_in_block(block: &ast::Block, found: &mut Vec<(String, Span)>) {
    for statement in &block.statements {
        collect_calls_in_statement(statement, found);
    }
}

fn collect_calls_in_statement(statement: &ast::Statement, found: &mut Vec<(String, Span)>) {
    use ast::StatementKind as S;
    match &statement.kind {
        S::Let { value, .. } => {
            if let Some(value) = value {
                collect_calls(value, found);
            }
        }
        S::LetTuple { value, .. } => collect_calls(value, found),
        S::Local { .. } | S::Break | S::Continue | S::Error => {}
        S::Assign { target, value, .. } => {
            collect_calls(target, found);
            collect_calls(value, found);
        }
        S::If {
            condition,
            accept,
            reject,
        } => {
            collect_calls(condition, found);
            collect_calls_in_block(accept, found);
            if let Some(reject) = reject {
                collect_calls_in_block(reject, found);
            }
        }
        S::While { condition, body } => {
            collect_calls(condition, found);
            collect_calls_in_block(body, found);
        }
        S::For {
            start,
            end,
            step,
            body,
            ..
        } => {
            collect_calls(start, found);
            collect_calls(end, found);
            if let Some(step) = step {
                collect_calls(step, found);
            }
            collect_calls_in_block(body, found);
        }
        S::Return(value) => {
            if let Some(value) = value {
                collect_calls(value, found);
            }
        }
        S::Block(block) => collect_calls_in_block(block, found),
        S::Expression(value) => collect_calls(value, found),
    }
}

fn collect_calls(expression: &ast::Expression, found: &mut Vec<(String, Span)>) {
    use ast::ExpressionKind as E;
    match &expression.kind {
        E::Literal(_) | E::String(_) | E::Name(_) | E::AssociatedConstant { .. } | E::Error => {}
        E::Unary { operand, .. } => collect_calls(operand, found),
        E::Binary { left, right, .. } => {
            collect_calls(left, found);
            collect_calls(right, found);
        }
        E::Cast { value, .. } => collect_calls(value, found),
        E::If {
            condition,
            accept,
            reject,
        } => {
            collect_calls(condition, found);
            collect_calls(accept, found);
            collect_calls(reject, found);
        }
        E::Index { base, index } => {
            collect_calls(base, found);
            collect_calls(index, found);
        }
        E::Call { callee, arguments } => {
            found.push((callee.name.clone(), expression.span));
            for argument in arguments {
                collect_calls(argument, found);
            }
        }
        E::Parenthesized(inner) | E::Field { base: inner, .. } => collect_calls(inner, found),
        E::MethodCall {
            base, arguments, ..
        } => {
            collect_calls(base, found);
            for argument in arguments {
                collect_calls(argument, found);
            }
        }
        E::Tuple(elements) => {
            for element in elements {
                collect_calls(element, found);
            }
        }
        E::RecordLiteral { fields, .. } => {
            for (_, value) in fields {
                collect_calls(value, found);
            }
        }
    }
}
