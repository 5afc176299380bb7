//! Memory accesses of integer widths the target lacks. The optimizer creates them from
//! vector accesses: a `vload3` of `u16` at index 0 whose lanes meet a scalar load of the same
//! address became `load i48` (fuzzgen seed 3001565), which the SPIR-V backend widens to a
//! 64-bit load: two bytes past what the kernel reads, and a parameter typed as a pointer to
//! 64-bit integers, which the bundle's image check refuses. Such a load (or store) becomes
//! loads (stores) of the widest supported pieces its alignment allows, assembled in
//! registers, where the backend may widen the arithmetic freely; any access left is reported.
//! A load wider than every supported width cannot be assembled (GVN forwarded a `<4 x i32>`
//! load to a scalar load of its first lane through `i128`, which InstCombine made `load i128`,
//! fuzzgen seed 7000200): where each of its users takes bits of one piece (a `trunc`, or a
//! `lshr` by a multiple of the piece width and then `trunc`s), the users read that piece.

use super::instructions;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::llvm_sys::core::{
    LLVMConstIntGetZExtValue, LLVMGetIntTypeWidth, LLVMGetOperand, LLVMGetTypeKind,
    LLVMReplaceAllUsesWith, LLVMTypeOf,
};
use inkwell::llvm_sys::LLVMTypeKind;
use inkwell::module::Module;
use inkwell::values::{
    AnyValue, AnyValueEnum, AsValueRef, BasicValueEnum, InstructionOpcode, InstructionValue,
    IntValue, Operand, PointerValue,
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
    let piece = piece_type(context, piece_bits);
    builder.position_before(&access);
    if load && width > widths.last().copied().unwrap_or(width) {
        // The widest piece every user's bits lie within.
        let fitting = widths.iter().rev().find_map(|&bits| {
            let allowed = width.is_multiple_of(bits) && bits <= 8 * alignment;
            allowed
                .then(|| piece_uses(access, bits))
                .flatten()
                .map(|uses| (bits, uses))
        });
        if let Some((bits, uses)) = fitting {
            let piece = piece_type(context, bits);
            read_pieces(context, builder, pointer, piece, alignment, uses)?;
            access.erase_from_basic_block();
            return Ok(());
        }
    }
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

fn piece_type(context: &Context, bits: u32) -> inkwell::types::IntType<'_> {
    match bits {
        8 => context.i8_type(),
        16 => context.i16_type(),
        32 => context.i32_type(),
        _ => context.i64_type(),
    }
}

/// What reads a value's bits: its `trunc` users (to at most `piece_bits` bits), each with the
/// piece it reads, and the `lshr`s between; `None` if a user needs more than one piece.
struct PieceUses<'ctx> {
    truncations: Vec<(InstructionValue<'ctx>, u32)>,
    shifts: Vec<InstructionValue<'ctx>>,
}

fn piece_uses(load: InstructionValue<'_>, piece_bits: u32) -> Option<PieceUses<'_>> {
    let mut uses = PieceUses {
        truncations: Vec::new(),
        shifts: Vec::new(),
    };
    let width = accessed_width(load)?;
    collect_piece_uses(load, 0, piece_bits, width, &mut uses)?;
    Some(uses)
}

fn collect_piece_uses<'ctx>(
    value: InstructionValue<'ctx>,
    shift: u64,
    piece_bits: u32,
    width: u32,
    uses: &mut PieceUses<'ctx>,
) -> Option<()> {
    let mut next = value.get_first_use();
    while let Some(using) = next {
        next = using.get_next_use();
        let user = match using.get_user() {
            AnyValueEnum::IntValue(value) => value.as_instruction()?,
            AnyValueEnum::InstructionValue(instruction) => instruction,
            _ => return None,
        };
        match user.get_opcode() {
            InstructionOpcode::Trunc => {
                let bits = user.get_type().into_int_type().get_bit_width();
                let piece = shift / u64::from(piece_bits);
                // (A shift past the width gives poison: no piece to read.)
                let inside =
                    shift < u64::from(width) && shift.is_multiple_of(u64::from(piece_bits));
                if bits > piece_bits || !inside {
                    return None;
                }
                uses.truncations.push((user, u32::try_from(piece).ok()?));
            }
            InstructionOpcode::LShr if shift == 0 => {
                let Some(Operand::Value(BasicValueEnum::IntValue(amount))) = user.get_operand(1)
                else {
                    return None;
                };
                if !amount.is_const() {
                    return None;
                }
                // SAFETY: a constant integer; inkwell's accessor refuses those wider than 64
                // bits, whose small values this reads.
                let amount = unsafe { LLVMConstIntGetZExtValue(amount.as_value_ref()) };
                collect_piece_uses(user, amount, piece_bits, width, uses)?;
                uses.shifts.push(user);
            }
            _ => return None,
        }
    }
    Some(())
}

/// Loads the pieces `uses` read, where the builder stands (at the wide load), and gives each
/// `trunc` its piece instead.
fn read_pieces<'ctx>(
    context: &'ctx Context,
    builder: &Builder<'ctx>,
    pointer: PointerValue<'ctx>,
    piece: inkwell::types::IntType<'ctx>,
    alignment: u32,
    uses: PieceUses<'ctx>,
) -> Result<(), BuilderError> {
    let piece_bytes = u64::from(piece.get_bit_width() / 8);
    let mut loaded = std::collections::BTreeMap::new();
    for &(_, index) in &uses.truncations {
        if let std::collections::btree_map::Entry::Vacant(entry) = loaded.entry(index) {
            let offset = u64::from(index) * piece_bytes;
            let part = super::load_at(context, builder, pointer, piece.into(), offset, alignment)?;
            entry.insert(part.into_int_value());
        }
    }
    for (truncation, index) in uses.truncations {
        let part = loaded[&index];
        let narrow = truncation.get_type().into_int_type();
        let value = if narrow == piece {
            part
        } else {
            builder.position_before(&truncation);
            builder.build_int_truncate(part, narrow, "")?
        };
        // SAFETY: `value` has the truncation's type and is defined before it.
        unsafe { LLVMReplaceAllUsesWith(truncation.as_value_ref(), value.as_value_ref()) };
        truncation.erase_from_basic_block();
    }
    for shift in uses.shifts {
        shift.erase_from_basic_block();
    }
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

    /// GVN's `load i128` of a `<4 x i32>` (seed 7000200): each lane a `trunc` reads becomes a
    /// 32-bit load, and no 128-bit value is left.
    #[test]
    fn a_128_bit_load_read_by_lanes_becomes_lane_loads() {
        let module = split(
            "%v = load i128, ptr %p, align 16
             %a = trunc i128 %v to i32
             %s = lshr i128 %v, 64
             %b = trunc i128 %s to i16
             %t = lshr i128 %v, 96
             %c = trunc i128 %t to i32
             store i32 %a, ptr %q, align 4
             store i16 %b, ptr %q, align 2
             store i32 %c, ptr %q, align 4
             ret void",
        )
        .unwrap();
        assert!(!module.contains("i128"), "{module}");
        // Lanes 0, 2 and 3 (bytes 0, 8 and 12): 32-bit pieces, as the shift by 96 needs.
        assert_eq!(module.matches("load i32").count(), 3, "{module}");
        assert!(
            module.contains("i64 8") && module.contains("i64 12"),
            "{module}"
        );
        // A shift past the width reads no piece: left assembled.
        let module = split(
            "%v = load i128, ptr %p, align 16
             %s = lshr i128 %v, 128
             %a = trunc i128 %s to i32
             store i32 %a, ptr %q, align 4
             ret void",
        )
        .unwrap();
        assert!(module.contains("lshr i128"), "{module}");
        // A value needed whole stays assembled, for the backend to take or refuse.
        let module = split(
            "%v = load i128, ptr %p, align 16
             %w = add i128 %v, 1
             %a = trunc i128 %w to i32
             store i32 %a, ptr %q, align 4
             ret void",
        )
        .unwrap();
        assert!(module.contains("add i128"), "{module}");
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
