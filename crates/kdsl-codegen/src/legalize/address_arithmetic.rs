//! Address arithmetic in 64 bits: an extension to `i64` that feeds an address, of 32-bit (or
//! narrower) arithmetic that cannot wrap (`zext (add nuw a, b)`), becomes the arithmetic of the
//! extended operands (`add nuw (zext a), (zext b)`). Exact: where the narrow arithmetic does not
//! wrap the two agree, and where it would, its result is poison. kdsl's `+ - *` must not
//! overflow (docs/language.md, "Semantics"), so lowering marks them so, and a 32-bit index
//! such as `3 * gid + 1` arrives here as such a tree.

use super::instructions;
use crate::llvm::{has_no_signed_wrap, has_no_unsigned_wrap, has_non_negative};
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::{AnyType, IntType};
use inkwell::values::{
    AsValueRef, BasicValueEnum, InstructionOpcode, InstructionValue, IntValue, Operand,
};
use std::collections::HashMap;

/// How deep a tree is rebuilt; deeper operands are extended as they are.
const MOST_DEPTH: u32 = 8;

/// Rewrites every extension to `i64` that indexes a `getelementptr` (not of bytes) and whose
/// operand is no-wrap arithmetic (in the extension's signedness) into that arithmetic on
/// extended operands.
pub(super) fn widen<'ctx>(context: &'ctx Context, module: &Module<'ctx>) -> Result<(), String> {
    let i64_type = context.i64_type();
    let extensions: Vec<(InstructionValue<'ctx>, bool)> = instructions(module)
        .filter(|&i| feeds_an_address(i))
        .filter_map(|i| widening(i, i64_type).map(|signed| (i, signed)))
        .collect();
    let builder = context.create_builder();
    for (extension, signed) in extensions {
        let Some(Operand::Value(BasicValueEnum::IntValue(narrow))) = extension.get_operand(0)
        else {
            continue;
        };
        builder.position_before(&extension);
        let mut widener = Widener {
            builder: &builder,
            wide: i64_type,
            signed,
            done: HashMap::new(),
        };
        let wide = widener.widen(narrow, 0).map_err(|e| e.to_string())?;
        super::replace_instruction(extension, wide);
    }
    Ok(())
}

/// `Some(signed)` for a `zext`/`sext` to `wide` of no-wrap arithmetic: unsigned for a `zext`
/// of `nuw` arithmetic, signed for a `sext` (or a `zext nneg`, which equals it) of `nsw`.
fn widening(extension: InstructionValue, wide: IntType) -> Option<bool> {
    // Vector extensions are left as they are.
    if extension.get_type() != wide.as_any_type_enum() {
        return None;
    }
    let Some(Operand::Value(BasicValueEnum::IntValue(narrow))) = extension.get_operand(0) else {
        return None;
    };
    let arithmetic = narrow.as_instruction()?;
    match extension.get_opcode() {
        InstructionOpcode::ZExt if widens(arithmetic, false) => Some(false),
        InstructionOpcode::ZExt if has_non_negative(extension) && widens(arithmetic, true) => {
            Some(true)
        }
        InstructionOpcode::SExt if widens(arithmetic, true) => Some(true),
        _ => None,
    }
}

/// Whether `instruction` is arithmetic whose extension is the arithmetic of its extended
/// operands: `add`, `sub`, `mul` and `shl` that cannot wrap in that signedness.
fn widens(instruction: InstructionValue, signed: bool) -> bool {
    instruction.get_opcode() != InstructionOpcode::Trunc && cannot_wrap(instruction, signed)
}

/// Whether `instruction` (`add`, `sub`, `mul`, `shl`, `trunc`) is marked as not wrapping in
/// that signedness (`nsw` or `nuw`).
fn cannot_wrap(instruction: InstructionValue, signed: bool) -> bool {
    if signed {
        has_no_signed_wrap(instruction)
    } else {
        has_no_unsigned_wrap(instruction)
    }
}

/// Whether `instruction` is an extension used as an index of a `getelementptr` of anything
/// but bytes. Byte accesses keep their 32-bit index: with it in 64 bits the Intel OpenCL CPU
/// device's compiler (2026.22) aborts the process ("Cannot emit physreg copy instruction")
/// on `a[3 * g] = a[3 * g + 1] * b[g]; a[3 * g + 1] = a[3 * g + 2] * (a[3 * g] - b[g])` of
/// `i8`, as it does on that OpenCL C with `restrict` and a `size_t` index (fuzzgen seed
/// 9000457).
fn feeds_an_address(instruction: InstructionValue) -> bool {
    if !matches!(
        instruction.get_opcode(),
        InstructionOpcode::ZExt | InstructionOpcode::SExt
    ) {
        return false;
    }
    // Through the C API: inkwell's `get_user` panics on users of types it does not model
    // (cooperative matrices).
    // SAFETY: walks the use list of a live instruction; the queries only read it and the
    // element type of a `getelementptr` user.
    unsafe {
        use inkwell::llvm_sys::core::{
            LLVMGetFirstUse, LLVMGetGEPSourceElementType, LLVMGetIntTypeWidth, LLVMGetNextUse,
            LLVMGetTypeKind, LLVMGetUser, LLVMIsAGetElementPtrInst,
        };
        use inkwell::llvm_sys::LLVMTypeKind;
        let mut used = LLVMGetFirstUse(instruction.as_value_ref());
        while !used.is_null() {
            let user = LLVMGetUser(used);
            if !LLVMIsAGetElementPtrInst(user).is_null() {
                let element = LLVMGetGEPSourceElementType(user);
                let bytes = LLVMGetTypeKind(element) == LLVMTypeKind::LLVMIntegerTypeKind
                    && LLVMGetIntTypeWidth(element) == 8;
                if !bytes {
                    return true;
                }
            }
            used = LLVMGetNextUse(used);
        }
    }
    false
}

struct Widener<'a, 'ctx> {
    builder: &'a Builder<'ctx>,
    wide: IntType<'ctx>,
    signed: bool,
    /// Each narrow value rebuilt so far, so that a shared operand is extended once.
    done: HashMap<inkwell::llvm_sys::prelude::LLVMValueRef, IntValue<'ctx>>,
}

impl<'ctx> Widener<'_, 'ctx> {
    fn widen(
        &mut self,
        narrow: IntValue<'ctx>,
        depth: u32,
    ) -> Result<IntValue<'ctx>, BuilderError> {
        if let Some(&wide) = self.done.get(&narrow.as_value_ref()) {
            return Ok(wide);
        }
        let wide = match narrow.as_instruction() {
            Some(arithmetic) if depth < MOST_DEPTH && widens(arithmetic, self.signed) => {
                self.widen_arithmetic(arithmetic, depth)?
            }
            _ => self.extend(narrow)?,
        };
        self.done.insert(narrow.as_value_ref(), wide);
        Ok(wide)
    }

    fn widen_arithmetic(
        &mut self,
        arithmetic: InstructionValue<'ctx>,
        depth: u32,
    ) -> Result<IntValue<'ctx>, BuilderError> {
        let operand = |index| match arithmetic.get_operand(index) {
            Some(Operand::Value(BasicValueEnum::IntValue(value))) => Some(value),
            _ => None,
        };
        let (Some(left), Some(right)) = (operand(0), operand(1)) else {
            unreachable!("an integer binary operator has two integer operands")
        };
        let left = self.widen(left, depth + 1)?;
        // A shift amount is a count, not a term: extended, not rebuilt.
        let right = if arithmetic.get_opcode() == InstructionOpcode::Shl {
            self.builder.build_int_z_extend(right, self.wide, "")?
        } else {
            self.widen(right, depth + 1)?
        };
        let b = self.builder;
        Ok(match (arithmetic.get_opcode(), self.signed) {
            (InstructionOpcode::Add, false) => b.build_int_nuw_add(left, right, "")?,
            (InstructionOpcode::Add, true) => b.build_int_nsw_add(left, right, "")?,
            (InstructionOpcode::Sub, false) => b.build_int_nuw_sub(left, right, "")?,
            (InstructionOpcode::Sub, true) => b.build_int_nsw_sub(left, right, "")?,
            (InstructionOpcode::Mul, false) => b.build_int_nuw_mul(left, right, "")?,
            (InstructionOpcode::Mul, true) => b.build_int_nsw_mul(left, right, "")?,
            // `shl` keeps its flags below: no builder call sets them.
            _ => {
                let shifted = b.build_left_shift(left, right, "")?;
                crate::llvm::set_no_wrap(shifted, self.signed);
                shifted
            }
        })
    }

    /// `narrow` extended; a truncation of a wide value that dropped only zero bits (or, for
    /// a signed extension, copies of the sign bit) gives that value back, as `zext(trunc nuw
    /// x)` is `x`: `get_global_id(0)` stays the device's 64-bit id, which its vectorizer knows
    /// to be consecutive, not `id & 0xffffffff`.
    fn extend(&mut self, narrow: IntValue<'ctx>) -> Result<IntValue<'ctx>, BuilderError> {
        if let Some(truncation) = narrow.as_instruction() {
            if truncation.get_opcode() == InstructionOpcode::Trunc
                && cannot_wrap(truncation, self.signed)
            {
                if let Some(Operand::Value(BasicValueEnum::IntValue(wide))) =
                    truncation.get_operand(0)
                {
                    if wide.get_type() == self.wide {
                        return Ok(wide);
                    }
                }
            }
        }
        if self.signed {
            self.builder.build_int_s_extend(narrow, self.wide, "")
        } else {
            self.builder.build_int_z_extend(narrow, self.wide, "")
        }
    }
}

#[cfg(test)]
mod tests {
    /// Runs `widen` on `body`, a function of `ptr %p, ptr %q`; the rewritten module.
    fn widened(body: &str) -> String {
        super::super::rewrite_test_function(super::super::SPIRV_TEST_DATALAYOUT, body, super::widen)
            .unwrap()
    }

    #[test]
    fn unsigned_index_arithmetic_becomes_64_bit_from_the_wide_id() {
        let module = widened(
            "%id = load i64, ptr %q, align 8
             %g = trunc nuw i64 %id to i32
             %m = mul nuw i32 %g, 3
             %a = add nuw i32 %m, 1
             %x = zext i32 %a to i64
             %e = getelementptr inbounds double, ptr %p, i64 %x
             store double 1.0, ptr %e, align 8
             ret void",
        );
        assert!(module.contains("mul nuw i64 %id, 3"), "{module}");
        assert!(module.contains("add nuw i64"), "{module}");
        assert!(!module.contains("zext"), "{module}");
    }

    #[test]
    fn signed_index_arithmetic_is_sign_extended_at_its_leaves() {
        let module = widened(
            "%v = load i32, ptr %q, align 4
             %a = add nsw i32 %v, -1
             %b = mul nsw i32 %a, 5
             %x = sext i32 %b to i64
             %y = zext nneg i32 %a to i64
             %e = getelementptr inbounds float, ptr %p, i64 %x
             %f = getelementptr inbounds float, ptr %p, i64 %y
             store float 1.0, ptr %e, align 4
             store float 2.0, ptr %f, align 4
             ret void",
        );
        assert!(module.contains("sext i32 %v to i64"), "{module}");
        assert!(module.contains("add nsw i64"), "{module}");
        assert!(module.contains("mul nsw i64"), "{module}");
        assert!(!module.contains("zext"), "{module}");
    }

    #[test]
    fn a_shift_amount_is_extended_not_rebuilt() {
        let module = widened(
            "%v = load i32, ptr %q, align 4
             %s = add nuw i32 %v, 2
             %a = shl nuw i32 %v, %s
             %x = zext i32 %a to i64
             %e = getelementptr inbounds i16, ptr %p, i64 %x
             store i16 1, ptr %e, align 2
             ret void",
        );
        assert!(module.contains("shl nuw i64"), "{module}");
        assert!(module.contains("zext i32 %s to i64"), "{module}");
    }

    #[test]
    fn vector_extensions_stay() {
        let module = widened(
            "%v = load <2 x i32>, ptr %q, align 8
             %a = add nuw <2 x i32> %v, <i32 1, i32 1>
             %x = zext <2 x i32> %a to <2 x i64>
             %e = getelementptr inbounds i8, ptr %p, <2 x i64> %x
             %f = extractelement <2 x ptr> %e, i64 0
             store i8 1, ptr %f, align 1
             ret void",
        );
        assert!(
            module.contains("zext <2 x i32> %a to <2 x i64>"),
            "{module}"
        );
    }

    #[test]
    fn byte_indices_stay() {
        let module = widened(
            "%v = load i32, ptr %q, align 4
             %a = mul nuw i32 %v, 3
             %x = zext i32 %a to i64
             %e = getelementptr inbounds i8, ptr %p, i64 %x
             store i8 1, ptr %e, align 1
             ret void",
        );
        assert!(module.contains("%x = zext i32 %a to i64"), "{module}");
    }

    #[test]
    fn wrapping_arithmetic_and_values_not_addressing_stay() {
        let body = "%v = load i32, ptr %q, align 4
             %a = add i32 %v, 1
             %x = zext i32 %a to i64
             %b = add nuw i32 %v, 2
             %y = zext i32 %b to i64
             %e = getelementptr inbounds i64, ptr %p, i64 %x
             store i64 %y, ptr %e, align 8
             ret void";
        let module = widened(body);
        assert!(module.contains("%x = zext i32 %a to i64"), "{module}");
        assert!(module.contains("%y = zext i32 %b to i64"), "{module}");
        assert!(!module.contains("add nuw i64"), "{module}");
    }
}
