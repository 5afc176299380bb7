//! The kdsl bundle: one file holding a kernel module compiled for several targets,
//! plus the metadata a runtime needs to launch its kernels safely.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! magic      8 bytes  "KDSLBNDL"
//! version    u32      FORMAT_VERSION
//! meta_len   u64      length of the JSON metadata that follows
//! meta_hash  u64      FNV-1a 64 of the JSON metadata, checked on every read (version 3 on;
//!                     versions 1 and 2 have no such field: their header is 20 bytes)
//! metadata   JSON     BundleMetadata (kernels, and per image: target, arch, offset, length,
//!                     checksum: FNV-1a 64 of the image bytes, checked on every read)
//! images     bytes    the images, at the offsets the metadata gives (relative to the end of metadata)
//! ```
//!
//! The metadata is JSON so that `jq` can inspect a bundle; the images stay binary.

pub mod amdgpu_check;
pub mod base64;
mod constants;
pub mod environment;
#[doc(hidden)]
pub mod fuzzing;
mod metadata;
pub mod processors;
pub mod ptx_check;
pub mod spirv_check;
pub mod sycl_entry_points;
pub mod syclbin;

pub use constants::{ConstantInfo, ConstantValue};
pub use metadata::{
    kernel_entry_points, CheckSite, FaultKind, FaultRecord, KernelInfo, ParameterInfo,
    ShapedBufferInfo, FAULT_RECORD_BYTES,
};

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

pub const MAGIC: &[u8; 8] = b"KDSLBNDL";
/// Version 2 added a checksum to each image, version 3 one of the metadata; version 1 and 2
/// files (without them) are still read. The version counts changes of the layout: metadata
/// fields are added with serde defaults instead, so older files still read and an older reader
/// ignores what it does not know (a kernel's `contiguous_entry`, added in version 3, names an
/// extra entry point that such a reader simply never launches).
pub const FORMAT_VERSION: u32 = 3;

/// The length of the header (magic to metadata) of a file of format `version`.
pub fn header_length(version: u32) -> usize {
    if version >= 3 {
        28
    } else {
        20
    }
}

/// The kind of machine code an image holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    /// A SPIR-V module (Kernel capability, OpenCL memory model) for SYCL, OpenCL and Level Zero.
    Spirv,
    /// PTX text for the CUDA driver.
    Ptx,
    /// An AMDGPU HSA code object (ELF) for HIP.
    Amdgpu,
}

impl TargetKind {
    pub const ALL: [TargetKind; 3] = [TargetKind::Spirv, TargetKind::Ptx, TargetKind::Amdgpu];

    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Spirv => "spirv",
            TargetKind::Ptx => "ptx",
            TargetKind::Amdgpu => "amdgpu",
        }
    }

    pub fn from_name(name: &str) -> Option<TargetKind> {
        TargetKind::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One compiled image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub target: TargetKind,
    /// The processor the image was built for: `sm_90`, `gfx90a`, `gfx9-generic`,
    /// `intel_gpu_pvc`; empty for plain SPIR-V, which the device driver finalizes.
    pub arch: String,
    pub bytes: Vec<u8>,
    /// Whether the image runs matrix tiles on the processor's matrix units (tensor cores);
    /// false where it has none or takes the plain lowering.
    pub matrix_units: bool,
    /// Whether the image runs matrix-group statements on matrix units, where their
    /// work-groups must be whole groups ([`KernelInfo::check_matrix_groups`]).
    pub matrix_groups: bool,
    /// The sub-group size whose whole sub-groups the image's sub-group tiles need
    /// ([`KernelInfo::tiles`]): the size their plain lowering is laid out for, or the matrix
    /// units' (a warp, a wavefront); their work-groups must be a multiple of it
    /// ([`KernelInfo::check_tile_sub_groups`]). `None` where any work-group computes them
    /// (the plain lowering for any size, checked mode).
    pub tile_sub_group_size: Option<u32>,
    /// The entry points whose tile copies read through tensor maps the host makes
    /// ([`EntryTensorMaps`]); empty where tiles are copied without them.
    pub tensor_maps: Vec<EntryTensorMaps>,
}

/// The tensor maps one entry point of an image takes as hidden parameters after its declared
/// ones, in order: each a 128-byte `CUtensorMap` (passed by value, 64-byte aligned) that the
/// host encodes at launch for a tile copy's source (NVIDIA sm_90: `async_tile_copy` through the
/// tensor memory accelerator). Only the entry for contiguous rows has them, so a host that
/// cannot make them launches the kernel's own entry, which copies tiles without them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryTensorMaps {
    /// The entry point, without the bundle's prefix (`gemm$contiguous`).
    pub entry: String,
    pub maps: Vec<TensorMapInfo>,
}

/// One tensor map: a box of `rows` x `columns` elements of the 2-D buffer parameter `buffer`
/// (its shape and strides are the hidden scalars the kernel's `shaped_buffers` name), in
/// 128-byte swizzled rows, elements outside the shape read as zero.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorMapInfo {
    pub buffer: usize,
    pub element: kdsl_ir::ScalarType,
    pub rows: u32,
    pub columns: u32,
    /// Whether tile stores write through the map (the runtime then also needs rows that end
    /// on a 16-byte chunk).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stored: bool,
}

impl Image {
    /// The tensor maps entry point `entry` (without the bundle's prefix) takes; empty for most.
    pub fn tensor_maps_of(&self, entry: &str) -> &[TensorMapInfo] {
        self.tensor_maps
            .iter()
            .find(|maps| maps.entry == entry)
            .map_or(&[], |maps| &maps.maps)
    }

    /// `spirv`, `ptx:sm_90`, `amdgpu:gfx90a`.
    pub fn describe(&self) -> String {
        if self.arch.is_empty() {
            self.target.name().to_string()
        } else {
            format!("{}:{}", self.target, self.arch)
        }
    }
}

/// A module compiled for one or more targets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bundle {
    /// The `.krn` file the bundle was compiled from, for messages.
    pub source_name: String,
    pub kernels: Vec<KernelInfo>,
    pub images: Vec<Image>,
    /// The module constants with the values the images were compiled with (those set by
    /// `kdsl compile -D` included), in source order.
    pub constants: Vec<ConstantInfo>,
    /// What the images' entry points are called: this prefix and the kernel's name. Empty for
    /// `.kbundle` compilations; `__sycl_kernel_` for images that come from a SYCLBIN file.
    pub entry_point_prefix: String,
}

#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("not a kdsl bundle (the file does not start with \"KDSLBNDL\")")]
    BadMagic,
    #[error("bundle format version {found} is not supported (this build reads version {FORMAT_VERSION})")]
    UnsupportedVersion { found: u32 },
    #[error("the bundle is truncated or corrupt: {0}")]
    Corrupt(String),
    #[error("the bundle metadata is malformed: {0}")]
    Metadata(#[from] serde_json::Error),
    #[error("not a SYCLBIN file: {0}")]
    NotSyclbin(&'static str),
    #[error("{container} version {found} is not supported (this build reads version {supported})")]
    UnsupportedSyclbinVersion {
        container: &'static str,
        found: u32,
        supported: u32,
    },
    #[error("the {image} image has no entry point named `{entry_point}` (SYCLBIN images must be compiled with the `__sycl_kernel_` entry point prefix)")]
    MissingEntryPoint { entry_point: String, image: String },
    #[error("the SYCLBIN file holds no kdsl kernel metadata (`[kdsl/metadata]`): it was not written by kdsl")]
    NoKdslMetadata,
    #[error("a SYCLBIN file holds one SPIR-V image, and this bundle has {images}: SYCLBIN's IR modules name no processor, so a device could not tell an Intel GPU's image (spirv:intel_gpu_*) from the plain one; write a .kbundle, or compile one SPIR-V target")]
    SeveralSpirvImages { images: String },
    #[error("cannot read or write the bundle file `{path}`: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

#[derive(Serialize, Deserialize)]
struct BundleMetadata {
    source_name: String,
    kernels: Vec<KernelInfo>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    entry_point_prefix: String,
    images: Vec<ImageEntry>,
    /// Absent in bundles written before constants were recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    constants: Vec<ConstantInfo>,
}

#[derive(Serialize, Deserialize)]
struct ImageEntry {
    target: TargetKind,
    arch: String,
    offset: u64,
    length: u64,
    /// `fnv1a64:<16 hex digits>` of the image bytes; absent in version 1 files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checksum: Option<String>,
    /// Absent (false) in files written before matrix tiles.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    matrix_units: bool,
    /// Absent (false) in files written before matrix groups reached units.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    matrix_groups: bool,
    /// Absent (none) in files written before tiles needed whole sub-groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tile_sub_group_size: Option<u32>,
    /// Absent (none) in files written before tile copies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tensor_maps: Vec<EntryTensorMaps>,
}

/// The FNV-1a 64-bit hash of `bytes`, written as `fnv1a64:<16 hex digits>`. It finds damaged
/// images (bit flips, truncation, editing) before a driver sees them; it is not a signature.
pub fn image_checksum(bytes: &[u8]) -> String {
    format!("fnv1a64:{:016x}", fnv1a64(bytes))
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

impl Bundle {
    /// Fills the line and column of every check site of a checked kernel from the source
    /// text the bundle was compiled from (the code generator knows only byte spans).
    pub fn locate_check_sites(&mut self, source: &str) {
        for kernel in &mut self.kernels {
            for site in &mut kernel.check_sites {
                site.locate(source);
            }
        }
    }

    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The module constant `name` as compiled: `bundle.constant("BLOCK")?.value.as_u64()`.
    pub fn constant(&self, name: &str) -> Option<&ConstantInfo> {
        self.constants.iter().find(|c| c.name == name)
    }

    /// Every image of the given kind.
    pub fn images_for(&self, target: TargetKind) -> impl Iterator<Item = &Image> {
        self.images.iter().filter(move |i| i.target == target)
    }

    /// `spirv, ptx:sm_90, amdgpu:gfx90a` — what the bundle holds, for messages.
    pub fn describe_images(&self) -> String {
        if self.images.is_empty() {
            return "no images".to_string();
        }
        self.images
            .iter()
            .map(Image::describe)
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut offset = 0u64;
        let images = self
            .images
            .iter()
            .map(|image| {
                let entry = ImageEntry {
                    target: image.target,
                    arch: image.arch.clone(),
                    offset,
                    length: image.bytes.len() as u64,
                    checksum: Some(image_checksum(&image.bytes)),
                    matrix_units: image.matrix_units,
                    matrix_groups: image.matrix_groups,
                    tile_sub_group_size: image.tile_sub_group_size,
                    tensor_maps: image.tensor_maps.clone(),
                };
                offset += image.bytes.len() as u64;
                entry
            })
            .collect();
        let metadata = BundleMetadata {
            source_name: self.source_name.clone(),
            kernels: self.kernels.clone(),
            entry_point_prefix: self.entry_point_prefix.clone(),
            images,
            constants: self.constants.clone(),
        };
        let json = serde_json::to_vec_pretty(&metadata).expect("bundle metadata always serializes");
        let header = header_length(FORMAT_VERSION);
        let mut out = Vec::with_capacity(header + json.len() + offset as usize);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(json.len() as u64).to_le_bytes());
        out.extend_from_slice(&fnv1a64(&json).to_le_bytes());
        out.extend_from_slice(&json);
        for image in &self.images {
            out.extend_from_slice(&image.bytes);
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Bundle, BundleError> {
        if bytes.len() < 8 || &bytes[..8] != MAGIC {
            return Err(BundleError::BadMagic);
        }
        let header = bytes
            .get(8..20)
            .ok_or_else(|| BundleError::Corrupt("the header is shorter than 20 bytes".into()))?;
        let version = u32::from_le_bytes(header[..4].try_into().expect("4 bytes"));
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Err(BundleError::UnsupportedVersion { found: version });
        }
        let metadata_length = u64::from_le_bytes(header[4..12].try_into().expect("8 bytes"));
        let metadata_start = header_length(version);
        let metadata_end = usize::try_from(metadata_length)
            .ok()
            .and_then(|len| len.checked_add(metadata_start))
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| {
                BundleError::Corrupt("the metadata runs past the end of the file".into())
            })?;
        let metadata_bytes = &bytes[metadata_start..metadata_end];
        if version >= 3 {
            let recorded = u64::from_le_bytes(bytes[20..28].try_into().expect("8 bytes"));
            if recorded != fnv1a64(metadata_bytes) {
                return Err(BundleError::Corrupt(
                    "the metadata's checksum does not match it: the file is damaged".into(),
                ));
            }
        }
        let metadata: BundleMetadata = serde_json::from_slice(metadata_bytes)?;
        let payload = &bytes[metadata_end..];
        let mut images = Vec::with_capacity(metadata.images.len());
        for entry in metadata.images {
            let range = usize::try_from(entry.offset)
                .ok()
                .zip(usize::try_from(entry.length).ok())
                .and_then(|(start, len)| Some(start..start.checked_add(len)?))
                .filter(|range| range.end <= payload.len())
                .ok_or_else(|| {
                    BundleError::Corrupt(format!(
                        "the {} image runs past the end of the file",
                        entry.target
                    ))
                })?;
            let bytes = &payload[range];
            match (&entry.checksum, version) {
                (Some(expected), _) if *expected != image_checksum(bytes) => {
                    return Err(BundleError::Corrupt(format!(
                        "the {} image's checksum does not match its bytes: the file is damaged",
                        entry.target
                    )))
                }
                (None, 2..) => {
                    return Err(BundleError::Corrupt(format!(
                        "the {} image has no checksum",
                        entry.target
                    )))
                }
                _ => {}
            }
            // Plain SPIR-V names no processor (the driver finalizes it); one built for an
            // Intel GPU's matrix engines names that GPU. Other names were not written by kdsl.
            if entry.target == TargetKind::Spirv
                && !entry.arch.is_empty()
                && !processors::INTEL_GPU_PROCESSORS.contains(&entry.arch.as_str())
            {
                return Err(BundleError::Corrupt(format!(
                    "the spirv image names a processor ({:?}) that is none of kdsl's Intel GPUs ({})",
                    entry.arch,
                    processors::INTEL_GPU_PROCESSORS.join(", ")
                )));
            }
            images.push(Image {
                target: entry.target,
                arch: entry.arch,
                bytes: bytes.to_vec(),
                matrix_units: entry.matrix_units,
                matrix_groups: entry.matrix_groups,
                tile_sub_group_size: entry.tile_sub_group_size,
                tensor_maps: entry.tensor_maps,
            });
        }
        Ok(Bundle {
            source_name: metadata.source_name,
            kernels: metadata.kernels,
            images,
            constants: metadata.constants,
            entry_point_prefix: metadata.entry_point_prefix,
        })
    }

    /// Reads a `.kbundle` file, or a SYCLBIN file kdsl wrote (its images keep their
    /// `__sycl_kernel_` entry points, which `entry_point_prefix` records).
    pub fn read(path: impl AsRef<Path>) -> Result<Bundle, BundleError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| BundleError::Io {
            path: path.display().to_string(),
            source,
        })?;
        if syclbin::is_syclbin(&bytes) {
            syclbin::Syclbin::from_bytes(&bytes)?.to_bundle()
        } else {
            Bundle::from_bytes(&bytes)
        }
    }

    /// The entry point of kernel `name` in this bundle's images.
    pub fn entry_point(&self, name: &str) -> String {
        format!("{}{name}", self.entry_point_prefix)
    }

    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), BundleError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_bytes()).map_err(|source| BundleError::Io {
            path: path.display().to_string(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdsl_ir::{AddressSpace, ScalarType};

    fn sample() -> Bundle {
        Bundle {
            source_name: "saxpy.krn".into(),
            kernels: vec![KernelInfo {
                name: "saxpy".into(),
                parameters: vec![
                    ParameterInfo::Buffer {
                        name: "y".into(),
                        element: ScalarType::F32,
                        space: AddressSpace::Global,
                        writable: true,
                        alignment: 0,
                        record: None,
                    },
                    ParameterInfo::Scalar {
                        name: "n".into(),
                        ty: ScalarType::U32,
                    },
                ],
                local_memory_bytes: 0,
                ids_fit_in_31_bits: true,
                work_group_size: Some([256, 1, 1]),
                ..KernelInfo::default()
            }],
            images: vec![
                Image {
                    target: TargetKind::Spirv,
                    arch: String::new(),
                    bytes: vec![3, 2, 0x23, 7],
                    matrix_units: false,
                    matrix_groups: false,
                    tile_sub_group_size: Some(16),
                    tensor_maps: Vec::new(),
                },
                Image {
                    target: TargetKind::Ptx,
                    arch: "sm_90".into(),
                    bytes: b".version 7.8".to_vec(),
                    matrix_units: true,
                    matrix_groups: true,
                    tile_sub_group_size: Some(32),
                    tensor_maps: vec![EntryTensorMaps {
                        entry: "saxpy$contiguous".into(),
                        maps: vec![TensorMapInfo {
                            buffer: 1,
                            element: ScalarType::F16,
                            rows: 128,
                            columns: 64,
                            stored: true,
                        }],
                    }],
                },
            ],
            constants: vec![
                ConstantInfo {
                    name: "BLOCK".into(),
                    ty: ScalarType::U32,
                    value: ConstantValue::Unsigned(256),
                    defined: true,
                },
                ConstantInfo {
                    name: "SCALE".into(),
                    ty: ScalarType::F32,
                    value: ConstantValue::Float(0.5),
                    defined: false,
                },
            ],
            entry_point_prefix: String::new(),
        }
    }

    #[test]
    fn round_trips_through_bytes() {
        let bundle = sample();
        assert_eq!(Bundle::from_bytes(&bundle.to_bytes()).unwrap(), bundle);
        assert_eq!(bundle.describe_images(), "spirv, ptx:sm_90");
        let ptx = &bundle.images[1];
        assert_eq!(ptx.tensor_maps_of("saxpy$contiguous")[0].rows, 128);
        assert!(ptx.tensor_maps_of("saxpy").is_empty());
    }

    #[test]
    fn reads_constants_by_name() {
        let bundle = sample();
        assert_eq!(
            bundle.constant("BLOCK").and_then(|c| c.value.as_u64()),
            Some(256)
        );
        assert_eq!(
            bundle.constant("SCALE").and_then(|c| c.value.as_f64()),
            Some(0.5)
        );
        assert!(bundle.constant("MISSING").is_none());
    }

    #[test]
    fn reads_bundles_written_before_constants_and_work_group_sizes() {
        // The metadata of a bundle from before these fields existed (any format version).
        let metadata = br#"{"source_name":"old.krn","kernels":[{"name":"k","parameters":[],"local_memory_bytes":0,"ids_fit_in_31_bits":true}],"images":[]}"#;
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&1u32.to_le_bytes());
        bytes.extend_from_slice(&(metadata.len() as u64).to_le_bytes());
        bytes.extend_from_slice(metadata);
        let bundle = Bundle::from_bytes(&bytes).unwrap();
        assert!(bundle.constants.is_empty());
        assert_eq!(bundle.kernels[0].work_group_size, None);
    }

    #[test]
    fn rejects_garbage_and_truncation_without_panicking() {
        assert!(matches!(
            Bundle::from_bytes(b"nope"),
            Err(BundleError::BadMagic)
        ));
        let bytes = sample().to_bytes();
        for cut in 0..bytes.len() {
            assert!(Bundle::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut wrong_version = bytes.clone();
        wrong_version[8] = 9;
        assert!(matches!(
            Bundle::from_bytes(&wrong_version),
            Err(BundleError::UnsupportedVersion { found: 9 })
        ));
    }

    #[test]
    fn every_flipped_image_bit_is_found_by_the_checksum() {
        let bytes = sample().to_bytes();
        let images_start = bytes.len() - (4 + b".version 7.8".len());
        for position in images_start..bytes.len() {
            for bit in 0..8 {
                let mut damaged = bytes.clone();
                damaged[position] ^= 1 << bit;
                match Bundle::from_bytes(&damaged) {
                    Err(BundleError::Corrupt(message)) => {
                        assert!(message.contains("checksum"), "{message}")
                    }
                    other => panic!("a flip of bit {bit} at byte {position} gave {other:?}"),
                }
            }
        }
        assert_eq!(
            image_checksum(b""),
            "fnv1a64:cbf29ce484222325",
            "the FNV-1a offset basis"
        );
    }

    #[test]
    fn reads_version_1_files_without_checksums() {
        let bundle = sample();
        let bytes = bundle.to_bytes();
        // The same metadata without checksums, as version 1 wrote it (a 20-byte header).
        let metadata_length = u64::from_le_bytes(bytes[12..20].try_into().unwrap()) as usize;
        let json = String::from_utf8(bytes[28..28 + metadata_length].to_vec()).unwrap();
        let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
        for image in value["images"].as_array_mut().unwrap() {
            image.as_object_mut().unwrap().remove("checksum");
        }
        let stripped = serde_json::to_vec(&value).unwrap();
        let mut old = bytes[..8].to_vec();
        old.extend_from_slice(&1u32.to_le_bytes());
        old.extend_from_slice(&(stripped.len() as u64).to_le_bytes());
        old.extend_from_slice(&stripped);
        old.extend_from_slice(&bytes[28 + metadata_length..]);
        assert_eq!(Bundle::from_bytes(&old).unwrap(), bundle);
    }

    #[test]
    fn refuses_a_spirv_image_that_names_a_processor() {
        // A SYCLBIN cannot carry it, so such a bundle would change on its way through one.
        let mut bundle = sample();
        bundle.images[0].arch = " ".into();
        assert_eq!(bundle.images[0].target, TargetKind::Spirv);
        match Bundle::from_bytes(&bundle.to_bytes()) {
            Err(BundleError::Corrupt(message)) => assert!(message.contains("processor")),
            other => panic!("expected a corrupt bundle, got {other:?}"),
        }
    }

    #[test]
    fn reads_version_2_files_without_a_metadata_checksum() {
        let bundle = sample();
        let bytes = bundle.to_bytes();
        let mut old = bytes[..8].to_vec();
        old.extend_from_slice(&2u32.to_le_bytes());
        old.extend_from_slice(&bytes[12..20]);
        old.extend_from_slice(&bytes[28..]);
        assert_eq!(Bundle::from_bytes(&old).unwrap(), bundle);
    }

    #[test]
    fn an_edited_metadata_byte_is_found_by_its_checksum() {
        let bytes = sample().to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        // The buffer's element type, edited as a text editor would: f32 to u8 is one length.
        let at = text.find("\"f32\"").expect("an f32 in the metadata");
        let mut edited = bytes.clone();
        edited[at + 1..at + 4].copy_from_slice(b"u8 ");
        match Bundle::from_bytes(&edited) {
            Err(BundleError::Corrupt(message)) => {
                assert!(message.contains("metadata"), "{message}")
            }
            other => panic!("an edited metadata byte gave {other:?}"),
        }
        for position in 28..bytes.len() - 16 {
            let mut damaged = bytes.clone();
            damaged[position] ^= 0x20;
            assert!(
                Bundle::from_bytes(&damaged).is_err(),
                "a flip at byte {position}"
            );
        }
    }
}
