//! Rewrites of the optimized LLVM module that a target's backend or driver mishandles, where
//! the optimizer itself creates the pattern (so lowering cannot avoid it), its inliner
//! included (a helper's work-item reads land where it is called). Exact rewrites.

mod address_arithmetic;
mod cooperative_matrices;
mod integer_widths;
mod memory_fills;
mod narrow_integers;
mod vector_lengths;
mod work_item_reads;

use crate::target::TargetDescription;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::{AnyTypeEnum, BasicTypeEnum, VectorType};
use inkwell::values::{
    AsValueRef, BasicValueEnum, CallSiteValue, InstructionOpcode, InstructionValue, IntValue,
};
use inkwell::IntPredicate;

/// Every instruction of `module`, collected per function so that rewrites may erase them.
fn instructions<'ctx>(module: &Module<'ctx>) -> impl Iterator<Item = InstructionValue<'ctx>> {
    module.get_functions().flat_map(|function| {
        function
            .get_basic_block_iter()
            .flat_map(|block| block.get_instructions())
            .collect::<Vec<_>>()
    })
}

/// Replaces every use of `old` with `new` and erases `old`. `new` has `old`'s type and is
/// computed before it in the same function (every rewrite builds it just before `old`).
fn replace_instruction<'ctx>(old: InstructionValue<'ctx>, new: impl AsValueRef) {
    // SAFETY: both are live values of one function, of the same type (the caller's contract).
    unsafe {
        inkwell::llvm_sys::core::LLVMReplaceAllUsesWith(old.as_value_ref(), new.as_value_ref());
    }
    old.erase_from_basic_block();
}

/// The address `offset` bytes past `pointer`, inside what an access being split reads or
/// writes, and the alignment an access there keeps.
fn address_at<'ctx>(
    context: &'ctx Context,
    builder: &inkwell::builder::Builder<'ctx>,
    pointer: inkwell::values::PointerValue<'ctx>,
    offset: u64,
    alignment: u32,
) -> Result<(inkwell::values::PointerValue<'ctx>, u32), inkwell::builder::BuilderError> {
    if offset == 0 {
        return Ok((pointer, alignment));
    }
    let bytes = context.i64_type().const_int(offset, false);
    // SAFETY: the address lies inside what the original access read or wrote.
    let address = unsafe { builder.build_in_bounds_gep(context.i8_type(), pointer, &[bytes], "")? };
    Ok((address, alignment.min(1 << offset.trailing_zeros().min(31))))
}

/// A load of `element` at [`address_at`], with the alignment that address keeps.
fn load_at<'ctx>(
    context: &'ctx Context,
    builder: &inkwell::builder::Builder<'ctx>,
    pointer: inkwell::values::PointerValue<'ctx>,
    element: BasicTypeEnum<'ctx>,
    offset: u64,
    alignment: u32,
) -> Result<BasicValueEnum<'ctx>, inkwell::builder::BuilderError> {
    let (address, alignment) = address_at(context, builder, pointer, offset, alignment)?;
    let value = builder.build_load(element, address, "")?;
    if let Some(instruction) = inkwell::values::BasicValue::as_instruction_value(&value) {
        // A power of two, as the original's; a failure leaves the (valid) natural alignment.
        let _ = instruction.set_alignment(alignment);
    }
    Ok(value)
}

/// Applies the target's post-optimization legalizations to `module`.
pub(crate) fn after_optimization<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
    target: &TargetDescription,
) -> Result<(), String> {
    if target.legalization.legalize_cooperative_matrices {
        cooperative_matrices::construct_constants(module, target.device_calling_convention)?;
        cooperative_matrices::address_elements(module)?;
    }
    if target.legalization.expand_runtime_memory_fills {
        memory_fills::expand(context, module)?;
    }
    if target.legalization.read_work_items_once_at_entry {
        work_item_reads::read_once_at_entry(context, module)?;
    }
    if target.legalization.widen_index_arithmetic {
        address_arithmetic::widen(context, module)?;
    }
    if target.legalization.expand_multiply_with_overflow {
        expand_multiply_with_overflow(context, module)?;
    }
    if target.legalization.expand_bit_reverse {
        expand_bit_reverse(context, module)?;
    }
    if target.legalization.expand_signed_bool_to_float {
        expand_signed_bool_to_float(context, module)?;
    }
    if let Some(negate) = target.legalization.negate_narrow_in_assembly {
        narrow_integers::negate_in_assembly(context, module, negate)?;
    }
    if target.legalization.compare_narrow_min_max_operand_directly {
        narrow_integers::compare_min_max_operand_directly(context, module)?;
    }
    if let Some(lengths) = target.legalization.vector_lengths {
        vector_lengths::split_loads(context, module, lengths)?;
    }
    if let Some(widths) = target.legalization.integer_widths {
        integer_widths::split_accesses(context, module, widths)?;
    }
    Ok(())
}

/// `llvm.bitreverse.iN` (integer scalars up to 64 bits) as N shifts, ands and ors: bit `i` of
/// the operand moves to bit `N - 1 - i`.
fn expand_bit_reverse<'ctx>(context: &'ctx Context, module: &Module<'ctx>) -> Result<(), String> {
    let calls: Vec<InstructionValue<'ctx>> = instructions(module)
        .filter(|instruction| {
            CallSiteValue::try_from(*instruction)
                .ok()
                .and_then(|call| call.get_called_fn_value())
                .is_some_and(|f| f.get_name().to_bytes().starts_with(b"llvm.bitreverse.i"))
        })
        .collect();
    let builder = context.create_builder();
    let error = |e: inkwell::builder::BuilderError| e.to_string();
    for call in calls {
        let Some(inkwell::values::Operand::Value(BasicValueEnum::IntValue(x))) =
            call.get_operand(0)
        else {
            continue;
        };
        let ty = x.get_type();
        let width = ty.get_bit_width();
        if width > 64 {
            continue;
        }
        builder.position_before(&call);
        let mut reversed = ty.const_zero();
        for bit in 0..width {
            let moved = if 2 * bit + 1 < width {
                let distance = ty.const_int(u64::from(width - 1 - 2 * bit), false);
                builder.build_left_shift(x, distance, "").map_err(error)?
            } else {
                let distance = ty.const_int(u64::from(2 * bit + 1 - width), false);
                builder
                    .build_right_shift(x, distance, false, "")
                    .map_err(error)?
            };
            let mask = ty.const_int(1u64 << (width - 1 - bit), false);
            let kept = builder.build_and(moved, mask, "").map_err(error)?;
            reversed = builder.build_or(reversed, kept, "").map_err(error)?;
        }
        replace_instruction(call, reversed);
    }
    Ok(())
}

/// `sitofp i1 %x to T` (scalar or vector) as `select %x, -1.0, 0.0`.
fn expand_signed_bool_to_float<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
) -> Result<(), String> {
    let mut conversions = Vec::new();
    for function in module.get_functions() {
        for block in function.get_basic_block_iter() {
            for instruction in block.get_instructions() {
                if instruction.get_opcode() != InstructionOpcode::SIToFP {
                    continue;
                }
                let from_bool = match instruction.get_operand(0) {
                    Some(inkwell::values::Operand::Value(value)) => match value.get_type() {
                        BasicTypeEnum::IntType(ty) => ty.get_bit_width() == 1,
                        BasicTypeEnum::VectorType(ty) => {
                            ty.get_element_type().into_int_type().get_bit_width() == 1
                        }
                        _ => false,
                    },
                    _ => false,
                };
                if from_bool {
                    conversions.push(instruction);
                }
            }
        }
    }
    let builder = context.create_builder();
    let error = |e: inkwell::builder::BuilderError| e.to_string();
    for conversion in conversions {
        let Some(inkwell::values::Operand::Value(condition)) = conversion.get_operand(0) else {
            continue;
        };
        builder.position_before(&conversion);
        let (minus_one, zero): (BasicValueEnum<'ctx>, BasicValueEnum<'ctx>) =
            match conversion.get_type() {
                AnyTypeEnum::FloatType(ty) => (ty.const_float(-1.0).into(), ty.const_zero().into()),
                AnyTypeEnum::VectorType(ty) => {
                    let element = ty.get_element_type().into_float_type();
                    let lanes = ty.get_size();
                    let splat = |v: f64| {
                        let values: Vec<_> = (0..lanes).map(|_| element.const_float(v)).collect();
                        VectorType::const_vector(&values)
                    };
                    (splat(-1.0).into(), splat(0.0).into())
                }
                _ => continue,
            };
        let selected = match condition {
            BasicValueEnum::IntValue(c) => builder.build_select(c, minus_one, zero, ""),
            BasicValueEnum::VectorValue(c) => builder.build_select(c, minus_one, zero, ""),
            _ => continue,
        }
        .map_err(error)?;
        replace_instruction(conversion, selected);
    }
    Ok(())
}

/// `llvm.umul.with.overflow.iN` (and `smul` up to 32 bits) as plain multiplies: the optimizer
/// turns `(MAX / x) >= y` into `!umul.with.overflow(x, y)`, which the SPIR-V backend emits
/// as `OpUMulExtended`, and the Intel CPU device fails to build that (fuzzgen seed 1000263).
fn expand_multiply_with_overflow<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
) -> Result<(), String> {
    let mut calls = Vec::new();
    for function in module.get_functions() {
        for block in function.get_basic_block_iter() {
            for instruction in block.get_instructions() {
                if instruction.get_opcode() != InstructionOpcode::Call {
                    continue;
                }
                let Ok(call) = CallSiteValue::try_from(instruction) else {
                    continue;
                };
                let name = call
                    .get_called_fn_value()
                    .map(|f| f.get_name().to_string_lossy().into_owned())
                    .unwrap_or_default();
                let signed = if name.starts_with("llvm.umul.with.overflow.") {
                    false
                } else if name.starts_with("llvm.smul.with.overflow.") {
                    true
                } else {
                    continue;
                };
                calls.push((instruction, signed));
            }
        }
    }
    let builder = context.create_builder();
    for (call, signed) in calls {
        expand_one(context, &builder, call, signed)?;
    }
    Ok(())
}

fn expand_one<'ctx>(
    context: &'ctx Context,
    builder: &Builder<'ctx>,
    call: InstructionValue<'ctx>,
    signed: bool,
) -> Result<(), String> {
    let operand = |index: u32| -> Result<IntValue<'ctx>, String> {
        call.get_operand(index)
            .and_then(|o| match o {
                inkwell::values::Operand::Value(value) => Some(value.into_int_value()),
                inkwell::values::Operand::Block(_) => None,
            })
            .ok_or_else(|| "multiply with overflow: missing operand".to_string())
    };
    let (x, y) = (operand(0)?, operand(1)?);
    let ty = x.get_type();
    let width = ty.get_bit_width();
    if signed && width > 32 {
        return Ok(());
    }
    builder.position_before(&call);
    let (product, overflow) =
        multiply_with_overflow(context, builder, x, y, signed).map_err(|e| e.to_string())?;
    let error = |e: inkwell::builder::BuilderError| e.to_string();
    let result_type = context.struct_type(&[ty.into(), context.bool_type().into()], false);
    let with_product = builder
        .build_insert_value(result_type.get_poison(), product, 0, "")
        .map_err(error)?;
    let result = builder
        .build_insert_value(with_product, overflow, 1, "")
        .map_err(error)?;
    replace_instruction(call, result);
    Ok(())
}

/// `x * y` wrapped, and whether the exact product leaves the type, in plain integer operations
/// every backend handles: up to 32 bits a product in 32 or 64 bits that must survive a round
/// trip through the type; at 64 bits a division by a nonzero `x` that must give `y` back
/// (signed: `-1 * MIN` is caught apart, since its quotient would overflow itself).
pub(crate) fn multiply_with_overflow<'ctx>(
    context: &'ctx Context,
    builder: &Builder<'ctx>,
    x: IntValue<'ctx>,
    y: IntValue<'ctx>,
    signed: bool,
) -> Result<(IntValue<'ctx>, IntValue<'ctx>), inkwell::builder::BuilderError> {
    let ty = x.get_type();
    let width = ty.get_bit_width();
    if width <= 32 {
        let wide = if width <= 16 {
            context.i32_type()
        } else {
            context.i64_type()
        };
        let extend = |value: IntValue<'ctx>| {
            if signed {
                builder.build_int_s_extend(value, wide, "")
            } else {
                builder.build_int_z_extend(value, wide, "")
            }
        };
        let full = builder.build_int_mul(extend(x)?, extend(y)?, "")?;
        let product = builder.build_int_truncate(full, ty, "")?;
        // The product fits when extending its low half gives it back.
        let back = extend(product)?;
        let overflow = builder.build_int_compare(IntPredicate::NE, back, full, "")?;
        return Ok((product, overflow));
    }
    let product = builder.build_int_mul(x, y, "")?;
    let zero = ty.const_zero();
    let one = ty.const_int(1, false);
    let nonzero = builder.build_int_compare(IntPredicate::NE, x, zero, "")?;
    let divisor = builder.build_select(nonzero, x, one, "")?.into_int_value();
    if !signed {
        let quotient = builder.build_int_unsigned_div(product, divisor, "")?;
        let differs = builder.build_int_compare(IntPredicate::NE, quotient, y, "")?;
        return Ok((product, builder.build_and(nonzero, differs, "")?));
    }
    let x_is_minus_one = builder.build_int_compare(IntPredicate::EQ, x, ty.const_all_ones(), "")?;
    let y_is_minimum =
        builder.build_int_compare(IntPredicate::EQ, y, ty.const_int(1u64 << 63, false), "")?;
    // Divide by 1 where x is -1, so the quotient cannot overflow.
    let safe_divisor = builder
        .build_select(x_is_minus_one, one, divisor, "")?
        .into_int_value();
    let quotient = builder.build_int_signed_div(product, safe_divisor, "")?;
    let differs = builder.build_int_compare(IntPredicate::NE, quotient, y, "")?;
    let by_division = builder.build_and(nonzero, differs, "")?;
    let divided = builder.build_and(by_division, builder.build_not(x_is_minus_one, "")?, "")?;
    let by_minus_one = builder.build_and(x_is_minus_one, y_is_minimum, "")?;
    Ok((product, builder.build_or(divided, by_minus_one, "")?))
}

/// The data layout of LLVM's SPIR-V target, for the rewrites' unit tests.
#[cfg(test)]
const SPIRV_TEST_DATALAYOUT: &str = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-n8:16:32:64";

/// Runs a legalization `pass` on `body`, a function `@f(ptr %p, ptr %q)` under `datalayout`;
/// the rewritten module (verified) or the pass's error.
#[cfg(test)]
fn rewrite_test_function(
    datalayout: &str,
    body: &str,
    pass: impl for<'ctx> FnOnce(&'ctx Context, &Module<'ctx>) -> Result<(), String>,
) -> Result<String, String> {
    let source = format!(
        "target datalayout = \"{datalayout}\"\ndefine void @f(ptr %p, ptr %q) {{\n{body}\n}}\n"
    );
    let context = Context::create();
    let buffer = inkwell::memory_buffer::MemoryBuffer::create_from_memory_range_copy(
        source.as_bytes(),
        "test",
    );
    let module = context
        .create_module_from_ir(buffer)
        .expect("test IR parses");
    pass(&context, &module)?;
    module.verify().map_err(|e| e.to_string())?;
    Ok(module.print_to_string().to_string())
}
