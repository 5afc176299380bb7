//! 8- and 16-bit integer patterns that ptxas of CUDA 13.0 (the JIT of driver 580, which loads
//! kdsl's PTX on the H200) compiles wrongly, rewritten after the optimizer (which creates them)
//! into forms it compiles right. Exact rewrites; ptxas 13.5 gets both patterns right, but the
//! driver, not kdsl, picks the ptxas that runs.

use super::instructions;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::values::{
    BasicValueEnum, CallSiteValue, InstructionOpcode, InstructionValue, IntValue, Operand,
};
use inkwell::IntPredicate;

/// The widths the rewrites apply to: those PTX computes in 16-bit registers.
const NARROW: [u32; 2] = [8, 16];

/// Narrow negations (`sub iN 0, x`, and `mul iN x, -1`, which instruction selection also
/// makes `neg.s16` and which the optimizer leaves at -O0) as the truncation of `negate(sext
/// x)`, `negate` being 32-bit inline assembly (operands `=r,r`): instruction selection narrows
/// a plain `sub i32` back to 16 bits, even of an opaque copy. ptxas 13.0 takes `neg.s16` of a
/// sign-extended value to be sign-extended, so `-(-32768)` reached a following `div.s16` as
/// +32768 (fuzzgen seed 9709: `wrapping_mul(x, -1i16) / d`); after a 32-bit negation it
/// sign-extends the truncated result again.
pub(super) fn negate_in_assembly<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
    negate: &str,
) -> Result<(), String> {
    let negations: Vec<InstructionValue<'ctx>> = instructions(module)
        .filter(|&i| negated_value(i).is_some())
        .collect();
    let builder = context.create_builder();
    let error = |e: inkwell::builder::BuilderError| e.to_string();
    let i32_type = context.i32_type();
    let negate_type = i32_type.fn_type(&[i32_type.into()], false);
    for negation in negations {
        // Read the operand now: in `-(-x)` the inner negation, rewritten first, has been
        // replaced by its truncation.
        let Some(value) = negated_value(negation) else {
            continue;
        };
        builder.position_before(&negation);
        let wide = builder
            .build_int_s_extend(value, i32_type, "")
            .map_err(error)?;
        let assembly = context.create_inline_asm(
            negate_type,
            negate.to_string(),
            "=r,r".to_string(),
            false,
            false,
            None,
            false,
        );
        let call = builder
            .build_indirect_call(negate_type, assembly, &[wide.into()], "")
            .map_err(error)?;
        // Pure arithmetic: no memory, no synchronization, always returns.
        for name in ["nounwind", "willreturn", "nosync", "nofree", "memory"] {
            // `memory(none)` is the `memory` attribute with the value 0.
            let kind = Attribute::get_named_enum_kind_id(name);
            call.add_attribute(
                AttributeLoc::Function,
                context.create_enum_attribute(kind, 0),
            );
        }
        let negated = call
            .try_as_basic_value()
            .basic()
            .ok_or("the inline-assembly negation has no result")?
            .into_int_value();
        let narrow = builder
            .build_int_truncate(negated, value.get_type(), "")
            .map_err(error)?;
        super::replace_instruction(negation, narrow);
    }
    Ok(())
}

/// The `x` of a narrow `sub 0, x`, `mul x, -1` or `mul -1, x`.
fn negated_value<'ctx>(instruction: InstructionValue<'ctx>) -> Option<IntValue<'ctx>> {
    let (left, right) = (int_operand(instruction, 0)?, int_operand(instruction, 1)?);
    let width = left.get_type().get_bit_width();
    if !NARROW.contains(&width) {
        return None;
    }
    let is = |value: IntValue, constant: u64| {
        value.is_const() && value.get_zero_extended_constant() == Some(constant)
    };
    let minus_one = (1u64 << width) - 1;
    match instruction.get_opcode() {
        InstructionOpcode::Sub if is(left, 0) => Some(right),
        InstructionOpcode::Mul if is(right, minus_one) => Some(left),
        InstructionOpcode::Mul if is(left, minus_one) => Some(right),
        _ => None,
    }
}

/// `icmp eq/ne (min/max iN x, C), C` as the comparison of `x` with `C` (`umin(x, C) == C` is
/// `x >= C`): ptxas 13.0 folds the comparison into the predicate output of a 16x2 `VIMNMX`
/// whose upper lane it compares with 0, and `min(13, 3) == 3` came out false (fuzzgen seed
/// 9708: `for j in 2..min(count & K, 3)` never ran).
pub(super) fn compare_min_max_operand_directly<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
) -> Result<(), String> {
    let comparisons: Vec<_> = instructions(module)
        .filter_map(|i| comparison_of_min_max_with_its_constant(i).map(|found| (i, found)))
        .collect();
    let builder = context.create_builder();
    for (comparison, (predicate, value, constant, min_max)) in comparisons {
        builder.position_before(&comparison);
        let direct = builder
            .build_int_compare(predicate, value, constant, "")
            .map_err(|e| e.to_string())?;
        super::replace_instruction(comparison, direct);
        if min_max.get_first_use().is_none() {
            min_max.erase_from_basic_block();
        }
    }
    Ok(())
}

/// For `icmp eq/ne` of a narrow `llvm.{u,s}{min,max}(x, C)` with the same constant `C`: the
/// predicate comparing `x` with `C` directly, `x`, `C` and the call.
fn comparison_of_min_max_with_its_constant<'ctx>(
    comparison: InstructionValue<'ctx>,
) -> Option<(
    IntPredicate,
    IntValue<'ctx>,
    IntValue<'ctx>,
    InstructionValue<'ctx>,
)> {
    if comparison.get_opcode() != InstructionOpcode::ICmp {
        return None;
    }
    let equal = match comparison.get_icmp_predicate()? {
        IntPredicate::EQ => true,
        IntPredicate::NE => false,
        _ => return None,
    };
    let (left, right) = (int_operand(comparison, 0)?, int_operand(comparison, 1)?);
    let (min_max, constant) = if right.is_const() {
        (left, right)
    } else {
        (right, left)
    };
    let call = min_max.as_instruction()?;
    if !constant.is_const()
        || call.get_opcode() != InstructionOpcode::Call
        || !NARROW.contains(&constant.get_type().get_bit_width())
    {
        return None;
    }
    let name = CallSiteValue::try_from(call)
        .ok()?
        .get_called_fn_value()?
        .get_name()
        .to_string_lossy()
        .into_owned();
    // The predicates of `x` against `C` for `op(x, C) == C` and for `op(x, C) != C`.
    let (when_equal, when_not_equal) = match name.strip_prefix("llvm.")?.split('.').next()? {
        "umin" => (IntPredicate::UGE, IntPredicate::ULT),
        "umax" => (IntPredicate::ULE, IntPredicate::UGT),
        "smin" => (IntPredicate::SGE, IntPredicate::SLT),
        "smax" => (IntPredicate::SLE, IntPredicate::SGT),
        _ => return None,
    };
    let (first, second) = (int_operand(call, 0)?, int_operand(call, 1)?);
    let value = if same_constant(second, constant) {
        first
    } else if same_constant(first, constant) {
        second
    } else {
        return None;
    };
    let predicate = if equal { when_equal } else { when_not_equal };
    Some((predicate, value, constant, call))
}

fn same_constant(value: IntValue, constant: IntValue) -> bool {
    value.is_const()
        && value.get_type() == constant.get_type()
        && value.get_zero_extended_constant() == constant.get_zero_extended_constant()
}

fn int_operand<'ctx>(instruction: InstructionValue<'ctx>, index: u32) -> Option<IntValue<'ctx>> {
    match instruction.get_operand(index)? {
        Operand::Value(BasicValueEnum::IntValue(value)) => Some(value),
        _ => None,
    }
}
