//! Host memory (NumPy arrays and other buffer-protocol objects) copied into device buffers for
//! one launch, and copied back afterwards for writable parameters.

use kdsl_ir::ScalarType;
use kdsl_runtime::{Argument, BackendKind, Buffer, Device, Element, RuntimeError};

/// A device buffer holding a copy of host memory, of one of the element types a buffer can hold.
pub enum HostCopy {
    I8(Buffer<i8>),
    U8(Buffer<u8>),
    I16(Buffer<i16>),
    U16(Buffer<u16>),
    I32(Buffer<i32>),
    U32(Buffer<u32>),
    I64(Buffer<i64>),
    U64(Buffer<u64>),
    F32(Buffer<f32>),
    F64(Buffer<f64>),
}

/// Runs `$body` with `$buffer` bound to the typed buffer inside a `HostCopy`.
macro_rules! each_buffer {
    ($copy:expr, $buffer:ident => $body:expr) => {
        match $copy {
            HostCopy::I8($buffer) => $body,
            HostCopy::U8($buffer) => $body,
            HostCopy::I16($buffer) => $body,
            HostCopy::U16($buffer) => $body,
            HostCopy::I32($buffer) => $body,
            HostCopy::U32($buffer) => $body,
            HostCopy::I64($buffer) => $body,
            HostCopy::U64($buffer) => $body,
            HostCopy::F32($buffer) => $body,
            HostCopy::F64($buffer) => $body,
        }
    };
}

/// Copies `count` elements at `address` into a new device buffer of `device`.
///
/// # Safety
/// `address` must point to `count` readable elements of `element` (any alignment) that stay
/// alive and unmodified during the call.
unsafe fn upload<T: Element>(device: &Device, address: u64, count: usize) -> Result<Buffer<T>, RuntimeError> {
    let mut staging = vec![T::zeroed(); count];
    if count > 0 {
        std::ptr::copy_nonoverlapping(
            address as *const u8,
            staging.as_mut_ptr().cast::<u8>(),
            count * std::mem::size_of::<T>(),
        );
    }
    device.buffer_from(&staging)
}

/// Copies a device buffer back to `count` elements at `address`.
///
/// # Safety
/// `address` must point to `count` writable elements (any alignment) that nothing else touches
/// during the call.
unsafe fn download<T: Element>(buffer: &Buffer<T>, address: u64) -> Result<(), RuntimeError> {
    let data = buffer.read_to_vec()?;
    if !data.is_empty() {
        std::ptr::copy_nonoverlapping(
            data.as_ptr().cast::<u8>(),
            address as *mut u8,
            std::mem::size_of_val(data.as_slice()),
        );
    }
    Ok(())
}

impl HostCopy {
    /// A device copy of host memory holding `count` elements of `element` at `address`.
    ///
    /// # Safety
    /// As for [`upload`].
    pub unsafe fn upload(
        device: &Device,
        element: ScalarType,
        address: u64,
        count: usize,
    ) -> Result<HostCopy, RuntimeError> {
        Ok(match element {
            ScalarType::I8 => HostCopy::I8(upload(device, address, count)?),
            ScalarType::U8 => HostCopy::U8(upload(device, address, count)?),
            ScalarType::I16 => HostCopy::I16(upload(device, address, count)?),
            ScalarType::U16 => HostCopy::U16(upload(device, address, count)?),
            ScalarType::I32 => HostCopy::I32(upload(device, address, count)?),
            ScalarType::U32 => HostCopy::U32(upload(device, address, count)?),
            ScalarType::I64 => HostCopy::I64(upload(device, address, count)?),
            ScalarType::U64 => HostCopy::U64(upload(device, address, count)?),
            ScalarType::F32 => HostCopy::F32(upload(device, address, count)?),
            ScalarType::F64 => HostCopy::F64(upload(device, address, count)?),
            ScalarType::Bool | ScalarType::F16 => {
                return Err(RuntimeError::Unsupported {
                    backend: BackendKind::Sycl,
                    what: format!("{element} buffers passed from Python"),
                })
            }
        })
    }

    pub fn argument(&self, writable: bool) -> Argument<'_> {
        each_buffer!(self, buffer => if writable {
            Argument::writable(buffer)
        } else {
            Argument::read_only(buffer)
        })
    }

    /// Copies the device buffer back to host memory.
    ///
    /// # Safety
    /// As for [`download`].
    pub unsafe fn download(&self, address: u64) -> Result<(), RuntimeError> {
        each_buffer!(self, buffer => download(buffer, address))
    }
}
