//! The kdsl intermediate representation: types, spans, diagnostics and the typed IR.
//!
//! This crate is the contract between the front end (`kdsl-frontend`), the back ends
//! (`kdsl-codegen`) and the runtime's metadata (`kdsl-bundle`). It depends on nothing
//! that knows about LLVM or any device API.

pub mod analysis;
pub mod async_copy;
pub mod bf16;
pub mod builtins;
pub mod codes;
pub mod diagnostic;
pub mod ids;
pub mod ir;
pub mod matrix;
pub mod matrix_group;
pub mod print;
pub mod print_format;
pub mod records;
mod render;
pub mod scalar;
pub mod span;
pub mod tile_copy;
pub mod tile_registers;
pub mod type_constants;
pub mod types;
pub mod validate;
pub mod visit;
pub mod visit_mut;

pub use analysis::uniformity::check_uniformity;
pub use analysis::ModuleInfo;
pub use async_copy::{AsyncCopyKind, AsyncCopyOp};
pub use builtins::{
    Builtin, BuiltinRow, Feature, Operands, Requirement, ResultRule, TypeSet, BUILTINS,
};
pub use codes::ErrorCode;
pub use diagnostic::{Diagnostic, Label, Severity, INTERNAL_ERROR_HINT};
pub use ir::*;
pub use matrix::{MatrixMemory, MatrixOp, MatrixRole, MatrixShape};
pub use matrix_group::GroupShape;
pub use records::{RecordField, RecordType};
pub use render::render_diagnostics;
pub use scalar::{ScalarValue, Undefined};
pub use span::Span;
pub use tile_copy::{TileCopyKind, TileCopyOp};
pub use types::{AddressSpace, ArrayType, ParameterType, ScalarType};
pub use validate::{validate, ValidationError};
