//! Checks of an image against its bundle before a driver sees it, for every backend.

use crate::error::{Result, RuntimeError};
use kdsl_bundle::spirv_check::{check_spirv_header, check_spirv_kernels};
use kdsl_bundle::{Bundle, Image, TargetKind};

/// A SPIR-V image must have a header Intel's reader accepts (it ends the process on some
/// that SPIRV-Tools lets pass) and kernels whose parameters are the ones the bundle's metadata
/// describes, which the runtime sizes and checks buffers by. Bundle files are read without
/// trusting their metadata (version 1 and 2 files carry no checksum over it), so this holds
/// for any file. PTX and AMDGPU images are not compared.
pub(crate) fn check_image(bundle: &Bundle, image: &Image) -> Result<()> {
    if image.target != TargetKind::Spirv {
        return Ok(());
    }
    check_spirv_header(&image.bytes)
        .and_then(|()| {
            check_spirv_kernels(&image.bytes, &bundle.kernels, &bundle.entry_point_prefix)
        })
        .map_err(|why| RuntimeError::InvalidImage {
            image: image.describe(),
            why,
        })
}
