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
    /// Allocates the device buffer and starts copying the host memory into it on `queue`.
    ///
    /// # Safety
    /// `address` must point to `count` readable elements of `element` (any alignment) that stay
    /// alive and unmodified until the returned event has completed.
    pub unsafe fn upload(
        device: &Device,
        queue: &Queue,
        element: ScalarType,
        address: u64,
        count: usize,
    ) -> Result<(HostCopy, Option<Event>), RuntimeError> {
        let mut buffer = device.alloc_any(element, count, MemoryKind::Device)?;
        let event = if count > 0 {
            // SAFETY: forwarded to the caller.
            Some(unsafe { queue.write_bytes_from(&mut buffer, address as *const u8, &[]) }?)
        } else {
            None
        };
        Ok((HostCopy { buffer, address }, event))
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
