//! One compile session: [`Compiler::check`] parses and checks a source once, and the checked
//! module then goes to as many targets, bundles and SYCLBIN files as the caller wants, with
//! where the time went. The CLI (and so the compile server) and Python's `kdsl._compiler` use
//! it; the source-taking functions of the crate root are shorthands for it.

use crate::{CompileError, CompileOptions, CompileReport, TargetSelection};
use kdsl_bundle::syclbin::{self, Syclbin};
use kdsl_bundle::Bundle;
use kdsl_codegen::{Artifact, TargetSpec};
use kdsl_frontend::FrontEndTimings;
use kdsl_ir::{Diagnostic, ErrorCode, Module};
use std::time::Instant;

/// Compiles with one set of options (optimization level, `-D` constants, checked mode).
#[derive(Clone, Debug, Default)]
pub struct Compiler {
    options: CompileOptions,
}

/// A source that passed the front end: its IR, its warnings and how long checking took.
#[derive(Clone, Debug)]
pub struct Checked {
    source_name: String,
    /// Kept to give check sites their line and column in the bundle's metadata.
    source: String,
    pub module: Module,
    /// Warnings (such as an `unroll` that cannot be honoured); errors are `check`'s `Err`.
    pub warnings: Vec<Diagnostic>,
    pub front_end: FrontEndTimings,
    started: Instant,
}

impl Compiler {
    pub fn new(options: CompileOptions) -> Self {
        Compiler { options }
    }

    pub fn options(&self) -> &CompileOptions {
        &self.options
    }

    /// Parses and type-checks `source` (named `source_name` in the bundle and in messages).
    pub fn check(&self, source_name: &str, source: &str) -> Result<Checked, CompileError> {
        let started = Instant::now();
        let (module, report) =
            kdsl_frontend::compile_to_ir_reporting(source, &self.options.defines);
        Ok(Checked {
            source_name: source_name.to_string(),
            source: source.to_string(),
            module: module?,
            warnings: report.warnings,
            front_end: report.timings,
            started,
        })
    }

    /// `targets` (the defaults, as a caller took them) with the targets where the module's
    /// matrix statements reach matrix units added when missing
    /// ([`kdsl_codegen::matrix_unit_targets`]: `ptx:sm_90a` for matrix groups).
    pub fn with_matrix_unit_targets(
        &self,
        checked: &Checked,
        mut targets: Vec<TargetSpec>,
    ) -> Vec<TargetSpec> {
        for extra in kdsl_codegen::matrix_unit_targets(&checked.module) {
            let same_kind = |t: &TargetSpec| t.kind == extra.kind;
            if !targets
                .iter()
                .any(|t| same_kind(t) && t.resolved_arch() == extra.resolved_arch())
            {
                // Beside the images of its kind, as `kdsl inspect` lists them.
                let at = targets
                    .iter()
                    .rposition(same_kind)
                    .map_or(targets.len(), |i| i + 1);
                targets.insert(at, extra);
            }
        }
        targets
    }

    /// Sorts `targets` into those the module fits and those it does not with the reasons
    /// (local memory, a missing feature, too many parameter bytes), without generating code.
    pub fn supported_targets(&self, checked: &Checked, targets: &[TargetSpec]) -> TargetSelection {
        let codegen = self.codegen_options();
        let mut selection = TargetSelection::default();
        for target in targets {
            match kdsl_codegen::check_support(&checked.module, target, &codegen) {
                Ok(()) => selection.supported.push(target.clone()),
                Err(error) => selection.unsupported.push((target.clone(), error.into())),
            }
        }
        selection
    }

    /// One target's image and its optimized LLVM IR.
    pub fn compile_for_target(
        &self,
        checked: &Checked,
        target: &TargetSpec,
    ) -> Result<Artifact, CompileError> {
        Ok(kdsl_codegen::compile(
            &checked.module,
            target,
            &self.codegen_options(),
        )?)
    }

    /// One target's optimized LLVM IR, as its back end would receive it (without running the
    /// back end, so it is there to read when the back end fails).
    pub fn llvm_ir(&self, checked: &Checked, target: &TargetSpec) -> Result<String, CompileError> {
        Ok(kdsl_codegen::emit_llvm_ir(
            &checked.module,
            target,
            &self.codegen_options(),
        )?)
    }

    /// A bundle with an image per target and the kernels' metadata. Every target is tried
    /// (concurrently), so the diagnostics of all of them are reported together.
    pub fn compile(
        &self,
        checked: &Checked,
        targets: &[TargetSpec],
    ) -> Result<(Bundle, CompileReport), CompileError> {
        self.bundle(checked, targets, self.codegen_options())
    }

    /// A SYCLBIN file (see [`crate::compile_syclbin`] and docs/syclbin.md): entry points named
    /// `__sycl_kernel_<name>`, state executable.
    pub fn syclbin(
        &self,
        checked: &Checked,
        targets: &[TargetSpec],
    ) -> Result<(Syclbin, CompileReport), CompileError> {
        let defaults = self.codegen_options();
        let codegen = kdsl_codegen::Options {
            entry_point_prefix: syclbin::KERNEL_NAME_PREFIX.to_string(),
            // SYCL programs launch these images and make no tensor maps.
            nvptx: kdsl_codegen::nvptx::Options {
                plain_tile_copies: true,
                ..defaults.nvptx.clone()
            },
            ..defaults
        };
        let (bundle, report) = self.bundle(checked, targets, codegen)?;
        let syclbin =
            Syclbin::from_bundle(&bundle, syclbin::State::Executable).map_err(|error| {
                CompileError::from(vec![Diagnostic::internal(
                    ErrorCode::E0902,
                    format!("internal compiler error: {error}"),
                    kdsl_ir::Span::default(),
                    "while writing the SYCLBIN file",
                )])
            })?;
        Ok((syclbin, report))
    }

    fn bundle(
        &self,
        checked: &Checked,
        targets: &[TargetSpec],
        codegen: kdsl_codegen::Options,
    ) -> Result<(Bundle, CompileReport), CompileError> {
        let (mut bundle, targets) = kdsl_codegen::compile_bundle_timed(
            &checked.source_name,
            &checked.module,
            targets,
            &codegen,
        )?;
        bundle.locate_check_sites(&checked.source);
        let report = CompileReport {
            warnings: checked.warnings.clone(),
            front_end: checked.front_end,
            targets,
            total: checked.started.elapsed(),
        };
        Ok((bundle, report))
    }

    fn codegen_options(&self) -> kdsl_codegen::Options {
        kdsl_codegen::Options {
            checked: self.options.checked,
            ..kdsl_codegen::Options::with_opt_level(self.options.opt_level)
        }
    }
}
