//! Walks over a function body's statements, expressions and places, for analyses that look
//! at every one of them (which buffers a kernel indexes, which built-ins it calls).

use crate::ir::*;

/// Calls `visit` on every expression of `block`, outer ones before those inside them, and
/// `visit_place` on every place (stores, loads, atomics) before its index expressions.
pub fn walk_block(
    block: &Block,
    visit: &mut impl FnMut(&Expression),
    visit_place: &mut impl FnMut(&Place),
) {
    for statement in block {
        match &statement.kind {
            StatementKind::Assign { value, .. } | StatementKind::Evaluate { value } => {
                walk_expression(value, visit, visit_place)
            }
            StatementKind::Store { place, value } => {
                walk_place(place, visit, visit_place);
                walk_expression(value, visit, visit_place);
            }
            StatementKind::VectorStore { place, values } => {
                walk_place(place, visit, visit_place);
                for value in values {
                    walk_expression(value, visit, visit_place);
                }
            }
            StatementKind::If {
                condition,
                accept,
                reject,
            } => {
                walk_expression(condition, visit, visit_place);
                walk_block(accept, visit, visit_place);
                walk_block(reject, visit, visit_place);
            }
            StatementKind::Loop {
                body, continuing, ..
            } => {
                walk_block(body, visit, visit_place);
                walk_block(continuing, visit, visit_place);
            }
            StatementKind::Return { value: Some(value) } => {
                walk_expression(value, visit, visit_place)
            }
            StatementKind::Return { value: None }
            | StatementKind::Break
            | StatementKind::Continue
            | StatementKind::Barrier { .. } => {}
        }
    }
}

fn walk_place(
    place: &Place,
    visit: &mut impl FnMut(&Expression),
    visit_place: &mut impl FnMut(&Place),
) {
    visit_place(place);
    for index in &place.indices {
        walk_expression(index, visit, visit_place);
    }
}

/// [`walk_block`] for one expression.
pub fn walk_expression(
    expression: &Expression,
    visit: &mut impl FnMut(&Expression),
    visit_place: &mut impl FnMut(&Place),
) {
    visit(expression);
    match &expression.kind {
        ExpressionKind::Literal(_)
        | ExpressionKind::Parameter(_)
        | ExpressionKind::Variable(_)
        | ExpressionKind::WorkItem { .. } => {}
        ExpressionKind::Load(place) | ExpressionKind::VectorLoad { place, .. } => {
            walk_place(place, visit, visit_place)
        }
        ExpressionKind::Unary { operand, .. } => walk_expression(operand, visit, visit_place),
        ExpressionKind::Binary { left, right, .. }
        | ExpressionKind::ShortCircuit { left, right, .. } => {
            walk_expression(left, visit, visit_place);
            walk_expression(right, visit, visit_place);
        }
        ExpressionKind::Cast { value } => walk_expression(value, visit, visit_place),
        ExpressionKind::Select {
            condition,
            accept,
            reject,
        }
        | ExpressionKind::Conditional {
            condition,
            accept,
            reject,
        } => {
            walk_expression(condition, visit, visit_place);
            walk_expression(accept, visit, visit_place);
            walk_expression(reject, visit, visit_place);
        }
        ExpressionKind::Call { arguments, .. } => {
            for argument in arguments {
                if let Argument::Value(value) = argument {
                    walk_expression(value, visit, visit_place);
                }
            }
        }
        ExpressionKind::Math { arguments, .. }
        | ExpressionKind::SubGroup { arguments, .. }
        | ExpressionKind::WorkGroup { arguments, .. } => {
            for argument in arguments {
                walk_expression(argument, visit, visit_place);
            }
        }
        ExpressionKind::Atomic {
            place,
            value,
            comparand,
            ..
        } => {
            walk_place(place, visit, visit_place);
            walk_expression(value, visit, visit_place);
            if let Some(comparand) = comparand {
                walk_expression(comparand, visit, visit_place);
            }
        }
    }
}

impl Module {
    /// Whether `function`, or a device function it calls, indexes a buffer with a 64-bit
    /// integer, so it can reach elements past 2^32.
    pub fn indexes_buffers_with_64_bits(&self, function: FunctionId) -> bool {
        let mut pending = vec![function];
        let mut seen = std::collections::HashSet::new();
        while let Some(id) = pending.pop() {
            if !seen.insert(id) || id.0 as usize >= self.functions.len() {
                continue;
            }
            let mut wide = false;
            walk_block(
                &self.function(id).body,
                &mut |expression| {
                    if let ExpressionKind::Call { function, .. } = &expression.kind {
                        pending.push(*function);
                    }
                },
                &mut |place| {
                    wide |= matches!(place.base, PlaceBase::Parameter(_))
                        && place.indices.iter().any(|i| i.ty.bit_width() == 64);
                },
            );
            if wide {
                return true;
            }
        }
        false
    }
}

impl Module {
    /// For each parameter of `function`: the address alignment in bytes its vector accesses
    /// (`vload4`, `vstore4`), and those of the device functions it passes the buffer to, need
    /// beyond the element's own; 0 where there are none.
    pub fn buffer_alignments(&self, function: FunctionId) -> Vec<u32> {
        // Functions come callees first: each one's callees are in the table before it, so
        // every function is walked once however often it is called.
        let last = (function.0 as usize).min(self.functions.len());
        let mut table: Vec<Vec<u32>> = Vec::with_capacity(last + 1);
        for body in self.functions.iter().take(last + 1) {
            let own = own_buffer_alignments(body, &table);
            table.push(own);
        }
        table.get(function.0 as usize).cloned().unwrap_or_default()
    }
}

/// [`Module::buffer_alignments`] of `body`, given those of the functions before it.
fn own_buffer_alignments(body: &Function, callees: &[Vec<u32>]) -> Vec<u32> {
    let mut alignments = vec![0u32; body.parameters.len()];
    let mut calls = Vec::new();
    walk_block(
        &body.body,
        &mut |expression| match &expression.kind {
            ExpressionKind::VectorLoad { place, width, .. } => {
                require(&mut alignments, place, usize::from(*width));
            }
            ExpressionKind::Call {
                function,
                arguments,
            } => calls.push((*function, arguments.clone())),
            _ => {}
        },
        &mut |_| {},
    );
    visit_vector_stores(&body.body, &mut |place, width| {
        require(&mut alignments, place, width)
    });
    for (callee, arguments) in calls {
        let Some(needed) = callees.get(callee.0 as usize) else {
            continue;
        };
        for (argument, needed) in arguments.iter().zip(needed) {
            if let Argument::Buffer(id) = argument {
                if let Some(slot) = alignments.get_mut(id.0 as usize) {
                    *slot = (*slot).max(*needed);
                }
            }
        }
    }
    alignments
}

fn require(alignments: &mut [u32], place: &Place, width: usize) {
    if let PlaceBase::Parameter(id) = place.base {
        if let Some(slot) = alignments.get_mut(id.0 as usize) {
            let needed = vector_alignment(place.element, width as u8);
            if needed > place.element.size_in_bytes() {
                *slot = (*slot).max(needed);
            }
        }
    }
}

/// Calls `visit` with the place and width of every `VectorStore` in `block`.
fn visit_vector_stores(block: &Block, visit: &mut impl FnMut(&Place, usize)) {
    for statement in block {
        match &statement.kind {
            StatementKind::VectorStore { place, values } => visit(place, values.len()),
            StatementKind::If { accept, reject, .. } => {
                visit_vector_stores(accept, visit);
                visit_vector_stores(reject, visit);
            }
            StatementKind::Loop {
                body, continuing, ..
            } => {
                visit_vector_stores(body, visit);
                visit_vector_stores(continuing, visit);
            }
            _ => {}
        }
    }
}
