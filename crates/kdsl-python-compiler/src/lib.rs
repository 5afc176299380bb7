//! `kdsl._compiler`: the Python binding of the kdsl compiler. It links LLVM, so the package
//! imports it only when `kdsl.compile` has to compile (a cache miss); everything else lives in
//! `kdsl._runtime`, which does not.

mod glibc_compat;

use kdsl::{CompileOptions, TargetKind, TargetSpec};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// The 1-based line and column of a byte offset.
fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = &source.as_bytes()[..offset];
    let line = before.iter().filter(|&&byte| byte == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&byte| byte == b'\n')
        .map_or(0, |p| p + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, column)
}

fn parse_target(name: &str) -> PyResult<TargetSpec> {
    // Processor names reach LLVM as C strings.
    if name.contains('\0') {
        return Err(PyValueError::new_err(format!(
            "target `{}` contains a NUL byte",
            name.escape_debug()
        )));
    }
    let (kind, arch) = match name.split_once(':') {
        Some((kind, arch)) => (kind, Some(arch.to_string())),
        None => (name, None),
    };
    let kind = TargetKind::from_name(kind).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown target `{name}`: the targets are spirv[:intel_gpu_pvc], ptx[:sm_XX] and amdgpu[:gfxNNN]"
        ))
    })?;
    Ok(TargetSpec::new(kind, arch))
}

/// `(bundle bytes, None, [], skipped)` or `(None, rendered report, diagnostics, skipped)`.
type CompileResult<'py> = (
    Option<Bound<'py, PyBytes>>,
    Option<String>,
    Vec<Bound<'py, PyDict>>,
    Vec<String>,
);

/// Compiles `source` for `targets` (`"spirv"`, `"ptx:sm_90"`, `"amdgpu:gfx90a"`), with module
/// constants set by `defines` (`[("TILE", "16")]`), in checked mode when `checked` (bounds and
/// division checks reported as a fault at the launch's wait).
///
/// Returns `(bundle_bytes, None, [], skipped)` on success, or `(None, report, diagnostics,
/// skipped)` where the report is rendered with `file:line:col` and each diagnostic is a dict
/// (code, message, line, column, hints). With `skip_unfit` (the caller's targets are the
/// defaults), the targets where matrix units need their own image are added
/// (`Compiler::with_matrix_unit_targets`), and a target the kernels do not fit (a GPU's local-memory limit, a missing feature)
/// is left out unless none would remain, and `skipped` says which and why.
#[pyfunction]
#[pyo3(signature = (source_name, source, targets, opt_level=3, defines=Vec::new(), checked=false, skip_unfit=false))]
#[allow(clippy::too_many_arguments)]
fn compile<'py>(
    py: Python<'py>,
    source_name: &str,
    source: &str,
    targets: Vec<String>,
    opt_level: u8,
    defines: Vec<(String, String)>,
    checked: bool,
    skip_unfit: bool,
) -> PyResult<CompileResult<'py>> {
    let mut specs = targets
        .iter()
        .map(|target| parse_target(target))
        .collect::<PyResult<Vec<_>>>()?;
    // Each define replaces the declared value of a module constant, as `kdsl compile -D
    // NAME=VALUE` does; the value is a literal of the constant's type, written as in source.
    let options = defines.into_iter().fold(
        CompileOptions {
            opt_level,
            checked,
            ..CompileOptions::default()
        },
        |options, (name, value)| options.define(name, value),
    );
    // One session: the source is checked once, for choosing targets and for compiling.
    let compiler = kdsl::Compiler::new(options);
    let (result, skipped) = py.detach(|| {
        let checked = match compiler.check(source_name, source) {
            Ok(checked) => checked,
            Err(error) => return (Err(error), Vec::new()),
        };
        let mut skipped = Vec::new();
        if skip_unfit {
            specs = compiler.with_matrix_unit_targets(&checked, specs);
            let selection = compiler.supported_targets(&checked, &specs);
            if !selection.supported.is_empty() {
                for (spec, error) in &selection.unsupported {
                    let reason = error.diagnostics.first().map_or_else(
                        || error.to_string(),
                        |d| format!("{}: {}", d.code, d.message),
                    );
                    skipped.push(format!(
                        "skipping default target {}: {reason}; pass targets= to choose",
                        target_name(spec)
                    ));
                }
                specs = selection.supported;
            }
        }
        let bundle = compiler.compile(&checked, &specs).map(|(bundle, _)| bundle);
        (bundle, skipped)
    });
    match result {
        Ok(bundle) => Ok((
            Some(PyBytes::new(py, &bundle.to_bytes())),
            None,
            Vec::new(),
            skipped,
        )),
        Err(error) => {
            let report = error.render(source_name, source, false);
            let mut diagnostics = Vec::with_capacity(error.diagnostics.len());
            for diagnostic in &error.diagnostics {
                let dict = PyDict::new(py);
                dict.set_item("code", diagnostic.code.as_str())?;
                dict.set_item("message", &diagnostic.message)?;
                let (line, column) = diagnostic
                    .labels
                    .first()
                    .map(|label| line_column(source, label.span.start as usize))
                    .unwrap_or((0, 0));
                dict.set_item("line", line)?;
                dict.set_item("column", column)?;
                dict.set_item("hints", diagnostic.hints.clone())?;
                diagnostics.push(dict);
            }
            Ok((None, Some(report), diagnostics, skipped))
        }
    }
}

/// `spirv`, `ptx:sm_90`: a target as `targets=` names it.
fn target_name(spec: &TargetSpec) -> String {
    match &spec.arch {
        Some(arch) => format!("{}:{arch}", spec.kind),
        None => spec.kind.to_string(),
    }
}

/// The targets a bundle gets unless told otherwise, as `kdsl::default_targets` gives them.
#[pyfunction]
fn default_targets() -> Vec<String> {
    kdsl::default_targets().iter().map(target_name).collect()
}

#[pymodule]
fn _compiler(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(compile, module)?)?;
    module.add_function(wrap_pyfunction!(default_targets, module)?)?;
    Ok(())
}
