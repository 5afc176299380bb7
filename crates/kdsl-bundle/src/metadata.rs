//! What a runtime must know about each kernel to check and pack its arguments.

use kdsl_ir::{
    AddressSpace, FunctionId, Module, ModuleInfo, ParameterType, RecordType, ScalarType,
};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelInfo {
    pub name: String,
    pub parameters: Vec<ParameterInfo>,
    /// Bytes of work-group local memory the kernel declares.
    pub local_memory_bytes: u64,
    /// True when the kernel's work-item ids are computed in 32 bits, which requires every
    /// dimension of the launch's global range to be below 2^31 (see docs/language.md).
    pub ids_fit_in_31_bits: bool,
    /// True when the kernel (or a device function it calls) indexes a buffer with a 64-bit
    /// integer, so it reaches elements past 2^32; a kernel without it addresses only the first
    /// 2^32 elements of each buffer. Older bundles read as `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wide_buffer_indices: bool,
    /// The work-group size the kernel requires (`#[work_group_size(x, y, z)]`), unused
    /// dimensions 1; `None` when any size may be launched. Bundles older than the attribute
    /// have no such field and read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_group_size: Option<[u32; 3]>,
    /// True when the kernel was compiled with `--checked`: it then takes hidden arguments after
    /// the declared ones (one `u64` element count per buffer parameter, in order, then a
    /// pointer to a [`FAULT_RECORD_BYTES`]-byte fault record the runtime zeroes before the
    /// launch). Older bundles read as `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub checked: bool,
    /// The checks a checked kernel makes, in its body and in the device functions it calls;
    /// a fault record names one by its `id`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub check_sites: Vec<CheckSite>,
    /// The multi-dimensional buffer parameters (`global [[f32]]`): which scalar parameters
    /// carry each one's shape and strides, which a host fills in from the array it passes.
    /// Older bundles read as empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shaped_buffers: Vec<ShapedBufferInfo>,
    /// For a kernel with multi-dimensional buffers: the name of its second entry point in
    /// every image (after the bundle's entry point prefix, as the kernel's own), a copy whose
    /// innermost strides are 1. It takes the same parameters; a host launches it instead of
    /// the kernel when every innermost stride argument is 1 ([`KernelInfo::innermost_strides`]),
    /// and the kernel otherwise. Its check sites are among the kernel's. Bundles without it
    /// (older ones, or an older runtime reading a newer one) launch the kernel, which handles
    /// any strides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contiguous_entry: Option<String>,
    /// True when the kernel (or a device function it calls) has matrix-group statements
    /// (`matrix_group_mma`). On an image that runs them on matrix units ([`crate::Image::matrix_groups`])
    /// its work-groups must then be whole matrix groups: a multiple of
    /// [`kdsl_ir::matrix_group::GROUP_SIZE`] work-items ([`KernelInfo::check_matrix_groups`]).
    /// Older bundles read as `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub matrix_groups: bool,
    /// True when the kernel (or a device function it calls) has sub-group tiles
    /// (`matrix_mma`). On an image whose tiles need whole sub-groups
    /// ([`crate::Image::tile_sub_group_size`]) its work-groups must then be a multiple of that
    /// size ([`KernelInfo::check_tile_sub_groups`]). Older bundles read as `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tiles: bool,
}

/// Every entry point of `kernels` with its kernel: each kernel's name, then its contiguous
/// entry where it has one (without the bundle's entry point prefix). An image must have them
/// all, with the kernel's parameters.
pub fn kernel_entry_points(kernels: &[KernelInfo]) -> impl Iterator<Item = (&KernelInfo, &str)> {
    kernels
        .iter()
        .flat_map(|kernel| kernel.entry_points().map(move |entry| (kernel, entry)))
}

/// A multi-dimensional buffer parameter: the index (in [`KernelInfo::parameters`]) of its
/// buffer, and of the `u32` parameter holding each dimension's extent and the `u64` one
/// holding each dimension's stride in elements, outermost dimension first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShapedBufferInfo {
    pub buffer: usize,
    /// The number of dimensions, 2 or 3.
    pub rank: u8,
    pub shape: Vec<usize>,
    pub strides: Vec<usize>,
}

impl KernelInfo {
    /// The shaped buffer whose buffer is parameter `index`.
    pub fn shaped_buffer(&self, index: usize) -> Option<&ShapedBufferInfo> {
        self.shaped_buffers.iter().find(|s| s.buffer == index)
    }

    /// The parameters holding each multi-dimensional buffer's innermost stride (the `u64`
    /// arguments that choose [`KernelInfo::contiguous_entry`] when all are 1).
    pub fn innermost_strides(&self) -> impl Iterator<Item = usize> + '_ {
        self.shaped_buffers
            .iter()
            .filter_map(|shaped| shaped.strides.last().copied())
    }

    /// The kernel's entry points in an image, without the bundle's prefix: its name, then its
    /// contiguous entry where it has one.
    pub fn entry_points(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.contiguous_entry.as_deref())
    }

    /// Whether parameter `index` is a shape or stride that the host fills in from its buffer.
    pub fn is_layout_parameter(&self, index: usize) -> bool {
        self.shaped_buffers
            .iter()
            .any(|s| s.shape.contains(&index) || s.strides.contains(&index))
    }
}

/// Bytes of a checked kernel's fault record: eight little-endian `u64` words (see
/// [`FaultRecord`]).
pub const FAULT_RECORD_BYTES: usize = 64;

/// One check a checked kernel makes: an access of a buffer or array (one site per dimension),
/// or an integer division or remainder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckSite {
    pub id: u32,
    /// The function (kernel or device function) the check is in.
    pub function: String,
    /// What is checked: "buffer `y`", "array `tile` (dimension 2 of 2)", "division", "remainder".
    pub what: String,
    /// The byte range of the checked expression or statement in the source.
    pub span: [u32; 2],
    /// 1-based line and column of the span's start; 0 when the compiler had no source text.
    #[serde(default)]
    pub line: u32,
    #[serde(default)]
    pub column: u32,
    /// The index is of a signed type (a fault record holds its 64-bit two's complement).
    #[serde(default)]
    pub signed_index: bool,
}

impl CheckSite {
    /// The metadata of a site numbered by the IR's analysis, without line and column
    /// ([`CheckSite::locate`] adds them).
    pub fn from_analysis(site: &kdsl_ir::analysis::CheckSite) -> CheckSite {
        CheckSite {
            id: site.id,
            function: site.function.clone(),
            what: site.what.clone(),
            span: [site.span.start, site.span.end],
            line: 0,
            column: 0,
            signed_index: site.signed_index,
        }
    }

    /// Fills `line` and `column` from the source text the spans point into.
    pub fn locate(&mut self, source: &str) {
        let start = (self.span[0] as usize).min(source.len());
        let before = source.get(..start).unwrap_or("");
        self.line = before.matches('\n').count() as u32 + 1;
        let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
        self.column = before[line_start..].chars().count() as u32 + 1;
    }
}

/// What a checked kernel found, as its fault record says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// An index outside its buffer or array.
    OutOfBounds,
    /// An integer division or remainder by zero.
    DivisionByZero,
    /// A signed integer division or remainder of the type's minimum by -1.
    DivisionOverflow,
    /// Integer `+ - *` or unary `-` whose result does not fit its type.
    IntegerOverflow,
}

impl FaultKind {
    /// The code a kernel writes into word 1 of its fault record.
    pub fn code(self) -> u64 {
        match self {
            FaultKind::OutOfBounds => 1,
            FaultKind::DivisionByZero => 2,
            FaultKind::DivisionOverflow => 3,
            FaultKind::IntegerOverflow => 4,
        }
    }

    pub fn from_code(code: u64) -> Option<FaultKind> {
        match code {
            1 => Some(FaultKind::OutOfBounds),
            2 => Some(FaultKind::DivisionByZero),
            3 => Some(FaultKind::DivisionOverflow),
            4 => Some(FaultKind::IntegerOverflow),
            _ => None,
        }
    }
}

/// A checked kernel's fault record, as the device leaves it. Word 0 is the flag (its low 32
/// bits are set from 0 to 1 by a compare-and-swap, so the first fault wins), then the kind's
/// code, the check site id, the index (64-bit two's complement), the length, and the global
/// id of the work-item in dimensions 0, 1 and 2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultRecord {
    pub words: [u64; 8],
}

impl FaultRecord {
    pub fn from_bytes(bytes: &[u8; FAULT_RECORD_BYTES]) -> FaultRecord {
        let mut words = [0u64; 8];
        for (word, chunk) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut le = [0u8; 8];
            le.copy_from_slice(chunk);
            *word = u64::from_le_bytes(le);
        }
        FaultRecord { words }
    }

    /// Whether a fault was recorded.
    pub fn faulted(&self) -> bool {
        self.words[0] & 0xffff_ffff != 0
    }

    pub fn kind_code(&self) -> u64 {
        self.words[1]
    }

    pub fn site(&self) -> u64 {
        self.words[2]
    }

    pub fn index(&self) -> u64 {
        self.words[3]
    }

    pub fn length(&self) -> u64 {
        self.words[4]
    }

    pub fn work_item(&self) -> [u64; 3] {
        [self.words[5], self.words[6], self.words[7]]
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ParameterInfo {
    Scalar {
        name: String,
        ty: ScalarType,
    },
    Buffer {
        name: String,
        element: ScalarType,
        space: AddressSpace,
        writable: bool,
        /// The address alignment in bytes the kernel's vector accesses (`vload4`) need of
        /// this buffer; 0 when it makes none. Older bundles read as 0.
        #[serde(default, skip_serializing_if = "is_zero")]
        alignment: u32,
        /// For a buffer of records (`global [Node]`, `element` then `u8`): the record's
        /// layout (field names, types, offsets, size), which the runtime and Python check
        /// arguments against; the buffer's length counts records. Older bundles have none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        record: Option<RecordType>,
    },
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

impl ParameterInfo {
    pub fn name(&self) -> &str {
        match self {
            ParameterInfo::Scalar { name, .. } | ParameterInfo::Buffer { name, .. } => name,
        }
    }
}

impl KernelInfo {
    /// The metadata of a kernel of the IR (of `module`, whose contiguous copy it names).
    pub fn from_function(module: &Module, id: FunctionId, info: &ModuleInfo) -> KernelInfo {
        let kernel = module.function(id);
        let facts = info.function(id);
        let parameters = kernel
            .parameters
            .iter()
            // Kernels take scalars and buffers only; the validator refuses array parameters.
            .enumerate()
            .filter_map(|(index, p)| match &p.ty {
                ParameterType::Scalar { ty } => Some(ParameterInfo::Scalar {
                    name: p.name.clone(),
                    ty: *ty,
                }),
                ParameterType::Buffer {
                    element,
                    space,
                    writable,
                    record,
                } => Some(ParameterInfo::Buffer {
                    name: p.name.clone(),
                    element: *element,
                    space: *space,
                    writable: *writable,
                    alignment: facts.buffer_alignments.get(index).copied().unwrap_or(0),
                    record: record.as_deref().cloned(),
                }),
                ParameterType::Array { .. } => None,
            })
            .collect();
        KernelInfo {
            name: kernel.name.clone(),
            parameters,
            local_memory_bytes: kernel.local_memory_bytes(),
            ids_fit_in_31_bits: true,
            wide_buffer_indices: facts.wide_buffer_indices,
            work_group_size: kernel.work_group_size,
            checked: info.check_sites.is_some(),
            check_sites: info.check_sites.as_ref().map_or_else(Vec::new, |sites| {
                sites
                    .sites_of_kernel(id)
                    .into_iter()
                    .map(CheckSite::from_analysis)
                    .collect()
            }),
            shaped_buffers: kernel
                .shaped_buffers
                .iter()
                .map(|shaped| ShapedBufferInfo {
                    buffer: shaped.buffer.0 as usize,
                    rank: shaped.rank() as u8,
                    shape: shaped.shape.iter().map(|id| id.0 as usize).collect(),
                    strides: shaped.strides.iter().map(|id| id.0 as usize).collect(),
                })
                .collect(),
            contiguous_entry: kernel
                .contiguous_entry
                .map(|copy| module.function(copy).name.clone()),
            matrix_groups: info.features.runs_group_matrix(id),
            tiles: info.features.runs_matrix_tiles(id),
        }
    }

    /// Checks that a launch's work-group (`local`, one entry per dimension) is made of whole
    /// sub-groups of `lanes` work-items where the kernel has sub-group tiles and the image
    /// (`image` as users name it: `spirv`) lays them out for sub-groups of that size
    /// ([`crate::Image::tile_sub_group_size`]); any size is right otherwise.
    pub fn check_tile_sub_groups(
        &self,
        local: &[u64],
        lanes: Option<u32>,
        image: &str,
    ) -> Result<(), String> {
        let Some(lanes) = lanes.filter(|_| self.tiles) else {
            return Ok(());
        };
        match not_a_multiple(local, u64::from(lanes)) {
            None => Ok(()),
            Some(launched) => Err(format!(
                "the kernel's matrix tiles in the {image} image need whole sub-groups of {lanes} \
                 work-items, so work-groups of a multiple of {lanes}, but the launch uses \
                 {launched}"
            )),
        }
    }

    /// Checks that a launch's work-group (`local`, one entry per dimension) is made of whole
    /// matrix groups where the kernel has matrix-group statements and the image runs them on
    /// matrix units (`on_units`; `image` as users name it: `ptx:sm_90a`); any size is right
    /// otherwise.
    pub fn check_matrix_groups(
        &self,
        local: &[u64],
        on_units: bool,
        image: &str,
    ) -> Result<(), String> {
        let group_size = u64::from(kdsl_ir::matrix_group::GROUP_SIZE);
        if !self.matrix_groups || !on_units {
            return Ok(());
        }
        match not_a_multiple(local, group_size) {
            None => Ok(()),
            Some(launched) => Err(format!(
                "the kernel's matrix-group statements run on the matrix units of the {image} \
                 image, which need work-groups of a multiple of {group_size} work-items (whole \
                 matrix groups), but the launch uses {launched}"
            )),
        }
    }

    /// Checks a launch's work-group size (`local`, one entry per dimension of the launch,
    /// 1 to 3) against the size the kernel requires, if it requires one. Dimensions the launch
    /// leaves out count as 1. The error says what was required and what was given; the
    /// runtime turns it into its launch error before anything reaches the driver.
    pub fn check_work_group_size(&self, local: &[u64]) -> Result<(), String> {
        let Some(required) = self.work_group_size else {
            return Ok(());
        };
        let mut launched = [1u64; 3];
        for (dimension, &size) in local.iter().enumerate() {
            match launched.get_mut(dimension) {
                Some(slot) => *slot = size,
                None if size == 1 => {}
                None => {
                    return Err(format!(
                        "the launch has a work-group size of {size} in dimension {dimension}, but a launch has at most 3 dimensions"
                    ))
                }
            }
        }
        if launched == required.map(u64::from) {
            return Ok(());
        }
        Err(format!(
            "the kernel requires work-groups of {} (`#[work_group_size({})]`), but the launch uses {}",
            describe_size(&required.map(u64::from)),
            required_arguments(&required),
            describe_size(&launched)
        ))
    }
}

/// `None` when the work-items of a work-group (`local`, one entry per dimension) are a
/// multiple of `multiple`; otherwise how many there are, for a message: `24 work-items (8 x 3)`.
fn not_a_multiple(local: &[u64], multiple: u64) -> Option<String> {
    let items = local
        .iter()
        .try_fold(1u64, |items, &size| items.checked_mul(size));
    if items.is_some_and(|n| n % multiple == 0) {
        return None;
    }
    Some(format!(
        "{} work-items ({})",
        items.map_or_else(|| "too many".to_string(), |n| n.to_string()),
        local
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(" x ")
    ))
}

/// `256`, `16 x 16`, `8 x 8 x 4`: trailing dimensions of 1 left out.
fn describe_size(size: &[u64; 3]) -> String {
    let used = size
        .iter()
        .rposition(|&d| d != 1)
        .map_or(1, |last| last + 1);
    size[..used]
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(" x ")
}

/// The attribute's arguments as the source would write them: `256`, `16, 16`.
fn required_arguments(size: &[u32; 3]) -> String {
    describe_size(&size.map(u64::from)).replace(" x ", ", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(work_group_size: Option<[u32; 3]>) -> KernelInfo {
        KernelInfo {
            name: "k".into(),
            work_group_size,
            ..KernelInfo::default()
        }
    }

    #[test]
    fn any_size_passes_without_a_requirement() {
        assert_eq!(kernel(None).check_work_group_size(&[7]), Ok(()));
        assert_eq!(kernel(None).check_work_group_size(&[1024, 2, 3]), Ok(()));
    }

    #[test]
    fn the_required_size_passes_with_missing_dimensions_as_one() {
        let one_dimensional = kernel(Some([256, 1, 1]));
        assert_eq!(one_dimensional.check_work_group_size(&[256]), Ok(()));
        assert_eq!(one_dimensional.check_work_group_size(&[256, 1]), Ok(()));
        assert_eq!(one_dimensional.check_work_group_size(&[256, 1, 1]), Ok(()));
        let two_dimensional = kernel(Some([16, 8, 1]));
        assert_eq!(two_dimensional.check_work_group_size(&[16, 8]), Ok(()));
    }

    #[test]
    fn another_size_is_an_error_naming_both() {
        let one_dimensional = kernel(Some([256, 1, 1]));
        assert_eq!(
            one_dimensional.check_work_group_size(&[128]),
            Err("the kernel requires work-groups of 256 (`#[work_group_size(256)]`), but the launch uses 128".into())
        );
        let two_dimensional = kernel(Some([16, 16, 1]));
        assert_eq!(
            two_dimensional.check_work_group_size(&[256]),
            Err("the kernel requires work-groups of 16 x 16 (`#[work_group_size(16, 16)]`), but the launch uses 256".into())
        );
        // The same number of work-items in another shape is still another size.
        assert!(two_dimensional.check_work_group_size(&[8, 32]).is_err());
        let three_dimensional = kernel(Some([4, 4, 2]));
        assert_eq!(
            three_dimensional.check_work_group_size(&[4, 4, 4]),
            Err("the kernel requires work-groups of 4 x 4 x 2 (`#[work_group_size(4, 4, 2)]`), but the launch uses 4 x 4 x 4".into())
        );
        assert!(three_dimensional
            .check_work_group_size(&[4, 4, 2, 2])
            .is_err());
        assert_eq!(
            three_dimensional.check_work_group_size(&[4, 4, 2, 1]),
            Ok(())
        );
    }

    #[test]
    fn matrix_groups_on_matrix_units_need_whole_groups() {
        let groups = KernelInfo {
            matrix_groups: true,
            ..kernel(None)
        };
        for local in [&[128][..], &[256], &[64, 2], &[32, 2, 2], &[1024]] {
            assert_eq!(
                groups.check_matrix_groups(local, true, "ptx:sm_90a"),
                Ok(())
            );
        }
        assert_eq!(
            groups.check_matrix_groups(&[64], true, "ptx:sm_90a"),
            Err(
                "the kernel's matrix-group statements run on the matrix units of the ptx:sm_90a \
                 image, which need work-groups of a multiple of 128 work-items (whole matrix \
                 groups), but the launch uses 64 work-items (64)"
                    .into()
            )
        );
        assert!(groups
            .check_matrix_groups(&[16, 12], true, "ptx:sm_90a")
            .is_err_and(|why| why.ends_with("uses 192 work-items (16 x 12)")));
        // The plain definition takes any work-group, as does a kernel without matrix groups.
        assert_eq!(groups.check_matrix_groups(&[64], false, "spirv"), Ok(()));
        assert_eq!(
            kernel(None).check_matrix_groups(&[64], true, "ptx:sm_90a"),
            Ok(())
        );
        let old: KernelInfo = serde_json::from_str(
            r#"{"name":"k","parameters":[],"local_memory_bytes":0,"ids_fit_in_31_bits":true}"#,
        )
        .unwrap();
        assert!(!old.matrix_groups);
        let new = serde_json::to_string(&groups).unwrap();
        assert!(new.contains(r#""matrix_groups":true"#), "{new}");
        assert!(!serde_json::to_string(&kernel(None))
            .unwrap()
            .contains("matrix_groups"));
    }

    #[test]
    fn tiles_laid_out_for_a_sub_group_size_need_whole_sub_groups() {
        let tiles = KernelInfo {
            tiles: true,
            ..kernel(None)
        };
        for local in [&[16][..], &[64], &[8, 2], &[4, 2, 2], &[128]] {
            assert_eq!(
                tiles.check_tile_sub_groups(local, Some(16), "spirv"),
                Ok(())
            );
        }
        assert_eq!(
            tiles.check_tile_sub_groups(&[24], Some(16), "spirv"),
            Err(
                "the kernel's matrix tiles in the spirv image need whole sub-groups of 16 \
                 work-items, so work-groups of a multiple of 16, but the launch uses 24 \
                 work-items (24)"
                    .into()
            )
        );
        assert!(tiles
            .check_tile_sub_groups(&[8, 3], Some(32), "ptx:sm_90")
            .is_err_and(|why| why.ends_with("uses 24 work-items (8 x 3)")));
        // Tiles laid out for any size, and a kernel without tiles, take any work-group.
        assert_eq!(tiles.check_tile_sub_groups(&[24], None, "spirv"), Ok(()));
        assert_eq!(
            kernel(None).check_tile_sub_groups(&[24], Some(16), "spirv"),
            Ok(())
        );
        let old: KernelInfo = serde_json::from_str(
            r#"{"name":"k","parameters":[],"local_memory_bytes":0,"ids_fit_in_31_bits":true}"#,
        )
        .unwrap();
        assert!(!old.tiles);
        assert!(serde_json::to_string(&tiles)
            .unwrap()
            .contains(r#""tiles":true"#));
    }

    #[test]
    fn old_metadata_without_the_field_reads_as_no_requirement() {
        let old =
            r#"{"name":"saxpy","parameters":[],"local_memory_bytes":0,"ids_fit_in_31_bits":true}"#;
        let info: KernelInfo = serde_json::from_str(old).unwrap();
        assert_eq!(info.work_group_size, None);
        let new = serde_json::to_string(&kernel(Some([8, 4, 1]))).unwrap();
        assert!(new.contains(r#""work_group_size":[8,4,1]"#), "{new}");
        let round_trip: KernelInfo = serde_json::from_str(&new).unwrap();
        assert_eq!(round_trip.work_group_size, Some([8, 4, 1]));
    }
}

#[cfg(test)]
mod checked_tests {
    use super::*;

    #[test]
    fn a_site_is_located_by_line_and_character_column() {
        let source = "kernel k() {\n    // é\n    let x = a[i];\n}\n";
        let start = source.find("a[i]").unwrap() as u32;
        let mut site = CheckSite {
            id: 0,
            function: "k".into(),
            what: "buffer `a`".into(),
            span: [start, start + 4],
            line: 0,
            column: 0,
            signed_index: false,
        };
        site.locate(source);
        assert_eq!((site.line, site.column), (3, 13));
        // A span past the end (a source that does not match) still gives a location.
        site.span = [10_000, 10_001];
        site.locate(source);
        assert_eq!((site.line, site.column), (5, 1));
    }

    #[test]
    fn a_fault_record_reads_its_words_and_kinds() {
        let mut bytes = [0u8; FAULT_RECORD_BYTES];
        let words: [u64; 8] = [1, 1, 7, u64::MAX, 64, 63, 2, 0];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        let record = FaultRecord::from_bytes(&bytes);
        assert!(record.faulted());
        assert_eq!(
            FaultKind::from_code(record.kind_code()),
            Some(FaultKind::OutOfBounds)
        );
        assert_eq!(
            (record.site(), record.index() as i64, record.length()),
            (7, -1, 64)
        );
        assert_eq!(record.work_item(), [63, 2, 0]);
        assert!(!FaultRecord::default().faulted());
        for kind in [
            FaultKind::OutOfBounds,
            FaultKind::DivisionByZero,
            FaultKind::DivisionOverflow,
            FaultKind::IntegerOverflow,
        ] {
            assert_eq!(FaultKind::from_code(kind.code()), Some(kind));
        }
        assert_eq!(FaultKind::from_code(0), None);
    }

    #[test]
    fn kernel_infos_without_the_checked_fields_read_as_unchecked() {
        let old =
            r#"{"name":"k","parameters":[],"local_memory_bytes":0,"ids_fit_in_31_bits":true}"#;
        let info: KernelInfo = serde_json::from_str(old).unwrap();
        assert!(!info.checked && info.check_sites.is_empty());
        let unchecked = serde_json::to_string(&info).unwrap();
        assert!(!unchecked.contains("checked"), "{unchecked}");
    }
}
