//! Vectors of lengths the target lacks. The optimizer creates them from loads: a `load <3 x
//! i32>` whose lanes are used only as `i16` becomes `load <6 x i16>` (fuzzgen seed 5485), and
//! SPIR-V has no 6-component vectors. Such a load, used only through constant lanes or as a
//! bitcast to a supported type, becomes loads of those lanes or of that type. A bitcast of a
//! supported vector into narrower lanes of such a length (`bitcast <3 x i64> to <6 x i32>`,
//! fuzzgen seed 8901481), read at constant lanes, becomes shifts of the source's lanes. Any
//! other value of such a type is reported.

use super::instructions;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::llvm_sys::core::{
    LLVMGetMaskValue, LLVMGetNumMaskElements, LLVMGetNumOperands, LLVMGetOperand, LLVMGetTypeKind,
    LLVMGetUndefMaskElem, LLVMGetVectorSize, LLVMIsUndef, LLVMReplaceAllUsesWith, LLVMTypeOf,
};
use inkwell::llvm_sys::prelude::LLVMTypeRef;
use inkwell::llvm_sys::LLVMTypeKind;
use inkwell::module::Module;
use inkwell::targets::{ByteOrdering, TargetData};
use inkwell::types::{AnyTypeEnum, AsTypeRef, BasicTypeEnum, VectorType};
use inkwell::values::{
    AnyValue, AsValueRef, BasicValue, BasicValueEnum, InstructionOpcode, InstructionValue, Operand,
};
use inkwell::AtomicOrdering;

/// Splits the narrowing bitcasts and the loads of vectors whose length is not in `lengths`,
/// then checks that no such vector is left.
pub(super) fn split_loads<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
    lengths: &[u32],
) -> Result<(), String> {
    let layout = TargetData::create(&module.get_data_layout().as_str().to_string_lossy());
    let builder = context.create_builder();
    if layout.get_byte_ordering() == ByteOrdering::LittleEndian {
        for bitcast in of_unsupported_length(module, InstructionOpcode::BitCast, lengths) {
            split_narrowing_bitcast(&builder, &layout, bitcast).map_err(|e| e.to_string())?;
        }
    }
    for load in of_unsupported_length(module, InstructionOpcode::Load, lengths) {
        split_load(context, &builder, &layout, load, lengths).map_err(|e| e.to_string())?;
    }
    for instruction in instructions(module) {
        let value = instruction.as_value_ref();
        // SAFETY: `value` is a live instruction; these only read its operands and types (raw,
        // since inkwell's operand accessor panics on metadata operands).
        let has_unsupported = unsafe {
            let operands = (0..LLVMGetNumOperands(value)).map(|i| LLVMGetOperand(value, i as u32));
            std::iter::once(value)
                .chain(operands)
                .any(|v| unsupported_length(LLVMTypeOf(v), lengths))
        };
        if has_unsupported {
            return Err(format!(
                "the optimizer made a vector of a length the target lacks (only {lengths:?}), \
                 which kdsl cannot split: {}",
                instruction.print_to_string().to_string().trim()
            ));
        }
    }
    Ok(())
}

/// The module's `opcode` instructions whose result is a vector of a length not in `lengths`.
fn of_unsupported_length<'ctx>(
    module: &Module<'ctx>,
    opcode: InstructionOpcode,
    lengths: &[u32],
) -> Vec<InstructionValue<'ctx>> {
    instructions(module)
        .filter(|i| {
            // SAFETY: the type of a live instruction. (Raw: inkwell's `get_type` panics on
            // target extension types, such as the cooperative matrices a tile that stays in
            // memory is loaded as.)
            i.get_opcode() == opcode
                && unsafe { unsupported_length(LLVMTypeOf(i.as_value_ref()), lengths) }
        })
        .collect()
}

/// Whether `ty` is a fixed vector whose length is not in `lengths`.
///
/// # Safety
/// `ty` must be a live LLVM type.
unsafe fn unsupported_length(ty: LLVMTypeRef, lengths: &[u32]) -> bool {
    // SAFETY: `ty` is live (the caller's contract), and `LLVMGetVectorSize` is reached only
    // when it is a vector type.
    unsafe {
        LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMVectorTypeKind
            && !lengths.contains(&LLVMGetVectorSize(ty))
    }
}

/// Replaces `bitcast`, when it turns a vector of integers into one of narrower integers and all
/// its users extract constant lanes, by shifts of the source's lanes (little-endian: lane `k`
/// of the result is bits `k % r * w` up of source lane `k / r`, for `r` result lanes of `w`
/// bits a source lane); otherwise leaves it.
fn split_narrowing_bitcast<'ctx>(
    builder: &Builder<'ctx>,
    layout: &TargetData,
    bitcast: InstructionValue<'ctx>,
) -> Result<(), inkwell::builder::BuilderError> {
    let (
        AnyTypeEnum::VectorType(result),
        Some(Operand::Value(BasicValueEnum::VectorValue(source))),
    ) = (bitcast.get_type(), bitcast.get_operand(0))
    else {
        return Ok(());
    };
    let (BasicTypeEnum::IntType(narrow), BasicTypeEnum::IntType(wide)) = (
        result.get_element_type(),
        source.get_type().get_element_type(),
    ) else {
        return Ok(());
    };
    let (narrow_bits, wide_bits) = (layout.get_bit_size(&narrow), layout.get_bit_size(&wide));
    if narrow_bits == 0 || wide_bits <= narrow_bits || !wide_bits.is_multiple_of(narrow_bits) {
        return Ok(());
    }
    let ratio = (wide_bits / narrow_bits) as u32;
    let mut extracts = Vec::new();
    let mut next = bitcast.get_first_use();
    while let Some(use_) = next {
        next = use_.get_next_use();
        let Some(user) = BasicValueEnum::try_from(use_.get_user())
            .ok()
            .and_then(|user| user.as_instruction_value())
            .filter(|user| user.get_opcode() == InstructionOpcode::ExtractElement)
        else {
            return Ok(());
        };
        let Some(Operand::Value(BasicValueEnum::IntValue(index))) = user.get_operand(1) else {
            return Ok(());
        };
        match index.get_zero_extended_constant() {
            Some(index) if index < u64::from(result.get_size()) => {
                extracts.push((user, index as u32))
            }
            _ => return Ok(()),
        }
    }
    for (extract, index) in extracts {
        builder.position_before(&extract);
        let index_type = wide.get_context().i32_type();
        let lane = builder
            .build_extract_element(
                source,
                index_type.const_int(u64::from(index / ratio), false),
                "",
            )?
            .into_int_value();
        let shift = u64::from(index % ratio) * narrow_bits;
        let moved = match shift {
            0 => lane,
            _ => builder.build_right_shift(lane, wide.const_int(shift, false), false, "")?,
        };
        let value = builder.build_int_truncate(moved, narrow, "")?;
        // SAFETY: `value` has the extract's type and is defined before it.
        unsafe { LLVMReplaceAllUsesWith(extract.as_value_ref(), value.as_value_ref()) };
        extract.erase_from_basic_block();
    }
    bitcast.erase_from_basic_block();
    Ok(())
}

/// How one user reads lanes of the split load.
enum LaneUser<'ctx> {
    /// `extractelement %load, C`.
    Extract(InstructionValue<'ctx>, u32),
    /// `shufflevector` of the load and/or undefined vectors: per result lane, the load's
    /// lane or `None` (undefined).
    Shuffle(InstructionValue<'ctx>, Vec<Option<u32>>),
    /// `bitcast %load to T` of a supported type `T` (checked mode's `<6 x i16>` back to the
    /// `<3 x i32>` it loaded): a load of `T`.
    Whole(InstructionValue<'ctx>, BasicTypeEnum<'ctx>),
}

/// Replaces `load`, when it is a plain load of whole bytes and all its users read constant
/// lanes or bitcast it to a supported type, by loads of those at the same place; otherwise
/// leaves it.
fn split_load<'ctx>(
    context: &'ctx Context,
    builder: &Builder<'ctx>,
    layout: &TargetData,
    load: InstructionValue<'ctx>,
    lengths: &[u32],
) -> Result<(), inkwell::builder::BuilderError> {
    let AnyTypeEnum::VectorType(vector) = load.get_type() else {
        return Ok(());
    };
    let element = vector.get_element_type();
    let element_bits = layout.get_bit_size(&element);
    let plain = load.get_volatile() == Ok(false)
        && load.get_atomic_ordering() == Ok(AtomicOrdering::NotAtomic);
    let Some(Operand::Value(BasicValueEnum::PointerValue(pointer))) = load.get_operand(0) else {
        return Ok(());
    };
    // Booleans are packed, lane `k` in bit `k % 8` of byte `k / 8` (InstCombine reads bit 0 of
    // a `<2 x i64>` load as lane 0 of a `<128 x i1>` one, fuzzgen seed 7001435).
    let bits = element_bits == 1;
    if !plain || !(bits || element_bits.is_multiple_of(8)) {
        return Ok(());
    }
    let Some(users) = lane_users(load, vector, lengths) else {
        return Ok(());
    };
    let alignment = load.get_alignment().unwrap_or(1).max(1);
    let mut lanes: Vec<Option<BasicValueEnum<'ctx>>> = vec![None; vector.get_size() as usize];
    let mut lane = |index: u32| -> Result<BasicValueEnum<'ctx>, inkwell::builder::BuilderError> {
        if let Some(value) = lanes[index as usize] {
            return Ok(value);
        }
        builder.position_before(&load);
        let value = if bits {
            let byte = context.i8_type();
            let offset = u64::from(index / 8);
            let packed = super::load_at(context, builder, pointer, byte.into(), offset, alignment)?;
            let shift = byte.const_int(u64::from(index % 8), false);
            let moved = builder.build_right_shift(packed.into_int_value(), shift, false, "")?;
            builder
                .build_int_truncate(moved, element.into_int_type(), "")?
                .into()
        } else {
            let offset = u64::from(index) * element_bits / 8;
            super::load_at(context, builder, pointer, element, offset, alignment)?
        };
        lanes[index as usize] = Some(value);
        Ok(value)
    };
    for user in users {
        let (instruction, replacement) = match user {
            LaneUser::Extract(instruction, index) => (instruction, lane(index)?),
            LaneUser::Whole(instruction, ty) => {
                builder.position_before(&load);
                let value = super::load_at(context, builder, pointer, ty, 0, alignment)?;
                (instruction, value)
            }
            LaneUser::Shuffle(instruction, mask) => {
                // A vector: `lane_users` checked it.
                let result_type = instruction.get_type().into_vector_type();
                // Undefined, not poison: lanes taken from an `undef` operand are `undef`.
                let mut result: BasicValueEnum<'ctx> = result_type.get_undef().into();
                for (position, source) in mask.iter().enumerate() {
                    let Some(source) = source else { continue };
                    let value = lane(*source)?;
                    builder.position_before(&instruction);
                    let position = context.i32_type().const_int(position as u64, false);
                    result = builder
                        .build_insert_element(result.into_vector_value(), value, position, "")?
                        .into();
                }
                (instruction, result)
            }
        };
        // SAFETY: the replacement has the user's type and is defined before it.
        unsafe { LLVMReplaceAllUsesWith(instruction.as_value_ref(), replacement.as_value_ref()) };
        instruction.erase_from_basic_block();
    }
    load.erase_from_basic_block();
    Ok(())
}

/// The load's users as lane reads, or `None` when one is anything else.
fn lane_users<'ctx>(
    load: InstructionValue<'ctx>,
    vector: VectorType<'ctx>,
    lengths: &[u32],
) -> Option<Vec<LaneUser<'ctx>>> {
    let length = vector.get_size();
    let mut users = Vec::new();
    let mut next = load.get_first_use();
    while let Some(use_) = next {
        next = use_.get_next_use();
        // Users without a value (stores) are not lane reads.
        let user = BasicValueEnum::try_from(use_.get_user())
            .ok()?
            .as_instruction_value()?;
        let user = match user.get_opcode() {
            InstructionOpcode::ExtractElement => {
                let Some(Operand::Value(BasicValueEnum::IntValue(index))) = user.get_operand(1)
                else {
                    return None;
                };
                let index = index.get_zero_extended_constant()?;
                if index >= u64::from(length) {
                    return None;
                }
                LaneUser::Extract(user, index as u32)
            }
            InstructionOpcode::ShuffleVector if user.get_type().is_vector_type() => {
                LaneUser::Shuffle(user, shuffle_lanes(load, user, length)?)
            }
            InstructionOpcode::BitCast => {
                let ty = BasicTypeEnum::try_from(user.get_type()).ok()?;
                // SAFETY: `ty` is the live type of a live instruction.
                if unsafe { unsupported_length(ty.as_type_ref(), lengths) } {
                    return None;
                }
                LaneUser::Whole(user, ty)
            }
            _ => return None,
        };
        // A user that reads the load twice (a shuffle of it with itself) is listed once.
        if !users
            .iter()
            .any(|known| user_instruction(known) == user_instruction(&user))
        {
            users.push(user);
        }
    }
    Some(users)
}

fn user_instruction<'ctx>(user: &LaneUser<'ctx>) -> InstructionValue<'ctx> {
    match user {
        LaneUser::Extract(i, _) | LaneUser::Shuffle(i, _) | LaneUser::Whole(i, _) => *i,
    }
}

/// Per result lane of `shuffle`, the lane of `load` it takes (`None`: undefined), when both
/// operands are `load` or undefined.
fn shuffle_lanes<'ctx>(
    load: InstructionValue<'ctx>,
    shuffle: InstructionValue<'ctx>,
    length: u32,
) -> Option<Vec<Option<u32>>> {
    let mut from_load = [false; 2];
    for (operand, is_load) in from_load.iter_mut().enumerate() {
        let Some(Operand::Value(value)) = shuffle.get_operand(operand as u32) else {
            return None;
        };
        *is_load = value.as_value_ref() == load.as_value_ref();
        // SAFETY: `value` is a live operand; `LLVMIsUndef` only inspects it.
        if !*is_load && unsafe { LLVMIsUndef(value.as_value_ref()) } == 0 {
            return None;
        }
    }
    // SAFETY: `shuffle` is a `shufflevector`, which the mask functions require.
    let count = unsafe { LLVMGetNumMaskElements(shuffle.as_value_ref()) };
    // SAFETY: returns a constant; it touches no IR.
    let undefined = unsafe { LLVMGetUndefMaskElem() };
    let lanes = (0..count)
        .map(|position| {
            // SAFETY: `shuffle` is a live `shufflevector` and `position` is below its mask's
            // element count.
            let source = unsafe { LLVMGetMaskValue(shuffle.as_value_ref(), position) };
            if source == undefined {
                return None;
            }
            let source = source as u32;
            from_load[(source / length) as usize].then_some(source % length)
        })
        .collect();
    Some(lanes)
}

#[cfg(test)]
mod tests {
    use super::split_loads;

    const OPENCL: &[u32] = &[2, 3, 4, 8, 16];

    /// Runs `split_loads` on `body`, a function of `ptr %p, ptr %q`; the rewritten module
    /// (verified) or the error.
    fn split(body: &str) -> Result<String, String> {
        super::super::rewrite_test_function(
            super::super::SPIRV_TEST_DATALAYOUT,
            body,
            |context, module| split_loads(context, module, OPENCL),
        )
    }

    #[test]
    fn constant_lanes_become_scalar_loads_at_their_offsets() {
        let module = split(
            "%v = load <6 x i16>, ptr %p, align 4
             %a = extractelement <6 x i16> %v, i64 5
             %s = shufflevector <6 x i16> %v, <6 x i16> poison, <2 x i32> <i32 0, i32 3>
             store i16 %a, ptr %q, align 2
             store <2 x i16> %s, ptr %q, align 2
             ret void",
        )
        .unwrap();
        assert!(!module.contains("<6 x i16>"), "{module}");
        assert!(module.contains("load i16, ptr %p, align 4"), "{module}");
        // Lane 3 at byte 6 (2-aligned), lane 5 at byte 10.
        assert!(module.contains("i64 6"), "{module}");
        assert!(module.contains("i64 10"), "{module}");
        assert!(module.contains("insertelement <2 x i16>"), "{module}");
    }

    #[test]
    fn a_bitcast_to_a_supported_type_becomes_a_load_of_it() {
        let module = split(
            "%v = load <6 x i16>, ptr %p, align 4
             %a = extractelement <6 x i16> %v, i64 0
             %w = bitcast <6 x i16> %v to <3 x i32>
             %b = extractelement <3 x i32> %w, i64 1
             store i16 %a, ptr %q, align 2
             store i32 %b, ptr %q, align 4
             ret void",
        )
        .unwrap();
        assert!(!module.contains("<6 x i16>"), "{module}");
        assert!(
            module.contains("load <3 x i32>, ptr %p, align 4"),
            "{module}"
        );
    }

    #[test]
    fn other_users_are_reported_not_left_invalid() {
        let error = split(
            "%v = load <6 x i16>, ptr %p, align 4
             store <6 x i16> %v, ptr %q, align 4
             ret void",
        )
        .unwrap_err();
        // The first instruction of such a type is named: here the load that stays.
        assert!(error.contains("%v = load <6 x i16>"), "{error}");
        let volatile = split(
            "%v = load volatile <6 x i16>, ptr %p, align 4
             %a = extractelement <6 x i16> %v, i64 0
             store i16 %a, ptr %q, align 2
             ret void",
        )
        .unwrap_err();
        assert!(volatile.contains("load volatile <6 x i16>"), "{volatile}");
    }

    /// InstCombine's `load <128 x i1>` of a `<2 x i64>` (seed 7001435): lane `k` is bit `k % 8`
    /// of byte `k / 8`.
    #[test]
    fn boolean_lanes_become_bits_of_byte_loads() {
        let module = split(
            "%v = load <128 x i1>, ptr %p, align 16
             %a = extractelement <128 x i1> %v, i64 0
             %b = extractelement <128 x i1> %v, i64 67
             %x = zext i1 %a to i8
             %y = zext i1 %b to i8
             store i8 %x, ptr %q, align 1
             store i8 %y, ptr %q, align 1
             ret void",
        )
        .unwrap();
        assert!(!module.contains("x i1>"), "{module}");
        assert_eq!(module.matches("load i8").count(), 2, "{module}");
        // Lane 67: byte 8, bit 3.
        assert!(
            module.contains("i64 8") && module.contains("lshr i8"),
            "{module}"
        );
        assert!(module.contains(", 3"), "{module}");
    }

    /// The optimizer's `<6 x i32>` view of a `<3 x i64>` load (seed 8901481): its lanes are
    /// halves of the load's lanes, low half first.
    #[test]
    fn narrowing_bitcasts_become_shifts_of_the_source_lanes() {
        let module = split(
            "%v = load <3 x i64>, ptr %p, align 8
             %w = bitcast <3 x i64> %v to <6 x i32>
             %a = extractelement <6 x i32> %w, i64 0
             %b = extractelement <6 x i32> %w, i64 5
             store i32 %a, ptr %q, align 4
             store i32 %b, ptr %q, align 4
             ret void",
        )
        .unwrap();
        assert!(!module.contains("<6 x i32>"), "{module}");
        assert!(module.contains("load <3 x i64>"), "{module}");
        // Lane 5: the high half of lane 2.
        assert!(
            module.contains("extractelement <3 x i64> %v, i32 2"),
            "{module}"
        );
        assert!(module.contains("lshr i64 %3, 32"), "{module}");
        assert_eq!(module.matches("lshr").count(), 1, "{module}");
    }

    #[test]
    fn supported_lengths_are_left_alone() {
        let module = split(
            "%v = load <3 x i32>, ptr %p, align 4
             %a = extractelement <3 x i32> %v, i64 2
             store i32 %a, ptr %q, align 4
             ret void",
        )
        .unwrap();
        assert!(module.contains("load <3 x i32>"), "{module}");
    }
}
