//! LLVM's optimizer and backends run contained: a fatal error ("LLVM ERROR: ...") or a crash
//! inside them becomes an error of the call instead of the end of the process (see
//! `crates/kdsl-codegen/cpp/kdsl_llvm_contain.cpp`).

use inkwell::llvm_sys::core::{
    LLVMDisposeMemoryBuffer, LLVMDisposeMessage, LLVMGetBufferSize, LLVMGetBufferStart,
};
use inkwell::llvm_sys::error::{LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage};
use inkwell::llvm_sys::prelude::{LLVMBool, LLVMMemoryBufferRef, LLVMModuleRef};
use inkwell::llvm_sys::target_machine::{LLVMCodeGenFileType, LLVMTargetMachineRef};
use inkwell::llvm_sys::transforms::pass_builder::LLVMPassBuilderOptionsRef;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{FileType, TargetMachine};
use std::ffi::{c_char, c_int, CStr, CString};

/// How a contained LLVM call failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The call returned its own error.
    Returned(String),
    /// LLVM reported a fatal error (the reason) or crashed (the signal); the process lives on,
    /// and what the call held is leaked.
    Aborted(String),
}

impl Failure {
    /// The failure as a sentence for an internal-compiler-error diagnostic about `phase`.
    pub(crate) fn describe(&self, phase: &str) -> String {
        match self {
            Failure::Returned(message) => format!("{phase} failed: {message}"),
            Failure::Aborted(reason) => {
                format!("{phase} aborted (contained; the process continues): {reason}")
            }
        }
    }
}

const RETURNED: c_int = 0;
const FATAL_ERROR: c_int = 1;

extern "C" {
    fn kdsl_contained_emit_to_memory_buffer(
        machine: LLVMTargetMachineRef,
        module: LLVMModuleRef,
        file_type: LLVMCodeGenFileType,
        failed: *mut LLVMBool,
        error_message: *mut *mut c_char,
        buffer: *mut LLVMMemoryBufferRef,
        crash_message: *mut *mut c_char,
    ) -> c_int;
    fn kdsl_contained_run_passes(
        module: LLVMModuleRef,
        passes: *const c_char,
        machine: LLVMTargetMachineRef,
        options: LLVMPassBuilderOptionsRef,
        error: *mut LLVMErrorRef,
        crash_message: *mut *mut c_char,
    ) -> c_int;
    fn kdsl_contained_free_message(message: *mut c_char);
}

/// Takes the wrapper's crash message (malloc'ed) into a `Failure::Aborted`.
///
/// # Safety
/// `message` is null or a string from the wrapper, not yet freed.
unsafe fn aborted(outcome: c_int, message: *mut c_char) -> Failure {
    let text = if message.is_null() {
        String::new()
    } else {
        // SAFETY: a live NUL-terminated string from the wrapper (the caller's contract).
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    };
    // SAFETY: null or the wrapper's allocation, copied above and freed only here.
    unsafe { kdsl_contained_free_message(message) };
    Failure::Aborted(match outcome {
        FATAL_ERROR => format!("LLVM ERROR: {text}"),
        _ => format!("LLVM crashed with {text}"),
    })
}

/// `TargetMachine::write_to_memory_buffer`, contained.
pub(crate) fn emit(
    machine: &TargetMachine,
    module: &Module<'_>,
    file_type: FileType,
) -> Result<Vec<u8>, Failure> {
    let file_type = match file_type {
        FileType::Assembly => LLVMCodeGenFileType::LLVMAssemblyFile,
        FileType::Object => LLVMCodeGenFileType::LLVMObjectFile,
    };
    let mut failed: LLVMBool = 1;
    let mut error_message: *mut c_char = std::ptr::null_mut();
    let mut buffer: LLVMMemoryBufferRef = std::ptr::null_mut();
    let mut crash_message: *mut c_char = std::ptr::null_mut();
    // SAFETY: the machine and module are live LLVM objects owned by their inkwell wrappers;
    // every out-pointer is valid; ownership of what the wrapper returns is taken below.
    unsafe {
        let outcome = kdsl_contained_emit_to_memory_buffer(
            machine.as_mut_ptr(),
            module.as_mut_ptr(),
            file_type,
            &mut failed,
            &mut error_message,
            &mut buffer,
            &mut crash_message,
        );
        if outcome != RETURNED {
            return Err(aborted(outcome, crash_message));
        }
        if failed != 0 || buffer.is_null() {
            let message = if error_message.is_null() {
                "no message".to_string()
            } else {
                let text = CStr::from_ptr(error_message).to_string_lossy().into_owned();
                LLVMDisposeMessage(error_message);
                text
            };
            return Err(Failure::Returned(message));
        }
        let start = LLVMGetBufferStart(buffer) as *const u8;
        let bytes = std::slice::from_raw_parts(start, LLVMGetBufferSize(buffer)).to_vec();
        LLVMDisposeMemoryBuffer(buffer);
        Ok(bytes)
    }
}

/// `Module::run_passes`, contained.
pub(crate) fn run_passes(
    module: &Module<'_>,
    passes: &str,
    machine: &TargetMachine,
    options: PassBuilderOptions,
) -> Result<(), Failure> {
    let passes =
        CString::new(passes).map_err(|_| Failure::Returned("a NUL in the pass list".into()))?;
    let mut error: LLVMErrorRef = std::ptr::null_mut();
    let mut crash_message: *mut c_char = std::ptr::null_mut();
    // SAFETY: as in `emit`; `options` outlives the call and disposes of itself afterwards.
    unsafe {
        let outcome = kdsl_contained_run_passes(
            module.as_mut_ptr(),
            passes.as_ptr(),
            machine.as_mut_ptr(),
            options.as_mut_ptr(),
            &mut error,
            &mut crash_message,
        );
        if outcome != RETURNED {
            return Err(aborted(outcome, crash_message));
        }
        if !error.is_null() {
            let message = LLVMGetErrorMessage(error);
            let text = CStr::from_ptr(message).to_string_lossy().into_owned();
            LLVMDisposeErrorMessage(message);
            return Err(Failure::Returned(text));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;
    use inkwell::targets::{CodeModel, RelocMode, Target, TargetTriple};
    use inkwell::OptimizationLevel;

    fn machine(triple: &str, cpu: &str, level: OptimizationLevel) -> TargetMachine {
        crate::llvm::initialize();
        let triple = TargetTriple::create(triple);
        Target::from_triple(&triple)
            .expect("the target is built into LLVM 22")
            .create_target_machine(
                &triple,
                cpu,
                "",
                level,
                RelocMode::Default,
                CodeModel::Default,
            )
            .expect("a target machine")
    }

    fn parse<'ctx>(context: &'ctx Context, ir: &str) -> Module<'ctx> {
        let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "test");
        context
            .create_module_from_ir(buffer)
            .expect("valid LLVM IR")
    }

    /// Without kdsl's legalization, AMDGPU's instruction selection reports a fatal error on
    /// 8-bit division at -O0 ("Cannot select"), which would end the process.
    #[test]
    fn a_fatal_error_in_the_backend_is_returned() {
        let context = Context::create();
        let module = parse(
            &context,
            "define amdgpu_kernel void @k(ptr addrspace(1) %p, i8 %a, i8 %b) {\n\
             %q = sdiv i8 %a, %b\n  %r = srem i8 %a, %b\n\
             store i8 %q, ptr addrspace(1) %p\n\
             %p1 = getelementptr i8, ptr addrspace(1) %p, i64 1\n\
             store i8 %r, ptr addrspace(1) %p1\n  ret void\n}\n",
        );
        let machine = machine("amdgcn-amd-amdhsa", "gfx90a", OptimizationLevel::None);
        match emit(&machine, &module, FileType::Object) {
            Err(Failure::Aborted(reason)) => {
                assert!(reason.contains("LLVM ERROR"), "{reason}");
                assert!(reason.contains("Cannot select"), "{reason}");
            }
            other => panic!("expected a contained fatal error, got {other:?}"),
        }
        // The process, and LLVM, go on working: the next compilation succeeds.
        let module = parse(
            &context,
            "define amdgpu_kernel void @ok() {\n  ret void\n}\n",
        );
        module.set_name("ok");
        let object = emit(&machine, &module, FileType::Object).expect("a valid module compiles");
        assert!(object.starts_with(b"\x7fELF"));
    }

    /// An error diagnostic of the backend (here AMDGPU's local-memory limit) makes LLVM print
    /// and call `exit(1)` unless a handler records it.
    #[test]
    fn an_error_diagnostic_of_the_backend_is_returned() {
        let context = Context::create();
        let module = parse(
            &context,
            "@scratch = internal addrspace(3) global [100000 x i32] poison\n\
             define amdgpu_kernel void @k(i32 %i, i32 %v) {\n\
             %p = getelementptr [100000 x i32], ptr addrspace(3) @scratch, i32 0, i32 %i\n\
             store volatile i32 %v, ptr addrspace(3) %p\n  ret void\n}\n",
        );
        let machine = machine("amdgcn-amd-amdhsa", "gfx90a", OptimizationLevel::Default);
        match emit(&machine, &module, FileType::Object) {
            Err(Failure::Aborted(reason)) => {
                assert!(reason.contains("local memory"), "{reason}");
            }
            other => panic!("expected a contained error diagnostic, got {other:?}"),
        }
    }

    #[test]
    fn an_unknown_pass_is_an_ordinary_error() {
        let context = Context::create();
        let module = parse(&context, "define void @f() {\n  ret void\n}\n");
        let machine = machine("nvptx64-nvidia-cuda", "sm_90", OptimizationLevel::Default);
        match run_passes(
            &module,
            "no-such-pass",
            &machine,
            PassBuilderOptions::create(),
        ) {
            Err(Failure::Returned(message)) => assert!(message.contains("no-such-pass")),
            other => panic!("expected the pass builder's error, got {other:?}"),
        }
    }
}
