//! The code generator's `.krn` file tests: `// test: llvm <targets>` and `// test: llvm-checked
//! <targets>`, the optimized LLVM IR of a kernel file for one processor per target (spirv,
//! ptx = sm_90, amdgpu = gfx90a; amdgpu-gfx942, amdgpu-gfx1100, spirv-intel_gpu_pvc), compared with `expected/` beside each file; `KDSL_BLESS=1`
//! rewrites them (docs/testing.md).

use kdsl_bundle::TargetKind;
use kdsl_codegen::{emit_llvm_ir, Options, TargetSpec};
use kdsl_testkit::files::KERNEL_FOLDERS;
use kdsl_testkit::filetest::{self, Check, FileTest};

fn target_spec(target: &str) -> TargetSpec {
    match target {
        "spirv" => TargetSpec::spirv(),
        "ptx" => TargetSpec::ptx(Some("sm_90")),
        "amdgpu" => TargetSpec::amdgpu(Some("gfx90a")),
        "amdgpu-gfx942" => TargetSpec::amdgpu(Some("gfx942")),
        "amdgpu-gfx1100" => TargetSpec::amdgpu(Some("gfx1100")),
        "spirv-intel_gpu_pvc" => TargetSpec::new(TargetKind::Spirv, Some("intel_gpu_pvc".into())),
        other => unreachable!("the header parser knows no target {other}"),
    }
}

fn llvm_ir(test: &FileTest, check: &Check, options: &Options) -> Result<String, String> {
    let module = kdsl_frontend::compile_to_ir(&test.source)
        .map_err(|d| kdsl_frontend::render_diagnostics(&test.name, &test.source, &d, false))?;
    let spec = target_spec(check.target.expect("a per-target check"));
    emit_llvm_ir(&module, &spec, options).map_err(|e| format!("{spec}: {e}"))
}

fn llvm(test: &FileTest, check: &Check) -> Result<String, String> {
    llvm_ir(test, check, &Options::default())
}

fn llvm_checked(test: &FileTest, check: &Check) -> Result<String, String> {
    let options = Options {
        checked: true,
        ..Options::default()
    };
    llvm_ir(test, check, &options)
}

#[test]
fn krn_file_tests() {
    filetest::run(
        &KERNEL_FOLDERS,
        &[("llvm", llvm), ("llvm-checked", llvm_checked)],
    );
}
