//! Multi-dimensional buffer arguments: a buffer with the shape and strides (in elements) that a
//! kernel's `global [[T]]` parameter takes as hidden scalar parameters after the buffer, and the
//! launch check that the shape and strides stay inside the buffer.

use crate::args::{Argument, ArgumentKind, IntoArgument, ScalarValue};
use crate::error::{Result, RuntimeError};
use kdsl_bundle::{KernelInfo, ShapedBufferInfo};

/// A buffer passed to a multi-dimensional parameter (`a: global [[f32]]`) with its shape and
/// strides in elements, outermost dimension first. [`ShapedArgument::arguments`] gives the
/// arguments the kernel's parameter list holds in its place: the buffer, one `u32` per extent,
/// one `u64` per stride.
///
/// ```ignore
/// // kernel scale(out: global mut [[f32]], input: global [[f32]], factor: f32)
/// let mut arguments = ShapedArgument::contiguous(&mut out, &[rows, cols]).arguments();
/// arguments.extend(ShapedArgument::contiguous(&input, &[rows, cols]).arguments());
/// arguments.push(Argument::scalar(2.0f32));
/// ```
#[derive(Clone, Debug)]
pub struct ShapedArgument<'a> {
    buffer: Argument<'a>,
    shape: Vec<u32>,
    strides: Vec<u64>,
}

impl<'a> ShapedArgument<'a> {
    /// A row-major (C-contiguous) array of `shape` over the buffer's first elements.
    pub fn contiguous(buffer: impl IntoArgument<'a>, shape: &[u32]) -> ShapedArgument<'a> {
        let mut strides = vec![1u64; shape.len()];
        for dimension in (0..shape.len().saturating_sub(1)).rev() {
            strides[dimension] = strides[dimension + 1] * u64::from(shape[dimension + 1]);
        }
        ShapedArgument::strided(buffer, shape, &strides)
    }

    /// An array of `shape` whose element `[i, j]` is element `i * strides[0] + j * strides[1]`
    /// of the buffer (a view such as a transposed matrix: strides `[1, rows]`).
    pub fn strided(
        buffer: impl IntoArgument<'a>,
        shape: &[u32],
        strides: &[u64],
    ) -> ShapedArgument<'a> {
        ShapedArgument {
            buffer: buffer.into_argument(),
            shape: shape.to_vec(),
            strides: strides.to_vec(),
        }
    }

    /// The buffer, its extents and its strides, in the kernel's parameter order.
    pub fn arguments(&self) -> Vec<Argument<'a>> {
        let mut arguments = vec![self.buffer];
        arguments.extend(self.shape.iter().map(|&e| Argument::scalar(e)));
        arguments.extend(self.strides.iter().map(|&s| Argument::scalar(s)));
        arguments
    }
}

/// The elements from an array's first to one past its last (0 when an extent is 0), or `None`
/// when that does not fit a `u64`.
fn span(shape: &[u64], strides: &[u64]) -> Option<u64> {
    if shape.contains(&0) {
        return Some(0);
    }
    let mut last = 0u64;
    for (&extent, &stride) in shape.iter().zip(strides) {
        last = last.checked_add((extent - 1).checked_mul(stride)?)?;
    }
    last.checked_add(1)
}

/// The shape and strides given for `shaped`, and the element count of its buffer, when the
/// arguments are of the parameters' kinds (the type checks report them otherwise).
fn layout_of(
    shaped: &ShapedBufferInfo,
    arguments: &[Argument<'_>],
) -> Option<(Vec<u64>, Vec<u64>, u64)> {
    let value = |index: usize| match arguments.get(index)?.kind {
        ArgumentKind::Scalar(ScalarValue::U32(v)) => Some(u64::from(v)),
        ArgumentKind::Scalar(ScalarValue::U64(v)) => Some(v),
        _ => None,
    };
    let shape = shaped
        .shape
        .iter()
        .map(|&i| value(i))
        .collect::<Option<Vec<_>>>()?;
    let strides = shaped
        .strides
        .iter()
        .map(|&i| value(i))
        .collect::<Option<Vec<_>>>()?;
    let ArgumentKind::Buffer(facts) = arguments.get(shaped.buffer)?.kind else {
        return None;
    };
    let length = facts.bytes as u64 / u64::from(facts.element.size_in_bytes());
    Some((shape, strides, length))
}

/// Whether every multi-dimensional buffer's shape and strides stay inside its buffer.
pub(crate) fn shapes_fit(kernel: &KernelInfo, arguments: &[Argument<'_>]) -> bool {
    check_shapes(kernel, arguments).is_ok()
}

/// Checks that every multi-dimensional buffer's shape and strides reach only elements of the
/// buffer passed (`RuntimeError::ShapeOutsideBuffer`).
pub(crate) fn check_shapes(kernel: &KernelInfo, arguments: &[Argument<'_>]) -> Result<()> {
    for shaped in &kernel.shaped_buffers {
        let Some((shape, strides, length)) = layout_of(shaped, arguments) else {
            continue;
        };
        let reach = span(&shape, &strides);
        if reach.is_none_or(|reach| reach > length) {
            return Err(RuntimeError::ShapeOutsideBuffer {
                kernel: kernel.name.clone(),
                index: shaped.buffer,
                name: kernel.parameters[shaped.buffer].name().to_string(),
                shape,
                strides,
                length,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_counts_from_the_first_to_the_last_element() {
        assert_eq!(span(&[3, 4], &[4, 1]), Some(12));
        // The transpose of a 4 x 3 matrix.
        assert_eq!(span(&[3, 4], &[1, 3]), Some(12));
        // Every other column of a 3 x 8 matrix.
        assert_eq!(span(&[3, 4], &[8, 2]), Some(23));
        assert_eq!(span(&[0, 4], &[4, 1]), Some(0));
        assert_eq!(span(&[2, 2], &[u64::MAX, 1]), None);
    }
}
