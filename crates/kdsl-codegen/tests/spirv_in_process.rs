//! Every SPIR-V module of a process goes through LLVM's SPIR-V backend in process, on fresh
//! backend state (LLVM 22 keeps state between modules in a static; see
//! `target/spirv/backend_state.rs`). This file owns its process: module after module, and
//! from several threads at once, the in-process backend must give the SPIR-V an `llc` child
//! process gives (which starts fresh by construction), and that SPIR-V must be valid, also
//! between in-process lld links.

use kdsl_codegen::target::spirv;
use kdsl_codegen::{compile, Artifact, Options, TargetSpec};
use std::path::PathBuf;

fn spirv_val() -> PathBuf {
    kdsl_testkit::tools::tool(&["spirv-val"])
}

fn validate(name: &str, binary: &[u8]) {
    let path = std::env::temp_dir().join(format!(
        "kdsl-spirv-in-process-{}-{}.spv",
        std::process::id(),
        name.replace('/', "_")
    ));
    std::fs::write(&path, binary).expect("writable temporary directory");
    let output = std::process::Command::new(spirv_val())
        .arg(&path)
        .output()
        .expect("spirv-val runs");
    let _ = std::fs::remove_file(&path);
    assert!(
        output.status.success(),
        "{name}: spirv-val rejects the module:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every kernel file of the examples and of the kernel tests, by name.
fn kernel_files() -> Vec<(String, kdsl_ir::Module)> {
    let root = kdsl_testkit::files::workspace_root();
    kdsl_testkit::files::kernel_files()
        .into_iter()
        .map(|path| {
            let (_, source) = kdsl_testkit::files::read_kernel(&path);
            let name = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .display()
                .to_string();
            let module =
                kdsl_frontend::compile_to_ir(&source).unwrap_or_else(|_| panic!("{name} compiles"));
            (name, module)
        })
        .collect()
}

fn spirv_with(module: &kdsl_ir::Module, backend: spirv::Backend) -> Artifact {
    let mut options = Options::default();
    options.spirv.backend = backend;
    compile(module, &TargetSpec::spirv(), &options).expect("SPIR-V")
}

#[test]
fn every_module_of_a_process_gets_the_spirv_llc_gives() {
    let files = kernel_files();
    assert!(files.len() >= 20, "{} kernel files", files.len());
    let expected: Vec<Vec<u8>> = files
        .iter()
        .map(|(_, module)| {
            let from_llc = spirv_with(module, spirv::Backend::Llc);
            assert!(from_llc.timings.backend_runs.contains("child process"));
            from_llc.image.bytes
        })
        .collect();
    // Twice over, so that every module also follows every other one; the second time after an
    // AMDGPU compilation each, whose in-process lld link resets LLVM's command-line options
    // (the backend's extensions among them).
    for round in 0..2 {
        for ((name, module), expected) in files.iter().zip(&expected) {
            if round == 1 {
                compile(module, &TargetSpec::amdgpu(None), &Options::default()).expect("AMDGPU");
            }
            let in_process = spirv_with(module, spirv::Backend::InProcessWhereSafe);
            assert_eq!(in_process.timings.backend_runs, "in process", "{name}");
            assert!(
                &in_process.image.bytes == expected,
                "{name}, round {round}: the in-process backend and llc disagree"
            );
            if round == 0 {
                validate(name, expected);
            }
        }
    }
    // Four threads at once take turns in the backend.
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let (files, expected) = (&files, &expected);
            scope.spawn(move || {
                for index in (thread..files.len()).step_by(2) {
                    let (name, module) = &files[index];
                    let bytes = spirv_with(module, spirv::Backend::InProcessWhereSafe)
                        .image
                        .bytes;
                    assert!(
                        bytes == expected[index],
                        "{name}, thread {thread}: differs from llc"
                    );
                }
            });
        }
    });
}
