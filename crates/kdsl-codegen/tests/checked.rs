//! Checked mode (`Options::checked`): every example and test kernel compiled checked for every
//! target (the generated GEMMs for fewer processors: `common::checked_targets`) and validated
//! (`spirv-val`, `ptxas`, `llvm-readobj`), the hidden parameters in each
//! image and the check sites in the bundle metadata. The optimized LLVM IR of
//! `tests/kernels/checked.krn`, checked and unchecked, is a file test (`// test: llvm-checked`).

use crate::common::{artifact, checked_targets, kernel_modules, ptxas, tool, validate};
use kdsl_bundle::TargetKind;
use kdsl_codegen::{compile, emit_llvm_ir, kernel_infos, Options, TargetSpec};
use std::process::Command;

fn checked() -> Options {
    Options {
        checked: true,
        ..Options::default()
    }
}

fn module_of(name: &str, source: &str) -> kdsl_ir::Module {
    kdsl_frontend::compile_to_ir(source)
        .unwrap_or_else(|d| panic!("{name}.krn does not compile: {d:?}"))
}

fn checked_source() -> String {
    std::fs::read_to_string(kdsl_testkit::files::workspace_root().join("tests/kernels/checked.krn"))
        .unwrap()
}

/// A kernel file compiled checked for `spec`, once for the binary (`common::artifact`).
fn compiled_checked(
    name: &str,
    module: &kdsl_ir::Module,
    spec: &TargetSpec,
) -> std::sync::Arc<kdsl_codegen::Artifact> {
    artifact(name, module, spec, true)
        .unwrap_or_else(|e| panic!("{name}.krn checked for {spec}: {e}"))
}

/// The processors of one kind a kernel file is compiled checked for (`common::checked_targets`).
fn checked_targets_of(name: &str, kind: TargetKind) -> Vec<TargetSpec> {
    checked_targets(name)
        .into_iter()
        .filter(|spec| spec.kind == kind)
        .collect()
}

#[test]
fn every_kernel_compiled_checked_is_valid_spirv() {
    let spirv_val = tool(&["spirv-val"]);
    for (name, module) in kernel_modules() {
        for spec in checked_targets_of(name, TargetKind::Spirv) {
            let spirv = compiled_checked(name, module, &spec);
            validate(
                name,
                "spv",
                &spirv.image.bytes,
                &mut Command::new(&spirv_val),
            );
        }
    }
}

#[test]
fn every_kernel_compiled_checked_assembles_with_ptxas() {
    let ptxas = ptxas();
    for (name, module) in kernel_modules() {
        let targets = checked_targets_of(name, TargetKind::Ptx);
        assert!(!targets.is_empty(), "{name}: no PTX processor");
        for spec in targets {
            let ptx = compiled_checked(name, module, &spec);
            validate(
                name,
                "ptx",
                &ptx.image.bytes,
                Command::new(&ptxas)
                    .arg(format!("-arch={}", spec.resolved_arch()))
                    .args(["-o", "/dev/null"]),
            );
        }
    }
}

#[test]
fn every_kernel_compiled_checked_links_for_amdgpu() {
    let readobj = tool(&["llvm-readobj-22", "llvm-readobj"]);
    for (name, module) in kernel_modules() {
        for spec in checked_targets_of(name, TargetKind::Amdgpu) {
            let arch = spec.resolved_arch();
            let object = compiled_checked(name, module, &spec);
            let notes = validate(
                name,
                "hsaco",
                &object.image.bytes,
                Command::new(&readobj).arg("--notes"),
            );
            // Every kernel takes the fault record as its last argument.
            for kernel in module.kernels() {
                assert!(
                    notes.contains(&format!(".name:           {}\n", kernel.name)),
                    "{name} {arch}: kernel {} missing",
                    kernel.name
                );
            }
            assert!(notes.contains("fault_record"), "{name} {arch}: {notes}");
        }
    }
}

#[test]
fn checked_kernels_take_the_hidden_parameters() {
    let module = module_of("checked", &checked_source());
    let ptx = compile(&module, &TargetSpec::ptx(Some("sm_90")), &checked()).unwrap();
    let text = String::from_utf8(ptx.image.bytes).unwrap();
    // write_past(output, offset) takes output's length and the fault record after its own.
    let entry = text
        .split(".entry write_past(")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect("write_past entry");
    assert_eq!(entry.matches(".param").count(), 4, "{entry}");
    assert!(entry.contains(".param .u64 write_past_param_2"), "{entry}");
    // Unchecked, nothing of checked mode is left.
    let plain = emit_llvm_ir(&module, &TargetSpec::spirv(), &Options::default()).unwrap();
    assert!(!plain.contains("fault_record") && !plain.contains("kdsl.checked"));
    let ir = emit_llvm_ir(&module, &TargetSpec::spirv(), &checked()).unwrap();
    assert!(ir.contains("%fault_record") && ir.contains("@kdsl.checked.report"));
}

#[test]
fn check_sites_name_buffers_arrays_and_divisions() {
    let source = checked_source();
    let module = module_of("checked", &source);
    assert!(kernel_infos(&module, false)
        .iter()
        .all(|k| !k.checked && k.check_sites.is_empty()));
    let infos = kernel_infos(&module, true);
    let sites = |kernel: &str| -> Vec<(String, String, String)> {
        let info = infos.iter().find(|k| k.name == kernel).unwrap();
        assert!(info.checked);
        info.check_sites
            .iter()
            .map(|site| {
                let text = &source[site.span[0] as usize..site.span[1] as usize];
                (site.function.clone(), site.what.clone(), text.to_string())
            })
            .collect()
    };
    let own = |what: &str, text: &str, function: &str| {
        (function.to_string(), what.to_string(), text.to_string())
    };
    assert_eq!(
        sites("write_past"),
        [
            own("`+` on `u32`", "i + 1", "write_past"),
            own("`+` on `u32`", "i + offset", "write_past"),
            own(
                "buffer `output`",
                "output[i + offset] = i + 1;",
                "write_past"
            ),
        ]
    );
    // gather's list includes the load in the device function it calls.
    assert_eq!(
        sites("gather"),
        [
            own("buffer `values`", "values[index]", "scaled"),
            own("`+` on `u32`", "i + offset", "gather"),
            own(
                "buffer `output`",
                "output[i] = scaled(input, i + offset, 2.0);",
                "gather"
            ),
        ]
    );
    assert_eq!(
        sites("divide"),
        [
            own("buffer `numerators`", "numerators[i]", "divide"),
            own("division", "numerators[i] / divisor", "divide"),
            own(
                "buffer `output`",
                "output[i] = numerators[i] / divisor;",
                "divide"
            ),
        ]
    );
    let window = sites("window");
    assert!(window.contains(&own(
        "array `history` (dimension 2 of 2)",
        "history[0][(i as i32) - reach]",
        "window"
    )));
    // Site ids are unique within the module (`scaled` is called by `gather` only).
    let mut ids: Vec<u32> = infos
        .iter()
        .flat_map(|k| k.check_sites.iter().map(|s| s.id))
        .collect();
    ids.sort();
    let before = ids.len();
    ids.dedup();
    assert_eq!(before, ids.len(), "{ids:?}");
}
