//! Constant cooperative matrices. A tile's private array is zeroed where it is declared, and
//! where a path reaches a tile's use without a load or fill (`matrix_load_c` under an `if`),
//! SROA turns those zeros into a `zeroinitializer` of the cooperative matrix type (or leaves
//! `poison` where nothing was stored), which LLVM 22's SPIR-V backend cannot translate ("unable
//! to translate constant"). Each such constant becomes a `__spirv_CompositeConstruct` of the
//! element type's zero (`OpCompositeConstruct`), computed where the constant was used: the zero
//! the plain lowering would read (an undefined value may be any value).

use inkwell::llvm_sys::core::{
    LLVMAddFunction, LLVMBuildCall2, LLVMConstNull, LLVMCountIncoming, LLVMFunctionType,
    LLVMGetBasicBlockTerminator, LLVMGetFirstBasicBlock, LLVMGetFirstFunction,
    LLVMGetFirstInstruction, LLVMGetIncomingBlock, LLVMGetIntTypeWidth, LLVMGetNamedFunction,
    LLVMGetNextBasicBlock, LLVMGetNextFunction, LLVMGetNextInstruction, LLVMGetNumOperands,
    LLVMGetOperand, LLVMGetTargetExtTypeIntParam, LLVMGetTargetExtTypeName,
    LLVMGetTargetExtTypeTypeParam, LLVMGetTypeKind, LLVMGlobalGetValueType, LLVMIsAPHINode,
    LLVMIsConstant, LLVMPositionBuilderBefore, LLVMSetFunctionCallConv, LLVMSetInstructionCallConv,
    LLVMSetOperand, LLVMTypeOf,
};
use inkwell::llvm_sys::core::{
    LLVMBuildFreeze, LLVMBuildInBoundsGEP2, LLVMConstInt, LLVMGetCalledValue, LLVMGetTypeContext,
    LLVMGetValueName2, LLVMInt64TypeInContext, LLVMIsACallInst, LLVMIsAFunction,
};
use inkwell::llvm_sys::prelude::{LLVMTypeRef, LLVMValueRef};
use inkwell::llvm_sys::LLVMTypeKind;
use inkwell::module::Module;
use std::ffi::{CStr, CString};

/// Replaces every constant operand of a cooperative matrix type by a constructed zero.
pub(super) fn construct_constants(
    module: &Module<'_>,
    calling_convention: u32,
) -> Result<(), String> {
    let builder = module.get_context().create_builder();
    let mut uses = Vec::new();
    // SAFETY: a walk over the live functions, blocks and instructions of `module`, reading
    // operands and types only.
    unsafe {
        let mut function = LLVMGetFirstFunction(module.as_mut_ptr());
        while !function.is_null() {
            let mut block = LLVMGetFirstBasicBlock(function);
            while !block.is_null() {
                let mut instruction = LLVMGetFirstInstruction(block);
                while !instruction.is_null() {
                    for index in 0..LLVMGetNumOperands(instruction) as u32 {
                        let operand = LLVMGetOperand(instruction, index);
                        if LLVMIsConstant(operand) != 0
                            && is_cooperative_matrix(LLVMTypeOf(operand))
                        {
                            uses.push((instruction, index));
                        }
                    }
                    instruction = LLVMGetNextInstruction(instruction);
                }
                block = LLVMGetNextBasicBlock(block);
            }
            function = LLVMGetNextFunction(function);
        }
    }
    for (instruction, index) in uses {
        // SAFETY: `instruction` is live and `index` one of its operands (found above); the
        // builder and the declaration belong to the module's context.
        unsafe {
            let matrix = LLVMTypeOf(LLVMGetOperand(instruction, index));
            // A phi's incoming value is computed at the end of its block.
            let before = if LLVMIsAPHINode(instruction).is_null() {
                instruction
            } else {
                if index >= LLVMCountIncoming(instruction) {
                    return Err("a phi operand without an incoming block".into());
                }
                LLVMGetBasicBlockTerminator(LLVMGetIncomingBlock(instruction, index))
            };
            if before.is_null() {
                return Err("a block without a terminator".into());
            }
            let construct = declaration(module, matrix, calling_convention)?;
            let element = LLVMGetTargetExtTypeTypeParam(matrix, 0);
            let mut arguments = [LLVMConstNull(element)];
            LLVMPositionBuilderBefore(builder.as_mut_ptr(), before);
            let empty = CString::default();
            let zero = LLVMBuildCall2(
                builder.as_mut_ptr(),
                LLVMGlobalGetValueType(construct),
                construct,
                arguments.as_mut_ptr(),
                1,
                empty.as_ptr(),
            );
            LLVMSetInstructionCallConv(zero, calling_convention);
            LLVMSetOperand(instruction, index, zero);
        }
    }
    Ok(())
}

/// Gives every cooperative load and store an element pointer that is an instruction. Where the
/// tile starts at a local array's first element the optimizer passes the array's global
/// itself, and the backend then addresses the load through a pointer to the array, which
/// `spirv-val` rejects ("Pointer's Type must be a scalar or vector type"); a `getelementptr`
/// of the element type by a frozen zero survives to the backend as an element pointer.
pub(super) fn address_elements(module: &Module<'_>) -> Result<(), String> {
    const MEMORY_BUILTINS: [&str; 2] = [
        "_Z32__spirv_CooperativeMatrixLoadKHR",
        "_Z33__spirv_CooperativeMatrixStoreKHR",
    ];
    let builder = module.get_context().create_builder();
    let mut calls = Vec::new();
    // SAFETY: as in `construct_constants`.
    unsafe {
        let mut function = LLVMGetFirstFunction(module.as_mut_ptr());
        while !function.is_null() {
            let mut block = LLVMGetFirstBasicBlock(function);
            while !block.is_null() {
                let mut instruction = LLVMGetFirstInstruction(block);
                while !instruction.is_null() {
                    if !LLVMIsACallInst(instruction).is_null() {
                        let callee = LLVMGetCalledValue(instruction);
                        if !LLVMIsAFunction(callee).is_null() {
                            let mut length = 0;
                            let name = LLVMGetValueName2(callee, &mut length);
                            let name = std::slice::from_raw_parts(name.cast::<u8>(), length);
                            let pointer = LLVMGetOperand(instruction, 0);
                            if MEMORY_BUILTINS
                                .iter()
                                .any(|b| name.starts_with(b.as_bytes()))
                                && LLVMIsConstant(pointer) != 0
                            {
                                calls.push(instruction);
                            }
                        }
                    }
                    instruction = LLVMGetNextInstruction(instruction);
                }
                block = LLVMGetNextBasicBlock(block);
            }
            function = LLVMGetNextFunction(function);
        }
    }
    for call in calls {
        // SAFETY: `call` is a live call of a load or store builtin (found above): a load
        // returns the matrix, a store takes it as its second argument.
        unsafe {
            let returned = LLVMTypeOf(call);
            let matrix = if is_cooperative_matrix(returned) {
                returned
            } else {
                LLVMTypeOf(LLVMGetOperand(call, 1))
            };
            if !is_cooperative_matrix(matrix) {
                return Err("a cooperative load or store without a matrix".into());
            }
            let element = LLVMGetTargetExtTypeTypeParam(matrix, 0);
            let context = LLVMGetTypeContext(element);
            LLVMPositionBuilderBefore(builder.as_mut_ptr(), call);
            let empty = CString::default();
            let zero = LLVMConstInt(LLVMInt64TypeInContext(context), 0, 0);
            let mut index = [LLVMBuildFreeze(builder.as_mut_ptr(), zero, empty.as_ptr())];
            let pointer = LLVMBuildInBoundsGEP2(
                builder.as_mut_ptr(),
                element,
                LLVMGetOperand(call, 0),
                index.as_mut_ptr(),
                1,
                empty.as_ptr(),
            );
            LLVMSetOperand(call, 0, pointer);
        }
    }
    Ok(())
}

/// Whether `ty` is `target("spirv.CooperativeMatrixKHR", ...)`.
///
/// # Safety
/// `ty` must be a live LLVM type.
unsafe fn is_cooperative_matrix(ty: LLVMTypeRef) -> bool {
    // SAFETY: `ty` is live (the caller's contract); its name, a NUL-terminated string the type
    // owns, is read only once `ty` is known to be a target extension type.
    unsafe {
        LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMTargetExtTypeKind
            && CStr::from_ptr(LLVMGetTargetExtTypeName(ty)).to_bytes()
                == b"spirv.CooperativeMatrixKHR"
    }
}

/// `__spirv_CompositeConstruct` returning `matrix` from its element type, named as the
/// lowering names it (`lower::matrix_spirv`): a template instance `<rows, columns, use>`.
///
/// # Safety
/// `matrix` must be a live cooperative matrix type (`is_cooperative_matrix`) of `module`'s
/// context.
unsafe fn declaration(
    module: &Module<'_>,
    matrix: LLVMTypeRef,
    calling_convention: u32,
) -> Result<LLVMValueRef, String> {
    // SAFETY: `matrix` is a live cooperative matrix type (the caller's contract), so it has the
    // element type parameter and the integer parameters read here; `name` outlives the calls
    // that take it, and the new declaration's types belong to `module`'s context.
    unsafe {
        let element = LLVMGetTargetExtTypeTypeParam(matrix, 0);
        let code = match LLVMGetTypeKind(element) {
            LLVMTypeKind::LLVMHalfTypeKind => "Dh",
            LLVMTypeKind::LLVMFloatTypeKind => "f",
            LLVMTypeKind::LLVMIntegerTypeKind => match LLVMGetIntTypeWidth(element) {
                8 => "a",
                16 => "s",
                32 => "i",
                width => return Err(format!("a cooperative matrix of i{width}")),
            },
            kind => return Err(format!("a cooperative matrix of {kind:?} elements")),
        };
        let name = format!(
            "_Z26__spirv_CompositeConstructILi{}ELi{}ELi{}EEv{code}",
            LLVMGetTargetExtTypeIntParam(matrix, 1),
            LLVMGetTargetExtTypeIntParam(matrix, 2),
            LLVMGetTargetExtTypeIntParam(matrix, 3),
        );
        let name = CString::new(name).map_err(|e| e.to_string())?;
        let existing = LLVMGetNamedFunction(module.as_mut_ptr(), name.as_ptr());
        if !existing.is_null() {
            return Ok(existing);
        }
        let mut parameters = [element];
        let function_type = LLVMFunctionType(matrix, parameters.as_mut_ptr(), 1, 0);
        let function = LLVMAddFunction(module.as_mut_ptr(), name.as_ptr(), function_type);
        LLVMSetFunctionCallConv(function, calling_convention);
        Ok(function)
    }
}
