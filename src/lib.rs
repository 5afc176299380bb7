//! kdsl: portable GPU kernels. Placeholder facade.
pub use kdsl_bundle as bundle;
pub use kdsl_ir as ir;
