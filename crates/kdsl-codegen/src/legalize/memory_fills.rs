//! `llvm.memset` of a value known only at run time as plain stores. The optimizer makes such a
//! fill of a loop that stores one runtime byte into each element of a byte array
//! (`for k in 0..3 { bytes[k] = n as i8; }`), and LLVM 22's SPIR-V backend emits it as a call
//! of a helper function it adds to the module (`spirv.llvm_memset_p0_i64`, a byte loop). The
//! Intel OpenCL CPU device (2026.22) loses that call's stores to a private array where the
//! kernel also uses an OpenCL.std integer built-in (`s_max`, `u_max`): a later load of the
//! array read 0 (fuzzgen seed 9011949, docs/fuzzgen.md). The same stores written out are
//! right. A fill of a constant value, which the backend copies from a constant, is left.
//!
//! Each fill of a constant length up to [`MAX_BYTES`] becomes stores of the byte repeated in
//! the widest integer (up to 64 bits) that the address's alignment and the bytes left allow.

use super::{address_at, instructions};
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::values::{
    BasicValue, BasicValueEnum, CallSiteValue, InstructionOpcode, InstructionValue, IntValue,
    Operand, PointerValue,
};

/// The longest fill written out (512 stores where 8-byte aligned, as kdsl aligns private
/// arrays to 16 bytes; 4096 byte stores at worst): private arrays are far shorter.
const MAX_BYTES: u64 = 4096;

pub(super) fn expand<'ctx>(context: &'ctx Context, module: &Module<'ctx>) -> Result<(), String> {
    let fills: Vec<_> = instructions(module).filter_map(fill).collect();
    let builder = context.create_builder();
    let error = |e: BuilderError| e.to_string();
    for Fill {
        call,
        destination,
        byte,
        length,
        alignment,
    } in fills
    {
        builder.position_before(&call);
        // The byte repeated in each width used so far, built once.
        let mut repeated: Vec<(u32, IntValue<'ctx>)> = Vec::new();
        let mut offset = 0;
        while offset < length {
            let (address, aligned) =
                address_at(context, &builder, destination, offset, alignment).map_err(error)?;
            let width = [8, 4, 2, 1]
                .into_iter()
                .find(|&width| u64::from(width) <= length - offset && width <= aligned)
                .unwrap_or(1);
            let value = match repeated.iter().find(|(w, _)| *w == width) {
                Some(&(_, value)) => value,
                None => {
                    let value = repeat(context, &builder, byte, width).map_err(error)?;
                    repeated.push((width, value));
                    value
                }
            };
            let store = builder.build_store(address, value).map_err(error)?;
            store.set_alignment(width).map_err(|e| e.to_string())?;
            offset += u64::from(width);
        }
        call.erase_from_basic_block();
    }
    for function in module.get_functions() {
        if function.get_name().to_bytes().starts_with(b"llvm.memset.")
            && function
                .as_global_value()
                .as_pointer_value()
                .get_first_use()
                .is_none()
        {
            // SAFETY: an intrinsic's declaration without uses: nothing refers to it.
            unsafe { function.delete() };
        }
    }
    Ok(())
}

/// `byte` repeated in an integer of `width` bytes (1, 2, 4 or 8), built at the builder's
/// position. It is extended through 32 bits: the SPIR-V backend folds an 8-to-16-bit
/// extension of a truncation into an `OpBitwiseAnd` that `spirv-val` rejects (see
/// `Legalization::extend_narrow_through_32_bits`).
fn repeat<'ctx>(
    context: &'ctx Context,
    builder: &Builder<'ctx>,
    byte: IntValue<'ctx>,
    width: u32,
) -> Result<IntValue<'ctx>, BuilderError> {
    if width == 1 {
        return Ok(byte);
    }
    if width == 8 {
        let wide = builder.build_int_z_extend(byte, context.i64_type(), "")?;
        let ones = context.i64_type().const_int(u64::MAX / 255, false);
        return builder.build_int_mul(wide, ones, "");
    }
    let word = builder.build_int_z_extend(byte, context.i32_type(), "")?;
    let ones = context.i32_type().const_int(0x0101_0101, false);
    let repeated = builder.build_int_mul(word, ones, "")?;
    if width == 4 {
        return Ok(repeated);
    }
    builder.build_int_truncate(repeated, context.i16_type(), "")
}

/// A non-volatile `llvm.memset` of a runtime byte over a constant number of bytes.
struct Fill<'ctx> {
    call: InstructionValue<'ctx>,
    destination: PointerValue<'ctx>,
    byte: IntValue<'ctx>,
    length: u64,
    alignment: u32,
}

fn fill(instruction: InstructionValue<'_>) -> Option<Fill<'_>> {
    if instruction.get_opcode() != InstructionOpcode::Call {
        return None;
    }
    let call = CallSiteValue::try_from(instruction).ok()?;
    let callee = call.get_called_fn_value()?;
    if !callee.get_name().to_bytes().starts_with(b"llvm.memset.") {
        return None;
    }
    let operand = |index| match instruction.get_operand(index)? {
        Operand::Value(value) => Some(value),
        Operand::Block(_) => None,
    };
    let (
        Some(BasicValueEnum::PointerValue(destination)),
        Some(BasicValueEnum::IntValue(byte)),
        Some(BasicValueEnum::IntValue(length)),
        Some(BasicValueEnum::IntValue(volatile)),
    ) = (operand(0), operand(1), operand(2), operand(3))
    else {
        return None;
    };
    if byte.is_const() || volatile.get_zero_extended_constant() != Some(0) {
        return None;
    }
    let length = length.get_zero_extended_constant()?;
    if length > MAX_BYTES {
        return None;
    }
    let align = inkwell::attributes::Attribute::get_named_enum_kind_id("align");
    let alignment = call
        .get_enum_attribute(inkwell::attributes::AttributeLoc::Param(0), align)
        .map_or(1, |attribute| attribute.get_enum_value())
        .clamp(1, 1 << 16);
    Some(Fill {
        call: instruction,
        destination,
        byte,
        length,
        alignment: u32::try_from(alignment).unwrap_or(1),
    })
}

#[cfg(test)]
mod tests {
    /// Runs `expand` on `body`, a function of `ptr %p, ptr %q`; the rewritten module.
    fn expanded(body: &str) -> String {
        super::super::rewrite_test_function(
            super::super::SPIRV_TEST_DATALAYOUT,
            body,
            super::expand,
        )
        .unwrap()
    }

    #[test]
    fn a_runtime_byte_fill_becomes_stores_as_wide_as_alignment_allows() {
        let module = expanded(
            "%b = load i8, ptr %q, align 1
             call void @llvm.memset.p0.i64(ptr align 4 %p, i8 %b, i64 7, i1 false)
             ret void",
        );
        assert!(!module.contains("call void @llvm.memset"), "{module}");
        // 4 + 2 + 1 bytes: the byte times 0x01010101 (twice, the second truncated), and itself.
        assert_eq!(module.matches("mul i32").count(), 2, "{module}");
        assert!(module.contains("trunc i32"), "{module}");
        assert!(module.contains("store i32 %2, ptr %p, align 4"), "{module}");
        assert!(module.contains("align 2"), "{module}");
        assert!(module.contains("store i8 %b"), "{module}");
        assert_eq!(module.matches("store ").count(), 3, "{module}");
        assert!(!module.contains("@llvm.memset"), "{module}");
    }

    #[test]
    fn an_unaligned_fill_stores_bytes() {
        let module = expanded(
            "%b = load i8, ptr %q, align 1
             call void @llvm.memset.p0.i64(ptr %p, i8 %b, i64 3, i1 false)
             ret void",
        );
        assert_eq!(module.matches("store i8 %b").count(), 3, "{module}");
    }

    #[test]
    fn constant_fills_and_runtime_lengths_stay() {
        let module = expanded(
            "%b = load i8, ptr %q, align 1
             %n = load i64, ptr %q, align 8
             call void @llvm.memset.p0.i64(ptr align 8 %p, i8 0, i64 64, i1 false)
             call void @llvm.memset.p0.i64(ptr align 8 %p, i8 %b, i64 %n, i1 false)
             ret void",
        );
        assert_eq!(
            module.matches("call void @llvm.memset").count(),
            2,
            "{module}"
        );
    }
}
