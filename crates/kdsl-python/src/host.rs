//! Host memory (NumPy arrays and other buffer-protocol objects) copied into device buffers for
//! one launch, and copied back afterwards for writable parameters.

use kdsl_ir::ScalarType;
use kdsl_runtime::{AnyBuffer, Device, Event, MemoryKind, Queue, RuntimeError};

/// A device buffer holding a copy of `count` elements of host memory at `address`.
pub struct HostCopy {
    pub buffer: AnyBuffer,
    address: u64,
}

impl HostCopy {
    /// Allocates the device buffer for `count` elements of host memory at `address`; nothing
    /// is copied yet (see [`HostCopy::upload`]).
    pub fn allocate(
        device: &Device,
        element: ScalarType,
        address: u64,
        count: usize,
    ) -> Result<HostCopy, RuntimeError> {
        let buffer = device.alloc_any(element, count, MemoryKind::Device)?;
        Ok(HostCopy { buffer, address })
    }

    /// Starts copying the host memory into the device buffer on `queue`.
    ///
    /// # Safety
    /// The host memory must hold the buffer's elements (any alignment) and stay alive and
    /// unmodified until the returned event has completed.
    pub unsafe fn upload(&mut self, queue: &Queue) -> Result<Option<Event>, RuntimeError> {
        if self.buffer.is_empty() {
            return Ok(None);
        }
        // SAFETY: forwarded to the caller.
        Ok(Some(unsafe {
            queue.write_bytes_from(&mut self.buffer, self.address as *const u8, &[])
        }?))
    }

    /// Starts copying the device buffer back to the host memory it came from, after `wait_for`.
    ///
    /// # Safety
    /// The host memory must be writable and untouched by anything else until the returned
    /// event has completed.
    pub unsafe fn download(
        &self,
        queue: &Queue,
        wait_for: &[&Event],
    ) -> Result<Option<Event>, RuntimeError> {
        if self.buffer.is_empty() {
            return Ok(None);
        }
        // SAFETY: forwarded to the caller.
        Ok(Some(unsafe {
            queue.read_bytes_into(&self.buffer, self.address as *mut u8, wait_for)
        }?))
    }
}
