//! The pipeline for one target: lower, verify, link the math library, optimize, run the
//! backend, and turn its output into an image.

use crate::target::{amdgpu, spirv, OutputFormat, TargetDescription};
use crate::{llvm, lower, Artifact, CodegenError, Options};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{FileType, TargetMachine};
use kdsl_bundle::Image;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

fn internal(target: &TargetDescription, message: impl Into<String>) -> CodegenError {
    CodegenError::Internal {
        target: target.display_name(),
        message: message.into(),
    }
}

/// The entry point symbols of the module's kernels.
fn entry_points(ir: &kdsl_ir::Module, options: &Options) -> Vec<String> {
    ir.kernels()
        .map(|k| options.entry_point_name(&k.name))
        .collect()
}

/// Lowers and optimizes `ir` into a module of `context`.
fn optimized_module<'ctx>(
    context: &'ctx Context,
    ir: &kdsl_ir::Module,
    target: &TargetDescription,
    options: &Options,
) -> Result<(Module<'ctx>, TargetMachine), CodegenError> {
    let machine =
        llvm::target_machine(target, options.opt_level).map_err(|e| internal(target, e))?;
    let module = context.create_module("kdsl");
    module.set_triple(&machine.get_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    lower::lower_module(
        context,
        &module,
        ir,
        target,
        &options.entry_point_prefix,
        options.checked,
    )
    .map_err(|e| internal(target, e.0))?;
    module.verify().map_err(|e| {
        internal(
            target,
            format!("LLVM rejected the lowered module: {}", e.to_string_lossy()),
        )
    })?;
    let kernels = entry_points(ir, options);
    target
        .math_library
        .link_into(context, &module, &kernels)
        .map_err(|e| internal(target, e))?;
    let pipeline = format!("default<O{}>", options.opt_level.min(3));
    module
        .run_passes(&pipeline, &machine, PassBuilderOptions::create())
        .map_err(|e| {
            internal(
                target,
                format!("the optimizer failed: {}", e.to_string_lossy()),
            )
        })?;
    Ok((module, machine))
}

pub(crate) fn llvm_ir(
    ir: &kdsl_ir::Module,
    target: &TargetDescription,
    options: &Options,
) -> Result<String, CodegenError> {
    let context = Context::create();
    let (module, _) = optimized_module(&context, ir, target, options)?;
    Ok(module.print_to_string().to_string())
}

pub(crate) fn compile(
    ir: &kdsl_ir::Module,
    target: &TargetDescription,
    options: &Options,
) -> Result<Artifact, CodegenError> {
    let context = Context::create();
    let (module, machine) = optimized_module(&context, ir, target, options)?;
    let llvm_ir = module.print_to_string().to_string();
    let backend = |file_type: FileType| -> Result<Vec<u8>, CodegenError> {
        machine
            .write_to_memory_buffer(&module, file_type)
            .map(|buffer| buffer.as_slice().to_vec())
            .map_err(|e| {
                internal(
                    target,
                    format!("the backend failed: {}", e.to_string_lossy()),
                )
            })
    };
    let (bytes, requirements) = match &target.output {
        OutputFormat::SpirvBinary { llc } => {
            let bitcode = module.write_bitcode_to_memory();
            let binary = spirv::run_backend(llc, bitcode.as_slice())?;
            let summary = spirv::inspect(&binary, &entry_points(ir, options))?;
            let requirements = summary
                .capabilities
                .iter()
                .map(|c| format!("capability {c}"))
                .chain(summary.extensions.iter().map(|e| format!("extension {e}")))
                .collect();
            (binary, requirements)
        }
        OutputFormat::PtxAssembly => {
            let mut text = backend(FileType::Assembly)?;
            // The CUDA driver takes PTX as a C string; no NUL may be inside it.
            text.retain(|&byte| byte != 0);
            (text, vec![format!("processor {}", target.arch)])
        }
        OutputFormat::AmdgpuCodeObject { linker } => {
            let object = backend(FileType::Object)?;
            let code_object = link_code_object(linker, &object)?;
            (code_object, vec![format!("processor {}", target.arch)])
        }
    };
    Ok(Artifact {
        image: Image {
            target: target.kind,
            arch: target.arch.clone(),
            bytes,
        },
        llvm_ir,
        requirements,
    })
}

/// Links an AMDGPU relocatable object into a shared HSA code object with `ld.lld -shared`.
fn link_code_object(linker: &Path, object: &[u8]) -> Result<Vec<u8>, amdgpu::Error> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let unique = format!(
        "kdsl-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let directory = std::env::temp_dir();
    let input = directory.join(format!("{unique}.o"));
    let output = directory.join(format!("{unique}.hsaco"));
    let failed = |message: String| amdgpu::Error::LinkFailed {
        linker: linker.display().to_string(),
        message,
    };
    let result = (|| {
        std::fs::write(&input, object)
            .map_err(|e| failed(format!("cannot write `{}`: {e}", input.display())))?;
        let run = std::process::Command::new(linker)
            .arg("-shared")
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .output()
            .map_err(|e| failed(format!("cannot run it: {e}")))?;
        if !run.status.success() {
            return Err(failed(
                String::from_utf8_lossy(&run.stderr).trim().to_string(),
            ));
        }
        std::fs::read(&output)
            .map_err(|e| failed(format!("cannot read `{}`: {e}", output.display())))
    })();
    let _ = std::fs::remove_file(&input);
    let _ = std::fs::remove_file(&output);
    result
}
