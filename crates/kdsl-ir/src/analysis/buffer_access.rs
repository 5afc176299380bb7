//! What the bundle's metadata says about a kernel's buffers, from its IR and its callees': whether
//! it indexes one with a 64-bit integer (elements past 2^32) and the alignment its vector
//! accesses need, which the runtime checks at launch.

use crate::ir::*;
use crate::span::Span;
use crate::visit::{visit_block, walk_block, Access, Visitor};

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
        let last = (function.0 as usize).min(self.functions.len());
        let functions = &self.functions[..(last + 1).min(self.functions.len())];
        let table = alignment_table(functions);
        table.get(function.0 as usize).cloned().unwrap_or_default()
    }
}

/// [`Module::buffer_alignments`] of every function of `functions` (a module's, callees first).
pub(crate) fn alignment_table(functions: &[Function]) -> Vec<Vec<u32>> {
    // Functions come callees first: each one's callees are in the table before it, so
    // every function is walked once however often it is called.
    let mut table: Vec<Vec<u32>> = Vec::with_capacity(functions.len());
    for body in functions {
        let own = own_buffer_alignments(body, &table);
        table.push(own);
    }
    table
}

/// [`Module::buffer_alignments`] of `body`, given those of the functions before it.
fn own_buffer_alignments(body: &Function, callees: &[Vec<u32>]) -> Vec<u32> {
    let mut accesses = VectorAccesses {
        alignments: vec![0u32; body.parameters.len()],
        calls: Vec::new(),
    };
    visit_block(&body.body, &mut accesses);
    let VectorAccesses {
        mut alignments,
        calls,
    } = accesses;
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

/// The alignments a function's own vector accesses need, and its calls.
struct VectorAccesses {
    alignments: Vec<u32>,
    calls: Vec<(FunctionId, Vec<Argument>)>,
}

impl Visitor for VectorAccesses {
    // Matrix groups read tiles whose swizzle follows address bits (`matrix_group`); a tensor
    // copy reads its source, and a tensor store writes its destination, from a 16-byte aligned
    // address (`tile_copy`).
    fn enter_statement(&mut self, statement: &crate::Statement) {
        if let crate::StatementKind::TileCopy(
            crate::TileCopyOp::Copy { source: buffer, .. }
            | crate::TileCopyOp::Store {
                destination: buffer,
                ..
            },
        ) = &statement.kind
        {
            if let Some(slot) = self.alignments.get_mut(buffer.0 as usize) {
                *slot = (*slot).max(crate::tile_copy::SOURCE_ALIGNMENT);
            }
        }
        if let crate::StatementKind::Matrix(op @ crate::MatrixOp::GroupMultiplyAdd { .. }) =
            &statement.kind
        {
            for memory in op.memories() {
                if let PlaceBase::Parameter(id) = memory.base {
                    if let Some(slot) = self.alignments.get_mut(id.0 as usize) {
                        *slot = (*slot).max(crate::matrix_group::TILE_ALIGNMENT_BYTES);
                    }
                }
            }
        }
    }

    fn enter_expression(&mut self, expression: &Expression) {
        if let ExpressionKind::Call {
            function,
            arguments,
        } = &expression.kind
        {
            self.calls.push((*function, arguments.clone()));
        }
    }

    fn enter_place(&mut self, place: &Place, access: Access, _: Span) {
        match access {
            Access::VectorLoad(width) | Access::VectorStore(width) => {
                let needed = vector_alignment(place.element, width);
                require(&mut self.alignments, place, needed);
            }
            // `cp.async` reads 4, 8 or 16 bytes at an address of that alignment.
            Access::CopyFrom(count) => {
                let needed = place.element.size_in_bytes() * u32::from(count);
                require(&mut self.alignments, place, needed);
            }
            _ => {}
        }
    }
}

fn require(alignments: &mut [u32], place: &Place, needed: u32) {
    if let PlaceBase::Parameter(id) = place.base {
        if let Some(slot) = alignments.get_mut(id.0 as usize) {
            if needed > place.element.size_in_bytes() {
                *slot = (*slot).max(needed);
            }
        }
    }
}
