//! What the code generator's test modules share: the validators images are checked with, and
//! the kernel files parsed and compiled once for the whole binary.

use kdsl_codegen::{compile, Artifact, Options, TargetSpec};
pub use kdsl_testkit::tools::{ptxas, tool};
use std::collections::HashMap;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// Runs a validator on `bytes` written to a scratch file; panics with its output on failure.
pub fn validate(name: &str, extension: &str, bytes: &[u8], command: &mut Command) -> String {
    let file = std::env::temp_dir().join(format!(
        "kdsl-codegen-test-{}-{name}.{extension}",
        std::process::id()
    ));
    std::fs::write(&file, bytes).unwrap();
    let output = command.arg(&file).output().expect("validator runs");
    let _ = std::fs::remove_file(&file);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} on {name}: {text}");
    text
}

/// Every example and test kernel file as (stem, module), parsed once for the whole binary.
pub fn kernel_modules() -> &'static [(String, kdsl_ir::Module)] {
    static MODULES: OnceLock<Vec<(String, kdsl_ir::Module)>> = OnceLock::new();
    MODULES.get_or_init(|| {
        let modules: Vec<(String, kdsl_ir::Module)> = kdsl_testkit::files::kernel_sources()
            .into_iter()
            .map(|(stem, source)| {
                let module = kdsl_frontend::compile_to_ir(&source).unwrap_or_else(|d| {
                    panic!(
                        "{stem}.krn does not compile:\n{}",
                        kdsl_frontend::render_diagnostics(&stem, &source, &d, false)
                    )
                });
                (stem, module)
            })
            .collect();
        assert!(
            modules.len() >= 14,
            "expected the kernels, found {}",
            modules.len()
        );
        modules
    })
}

type ArtifactKey = (String, String, bool);
type Artifacts = Mutex<HashMap<ArtifactKey, Result<Arc<Artifact>, String>>>;

/// A kernel file (from [`kernel_modules`]) compiled for `spec`, plain or checked, once per
/// binary: the validation, image-check and checked-mode modules look at the same images, and
/// compiling each only once is most of this binary's time saved. Tests of the compiler's own
/// determinism compile afresh instead.
pub fn artifact(
    stem: &str,
    module: &kdsl_ir::Module,
    spec: &TargetSpec,
    checked: bool,
) -> Result<Arc<Artifact>, String> {
    static ARTIFACTS: OnceLock<Artifacts> = OnceLock::new();
    let artifacts = ARTIFACTS.get_or_init(Default::default);
    let key = (stem.to_string(), spec.to_string(), checked);
    if let Some(found) = artifacts.lock().unwrap().get(&key) {
        return found.clone();
    }
    let options = Options {
        checked,
        ..Options::default()
    };
    let compiled = compile(module, spec, &options)
        .map(Arc::new)
        .map_err(|e| e.to_string());
    artifacts.lock().unwrap().insert(key, compiled.clone());
    compiled
}

/// The text of `define ... @name(` up to its closing brace in LLVM IR.
pub fn llvm_function<'a>(ir: &'a str, name: &str) -> &'a str {
    let marker = format!("@{name}(");
    let start = ir
        .match_indices("define ")
        .map(|(index, _)| index)
        .find(|&index| ir[index..].lines().next().unwrap_or("").contains(&marker))
        .unwrap_or_else(|| panic!("no function {name} in\n{ir}"));
    let end = ir[start..].find("\n}").map_or(ir.len(), |end| start + end);
    &ir[start..end]
}
