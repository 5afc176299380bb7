//! Local memory sized at launch: where each `local mut [T]` argument of a launch goes, and the
//! check of the kernel's whole local memory (its fixed `local` arrays plus every launch-sized
//! one) against the device's limit before anything reaches the driver.
//!
//! SPIR-V kernels take each launch-sized array as a Workgroup pointer parameter whose size the
//! SYCL runtime sets (SYCL work-group memory); PTX and AMDGPU kernels take a `u32` byte offset
//! into the launch's dynamic shared memory (LDS), whose size is the end of the last array.

use crate::args::{Argument, ArgumentKind};
use crate::error::{Result, RuntimeError};
use kdsl_bundle::{KernelInfo, ParameterInfo};
use kdsl_ir::AddressSpace;

/// Each launch-sized array starts at a multiple of this many bytes (or of the alignment the
/// kernel's vector accesses of it need, when larger), and the fixed arrays' total is rounded
/// up to it, as devices place dynamic local memory after the static one.
pub const LOCAL_ALIGNMENT: u64 = 16;

/// True for a `local mut [T]` parameter, whose argument is a length given at launch.
pub(crate) fn is_local_parameter(parameter: &ParameterInfo) -> bool {
    matches!(
        parameter,
        ParameterInfo::Buffer {
            space: AddressSpace::Local,
            ..
        }
    )
}

/// The alignment in bytes of a launch-sized array parameter.
fn alignment_of(parameter: &ParameterInfo) -> u64 {
    match parameter {
        ParameterInfo::Buffer { alignment, .. } => u64::from(*alignment).max(LOCAL_ALIGNMENT),
        ParameterInfo::Scalar { .. } => LOCAL_ALIGNMENT,
    }
}

/// The byte offset and size of each launch-sized array in the launch's dynamic local memory
/// (`None` for other arguments) and the dynamic memory's size. `granule`: what the driver
/// rounds each array's size up to and aligns it to (`KernelBackend::local_argument_granule`).
/// The arguments were checked.
pub(crate) fn layout(
    kernel: &KernelInfo,
    arguments: &[Argument<'_>],
    granule: u64,
) -> (Vec<Option<(u64, u64)>>, u64) {
    let mut end = 0u64;
    let places = kernel
        .parameters
        .iter()
        .zip(arguments)
        .map(|(parameter, argument)| match argument.kind {
            ArgumentKind::Local { bytes, .. } => {
                let offset = end.next_multiple_of(alignment_of(parameter).max(granule));
                let rounded = bytes.checked_next_multiple_of(granule).unwrap_or(u64::MAX);
                end = offset.saturating_add(rounded);
                Some((offset, bytes))
            }
            _ => None,
        })
        .collect();
    (places, end)
}

/// Checks the kernel's local memory with these launch-sized arrays, laid out with `granule`
/// (see [`layout`]), against `limit` bytes.
pub(crate) fn check_local_memory(
    kernel: &KernelInfo,
    arguments: &[Argument<'_>],
    limit: u64,
    granule: u64,
) -> Result<()> {
    if !kernel.parameters.iter().any(is_local_parameter) {
        return Ok(());
    }
    let (places, dynamic) = layout(kernel, arguments, granule);
    let fixed = kernel.local_memory_bytes;
    let total = fixed
        .next_multiple_of(LOCAL_ALIGNMENT)
        .saturating_add(dynamic);
    if total <= limit {
        return Ok(());
    }
    let launch_sized = kernel
        .parameters
        .iter()
        .zip(&places)
        .filter_map(|(parameter, place)| {
            place.map(|(_, bytes)| format!("`{}` {bytes}", parameter.name()))
        })
        .collect::<Vec<_>>()
        .join(", ");
    Err(RuntimeError::LocalMemoryExceeded {
        kernel: kernel.name.clone(),
        fixed_bytes: fixed,
        launch_sized,
        total_bytes: total,
        limit_bytes: limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdsl_ir::ScalarType;

    fn kernel(fixed: u64, vector_alignment: u32) -> KernelInfo {
        let local = |name: &str, element, alignment| ParameterInfo::Buffer {
            name: name.into(),
            element,
            space: AddressSpace::Local,
            writable: true,
            alignment,
            record: None,
        };
        KernelInfo {
            name: "k".into(),
            parameters: vec![
                local("bytes", ScalarType::U8, 0),
                ParameterInfo::Scalar {
                    name: "n".into(),
                    ty: ScalarType::U32,
                },
                local("wide", ScalarType::F64, vector_alignment),
            ],
            local_memory_bytes: fixed,
            ..KernelInfo::default()
        }
    }

    #[test]
    fn arrays_start_aligned_after_each_other() {
        let arguments = [
            Argument::local(ScalarType::U8, 3),
            Argument::scalar(1u32),
            Argument::local(ScalarType::F64, 5),
        ];
        let (places, end) = layout(&kernel(0, 0), &arguments, 1);
        assert_eq!(places, [Some((0, 3)), None, Some((16, 40))]);
        assert_eq!(end, 56);
        // A vector access of 4 `f64` needs 32-byte alignment.
        let (places, _) = layout(&kernel(0, 32), &arguments, 1);
        assert_eq!(places[2], Some((32, 40)));
    }

    #[test]
    fn a_granule_rounds_sizes_and_aligns_offsets() {
        let arguments = [
            Argument::local(ScalarType::U8, 3),
            Argument::scalar(1u32),
            Argument::local(ScalarType::F64, 5),
        ];
        // As SYCL's CUDA and HIP adapters place them: 128 bytes, then 40 rounded to 128.
        let (places, end) = layout(&kernel(0, 0), &arguments, 128);
        assert_eq!(places, [Some((0, 3)), None, Some((128, 40))]);
        assert_eq!(end, 256);
        check_local_memory(&kernel(0, 0), &arguments, 256, 128).unwrap();
        let error = check_local_memory(&kernel(0, 0), &arguments, 255, 128).unwrap_err();
        assert!(error.to_string().contains("needs 256 bytes"), "{error}");
    }

    #[test]
    fn the_fixed_and_launch_sized_arrays_are_checked_together() {
        let arguments = [
            Argument::local(ScalarType::U8, 3),
            Argument::scalar(1u32),
            Argument::local(ScalarType::F64, 5),
        ];
        // 20 fixed bytes round up to 32, then 56 bytes: 88 in all.
        check_local_memory(&kernel(20, 0), &arguments, 88, 1).unwrap();
        let error = check_local_memory(&kernel(20, 0), &arguments, 87, 1).unwrap_err();
        assert_eq!(
            error.to_string(),
            "kernel `k` needs 88 bytes of local memory (20 in fixed `local` arrays; launch-sized: `bytes` 3, `wide` 40 bytes), the device has 87"
        );
        let absurd = [
            Argument::local(ScalarType::U8, 3),
            Argument::scalar(1u32),
            Argument::local(ScalarType::F64, u64::MAX),
        ];
        assert!(check_local_memory(&kernel(0, 0), &absurd, u64::MAX - 1, 1).is_err());
        assert!(check_local_memory(&kernel(0, 0), &absurd, u64::MAX - 1, 128).is_err());
    }
}
