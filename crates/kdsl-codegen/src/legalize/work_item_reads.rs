//! Work-item queries read once per function, in its entry block. Intel's OpenCL CPU device
//! compiler computes `get_global_id(0) - gid` as 16 times the work-item's 16-wide chunk of its
//! group where the second read of the id sits in a later block than the first (fuzzgen seed
//! 9454, docs/fuzzgen.md); reads in the entry block are right. kdsl reads a query where the
//! source does, and the inliner puts a helper's reads where it is called, so at -O0 (and
//! wherever the optimizer cannot merge two reads, as in both arms of a branch) a module held
//! such reads. After this rewrite each function reads each query and dimension once, in its
//! entry block, and every read uses that value, as clang's optimized SPIR-V does.
//!
//! A device function that stays a function (above the inlining budget) reads the queries it
//! uses once at its own entry; its callers do not pass them. The CPU device gets such a read
//! right (`read_again_in_kept_helper` in tests/kernels/work_item_reads.krn).

use crate::lower::{opencl_work_item_function, WORK_ITEM_QUERIES};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::values::{
    BasicValueEnum, CallSiteValue, InstructionOpcode, InstructionValue, Operand,
};

/// A work-item query: its builtin's index in [`WORK_ITEM_QUERIES`] and the dimension.
type Query = (usize, u64);

pub(super) fn read_once_at_entry<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
) -> Result<(), String> {
    let builtins: Vec<String> = WORK_ITEM_QUERIES
        .iter()
        .map(|&query| opencl_work_item_function(query))
        .collect();
    let builder = context.create_builder();
    for function in module.get_functions() {
        let Some(entry) = function.get_first_basic_block() else {
            continue;
        };
        // Each query's reads, the first in layout order (the entry block comes first) first.
        let mut reads: Vec<(Query, Vec<InstructionValue<'ctx>>)> = Vec::new();
        for block in function.get_basic_block_iter() {
            for instruction in block.get_instructions() {
                let Some(query) = query_read_by(instruction, &builtins) else {
                    continue;
                };
                match reads.iter_mut().find(|(read, _)| *read == query) {
                    Some((_, same)) => same.push(instruction),
                    None => reads.push((query, vec![instruction])),
                }
            }
        }
        for (_, same) in reads {
            let Some((&first, others)) = same.split_first() else {
                continue;
            };
            // A read in the entry block comes before the others there and dominates the
            // rest; one elsewhere moves to the end of the entry block, where it dominates
            // every other read (none of which is in the entry block). Its operands are
            // constants, so it may be anywhere.
            if first.get_parent() != Some(entry) {
                let end = entry
                    .get_terminator()
                    .ok_or("work-item reads: a function's entry block has no terminator")?;
                first.remove_from_basic_block();
                builder.position_before(&end);
                builder.insert_instruction(&first, None);
            }
            for &other in others {
                other.replace_all_uses_with(&first);
                other.erase_from_basic_block();
            }
        }
    }
    Ok(())
}

/// The query and dimension `instruction` reads, if it calls a work-item builtin with a
/// constant dimension (the lowering passes one; a dimension that the optimizer made a `phi`
/// is left alone).
fn query_read_by(instruction: InstructionValue<'_>, builtins: &[String]) -> Option<Query> {
    if instruction.get_opcode() != InstructionOpcode::Call {
        return None;
    }
    let callee = CallSiteValue::try_from(instruction)
        .ok()?
        .get_called_fn_value()?;
    let name = callee.get_name().to_str().ok()?;
    let builtin = builtins.iter().position(|b| b == name)?;
    match instruction.get_operand(0)? {
        Operand::Value(BasicValueEnum::IntValue(dimension)) => {
            Some((builtin, dimension.get_zero_extended_constant()?))
        }
        _ => None,
    }
}
