//! Typed device buffers.

use crate::args::BufferFacts;
use crate::device::Device;
use crate::element::Element;
use crate::error::{Result, RuntimeError};
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where a buffer's memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    /// Device memory (SYCL `malloc_device`, CUDA `cuMemAlloc`, HIP `hipMalloc`).
    Device,
    /// Memory that migrates between host and device (SYCL `malloc_shared`, CUDA managed memory).
    Shared,
    /// Pinned host memory the device reads over the bus (SYCL `malloc_host`, CUDA `cuMemHostAlloc`).
    Host,
}

/// `len` elements of `T` in memory of one device instance, freed on drop.
///
/// Every transfer goes through the device's in-order queue (or stream), so a read issued after a
/// launch sees the launch's writes. Dropping a buffer waits for the queue before freeing.
pub struct Buffer<T: Element> {
    device: Device,
    address: u64,
    len: usize,
    kind: MemoryKind,
    id: u64,
    _element: PhantomData<T>,
}

impl<T: Element> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("element", &T::TYPE)
            .field("len", &self.len)
            .field("kind", &self.kind)
            .field("device", &self.device.label())
            .finish()
    }
}

impl<T: Element> Buffer<T> {
    pub(crate) fn allocate(device: &Device, len: usize, kind: MemoryKind) -> Result<Buffer<T>> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let bytes =
            len.checked_mul(std::mem::size_of::<T>())
                .ok_or_else(|| RuntimeError::OutOfMemory {
                    bytes: u64::MAX,
                    message: format!("{len} elements of {} overflow the address space", T::TYPE),
                })?;
        // A zero-length buffer still gets a valid address, so kernels may receive it.
        let address = device
            .inner
            .backend
            .allocate(bytes.max(std::mem::size_of::<T>()), kind)?;
        Ok(Buffer {
            device: device.clone(),
            address,
            len,
            kind,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            _element: PhantomData,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn memory_kind(&self) -> MemoryKind {
        self.kind
    }

    /// The device instance the buffer belongs to.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Copies the whole buffer to the host, after everything submitted before.
    pub fn read_to_vec(&self) -> Result<Vec<T>> {
        let mut data = vec![T::zeroed(); self.len];
        self.read_into(&mut data)?;
        Ok(data)
    }

    /// Copies the whole buffer into `out`, which must have the buffer's length.
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        self.check_length(out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        self.device
            .inner
            .backend
            .read(self.address, bytemuck::cast_slice_mut(out))
    }

    /// Overwrites the whole buffer with `data`, which must have the buffer's length.
    pub fn write_from(&mut self, data: &[T]) -> Result<()> {
        self.check_length(data.len())?;
        if data.is_empty() {
            return Ok(());
        }
        self.device
            .inner
            .backend
            .write(self.address, bytemuck::cast_slice(data))
    }

    /// Sets every element to `value`.
    pub fn fill(&mut self, value: T) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        self.device
            .inner
            .backend
            .fill(self.address, bytemuck::bytes_of(&value), self.len)
    }

    fn check_length(&self, found: usize) -> Result<()> {
        if found == self.len {
            Ok(())
        } else {
            Err(RuntimeError::LengthMismatch {
                expected: self.len,
                found,
            })
        }
    }

    pub(crate) fn facts(&self, writable: bool) -> BufferFacts<'_> {
        BufferFacts {
            id: self.id,
            address: self.address,
            element: T::TYPE,
            writable,
            device_instance: self.device.inner.instance,
            device_label: self.device.label(),
        }
    }
}

impl<T: Element> Drop for Buffer<T> {
    fn drop(&mut self) {
        self.device.inner.backend.free(self.address, self.kind);
    }
}
