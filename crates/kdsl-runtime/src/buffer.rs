//! Device buffers: [`AnyBuffer`] (element type known at run time), the typed [`Buffer<T>`]
//! around it, views of part of a buffer, and reads still in flight.

use crate::device::Device;
use crate::element::Element;
use crate::error::{Result, RuntimeError};
use crate::event::Event;
use crate::memory::{Memory, Retired};
use kdsl_ir::ScalarType;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

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

/// A byte range of one memory allocation: what a submission reads or writes.
#[derive(Clone, Copy)]
pub(crate) struct Region<'a> {
    pub memory: &'a Memory,
    pub address: u64,
    pub bytes: usize,
    pub element: ScalarType,
}

/// `len` elements of a scalar type known at run time, in memory of one device instance.
///
/// This is what language bindings use (the element type comes from an array's dtype);
/// Rust programs usually hold a typed [`Buffer<T>`], which wraps one. Memory kdsl allocated is
/// freed when the last handle goes, after any work still pending on it has finished; memory
/// adopted with [`AnyBuffer::borrowed`] is never freed by kdsl.
pub struct AnyBuffer {
    memory: Arc<Memory>,
    element: ScalarType,
    len: usize,
}

impl fmt::Debug for AnyBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyBuffer")
            .field("element", &self.element)
            .field("len", &self.len)
            .field("kind", &self.memory.kind)
            .field("owned", &self.memory.owned)
            .field("device", &self.memory.device.label())
            .finish()
    }
}

fn byte_size(element: ScalarType, len: usize) -> Result<usize> {
    len.checked_mul(element.size_in_bytes() as usize)
        .ok_or_else(|| RuntimeError::OutOfMemory {
            bytes: u64::MAX,
            message: format!("{len} elements of {element} overflow the address space"),
        })
}

impl AnyBuffer {
    pub(crate) fn allocate(
        device: &Device,
        element: ScalarType,
        len: usize,
        kind: MemoryKind,
    ) -> Result<AnyBuffer> {
        let bytes = byte_size(element, len)?;
        device.inner.collect_retired();
        // A zero-length buffer still gets a valid address, so kernels may receive it.
        let address = device
            .inner
            .backend
            .allocate(bytes.max(element.size_in_bytes() as usize), kind)?;
        Ok(AnyBuffer {
            memory: Arc::new(Memory::new(device, address, bytes, kind, true, false)),
            element,
            len,
        })
    }

    /// Wraps memory allocated by someone else (a USM pointer of the device's SYCL context, a CUDA
    /// or HIP device pointer) as a buffer of `len` elements. kdsl never frees it. Afterwards it is
    /// checked like any other buffer: its device, element type, writability (`read_only` memory
    /// is refused for `mut` parameters and writes) and aliasing.
    ///
    /// # Safety
    /// `address` must point to at least `len` elements of `element` that the device instance can
    /// access (for SYCL: USM of the instance's context; for CUDA/HIP: memory of its context),
    /// and the memory must stay allocated for as long as this buffer, its views and any work
    /// submitted on them exist.
    pub unsafe fn borrowed(
        device: &Device,
        address: u64,
        element: ScalarType,
        len: usize,
        read_only: bool,
    ) -> Result<AnyBuffer> {
        let bytes = byte_size(element, len)?;
        if address == 0 && bytes > 0 {
            return Err(RuntimeError::BadForeignObject {
                what: "a null pointer cannot be borrowed as a buffer".into(),
            });
        }
        Ok(AnyBuffer {
            memory: Arc::new(Memory::new(
                device,
                address,
                bytes,
                crate::buffer::MemoryKind::Device,
                false,
                read_only,
            )),
            element,
            len,
        })
    }

    pub fn element(&self) -> ScalarType {
        self.element
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn size_in_bytes(&self) -> usize {
        self.memory.bytes
    }

    pub fn memory_kind(&self) -> MemoryKind {
        self.memory.kind
    }

    /// The device address of the first element (a USM or CUDA/HIP device pointer), for handing
    /// the memory to another library.
    pub fn address(&self) -> u64 {
        self.memory.address
    }

    /// True for borrowed memory adopted as read-only.
    pub fn is_read_only(&self) -> bool {
        self.memory.read_only
    }

    /// True for memory kdsl allocated (and frees), false for borrowed memory.
    pub fn is_owned(&self) -> bool {
        self.memory.owned
    }

    /// The device instance the buffer belongs to.
    pub fn device(&self) -> &Device {
        &self.memory.device
    }

    pub(crate) fn region(&self) -> Region<'_> {
        Region {
            memory: &self.memory,
            address: self.memory.address,
            bytes: self.memory.bytes,
            element: self.element,
        }
    }

    fn writable_region(&mut self) -> Result<Region<'_>> {
        check_writable(&self.memory)?;
        Ok(self.region())
    }

    /// Copies the buffer's bytes into `out` (exactly `size_in_bytes()` long); blocks until done.
    pub fn read_bytes(&self, out: &mut [u8]) -> Result<()> {
        let queue = self.device().default_queue();
        // SAFETY: `out` has the region's length (checked inside) and outlives the wait below.
        let event = unsafe { queue.read_raw(self.region(), out.as_mut_ptr(), out.len(), &[]) }?;
        event.wait()
    }

    /// Overwrites the buffer with `data` (exactly `size_in_bytes()` long); blocks until done.
    pub fn write_bytes(&mut self, data: &[u8]) -> Result<()> {
        let queue = self.device().default_queue();
        let region = self.writable_region()?;
        // SAFETY: `data` has the region's length (checked inside) and outlives the wait below.
        let event = unsafe { queue.write_raw(region, data.as_ptr(), data.len(), &[]) }?;
        event.wait()
    }
}

pub(crate) fn check_writable(memory: &Memory) -> Result<()> {
    if memory.read_only {
        Err(RuntimeError::ReadOnlyMemory {
            what: "this buffer borrows read-only memory".into(),
        })
    } else {
        Ok(())
    }
}

/// `len` elements of `T` in memory of one device instance, freed on drop (after the work still
/// pending on it has finished).
///
/// Every operation goes through an in-order queue (the device's default queue unless a
/// [`Queue`](crate::Queue) is given), so a read issued after a launch on the same queue sees the
/// launch's writes; work on another queue that uses the same buffer is ordered after conflicting
/// pending work automatically.
pub struct Buffer<T: Element> {
    any: AnyBuffer,
    _element: PhantomData<T>,
}

impl<T: Element> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("element", &T::TYPE)
            .field("len", &self.any.len)
            .field("kind", &self.any.memory.kind)
            .field("device", &self.any.memory.device.label())
            .finish()
    }
}

impl<T: Element> TryFrom<AnyBuffer> for Buffer<T> {
    type Error = RuntimeError;

    /// A typed view of an `AnyBuffer` whose element type is `T`.
    fn try_from(any: AnyBuffer) -> Result<Buffer<T>> {
        if any.element != T::TYPE {
            return Err(RuntimeError::ElementTypeMismatch {
                expected: T::TYPE,
                found: any.element,
            });
        }
        Ok(Buffer {
            any,
            _element: PhantomData,
        })
    }
}

impl<T: Element> Buffer<T> {
    pub(crate) fn allocate(device: &Device, len: usize, kind: MemoryKind) -> Result<Buffer<T>> {
        Ok(Buffer {
            any: AnyBuffer::allocate(device, T::TYPE, len, kind)?,
            _element: PhantomData,
        })
    }

    pub fn len(&self) -> usize {
        self.any.len
    }

    pub fn is_empty(&self) -> bool {
        self.any.len == 0
    }

    pub fn memory_kind(&self) -> MemoryKind {
        self.any.memory_kind()
    }

    /// The device instance the buffer belongs to.
    pub fn device(&self) -> &Device {
        self.any.device()
    }

    /// The untyped buffer underneath.
    pub fn as_any(&self) -> &AnyBuffer {
        &self.any
    }

    pub fn into_any(self) -> AnyBuffer {
        self.any
    }

    pub(crate) fn region(&self) -> Region<'_> {
        self.any.region()
    }

    pub(crate) fn writable_region(&mut self) -> Result<Region<'_>> {
        self.any.writable_region()
    }

    /// Copies the whole buffer to the host, after everything submitted to the default queue
    /// before. Blocks until the copy is done.
    pub fn read_to_vec(&self) -> Result<Vec<T>> {
        self.read_async()?.wait()
    }

    /// Copies the whole buffer into `out`, which must have the buffer's length. Blocks.
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        self.as_slice().read_into(out)
    }

    /// Overwrites the whole buffer with `data`, which must have the buffer's length. Blocks.
    pub fn write_from(&mut self, data: &[T]) -> Result<()> {
        check_length(self.len(), data.len())?;
        let queue = self.device().default_queue();
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let region = self.writable_region()?;
        // SAFETY: `data` outlives the wait below.
        unsafe { queue.write_raw(region, bytes.as_ptr(), bytes.len(), &[]) }?.wait()
    }

    /// Sets every element to `value`. Blocks.
    pub fn fill(&mut self, value: T) -> Result<()> {
        self.fill_async(value)?.wait()
    }

    /// Starts copying the whole buffer to the host on the default queue; the data arrives when
    /// the returned read is waited for. Does not block.
    pub fn read_async(&self) -> Result<PendingRead<T>> {
        self.device().default_queue().read(self, &[])
    }

    /// Starts overwriting the buffer with `data` (the buffer's length) on the default queue.
    /// The data is kept alive until the copy is done. Does not block.
    pub fn write_async(&mut self, data: Vec<T>) -> Result<Event> {
        self.device().default_queue().write(self, data, &[])
    }

    /// Starts setting every element to `value` on the default queue. Does not block.
    pub fn fill_async(&mut self, value: T) -> Result<Event> {
        self.device().default_queue().fill(self, value, &[])
    }

    /// Starts a device-side copy of `source` (same length, same device instance) into this
    /// buffer on the default queue. Does not block.
    pub fn copy_from(&mut self, source: &Buffer<T>) -> Result<Event> {
        self.device().default_queue().copy(self, source, &[])
    }

    /// A read-only view of the elements in `range`, usable as a `global [T]` kernel argument.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<BufferSlice<'_, T>> {
        let (start, end) = resolve_range(range, self.len())?;
        Ok(BufferSlice {
            buffer: self,
            start,
            end,
        })
    }

    /// A writable view of the elements in `range`, usable as a `global mut [T]` kernel argument.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<BufferSliceMut<'_, T>> {
        let (start, end) = resolve_range(range, self.len())?;
        check_writable(&self.any.memory)?;
        Ok(BufferSliceMut {
            buffer: self,
            start,
            end,
        })
    }

    fn as_slice(&self) -> BufferSlice<'_, T> {
        BufferSlice {
            buffer: self,
            start: 0,
            end: self.len(),
        }
    }
}

fn resolve_range(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&start) => Some(start),
        Bound::Excluded(&start) => start.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&end) => end.checked_add(1),
        Bound::Excluded(&end) => Some(end),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(start), Some(end)) if start <= end && end <= len => Ok((start, end)),
        _ => Err(RuntimeError::BadRange {
            why: format!(
                "the range {:?}..{:?} does not lie within a buffer of {len} elements",
                range.start_bound(),
                range.end_bound()
            ),
        }),
    }
}

pub(crate) fn check_length(expected: usize, found: usize) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(RuntimeError::LengthMismatch { expected, found })
    }
}

fn slice_region<T: Element>(buffer: &Buffer<T>, start: usize, end: usize) -> Region<'_> {
    let size = std::mem::size_of::<T>();
    Region {
        memory: &buffer.any.memory,
        address: buffer.any.memory.address + (start * size) as u64,
        bytes: (end - start) * size,
        element: T::TYPE,
    }
}

/// A read-only view of part of a buffer (`buffer.slice(range)`).
#[derive(Clone, Copy)]
pub struct BufferSlice<'a, T: Element> {
    buffer: &'a Buffer<T>,
    start: usize,
    end: usize,
}

impl<T: Element> fmt::Debug for BufferSlice<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "BufferSlice({:?}, {}..{})",
            T::TYPE,
            self.start,
            self.end
        )
    }
}

impl<'a, T: Element> BufferSlice<'a, T> {
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    pub(crate) fn region(&self) -> Region<'a> {
        slice_region(self.buffer, self.start, self.end)
    }

    /// Copies the viewed elements to the host. Blocks.
    pub fn read_to_vec(&self) -> Result<Vec<T>> {
        let mut data = vec![T::zeroed(); self.len()];
        self.read_into(&mut data)?;
        Ok(data)
    }

    /// Copies the viewed elements into `out` (the view's length). Blocks.
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        check_length(self.len(), out.len())?;
        let queue = self.buffer.device().default_queue();
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
        // SAFETY: `out` outlives the wait below.
        unsafe { queue.read_raw(self.region(), bytes.as_mut_ptr(), bytes.len(), &[]) }?.wait()
    }
}

/// A writable view of part of a buffer (`buffer.slice_mut(range)`).
pub struct BufferSliceMut<'a, T: Element> {
    buffer: &'a mut Buffer<T>,
    start: usize,
    end: usize,
}

impl<T: Element> fmt::Debug for BufferSliceMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "BufferSliceMut({:?}, {}..{})",
            T::TYPE,
            self.start,
            self.end
        )
    }
}

impl<T: Element> BufferSliceMut<'_, T> {
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    pub(crate) fn region(&self) -> Region<'_> {
        slice_region(self.buffer, self.start, self.end)
    }

    /// Overwrites the viewed elements with `data` (the view's length). Blocks.
    pub fn write_from(&mut self, data: &[T]) -> Result<()> {
        check_length(self.len(), data.len())?;
        let queue = self.buffer.device().default_queue();
        let bytes: &[u8] = bytemuck::cast_slice(data);
        // SAFETY: `data` outlives the wait below.
        unsafe { queue.write_raw(self.region(), bytes.as_ptr(), bytes.len(), &[]) }?.wait()
    }
}

/// A copy to the host still in flight: [`PendingRead::wait`] gives the data.
///
/// Dropping it unwaited is safe: the destination stays alive until the copy is done.
pub struct PendingRead<T: Element> {
    pub(crate) data: Option<Vec<T>>,
    pub(crate) event: Event,
}

impl<T: Element> fmt::Debug for PendingRead<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingRead")
            .field("element", &T::TYPE)
            .finish()
    }
}

impl<T: Element> PendingRead<T> {
    /// Waits for the copy and returns the data.
    pub fn wait(mut self) -> Result<Vec<T>> {
        self.event.wait()?;
        Ok(self.data.take().unwrap_or_default())
    }

    /// The copy's event, to make other work wait for it.
    pub fn event(&self) -> &Event {
        &self.event
    }
}

impl<T: Element> Drop for PendingRead<T> {
    fn drop(&mut self) {
        if let Some(data) = self.data.take() {
            self.event.retire(Retired::HostData(Box::new(data)));
        }
    }
}
