//! Checks a module against the target's feature table before lowering, so that the backend
//! never meets something it would reject or abort on. What each function uses comes from
//! [`kdsl_ir::analysis::features`]; each problem is a diagnostic with the span of its first use
//! in a function, naming the target. The limits (local and private memory, argument bytes,
//! work-group size) are checked here too.

use crate::lower::collectives::SCRATCH_SLOTS;
use crate::target::{
    MatrixGroups, PrintfLowering, TargetDescription, WorkGroupLowering, MAX_BRANCHED_BOOLS,
};
use crate::CodegenError;
use kdsl_ir::analysis::{FirstUse, FunctionFeatures, ModuleFeatures, Use};
use kdsl_ir::*;
use std::collections::HashSet;

/// A feature the target lacks.
const UNSUPPORTED: ErrorCode = ErrorCode::E0601;
const LOCAL_MEMORY_LIMIT: ErrorCode = ErrorCode::E0602;
const PARAMETER_LIMIT: ErrorCode = ErrorCode::E0603;
const PRIVATE_MEMORY_LIMIT: ErrorCode = ErrorCode::E0604;

/// `features`: the module's ([`ModuleFeatures::new`]); `checked`: the module is compiled in
/// checked mode (its kernels take hidden arguments).
pub(crate) fn check(
    module: &Module,
    features: &ModuleFeatures,
    target: &TargetDescription,
    checked: bool,
) -> Result<(), CodegenError> {
    let mut checker = Checker {
        target,
        checked,
        diagnostics: Vec::new(),
        reported: HashSet::new(),
        work_group_collectives: features.uses_work_group_collectives(),
    };
    // A kernel's contiguous copy has its features and limits, so it is checked as the kernel.
    for (function, uses) in module.functions.iter().zip(&features.functions) {
        if function.contiguous_copy_of.is_some() {
            continue;
        }
        checker.reported.clear();
        checker.function(function, uses);
    }
    let private_bytes = private_memory_bytes(module, features);
    for (function, &bytes) in module.functions.iter().zip(&private_bytes) {
        if function.kind == FunctionKind::Kernel && function.contiguous_copy_of.is_none() {
            checker.local_memory(function);
            checker.private_memory(function, bytes);
        }
    }
    if checker.diagnostics.is_empty() {
        Ok(())
    } else {
        Err(CodegenError::Unsupported(checker.diagnostics))
    }
}

struct Checker<'a> {
    target: &'a TargetDescription,
    checked: bool,
    diagnostics: Vec<Diagnostic>,
    /// Features already reported in the current function.
    reported: HashSet<&'static str>,
    /// Whether the module uses work-group collectives, which on some targets take the
    /// compiler's scratch array of local memory.
    work_group_collectives: bool,
}

impl Checker<'_> {
    fn unsupported(&mut self, feature: &'static str, span: Span, hint: &str) {
        if !self.reported.insert(feature) {
            return;
        }
        let target = self.target.display_name();
        self.diagnostics.push(
            Diagnostic::error(
                UNSUPPORTED,
                format!("{feature} is not supported on target `{target}`"),
                span,
                format!("needs {feature}"),
            )
            .with_hint(hint.to_string()),
        );
    }

    /// A use of `builtin` on operands (or a memory element) of type `ty`: the feature the
    /// table of built-ins says it needs must be in the target's feature table.
    fn builtin(&mut self, builtin: Builtin, ty: ScalarType, span: Span) {
        let features = self.target.features;
        let Some(feature) = builtin.row().requires.feature(ty) else {
            return;
        };
        let (available, hint) = match feature {
            Feature::SubGroups => (
                features.sub_groups,
                "use local memory and `barrier()` instead",
            ),
            Feature::Int64Atomics => (features.int64_atomics, "use 32-bit counters"),
            Feature::FloatAtomicAdd => (
                features.float_atomic_add,
                "accumulate in local memory and add integers",
            ),
            Feature::DoubleAtomicAdd => (
                features.double_atomic_add,
                "choose a newer processor (sm_60 or later) or accumulate in `f32`",
            ),
        };
        if !available {
            self.unsupported(feature.describe(), span, hint);
        }
    }

    /// A matrix operation: its shape must be one the target's matrix units do (targets
    /// without units, and checked mode, run every shape through the plain lowering).
    fn matrix(&mut self, shape: MatrixShape, span: Span) {
        // Checked mode runs every shape through the plain lowering.
        if self.checked {
            return;
        }
        if let Some(needed) = self.target.matrix_units.missing(shape) {
            let feature = match shape {
                MatrixShape::F16M16N16K16 => "an m16n16k16 `f16` matrix tile (tensor cores)",
                MatrixShape::Tf32M16N16K8 => "an m16n16k8 tf32 matrix tile (tf32 tensor cores)",
                MatrixShape::I8M16N16K16 => "an m16n16k16 `i8` matrix tile (integer tensor cores)",
                MatrixShape::U8M16N16K16 => "an m16n16k16 `u8` matrix tile (integer tensor cores)",
                MatrixShape::Bf16M16N16K16 => "an m16n16k16 `bf16` matrix tile (bf16 tensor cores)",
            };
            self.unsupported(
                feature,
                span,
                &format!("choose a newer processor ({needed} or later)"),
            );
        }
    }

    fn scalar(&mut self, ty: ScalarType, span: Span) {
        let features = self.target.features;
        if ty == ScalarType::F16 && !features.half {
            self.unsupported(
                "`f16` arithmetic",
                span,
                "choose a newer processor (sm_53 or later) or compute in `f32`",
            );
        }
        if ty == ScalarType::F64 && !features.double {
            self.unsupported("`f64` arithmetic", span, "compute in `f32`");
        }
    }

    /// A `print` of `bools` values of type `bool`, which some targets branch on.
    fn print(&mut self, bools: usize, span: Span) {
        if let PrintfLowering::OpenClPrintf {
            constant_strings_only: true,
            ..
        } = self.target.printf
        {
            if bools > MAX_BRANCHED_BOOLS {
                self.unsupported(
                    "a `print` of more than 4 `bool` values",
                    span,
                    "print them in several calls, or as integers (`b as u32`)",
                );
            }
        }
    }

    /// The declared types first, then the limits on the function itself, then its body (the
    /// order of the diagnostics).
    fn function(&mut self, function: &Function, features: &FunctionFeatures) {
        self.uses(&features.declared);
        if function.kind == FunctionKind::Kernel {
            self.parameter_bytes(function);
        }
        self.work_group_size(function);
        self.matrix_group_size(function, features);
        self.uses(&features.body);
    }

    fn uses(&mut self, uses: &[FirstUse]) {
        for &FirstUse { used, span } in uses {
            match used {
                Use::Scalar(ty) => self.scalar(ty, span),
                Use::Builtin(builtin, ty) => self.builtin(builtin, ty, span),
                Use::Matrix(shape) => self.matrix(shape, span),
                // Every target computes it: through its plain definition where no unit does.
                Use::GroupMatrix => {}
                Use::Print { bools } => self.print(bools, span),
                // Every target copies, asynchronously or through plain loads and stores.
                Use::Barrier | Use::AsyncCopy | Use::TileCopy => {}
            }
        }
    }

    /// A kernel's local memory, the collectives' scratch array included, against the
    /// target's limit.
    fn local_memory(&mut self, function: &Function) {
        if let Some(limit) = self.target.features.max_local_memory_bytes {
            let scratch = match self.target.work_groups {
                WorkGroupLowering::SubGroupsAndLocalMemory if self.work_group_collectives => {
                    u64::from(SCRATCH_SLOTS) * 8
                }
                _ => 0,
            };
            let used = function.local_memory_bytes() + scratch;
            if used > limit {
                self.diagnostics.push(
                        Diagnostic::error(
                            LOCAL_MEMORY_LIMIT,
                            format!(
                                "kernel `{}` declares {used} bytes of local memory, more than the {limit} bytes target `{}` allows",
                                function.name,
                                self.target.display_name()
                            ),
                            function.span,
                            "this kernel",
                        )
                        .with_hint("make the `local` arrays smaller"),
                    );
            }
        }
    }

    /// A kernel's private arrays, those of the functions it calls included, against the
    /// target's limit on a work-item's memory.
    fn private_memory(&mut self, kernel: &Function, used: u64) {
        let Some(limit) = self.target.features.max_private_memory_bytes else {
            return;
        };
        if used <= limit {
            return;
        }
        let largest = kernel
            .variables
            .iter()
            .filter(|v| v.space == AddressSpace::Private)
            .max_by_key(|v| v.ty.size_in_bytes());
        let (span, label) = match largest {
            Some(variable) if variable.ty.size_in_bytes() > 0 => {
                (variable.span, "the largest private array of this kernel")
            }
            _ => (kernel.span, "this kernel"),
        };
        self.diagnostics.push(
            Diagnostic::error(
                PRIVATE_MEMORY_LIMIT,
                format!(
                    "kernel `{}` needs {used} bytes of private memory per work-item, more than \
                     the {limit} bytes target `{}` allows",
                    kernel.name,
                    self.target.display_name()
                ),
                span,
                label,
            )
            .with_hint(
                "make the private arrays smaller, or keep the data in a buffer or a `local` array",
            ),
        );
    }

    /// Argument bytes above what the target passes to a kernel (each parameter at its natural
    /// alignment; checked mode adds an 8-byte length per buffer and the fault record pointer).
    fn parameter_bytes(&mut self, function: &Function) {
        let Some(limit) = self.target.features.max_parameter_bytes else {
            return;
        };
        let mut bytes = 0u64;
        let mut place = |size: u64| bytes = bytes.div_ceil(size) * size + size;
        for parameter in &function.parameters {
            match parameter.ty {
                ParameterType::Scalar { ty } => place(u64::from(ty.size_in_bytes())),
                ParameterType::Buffer { .. } => {
                    place(8);
                    if self.checked {
                        place(8);
                    }
                }
                // Only device functions take arrays.
                ParameterType::Array { .. } => place(8),
            }
        }
        if self.checked {
            place(8);
        }
        if bytes > limit {
            self.diagnostics.push(
                Diagnostic::error(
                    PARAMETER_LIMIT,
                    format!(
                        "kernel `{}` takes {bytes} bytes of arguments{}, more than the {limit} bytes target `{}` passes to a kernel",
                        function.name,
                        if self.checked { " (with checked mode's hidden ones)" } else { "" },
                        self.target.display_name()
                    ),
                    function.span,
                    "this kernel",
                )
                .with_hint("pass fewer parameters: put scalars in a buffer, or merge buffers"),
            );
        }
    }

    /// A required work-group size above what any processor of the target runs.
    /// Matrix units run a matrix group as four whole warps (`wgmma`, or `mma.sync` per warp):
    /// a kernel with matrix-group statements that declares its work-group size declares a
    /// multiple of 128 there (elsewhere their plain definition runs in any work-group).
    fn matrix_group_size(&mut self, function: &Function, features: &FunctionFeatures) {
        let Some(size) = function.work_group_size else {
            return;
        };
        let groups = u64::from(kdsl_ir::matrix_group::GROUP_SIZE);
        let total: u64 = size.iter().map(|&d| u64::from(d)).product();
        let uses_groups = features
            .body
            .iter()
            .any(|first| first.used == Use::GroupMatrix);
        if self.target.matrix_groups != MatrixGroups::Plain
            && uses_groups
            && !total.is_multiple_of(groups)
        {
            let target = self.target.display_name();
            self.diagnostics.push(
                Diagnostic::error(
                    UNSUPPORTED,
                    format!(
                        "kernel `{}` has matrix-group statements in work-groups of {total} work-items, which target `{target}` runs only in work-groups of a multiple of {groups}",
                        function.name
                    ),
                    function.span,
                    "this kernel",
                )
                .with_hint(format!("make `#[work_group_size]` a multiple of {groups} work-items in all")),
            );
        }
    }

    fn work_group_size(&mut self, function: &Function) {
        let (Some(size), Some(limit)) = (
            function.work_group_size,
            self.target.features.max_work_group_size,
        ) else {
            return;
        };
        let total: u64 = size.iter().map(|&d| u64::from(d)).product();
        if total > limit {
            let target = self.target.display_name();
            self.diagnostics.push(
                Diagnostic::error(
                    UNSUPPORTED,
                    format!(
                        "kernel `{}` requires work-groups of {total} work-items, more than the {limit} target `{target}` runs",
                        function.name
                    ),
                    function.span,
                    "this kernel",
                )
                .with_hint(format!("make `#[work_group_size]` at most {limit} work-items in all")),
            );
        }
    }
}

/// Per function: the private memory its variables take while it runs, with that of the
/// deepest chain of calls it makes (calls one after the other reuse the same memory).
fn private_memory_bytes(module: &Module, features: &ModuleFeatures) -> Vec<u64> {
    let mut bytes: Vec<u64> = Vec::with_capacity(module.functions.len());
    for (function, uses) in module.functions.iter().zip(&features.functions) {
        let own: u64 = function
            .variables
            .iter()
            .filter(|v| v.space == AddressSpace::Private)
            .map(|v| v.ty.size_in_bytes())
            .sum();
        // Functions come callees first.
        let deepest = uses
            .calls
            .iter()
            .map(|callee| bytes.get(callee.0 as usize).copied().unwrap_or(0))
            .max()
            .unwrap_or(0);
        bytes.push(own.saturating_add(deepest));
    }
    bytes
}
