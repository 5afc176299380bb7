//! The code generator's integration tests, one module per file, in one test binary: each
//! binary links LLVM statically, so one binary instead of many saves most of their build time.
//! `cargo test -p kdsl-codegen --test codegen targets::` runs one file's tests.

/// The validators (`spirv-val`, `ptxas`, `llvm-readobj`) the modules check images with.
#[path = "common/mod.rs"]
mod common;

#[path = "async_copy.rs"]
mod async_copy;
#[path = "checked.rs"]
mod checked;
#[path = "conversions.rs"]
mod conversions;
#[path = "filetests.rs"]
mod filetests;
#[path = "image_checks.rs"]
mod image_checks;
#[path = "inlining.rs"]
mod inlining;
#[path = "limits.rs"]
mod limits;
#[path = "matrix_amdgpu.rs"]
mod matrix_amdgpu;
#[path = "matrix_registers.rs"]
mod matrix_registers;
#[path = "matrix_spirv.rs"]
mod matrix_spirv;
#[path = "mutations.rs"]
mod mutations;
#[path = "records.rs"]
mod records;
#[path = "shaped.rs"]
mod shaped;
#[path = "targets.rs"]
mod targets;
#[path = "unroll.rs"]
mod unroll;
#[path = "work_group_size.rs"]
mod work_group_size;
#[path = "work_item_reads.rs"]
mod work_item_reads;
