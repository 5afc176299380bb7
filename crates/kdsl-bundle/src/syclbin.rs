//! SYCLBIN files: the format of the `sycl_ext_oneapi_syclbin` extension, which a stock SYCL
//! program loads with `sycl::ext::oneapi::experimental::get_kernel_bundle(context, devices, bytes)`.
//!
//! What is written is what the Intel SYCL runtime 2026.2 reads (docs/syclbin.md has the whole
//! layout and what was verified where). All integers are little-endian.
//!
//! ```text
//! OffloadBinary header  32 bytes  magic 10 FF 10 AD, version 2, total size, entries offset (32), entry count (1)
//! OffloadBinary entry   40 bytes  image kind 7 (SYCLBIN), offload kind 8 (SYCL), flags 0,
//!                                 string table offset and count (0, 0), image offset (72), image size
//! SYCLBIN image (at 72):
//!   header              56 bytes  magic 0x53594249 ("SYBI"), version 1, counts of abstract modules,
//!                                 IR modules and native images, 4 bytes padding, metadata table size,
//!                                 binary table size, global metadata offset and size
//!   abstract module headers       32 bytes each: metadata offset, size (u64); IR module count, first
//!                                 index, native image count, first index (u32)
//!   IR module headers             32 bytes each: metadata offset, size, IR offset, size (u64)
//!   native image headers          32 bytes each: metadata offset, size, image offset, size (u64)
//!   metadata table                property sets as text, padded to 8 bytes
//!   binary table                  the images, each at an 8-byte aligned offset, padded to 8 bytes
//! ```
//!
//! Property sets are text: a `[name]` line, then `key=1|decimal` (a 32-bit integer) or
//! `key=2|base64` (a byte array: a little-endian u64 count of bits, then the bytes, in LLVM's
//! base64 variant, see [`crate::base64`]) lines.
//!
//! kdsl writes one abstract module holding every image. Its kernel names, in
//! `[SYCL/kernel names]` and as the entry point of every image, are `__sycl_kernel_<name>`
//! ([`KERNEL_NAME_PREFIX`]), since that is what `ext_oneapi_get_kernel("<name>")` looks up.
//! kdsl's own kernel metadata (parameters, types, writability, local memory) travels in an extra
//! property set, `[kdsl/metadata]`, which SYCL runtimes ignore.

use crate::{Bundle, BundleError, Image, KernelInfo, TargetKind};
use serde::{Deserialize, Serialize};

mod property_sets;
mod read;

pub use property_sets::{parse_property_sets, write_property_sets, PropertySet, PropertyValue};
use read::{offload_binary_image, parse_syclbin};

/// The magic number of LLVM's OffloadBinary container.
pub const OFFLOAD_BINARY_MAGIC: [u8; 4] = [0x10, 0xFF, 0x10, 0xAD];
/// The OffloadBinary version written and read.
pub const OFFLOAD_BINARY_VERSION: u32 = 2;
/// OffloadBinary image kind of a SYCLBIN image.
pub const IMAGE_KIND_SYCLBIN: u16 = 7;
/// OffloadBinary offload kind of SYCL.
pub const OFFLOAD_KIND_SYCL: u16 = 8;
/// The SYCLBIN magic number, `SYBI` read as a big-endian u32 (written little-endian).
pub const SYCLBIN_MAGIC: u32 = 0x5359_4249;
/// The SYCLBIN version written and read.
pub const SYCLBIN_VERSION: u32 = 1;
/// What `ext_oneapi_get_kernel(name)` looks up: the key in `[SYCL/kernel names]` and the entry
/// point in every image must be this prefix followed by the kernel's name.
pub const KERNEL_NAME_PREFIX: &str = "__sycl_kernel_";

/// Property set names and keys.
pub const GLOBAL_METADATA: &str = "SYCLBIN/global metadata";
pub const IR_MODULE_METADATA: &str = "SYCLBIN/ir module metadata";
pub const NATIVE_IMAGE_METADATA: &str = "SYCLBIN/native device code image metadata";
pub const KERNEL_NAMES: &str = "SYCL/kernel names";
/// kdsl's own property set in the abstract module: `version=1|1`, `source=2|<file name>`,
/// `kernels=2|<JSON array of KernelInfo>`, `checksums=2|<image checksums, comma separated>`
/// (`fnv1a64:...` of each IR module, then each native image, checked on every read).
pub const KDSL_METADATA: &str = "kdsl/metadata";
pub const KDSL_METADATA_VERSION: u32 = 1;

/// The target triple of PTX native images.
pub const PTX_TRIPLE: &str = "nvptx64-nvidia-cuda";
/// The target triple of AMDGPU native images.
pub const AMDGPU_TRIPLE: &str = "amdgcn-amd-amdhsa";

const OFFLOAD_HEADER_SIZE: usize = 32;
const OFFLOAD_ENTRY_SIZE: usize = 40;
const SYCLBIN_HEADER_SIZE: usize = 56;
const MODULE_HEADER_SIZE: usize = 32;
const ALIGNMENT: usize = 8;

/// The `sycl::bundle_state` a SYCLBIN file declares. `get_kernel_bundle<State>` fails unless
/// it asks for the state the file declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    Input,
    Object,
    Executable,
}

impl State {
    pub fn value(self) -> u32 {
        match self {
            State::Input => 0,
            State::Object => 1,
            State::Executable => 2,
        }
    }

    pub fn from_value(value: u32) -> Option<State> {
        match value {
            0 => Some(State::Input),
            1 => Some(State::Object),
            2 => Some(State::Executable),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            State::Input => "input",
            State::Object => "object",
            State::Executable => "executable",
        }
    }
}

/// The representation an IR module holds (`type` in its metadata).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IrType {
    Spirv,
    Ptx,
    Amdgcn,
    Other(u32),
}

impl IrType {
    pub fn value(self) -> u32 {
        match self {
            IrType::Spirv => 0,
            IrType::Ptx => 1,
            IrType::Amdgcn => 2,
            IrType::Other(value) => value,
        }
    }

    pub fn from_value(value: u32) -> IrType {
        match value {
            0 => IrType::Spirv,
            1 => IrType::Ptx,
            2 => IrType::Amdgcn,
            other => IrType::Other(other),
        }
    }
}

/// An IR module: SPIR-V for kdsl.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrModule {
    pub ir_type: IrType,
    pub bytes: Vec<u8>,
}

/// A native device code image: PTX or an AMDGPU code object for kdsl.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeImage {
    /// The target triple; its first dash-separated part picks the SYCL backend.
    pub target: String,
    /// `sm_90`, `gfx90a`.
    pub arch: String,
    pub bytes: Vec<u8>,
}

/// kdsl's metadata of the kernels of an abstract module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KdslMetadata {
    pub source_name: String,
    pub kernels: Vec<KernelInfo>,
    /// The images (`ptx:sm_90a`) that run matrix tiles, and matrix groups, on matrix units
    /// ([`Image::matrix_units`], [`Image::matrix_groups`]); `matrix_units` and
    /// `matrix_groups` in `[kdsl/metadata]`, comma-separated, absent where empty.
    pub matrix_units: Vec<String>,
    pub matrix_groups: Vec<String>,
    /// [`Image::tile_sub_group_size`] of each image that has one, as `image=size`
    /// (`spirv=16`); `tile_sub_groups` in `[kdsl/metadata]`, absent where empty.
    pub tile_sub_groups: Vec<String>,
}

/// A collection of images that share kernel names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AbstractModule {
    /// The keys of `[SYCL/kernel names]`, as written (`__sycl_kernel_saxpy` for kdsl).
    pub kernel_names: Vec<String>,
    /// `[kdsl/metadata]`, present in files kdsl wrote.
    pub kdsl: Option<KdslMetadata>,
    /// Every other property set of the module, kept as read.
    pub other_property_sets: Vec<PropertySet>,
    pub ir_modules: Vec<IrModule>,
    pub native_images: Vec<NativeImage>,
}

/// A whole SYCLBIN file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Syclbin {
    pub state: State,
    pub modules: Vec<AbstractModule>,
}

/// The entry point name of a kernel in a SYCLBIN image.
pub fn entry_point_name(kernel: &str) -> String {
    format!("{KERNEL_NAME_PREFIX}{kernel}")
}

/// True when `bytes` start like a SYCLBIN file (an OffloadBinary), not a `.kbundle`.
pub fn is_syclbin(bytes: &[u8]) -> bool {
    bytes.starts_with(&OFFLOAD_BINARY_MAGIC)
}

#[derive(Serialize, Deserialize)]
struct KernelList(Vec<KernelInfo>);

impl Syclbin {
    /// One abstract module holding every image of `bundle`. The images must have been compiled
    /// with entry points named [`entry_point_name`] (kdsl-codegen's `entry_point_prefix`); an
    /// image that does not mention each kernel's entry point name is refused, and so is a
    /// kernel name that `[SYCL/kernel names]` cannot hold (a key has no `=` or line break).
    pub fn from_bundle(bundle: &Bundle, state: State) -> Result<Syclbin, BundleError> {
        if let Some(kernel) = bundle.kernels.iter().find(|k| k.name.contains(['=', '\n'])) {
            return Err(BundleError::Corrupt(format!(
                "the kernel name {:?} cannot be written to a SYCLBIN file (it holds `=` or a line break)",
                kernel.name
            )));
        }
        let spirv: Vec<String> = bundle
            .images_for(TargetKind::Spirv)
            .map(Image::describe)
            .collect();
        if spirv.len() > 1 {
            return Err(BundleError::SeveralSpirvImages {
                images: spirv.join(", "),
            });
        }
        let mut module = AbstractModule {
            kernel_names: crate::kernel_entry_points(&bundle.kernels)
                .map(|(_, entry)| entry_point_name(entry))
                .collect(),
            kdsl: Some(KdslMetadata {
                source_name: bundle.source_name.clone(),
                kernels: bundle.kernels.clone(),
                matrix_units: described(bundle, |image| image.matrix_units),
                matrix_groups: described(bundle, |image| image.matrix_groups),
                tile_sub_groups: bundle
                    .images
                    .iter()
                    .filter_map(|image| {
                        let size = image.tile_sub_group_size?;
                        Some(format!("{}={size}", image.describe()))
                    })
                    .collect(),
            }),
            ..AbstractModule::default()
        };
        for image in &bundle.images {
            for kernel in &module.kernel_names {
                if !contains(&image.bytes, kernel.as_bytes()) {
                    return Err(BundleError::MissingEntryPoint {
                        entry_point: kernel.clone(),
                        image: image.describe(),
                    });
                }
            }
            match image.target {
                TargetKind::Spirv => module.ir_modules.push(IrModule {
                    ir_type: IrType::Spirv,
                    bytes: image.bytes.clone(),
                }),
                TargetKind::Ptx => module.native_images.push(NativeImage {
                    target: PTX_TRIPLE.to_string(),
                    arch: image.arch.clone(),
                    bytes: image.bytes.clone(),
                }),
                TargetKind::Amdgpu => module.native_images.push(NativeImage {
                    target: AMDGPU_TRIPLE.to_string(),
                    arch: image.arch.clone(),
                    bytes: image.bytes.clone(),
                }),
            }
        }
        Ok(Syclbin {
            state,
            modules: vec![module],
        })
    }

    /// The kdsl bundle this file holds: kernels from `[kdsl/metadata]`, and the SPIR-V, PTX and
    /// AMDGPU images (others, such as Intel AOT images, are left out). Entry points keep their
    /// [`KERNEL_NAME_PREFIX`]. Fails for a SYCLBIN kdsl did not write.
    pub fn to_bundle(&self) -> Result<Bundle, BundleError> {
        let metadata = self
            .modules
            .iter()
            .find_map(|m| m.kdsl.as_ref())
            .ok_or(BundleError::NoKdslMetadata)?;
        let mut images = Vec::new();
        for module in &self.modules {
            for ir in &module.ir_modules {
                if ir.ir_type == IrType::Spirv {
                    images.push(metadata.flagged(Image {
                        target: TargetKind::Spirv,
                        arch: String::new(),
                        bytes: ir.bytes.clone(),
                        matrix_units: false,
                        matrix_groups: false,
                        tile_sub_group_size: None,
                        tensor_maps: Vec::new(),
                    }));
                }
            }
            for native in &module.native_images {
                let target = match native.target.split('-').next() {
                    Some("nvptx64") => TargetKind::Ptx,
                    Some("amdgcn") => TargetKind::Amdgpu,
                    _ => continue,
                };
                images.push(metadata.flagged(Image {
                    target,
                    arch: native.arch.clone(),
                    bytes: native.bytes.clone(),
                    matrix_units: false,
                    matrix_groups: false,
                    tile_sub_group_size: None,
                    tensor_maps: Vec::new(),
                }));
            }
        }
        Ok(Bundle {
            source_name: metadata.source_name.clone(),
            kernels: metadata.kernels.clone(),
            images,
            // `[kdsl/metadata]` does not record module constants (yet).
            constants: Vec::new(),
            entry_point_prefix: KERNEL_NAME_PREFIX.to_string(),
        })
    }

    /// `spirv (IR), nvptx64-nvidia-cuda sm_90, ...` — what the file holds, for messages.
    pub fn describe_images(&self) -> String {
        let mut parts = Vec::new();
        for module in &self.modules {
            for ir in &module.ir_modules {
                parts.push(match ir.ir_type {
                    IrType::Spirv => "SPIR-V (IR module)".to_string(),
                    IrType::Ptx => "PTX (IR module)".to_string(),
                    IrType::Amdgcn => "AMDGCN (IR module)".to_string(),
                    IrType::Other(value) => format!("IR type {value} (IR module)"),
                });
            }
            for native in &module.native_images {
                parts.push(format!("{} {} (native image)", native.target, native.arch));
            }
        }
        if parts.is_empty() {
            "no images".to_string()
        } else {
            parts.join(", ")
        }
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let ir_count: usize = self.modules.iter().map(|m| m.ir_modules.len()).sum();
        let native_count: usize = self.modules.iter().map(|m| m.native_images.len()).sum();
        let mut metadata_table = Vec::new();
        let mut binary_table = Vec::new();

        let global =
            write_property_sets(&[PropertySet::new(GLOBAL_METADATA)
                .with("state", PropertyValue::U32(self.state.value()))]);
        let global_range = append_aligned(&mut metadata_table, &global);

        let mut module_headers = Vec::new();
        let mut ir_headers = Vec::new();
        let mut native_headers = Vec::new();
        for module in &self.modules {
            let metadata = append_aligned(
                &mut metadata_table,
                &write_property_sets(&module.property_sets()),
            );
            push_u64(&mut module_headers, metadata.0);
            push_u64(&mut module_headers, metadata.1);
            push_u32(&mut module_headers, module.ir_modules.len() as u32);
            push_u32(
                &mut module_headers,
                (ir_headers.len() / MODULE_HEADER_SIZE) as u32,
            );
            push_u32(&mut module_headers, module.native_images.len() as u32);
            push_u32(
                &mut module_headers,
                (native_headers.len() / MODULE_HEADER_SIZE) as u32,
            );
            for ir in &module.ir_modules {
                let properties = PropertySet::new(IR_MODULE_METADATA)
                    .with("type", PropertyValue::U32(ir.ir_type.value()));
                let metadata =
                    append_aligned(&mut metadata_table, &write_property_sets(&[properties]));
                let binary = append_aligned(&mut binary_table, &ir.bytes);
                for value in [metadata.0, metadata.1, binary.0, binary.1] {
                    push_u64(&mut ir_headers, value);
                }
            }
            for native in &module.native_images {
                let properties = PropertySet::new(NATIVE_IMAGE_METADATA)
                    .with(
                        "target",
                        PropertyValue::Bytes(native.target.as_bytes().to_vec()),
                    )
                    .with(
                        "arch",
                        PropertyValue::Bytes(native.arch.as_bytes().to_vec()),
                    );
                let metadata =
                    append_aligned(&mut metadata_table, &write_property_sets(&[properties]));
                let binary = append_aligned(&mut binary_table, &native.bytes);
                for value in [metadata.0, metadata.1, binary.0, binary.1] {
                    push_u64(&mut native_headers, value);
                }
            }
        }
        pad_to_alignment(&mut metadata_table);
        pad_to_alignment(&mut binary_table);

        let mut image = Vec::new();
        push_u32(&mut image, SYCLBIN_MAGIC);
        push_u32(&mut image, SYCLBIN_VERSION);
        push_u32(&mut image, self.modules.len() as u32);
        push_u32(&mut image, ir_count as u32);
        push_u32(&mut image, native_count as u32);
        push_u32(&mut image, 0);
        push_u64(&mut image, metadata_table.len() as u64);
        push_u64(&mut image, binary_table.len() as u64);
        push_u64(&mut image, global_range.0);
        push_u64(&mut image, global_range.1);
        image.extend_from_slice(&module_headers);
        image.extend_from_slice(&ir_headers);
        image.extend_from_slice(&native_headers);
        image.extend_from_slice(&metadata_table);
        image.extend_from_slice(&binary_table);

        let image_offset = OFFLOAD_HEADER_SIZE + OFFLOAD_ENTRY_SIZE;
        let mut out = Vec::with_capacity(image_offset + image.len());
        out.extend_from_slice(&OFFLOAD_BINARY_MAGIC);
        push_u32(&mut out, OFFLOAD_BINARY_VERSION);
        push_u64(&mut out, (image_offset + image.len()) as u64);
        push_u64(&mut out, OFFLOAD_HEADER_SIZE as u64);
        push_u64(&mut out, 1);
        out.extend_from_slice(&IMAGE_KIND_SYCLBIN.to_le_bytes());
        out.extend_from_slice(&OFFLOAD_KIND_SYCL.to_le_bytes());
        push_u32(&mut out, 0);
        push_u64(&mut out, 0);
        push_u64(&mut out, 0);
        push_u64(&mut out, image_offset as u64);
        push_u64(&mut out, image.len() as u64);
        out.extend_from_slice(&image);
        out
    }

    /// Parses a SYCLBIN file. Malformed input of any kind is an error, never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Syclbin, BundleError> {
        let image = offload_binary_image(bytes)?;
        parse_syclbin(image)
    }
}

impl AbstractModule {
    /// The kernel names without [`KERNEL_NAME_PREFIX`] (names without it are kept whole).
    pub fn plain_kernel_names(&self) -> Vec<&str> {
        self.kernel_names
            .iter()
            .map(|name| name.strip_prefix(KERNEL_NAME_PREFIX).unwrap_or(name))
            .collect()
    }

    /// [`crate::image_checksum`] of every image: IR modules first, then native images.
    fn image_checksums(&self) -> Vec<String> {
        let irs = self.ir_modules.iter().map(|ir| &ir.bytes);
        let natives = self.native_images.iter().map(|native| &native.bytes);
        irs.chain(natives)
            .map(|bytes| crate::image_checksum(bytes))
            .collect()
    }

    /// Checks the images against the checksums `[kdsl/metadata]` recorded.
    fn verify_checksums(&self, recorded: &[u8]) -> Result<(), BundleError> {
        let recorded = std::str::from_utf8(recorded)
            .map_err(|_| corrupt("`[kdsl/metadata]`: `checksums` is not UTF-8"))?;
        let recorded: Vec<&str> = recorded.split(',').filter(|c| !c.is_empty()).collect();
        let actual = self.image_checksums();
        if recorded.len() != actual.len() {
            return Err(corrupt(format!(
                "`[kdsl/metadata]` has {} checksums for {} images",
                recorded.len(),
                actual.len()
            )));
        }
        for (index, (recorded, actual)) in recorded.iter().zip(&actual).enumerate() {
            if recorded != actual {
                return Err(corrupt(format!(
                    "image {index}'s checksum does not match its bytes: the file is damaged"
                )));
            }
        }
        Ok(())
    }

    fn property_sets(&self) -> Vec<PropertySet> {
        let mut kernel_names = PropertySet::new(KERNEL_NAMES);
        for name in &self.kernel_names {
            kernel_names
                .properties
                .push((name.clone(), PropertyValue::U32(1)));
        }
        let mut sets = vec![kernel_names];
        if let Some(kdsl) = &self.kdsl {
            let kernels = serde_json::to_vec(&KernelList(kdsl.kernels.clone()))
                .expect("kernel metadata always serializes");
            sets.push(
                PropertySet::new(KDSL_METADATA)
                    .with("version", PropertyValue::U32(KDSL_METADATA_VERSION))
                    .with(
                        "source",
                        PropertyValue::Bytes(kdsl.source_name.as_bytes().to_vec()),
                    )
                    .with("kernels", PropertyValue::Bytes(kernels))
                    .with_list("matrix_units", &kdsl.matrix_units)
                    .with_list("matrix_groups", &kdsl.matrix_groups)
                    .with_list("tile_sub_groups", &kdsl.tile_sub_groups)
                    .with(
                        "checksums",
                        PropertyValue::Bytes(self.image_checksums().join(",").into_bytes()),
                    ),
            );
        }
        sets.extend(self.other_property_sets.iter().cloned());
        sets
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

fn push_u32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn push_u64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn pad_to_alignment(table: &mut Vec<u8>) {
    table.resize(table.len().next_multiple_of(ALIGNMENT), 0);
}

/// Appends `bytes` at the next 8-byte aligned offset of `table`; gives (offset, size).
fn append_aligned(table: &mut Vec<u8>, bytes: &[u8]) -> (u64, u64) {
    pad_to_alignment(table);
    let offset = table.len() as u64;
    table.extend_from_slice(bytes);
    (offset, bytes.len() as u64)
}

fn corrupt(message: impl Into<String>) -> BundleError {
    BundleError::Corrupt(format!("SYCLBIN: {}", message.into()))
}

/// The names (`ptx:sm_90a`) of the images of `bundle` that `test` holds for.
fn described(bundle: &Bundle, test: impl Fn(&Image) -> bool) -> Vec<String> {
    bundle
        .images
        .iter()
        .filter(|image| test(image))
        .map(Image::describe)
        .collect()
}

impl KdslMetadata {
    /// `image` with the matrix flags this metadata records for it.
    fn flagged(&self, image: Image) -> Image {
        let name = image.describe();
        Image {
            matrix_units: self.matrix_units.contains(&name),
            matrix_groups: self.matrix_groups.contains(&name),
            tile_sub_group_size: self.tile_sub_groups.iter().find_map(|entry| {
                let (image, size) = entry.split_once('=')?;
                if image == name {
                    size.parse().ok()
                } else {
                    None
                }
            }),
            ..image
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParameterInfo;
    use kdsl_ir::{AddressSpace, ScalarType};

    fn sample_bundle() -> Bundle {
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
                        name: "a".into(),
                        ty: ScalarType::F32,
                    },
                ],
                local_memory_bytes: 1024,
                ids_fit_in_31_bits: true,
                work_group_size: None,
                ..KernelInfo::default()
            }],
            images: vec![
                Image {
                    target: TargetKind::Spirv,
                    arch: String::new(),
                    bytes: b"\x03\x02\x23\x07 OpEntryPoint __sycl_kernel_saxpy".to_vec(),
                    matrix_units: false,
                    matrix_groups: false,
                    tile_sub_group_size: Some(16),
                    tensor_maps: Vec::new(),
                },
                Image {
                    target: TargetKind::Ptx,
                    arch: "sm_90".into(),
                    bytes: b".entry __sycl_kernel_saxpy(".to_vec(),
                    matrix_units: true,
                    matrix_groups: true,
                    tile_sub_group_size: Some(32),
                    tensor_maps: Vec::new(),
                },
                Image {
                    target: TargetKind::Amdgpu,
                    arch: "gfx90a".into(),
                    bytes: b"\x7fELF __sycl_kernel_saxpy.kd".to_vec(),
                    matrix_units: false,
                    matrix_groups: false,
                    tile_sub_group_size: Some(16),
                    tensor_maps: Vec::new(),
                },
            ],
            constants: Vec::new(),
            entry_point_prefix: KERNEL_NAME_PREFIX.to_string(),
        }
    }

    fn sample_bytes() -> Vec<u8> {
        Syclbin::from_bundle(&sample_bundle(), State::Executable)
            .unwrap()
            .to_bytes()
    }

    #[test]
    fn round_trips_a_bundle() {
        let bundle = sample_bundle();
        let syclbin = Syclbin::from_bundle(&bundle, State::Executable).unwrap();
        let parsed = Syclbin::from_bytes(&syclbin.to_bytes()).unwrap();
        assert_eq!(parsed, syclbin);
        assert_eq!(parsed.state, State::Executable);
        assert_eq!(parsed.modules[0].kernel_names, ["__sycl_kernel_saxpy"]);
        assert_eq!(parsed.modules[0].plain_kernel_names(), ["saxpy"]);
        assert_eq!(parsed.to_bundle().unwrap(), bundle);
        assert_eq!(
            parsed.describe_images(),
            "SPIR-V (IR module), nvptx64-nvidia-cuda sm_90 (native image), amdgcn-amd-amdhsa gfx90a (native image)"
        );
    }

    #[test]
    fn writes_the_containers_and_global_metadata_as_documented() {
        let bytes = sample_bytes();
        assert_eq!(bytes[..4], [0x10, 0xFF, 0x10, 0xAD]);
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
        assert_eq!(u32_at(4), 2);
        assert_eq!(u64_at(8), bytes.len() as u64);
        assert_eq!((u64_at(16), u64_at(24)), (32, 1));
        assert_eq!(bytes[32..36], [7, 0, 8, 0]);
        assert_eq!((u64_at(56), u64_at(64)), (72, bytes.len() as u64 - 72));
        assert_eq!(&bytes[72..76], b"IBYS", "0x53594249 little-endian");
        assert_eq!(
            (u32_at(76), u32_at(80), u32_at(84), u32_at(88)),
            (1, 1, 1, 2)
        );
        let metadata_start = 72 + 56 + 4 * 32;
        let global = metadata_start + u64_at(72 + 40) as usize;
        let global_size = u64_at(72 + 48) as usize;
        assert_eq!(
            &bytes[global..global + global_size],
            b"[SYCLBIN/global metadata]\nstate=1|2\n"
        );
    }

    #[test]
    fn refuses_images_without_the_prefixed_entry_point() {
        let mut bundle = sample_bundle();
        bundle.images[1].bytes = b".entry saxpy(".to_vec();
        match Syclbin::from_bundle(&bundle, State::Executable) {
            Err(BundleError::MissingEntryPoint { entry_point, image }) => {
                assert_eq!(entry_point, "__sycl_kernel_saxpy");
                assert_eq!(image, "ptx:sm_90");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn refuses_several_spirv_images() {
        let mut bundle = sample_bundle();
        let spirv = bundle
            .images
            .iter()
            .find(|image| image.target == TargetKind::Spirv)
            .cloned()
            .expect("the sample has a SPIR-V image");
        bundle.images.push(Image {
            arch: "intel_gpu_pvc".into(),
            matrix_units: true,
            ..spirv
        });
        match Syclbin::from_bundle(&bundle, State::Executable) {
            Err(BundleError::SeveralSpirvImages { images }) => {
                assert_eq!(images, "spirv, spirv:intel_gpu_pvc")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reports_foreign_files_as_typed_errors() {
        assert!(matches!(
            Syclbin::from_bytes(b"KDSLBNDL...."),
            Err(BundleError::NotSyclbin(_))
        ));
        let mut bytes = sample_bytes();
        bytes[4] = 3;
        assert!(matches!(
            Syclbin::from_bytes(&bytes),
            Err(BundleError::UnsupportedSyclbinVersion {
                container: "OffloadBinary",
                found: 3,
                ..
            })
        ));
        // OffloadBinary version 1 stores the entry size (40) instead of the entry count.
        bytes[4] = 1;
        assert!(matches!(
            Syclbin::from_bytes(&bytes),
            Err(BundleError::Corrupt(_))
        ));
        bytes[24] = 40;
        assert_eq!(
            Syclbin::from_bytes(&bytes).unwrap(),
            Syclbin::from_bytes(&sample_bytes()).unwrap()
        );
        let mut bytes = sample_bytes();
        bytes[76] = 2;
        assert!(matches!(
            Syclbin::from_bytes(&bytes),
            Err(BundleError::UnsupportedSyclbinVersion {
                container: "SYCLBIN",
                found: 2,
                ..
            })
        ));
        let foreign = Syclbin {
            state: State::Input,
            modules: vec![AbstractModule {
                kernel_names: vec!["_ZTS6kernel".into()],
                ..AbstractModule::default()
            }],
        };
        let parsed = Syclbin::from_bytes(&foreign.to_bytes()).unwrap();
        assert_eq!(parsed, foreign);
        assert!(matches!(
            parsed.to_bundle(),
            Err(BundleError::NoKdslMetadata)
        ));
    }

    #[test]
    fn malformed_property_sets_are_errors() {
        for text in [
            "key=1|1\n",
            "[set\n",
            "[set]\nkey\n",
            "[set]\nkey=1\n",
            "[set]\nkey=1|x\n",
            "[set]\nkey=3|1\n",
            "[set]\nkey=2|AAAA\n",
            "[set]\nkey=2|QAAAAAAAAAA\n",
        ] {
            assert!(
                parse_property_sets(text.as_bytes()).is_err(),
                "accepted {text:?}"
            );
        }
        assert!(parse_property_sets(&[0xff, 0xfe]).is_err());
    }

    #[test]
    fn truncations_and_bit_flips_never_panic() {
        let bytes = sample_bytes();
        for cut in 0..bytes.len() {
            assert!(Syclbin::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        // A fixed xorshift sequence: reproducible, and covering every part of the file.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut rejected = 0;
        for _ in 0..20_000 {
            let mut mutated = bytes.clone();
            for _ in 0..1 + next() % 4 {
                let position = (next() % mutated.len() as u64) as usize;
                mutated[position] ^= 1 << (next() % 8);
            }
            if Syclbin::from_bytes(&mutated).is_err() {
                rejected += 1;
            }
        }
        assert!(rejected > 1_000, "only {rejected} of 20000 flips rejected");
    }

    #[test]
    fn every_flipped_image_bit_is_found_by_the_checksums() {
        let bytes = sample_bytes();
        let syclbin = Syclbin::from_bytes(&bytes).unwrap();
        let module = &syclbin.modules[0];
        let images = module
            .ir_modules
            .iter()
            .map(|ir| &ir.bytes)
            .chain(module.native_images.iter().map(|native| &native.bytes));
        for image in images {
            let start = bytes
                .windows(image.len())
                .position(|window| window == image.as_slice())
                .unwrap();
            for position in start..start + image.len() {
                for bit in 0..8 {
                    let mut damaged = bytes.clone();
                    damaged[position] ^= 1 << bit;
                    match Syclbin::from_bytes(&damaged) {
                        Err(BundleError::Corrupt(message)) => {
                            assert!(message.contains("checksum"), "{message}")
                        }
                        other => panic!("byte {position} bit {bit}: {other:?}"),
                    }
                }
            }
        }
    }
}
