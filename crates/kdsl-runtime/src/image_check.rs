//! Checks of an image against its bundle before a driver sees it, for every backend.

use crate::error::{Result, RuntimeError};
use kdsl_bundle::amdgpu_check::check_amdgpu_kernels;
use kdsl_bundle::ptx_check::check_ptx_image;
use kdsl_bundle::spirv_check::{check_spirv_header, check_spirv_kernels};
use kdsl_bundle::{Bundle, Image, TargetKind};

/// An image's kernels must have the parameters the bundle's metadata describes, which the
/// runtime packs arguments and sizes buffers by: SPIR-V entry points, PTX `.entry` parameter
/// lists and the kernels of an AMDGPU code object's metadata note. A SPIR-V image must also
/// have a header Intel's reader accepts (it ends the process on some that SPIRV-Tools lets
/// pass). Bundle files are read without trusting their metadata (version 1 and 2 files carry
/// no checksum over it), so this holds for any file.
pub(crate) fn check_image(bundle: &Bundle, image: &Image) -> Result<()> {
    let (bytes, kernels, prefix) = (&image.bytes, &bundle.kernels, &bundle.entry_point_prefix);
    match image.target {
        TargetKind::Spirv => {
            check_spirv_header(bytes).and_then(|()| check_spirv_kernels(bytes, kernels, prefix))
        }
        TargetKind::Ptx => check_ptx_image(bytes, kernels, prefix, &image.tensor_maps),
        TargetKind::Amdgpu => check_amdgpu_kernels(bytes, kernels, prefix),
    }
    .map_err(|why| RuntimeError::InvalidImage {
        image: image.describe(),
        why,
    })
}
