//! The kdsl intermediate representation: types, spans, diagnostics and the typed IR.
//!
//! This crate is the contract between the front end (`kdsl-frontend`), the back ends
//! (`kdsl-codegen`) and the runtime's metadata (`kdsl-bundle`). It depends on nothing
//! that knows about LLVM or any device API.

pub mod ir;
pub mod print;
pub mod span;
pub mod types;
pub mod validate;

pub use ir::*;
pub use span::{Diagnostic, Label, Severity, Span};
pub use types::{AddressSpace, ArrayType, ParameterType, ScalarType};
pub use validate::{validate, ValidationError};
