//! What the bundle's metadata says about a kernel's buffers, from its IR and its callees': whether
//! it indexes one with a 64-bit integer (elements past 2^32) and the alignment its vector
//! accesses need, which the runtime checks at launch.

use crate::ir::*;
use crate::visit::walk_block;

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
