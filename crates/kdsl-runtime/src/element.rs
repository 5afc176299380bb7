//! The Rust types a buffer can hold, tied to the kernel language's scalar types.

use kdsl_ir::ScalarType;

mod sealed {
    pub trait Sealed {}
}

/// A plain value type that a `Buffer` can hold: `i8 u8 i16 u16 i32 u32 i64 u64 f32 f64`.
///
/// `bool` and `f16` buffers have no Rust element type here (`bool` has invalid bit patterns and
/// the runtime does not depend on a half-precision crate).
pub trait Element: bytemuck::Pod + sealed::Sealed + Send + Sync + 'static {
    /// The kernel-language type of one element.
    const TYPE: ScalarType;
}

macro_rules! elements {
    ($($rust:ty => $scalar:ident),* $(,)?) => {$(
        impl sealed::Sealed for $rust {}
        impl Element for $rust {
            const TYPE: ScalarType = ScalarType::$scalar;
        }
    )*};
}

elements! {
    i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
    i64 => I64, u64 => U64, f32 => F32, f64 => F64,
}
