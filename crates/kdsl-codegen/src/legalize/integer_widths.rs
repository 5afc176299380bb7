//! Memory accesses of integer widths the target lacks. The optimizer creates them from
//! vector accesses: a `vload3` of `u16` at index 0 whose lanes meet a scalar load of the same
//! address became `load i48` (fuzzgen seed 3001565), which the SPIR-V backend widens to a
//! 64-bit load: two bytes past what the kernel reads, and a parameter typed as a pointer to
//! 64-bit integers, which the bundle's image check refuses. Such a load (or store) becomes
//! loads (stores) of the widest supported pieces its alignment allows, assembled in
//! registers, where the backend may widen the arithmetic freely; any access left is reported.

use super::instructions;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::llvm_sys::core::{
    LLVMGetIntTypeWidth, LLVMGetOperand, LLVMGetTypeKind, LLVMReplaceAllUsesWith, LLVMTypeOf,
};
use inkwell::llvm_sys::LLVMTypeKind;
use inkwell::module::Module;
use inkwell::values::{
    AnyValue, AsValueRef, BasicValueEnum, InstructionOpcode, InstructionValue, IntValue, Operand,
    PointerValue,
};
use inkwell::AtomicOrdering;

/// Splits the loads and stores of whole-byte integers whose width is not in `widths`
/// (ascending powers of two, the narrowest 8), then checks that none is left.
pub(super) fn split_accesses<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
    widths: &[u32],
) -> Result<(), String> {
    let unsupported = |instruction| {
        accessed_width(instruction)
            .is_some_and(|width| width.is_multiple_of(8) && !widths.contains(&width))
    };
    let accesses: Vec<_> = instructions(module).filter(|&i| unsupported(i)).collect();
    let builder = context.create_builder();
    for access in accesses {
        split_access(context, &builder, access, widths).map_err(|e| e.to_string())?;
    }
    match instructions(module).find(|&i| unsupported(i)) {
        Some(access) => Err(format!(
            "the optimizer made a memory access of an integer width the target lacks (only \
             {widths:?} bits), which kdsl cannot split: {}",
            access.print_to_string().to_string().trim()
        )),
        None => Ok(()),
    }
}

/// The width of the integer a load reads or a store writes.
fn accessed_width(instruction: InstructionValue<'_>) -> Option<u32> {
    let value = instruction.as_value_ref();
    // SAFETY: `value` is a live instruction; these only read its type or its first operand's
    // (raw, since inkwell's typed accessors panic on target extension types, such as the
    // cooperative matrices a tile that stays in memory is loaded as).
    unsafe {
        let ty = match instruction.get_opcode() {
            InstructionOpcode::Load => LLVMTypeOf(value),
            InstructionOpcode::Store => LLVMTypeOf(LLVMGetOperand(value, 0)),
            _ => return None,
        };
        (LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMIntegerTypeKind).then(|| LLVMGetIntTypeWidth(ty))
    }
}

/// Rewrites one plain access of a whole number of bytes (others stay, to be reported).
fn split_access<'ctx>(
    context: &'ctx Context,
    builder: &Builder<'ctx>,
    access: InstructionValue<'ctx>,
    widths: &[u32],
) -> Result<(), BuilderError> {
    let plain = access.get_volatile() == Ok(false)
        && access.get_atomic_ordering() == Ok(AtomicOrdering::NotAtomic);
    let Some(width) = accessed_width(access) else {
        return Ok(());
    };
    let load = access.get_opcode() == InstructionOpcode::Load;
    let pointer_operand = if load { 0 } else { 1 };
    let Some(Operand::Value(BasicValueEnum::PointerValue(pointer))) =
        access.get_operand(pointer_operand)
    else {
        return Ok(());
    };
    if !plain || !width.is_multiple_of(8) {
        return Ok(());
    }
    let alignment = access.get_alignment().unwrap_or(1).max(1);
    // The widest supported piece that divides the width and that the alignment allows.
    let Some(&piece_bits) = widths
        .iter()
        .rev()
        .find(|&&bits| width.is_multiple_of(bits) && bits <= 8 * alignment)
    else {
        return Ok(());
    };
    let whole = match access.get_operand(0) {
        Some(Operand::Value(BasicValueEnum::IntValue(value))) if !load => value.get_type(),
        _ => access.get_type().into_int_type(),
    };
    let piece = match piece_bits {
        8 => context.i8_type(),
        16 => context.i16_type(),
        32 => context.i32_type(),
        _ => context.i64_type(),
    };
    builder.position_before(&access);
    if load {
        let mut value: Option<IntValue<'ctx>> = None;
        for index in 0..width / piece_bits {
            let offset = u64::from(index * piece_bits / 8);
            let part = super::load_at(context, builder, pointer, piece.into(), offset, alignment)?
                .into_int_value();
            let wide = builder.build_int_z_extend(part, whole, "")?;
            value = Some(match value {
                None => wide,
                Some(low) => {
                    let shift = whole.const_int(offset * 8, false);
                    let placed = builder.build_left_shift(wide, shift, "")?;
                    builder.build_or(low, placed, "")?
                }
            });
        }
        let Some(value) = value else {
            return Ok(());
        };
        // SAFETY: the replacement has the load's type and is defined before its users.
        unsafe { LLVMReplaceAllUsesWith(access.as_value_ref(), value.as_value_ref()) };
    } else {
        let Some(Operand::Value(BasicValueEnum::IntValue(value))) = access.get_operand(0) else {
            return Ok(());
        };
        for index in 0..width / piece_bits {
            let offset = u64::from(index * piece_bits / 8);
            let shift = whole.const_int(offset * 8, false);
            let shifted = builder.build_right_shift(value, shift, false, "")?;
            let part = builder.build_int_truncate(shifted, piece, "")?;
            store_piece(context, builder, pointer, part, offset, alignment)?;
        }
    }
    access.erase_from_basic_block();
    Ok(())
}

fn store_piece<'ctx>(
    context: &'ctx Context,
    builder: &Builder<'ctx>,
    pointer: PointerValue<'ctx>,
    value: IntValue<'ctx>,
    offset: u64,
    alignment: u32,
) -> Result<(), BuilderError> {
    let (address, alignment) = super::address_at(context, builder, pointer, offset, alignment)?;
    let store = builder.build_store(address, value)?;
    let _ = store.set_alignment(alignment);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::split_accesses;

    const SPIRV: &[u32] = &[8, 16, 32, 64];

    /// Runs `split_accesses` on `body`, a function of `ptr %p, ptr %q`; the rewritten module
    /// (verified) or the error.
    fn split(body: &str) -> Result<String, String> {
        super::super::rewrite_test_function("e-i64:64-n8:16:32:64", body, |context, module| {
            split_accesses(context, module, SPIRV)
        })
    }

    #[test]
    fn a_48_bit_load_becomes_three_16_bit_loads() {
        let module = split(
            "%v = load i48, ptr %p, align 2
             %a = trunc i48 %v to i16
             %s = lshr i48 %v, 32
             %b = trunc i48 %s to i16
             store i16 %a, ptr %q, align 2
             store i16 %b, ptr %q, align 2
             ret void",
        )
        .unwrap();
        assert!(!module.contains("load i48"), "{module}");
        assert_eq!(module.matches("load i16").count(), 3, "{module}");
        // Pieces at bytes 2 and 4, each shifted to its place.
        assert!(
            module.contains("i64 2") && module.contains("i64 4"),
            "{module}"
        );
        assert_eq!(module.matches("shl i48").count(), 2, "{module}");
        assert!(
            module.contains(", 16") && module.contains(", 32"),
            "{module}"
        );
    }

    #[test]
    fn a_24_bit_store_becomes_byte_stores_and_alignment_picks_the_piece() {
        let module = split(
            "%v = load i32, ptr %p, align 4
             %t = trunc i32 %v to i24
             store i24 %t, ptr %q, align 4
             %w = load i48, ptr %p, align 4
             store i48 %w, ptr %q, align 1
             ret void",
        )
        .unwrap();
        assert!(
            !module.contains("store i24") && !module.contains("i48, ptr"),
            "{module}"
        );
        // 24 bits: three bytes; 48 bits aligned to 4: three 16-bit pieces (32 does not
        // divide 48); stored with alignment 1: six bytes.
        assert_eq!(module.matches("store i8").count(), 3 + 6, "{module}");
        assert_eq!(module.matches("load i16").count(), 3, "{module}");
    }

    #[test]
    fn supported_widths_and_volatile_accesses() {
        let module = split(
            "%v = load i64, ptr %p, align 2
             store i64 %v, ptr %q, align 8
             ret void",
        )
        .unwrap();
        assert!(module.contains("load i64, ptr %p, align 2"), "{module}");
        let error = split(
            "%v = load volatile i48, ptr %p, align 2
             %a = trunc i48 %v to i16
             store i16 %a, ptr %q, align 2
             ret void",
        )
        .unwrap_err();
        assert!(error.contains("load volatile i48"), "{error}");
    }
}
