//! The pipeline for one target: lower, verify, link the math library, optimize, run the
//! backend, and turn its output into an image.

use crate::linker::Linker;
use crate::target::{spirv, OutputFormat, TargetDescription};
use crate::timings::{Stopwatch, TargetTimings};
use crate::{contain, llvm, lower, Artifact, CodegenError, Options};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::FileType;
use kdsl_bundle::Image;

fn internal(target: &TargetDescription, message: impl Into<String>) -> CodegenError {
    CodegenError::Internal {
        target: target.display_name(),
        message: message.into(),
    }
}

/// The entry point symbols of the module's kernels and their contiguous copies.
fn entry_points(ir: &kdsl_ir::Module, options: &Options) -> Vec<String> {
    ir.entry_points()
        .map(|k| options.entry_point_name(&k.name))
        .collect()
}

/// Lowers and optimizes `ir` into a module of `context`, recording the phases' times.
fn optimized_module<'ctx>(
    context: &'ctx Context,
    ir: &kdsl_ir::Module,
    info: &kdsl_ir::ModuleInfo,
    target: &TargetDescription,
    options: &Options,
    timings: &mut TargetTimings,
) -> Result<(Module<'ctx>, llvm::MachineLease), CodegenError> {
    let mut stopwatch = Stopwatch::start();
    let machine =
        llvm::target_machine(target, options.opt_level).map_err(|e| internal(target, e))?;
    timings.target_machine += stopwatch.lap();
    let module = context.create_module("kdsl");
    module.set_triple(&machine.get_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    lower::lower_module(
        context,
        &module,
        ir,
        target,
        &options.entry_point_prefix,
        info,
    )
    .map_err(|e| internal(target, e.0))?;
    module.verify().map_err(|e| {
        internal(
            target,
            format!("LLVM rejected the lowered module: {}", e.to_string_lossy()),
        )
    })?;
    timings.lowering += stopwatch.lap();
    let kernels = entry_points(ir, options);
    target
        .math_library
        .link_into(context, &module, &kernels)
        .map_err(|e| internal(target, e))?;
    timings.library += stopwatch.lap();
    let pipeline =
        llvm::optimization_pipeline(options.opt_level.max(target.legalization.minimum_opt_level));
    contain::run_passes(&module, &pipeline, &machine, PassBuilderOptions::create())
        .map_err(|failure| internal(target, failure.describe("the optimizer")))?;
    crate::legalize::after_optimization(context, &module, target)
        .map_err(|e| internal(target, e))?;
    timings.optimization += stopwatch.lap();
    Ok((module, machine))
}

pub(crate) fn llvm_ir(
    ir: &kdsl_ir::Module,
    info: &kdsl_ir::ModuleInfo,
    target: &TargetDescription,
    options: &Options,
) -> Result<String, CodegenError> {
    let context = Context::create();
    let (module, _) = optimized_module(
        &context,
        ir,
        info,
        target,
        options,
        &mut TargetTimings::default(),
    )?;
    Ok(module.print_to_string().to_string())
}

/// Whether [`compile`] prints the optimized module into [`Artifact::llvm_ir`] (milliseconds for
/// a large module; bundles do not keep it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LlvmIrText {
    Kept,
    Dropped,
}

/// The tensor maps each entry point of `ir` takes on `target` (`lower::tile_copy`).
fn entry_tensor_maps(
    ir: &kdsl_ir::Module,
    target: &TargetDescription,
) -> Vec<kdsl_bundle::EntryTensorMaps> {
    ir.functions
        .iter()
        .filter_map(|function| {
            let maps = crate::lower::tile_copy::hidden_tensor_maps(target, ir, function);
            (!maps.is_empty()).then(|| kdsl_bundle::EntryTensorMaps {
                entry: function.name.clone(),
                maps: maps
                    .iter()
                    .map(|map| kdsl_bundle::TensorMapInfo {
                        buffer: map.buffer.0 as usize,
                        element: map.element,
                        rows: map.rows,
                        columns: kdsl_ir::tile_copy::columns(map.element).unwrap_or(1),
                        stored: map.stored,
                    })
                    .collect(),
            })
        })
        .collect()
}

pub(crate) fn compile(
    ir: &kdsl_ir::Module,
    info: &kdsl_ir::ModuleInfo,
    target: &TargetDescription,
    options: &Options,
    llvm_ir_text: LlvmIrText,
) -> Result<Artifact, CodegenError> {
    let mut timings = TargetTimings {
        target: target.display_name(),
        backend_runs: "in process".to_string(),
        ..TargetTimings::default()
    };
    // A child-process linker starts now, so that its start-up overlaps code generation.
    let linker = match &target.output {
        OutputFormat::AmdgpuCodeObject { linker } => Some(Linker::prepare(linker)?),
        _ => None,
    };
    let context = Context::create();
    if let OutputFormat::SpirvBinary { .. } = target.output {
        spirv::backend_state::register_sync_scopes(&context);
    }
    let (module, machine) = optimized_module(&context, ir, info, target, options, &mut timings)?;
    let mut stopwatch = Stopwatch::start();
    let llvm_ir = match llvm_ir_text {
        LlvmIrText::Kept => module.print_to_string().to_string(),
        LlvmIrText::Dropped => String::new(),
    };
    timings.other += stopwatch.lap();
    let backend = |file_type: FileType| -> Result<Vec<u8>, CodegenError> {
        contain::emit(&machine, &module, file_type)
            .map_err(|failure| internal(target, failure.describe("the backend")))
    };
    let (bytes, requirements) = match &target.output {
        OutputFormat::SpirvBinary {
            llc,
            backend,
            validator,
        } => {
            let fresh = match backend {
                spirv::Backend::InProcessWhereSafe => spirv::backend_state::claim_fresh(),
                spirv::Backend::Llc => None,
            };
            let binary = if let Some(fresh) = fresh {
                spirv::run_backend_in_process(target, &module, fresh)
                    .map_err(|e| internal(target, e))?
            } else {
                let llc = llc.as_deref().ok_or(spirv::Error::LlcNotFound)?;
                timings.backend_runs = format!("{} child process", llc.display());
                let bitcode = module.write_bitcode_to_memory();
                spirv::run_backend(llc, bitcode.as_slice())?
            };
            timings.backend += stopwatch.lap();
            let kernels = entry_points(ir, options);
            if let Err(message) = spirv::validate_with(validator, &binary) {
                return Err(internal(
                    target,
                    format!(
                        "the SPIR-V backend emitted a module that SPIRV-Tools rejects (kernel{} {}): {message}",
                        if kernels.len() == 1 { "" } else { "s" },
                        kernels
                            .iter()
                            .map(|kernel| format!("`{kernel}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            timings.other += stopwatch.lap();
            let summary = spirv::inspect(&binary, &kernels)?;
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
            timings.backend += stopwatch.lap();
            // The CUDA driver takes PTX as a C string; no NUL may be inside it.
            text.retain(|&byte| byte != 0);
            (text, vec![format!("processor {}", target.arch)])
        }
        OutputFormat::AmdgpuCodeObject { .. } => {
            let object = backend(FileType::Object)?;
            timings.backend += stopwatch.lap();
            let linker = linker.ok_or_else(|| internal(target, "the linker was not started"))?;
            let code_object = linker.link(&object)?;
            timings.linking += stopwatch.lap();
            (code_object, vec![format!("processor {}", target.arch)])
        }
    };
    Ok(Artifact {
        image: Image {
            target: target.kind,
            arch: target.arch.clone(),
            bytes,
            // Checked mode takes the plain lowering everywhere (`lower_module`).
            matrix_units: !options.checked && target.uses_matrix_units(&info.features),
            matrix_groups: !options.checked && target.runs_matrix_groups_on_units(&info.features),
            tile_sub_group_size: if options.checked {
                None
            } else {
                target.tile_sub_group_size(&info.features)
            },
            tensor_maps: if options.checked {
                Vec::new()
            } else {
                entry_tensor_maps(ir, target)
            },
        },
        llvm_ir,
        requirements,
        timings: {
            timings.other += stopwatch.lap();
            timings
        },
    })
}
