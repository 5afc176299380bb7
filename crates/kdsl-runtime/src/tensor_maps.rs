//! The tensor maps an entry point's tile copies read and tile stores write through
//! (`kdsl_bundle::EntryTensorMaps`):
//! where each one's source lies among a launch's arguments, and whether a launch's arrays can
//! be described by one. Only the CUDA backend encodes them (`backend/cuda.rs`); a kernel whose
//! contiguous entry takes tensor maps launches its own entry, which copies tiles without them,
//! on other backends and for arrays a tensor map cannot describe.

use crate::args::{Argument, ArgumentKind, ScalarValue};
use crate::backend::RawArgument;
use kdsl_bundle::{KernelInfo, TensorMapInfo};
use kdsl_ir::ScalarType;

/// A tensor map's source address and row stride must be multiples of this many bytes.
const ALIGNMENT: u64 = kdsl_ir::tile_copy::SOURCE_ALIGNMENT as u64;

/// A tensor map's row stride must be below 2^40 bytes.
const MAX_ROW_STRIDE_BYTES: u64 = 1 << 40;

/// One tensor map of an entry point: its source buffer's argument and the arguments holding
/// the buffer's shape and row stride.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TensorMapSource {
    pub buffer: usize,
    /// The arguments holding the extents, rows first.
    pub shape: [usize; 2],
    /// The argument holding the distance between rows, in elements.
    pub row_stride: usize,
    pub element: ScalarType,
    /// The box: `rows` of `columns` elements (128 bytes).
    pub rows: u32,
    pub columns: u32,
    /// Whether tile stores write through the map.
    pub stored: bool,
}

/// The values a tensor map encodes, read from a launch's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TensorMapLayout {
    pub address: u64,
    /// Rows, then columns.
    pub shape: [u64; 2],
    pub row_stride_bytes: u64,
    /// For a map stores write through: whether its rows end inside a 16-byte chunk. On the
    /// H100 a tensor store wrote that chunk whole, past the shape, so such arrays take the
    /// kernel's own entry.
    pub ragged_store: bool,
}

impl TensorMapLayout {
    /// Whether a tensor map can describe the array: aligned address and rows, no empty
    /// dimension.
    pub fn describable(&self) -> bool {
        self.address.is_multiple_of(ALIGNMENT)
            && self.row_stride_bytes.is_multiple_of(ALIGNMENT)
            && self.row_stride_bytes < MAX_ROW_STRIDE_BYTES
            && self.shape.iter().all(|&extent| extent > 0)
            && !self.ragged_store
    }
}

impl TensorMapSource {
    /// `map` of `kernel`, or `None` when the map names no 2-D buffer of the kernel.
    pub fn resolve(kernel: &KernelInfo, map: &TensorMapInfo) -> Option<TensorMapSource> {
        let shaped = kernel
            .shaped_buffers
            .iter()
            .find(|shaped| shaped.buffer == map.buffer && shaped.shape.len() == 2)?;
        Some(TensorMapSource {
            buffer: map.buffer,
            shape: [shaped.shape[0], shaped.shape[1]],
            row_stride: shaped.strides[0],
            element: map.element,
            rows: map.rows,
            columns: map.columns,
            stored: map.stored,
        })
    }

    /// The layout of the array a launch passes, when the arguments are of the right kinds.
    pub fn layout(&self, arguments: &[Argument<'_>]) -> Option<TensorMapLayout> {
        let ArgumentKind::Buffer(facts) = arguments.get(self.buffer)?.kind else {
            return None;
        };
        let scalar = |index: usize| match arguments.get(index)?.kind {
            ArgumentKind::Scalar(value) => scalar_u64(value),
            _ => None,
        };
        self.layout_of(facts.address, scalar)
    }

    /// The same from a launch's raw arguments, as a backend receives them.
    pub fn raw_layout(&self, arguments: &[RawArgument]) -> Option<TensorMapLayout> {
        let RawArgument::Pointer(address) = *arguments.get(self.buffer)? else {
            return None;
        };
        let scalar = |index: usize| match arguments.get(index)? {
            RawArgument::Scalar(value) => scalar_u64(*value),
            _ => None,
        };
        self.layout_of(address, scalar)
    }

    fn layout_of(
        &self,
        address: u64,
        scalar: impl Fn(usize) -> Option<u64>,
    ) -> Option<TensorMapLayout> {
        let size = u64::from(self.element.size_in_bytes());
        let shape = [scalar(self.shape[0])?, scalar(self.shape[1])?];
        let row_bytes = shape[1].checked_mul(size)?;
        Some(TensorMapLayout {
            address,
            shape,
            row_stride_bytes: scalar(self.row_stride)?.checked_mul(size)?,
            ragged_store: self.stored && !row_bytes.is_multiple_of(ALIGNMENT),
        })
    }
}

fn scalar_u64(value: ScalarValue) -> Option<u64> {
    match value {
        ScalarValue::U32(v) => Some(u64::from(v)),
        ScalarValue::U64(v) => Some(v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tensor_map_needs_aligned_rows_and_no_empty_dimension() {
        let layout = |address, shape, row_stride_bytes| TensorMapLayout {
            address,
            shape,
            row_stride_bytes,
            ragged_store: false,
        };
        assert!(layout(0x1000, [40, 70], 288).describable());
        assert!(!layout(0x1008, [40, 70], 288).describable());
        assert!(!layout(0x1000, [40, 70], 280).describable());
        assert!(!layout(0x1000, [0, 70], 288).describable());
        assert!(!layout(0x1000, [40, 70], 1 << 40).describable());
        // A store's rows of 70 floats end inside a chunk; 64 do not.
        let source = |stored| TensorMapSource {
            buffer: 0,
            shape: [1, 2],
            row_stride: 3,
            element: ScalarType::F32,
            rows: 8,
            columns: 32,
            stored,
        };
        let values = |columns: u64| move |index: usize| Some([0, 40, columns, 72][index]);
        let ragged = source(true).layout_of(0x1000, values(70)).unwrap();
        assert!(ragged.ragged_store && !ragged.describable());
        assert!(source(true)
            .layout_of(0x1000, values(64))
            .unwrap()
            .describable());
        assert!(source(false)
            .layout_of(0x1000, values(70))
            .unwrap()
            .describable());
    }
}
