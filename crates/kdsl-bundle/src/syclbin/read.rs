//! Reading a SYCLBIN file: the OffloadBinary container, the SYCLBIN image's headers and tables,
//! and kdsl's own metadata, every offset and size checked against the bytes present.

use super::{
    corrupt, is_syclbin, parse_property_sets, AbstractModule, IrModule, IrType, KdslMetadata,
    KernelList, NativeImage, PropertySet, PropertyValue, State, Syclbin, ALIGNMENT,
    GLOBAL_METADATA, IMAGE_KIND_SYCLBIN, IR_MODULE_METADATA, KDSL_METADATA, KDSL_METADATA_VERSION,
    KERNEL_NAMES, MODULE_HEADER_SIZE, NATIVE_IMAGE_METADATA, OFFLOAD_BINARY_VERSION,
    OFFLOAD_ENTRY_SIZE, SYCLBIN_HEADER_SIZE, SYCLBIN_MAGIC, SYCLBIN_VERSION,
};
use crate::BundleError;

/// Bounds-checked little-endian reads.
struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn slice(&self, offset: u64, size: u64) -> Result<&'a [u8], BundleError> {
        usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(start, size)| self.bytes.get(start..start.checked_add(size)?))
            .ok_or_else(|| {
                corrupt(format!(
                    "{} bytes at offset {offset} run past the end of the {} ({} bytes)",
                    size,
                    self.what,
                    self.bytes.len()
                ))
            })
    }

    fn u16(&self, offset: usize) -> Result<u16, BundleError> {
        let bytes = self.slice(offset as u64, 2)?;
        Ok(u16::from_le_bytes([bytes[0], bytes[1]]))
    }

    fn u32(&self, offset: usize) -> Result<u32, BundleError> {
        let bytes = self.slice(offset as u64, 4)?;
        Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")))
    }

    fn u64(&self, offset: usize) -> Result<u64, BundleError> {
        let bytes = self.slice(offset as u64, 8)?;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }
}

/// The first SYCLBIN image of an OffloadBinary.
pub(super) fn offload_binary_image(bytes: &[u8]) -> Result<&[u8], BundleError> {
    if !is_syclbin(bytes) {
        return Err(BundleError::NotSyclbin(
            "the file does not start with the OffloadBinary magic 10 FF 10 AD",
        ));
    }
    let file = Reader {
        bytes,
        what: "file",
    };
    let version = file.u32(4)?;
    if !(1..=OFFLOAD_BINARY_VERSION).contains(&version) {
        return Err(BundleError::UnsupportedSyclbinVersion {
            container: "OffloadBinary",
            found: version,
            supported: OFFLOAD_BINARY_VERSION,
        });
    }
    let total_size = file.u64(8)?;
    let container = Reader {
        bytes: file.slice(0, total_size)?,
        what: "OffloadBinary",
    };
    let entries_offset = container.u64(16)?;
    // Version 1 has one entry and stores the entry's size where version 2 stores the count.
    let entry_count = match (version, container.u64(24)?) {
        (1, size) if size == OFFLOAD_ENTRY_SIZE as u64 => 1,
        (1, size) => {
            return Err(corrupt(format!(
            "OffloadBinary version 1 with an entry size of {size} bytes, not {OFFLOAD_ENTRY_SIZE}"
        )))
        }
        (_, count) => count,
    };
    let entries_size = entry_count
        .checked_mul(OFFLOAD_ENTRY_SIZE as u64)
        .ok_or_else(|| corrupt(format!("{entry_count} OffloadBinary entries")))?;
    let entries = container.slice(entries_offset, entries_size)?;
    for entry in entries.chunks_exact(OFFLOAD_ENTRY_SIZE) {
        let entry = Reader {
            bytes: entry,
            what: "OffloadBinary entry",
        };
        if entry.u16(0)? == IMAGE_KIND_SYCLBIN {
            return container.slice(entry.u64(24)?, entry.u64(32)?);
        }
    }
    Err(BundleError::NotSyclbin(
        "the OffloadBinary holds no SYCLBIN image (image kind 7)",
    ))
}

/// The header fields of a module: metadata range, then binary range (or counts and indices).
struct ModuleHeader {
    metadata: (u64, u64),
    second: (u64, u64),
}

/// The modules of a SYCLBIN image, with their property sets and kdsl's metadata.
pub(super) fn parse_syclbin(image: &[u8]) -> Result<Syclbin, BundleError> {
    let syclbin = Reader {
        bytes: image,
        what: "SYCLBIN image",
    };
    let magic = syclbin.u32(0)?;
    if magic != SYCLBIN_MAGIC {
        return Err(BundleError::NotSyclbin(
            "the OffloadBinary's image does not start with the SYCLBIN magic SYBI",
        ));
    }
    let version = syclbin.u32(4)?;
    if version != SYCLBIN_VERSION {
        return Err(BundleError::UnsupportedSyclbinVersion {
            container: "SYCLBIN",
            found: version,
            supported: SYCLBIN_VERSION,
        });
    }
    let module_count = syclbin.u32(8)? as usize;
    let ir_count = syclbin.u32(12)? as usize;
    let native_count = syclbin.u32(16)? as usize;
    let metadata_size = syclbin.u64(24)?;
    let binary_size = syclbin.u64(32)?;
    let global = (syclbin.u64(40)?, syclbin.u64(48)?);

    let header_count = module_count
        .checked_add(ir_count)
        .and_then(|n| n.checked_add(native_count))
        .ok_or_else(|| corrupt("too many headers"))?;
    let headers = syclbin.slice(
        SYCLBIN_HEADER_SIZE as u64,
        (header_count as u64).saturating_mul(MODULE_HEADER_SIZE as u64),
    )?;
    let metadata_start = (SYCLBIN_HEADER_SIZE + headers.len()) as u64;
    let metadata_table = Reader {
        bytes: syclbin.slice(metadata_start, metadata_size)?,
        what: "SYCLBIN metadata table",
    };
    let binary_start = metadata_start
        .checked_add(
            metadata_size
                .checked_next_multiple_of(ALIGNMENT as u64)
                .unwrap_or(u64::MAX),
        )
        .ok_or_else(|| corrupt("the metadata table size overflows"))?;
    let binary_table = Reader {
        bytes: syclbin.slice(binary_start, binary_size)?,
        what: "SYCLBIN binary table",
    };

    let header = |index: usize| -> Result<ModuleHeader, BundleError> {
        let fields = Reader {
            bytes: &headers[index * MODULE_HEADER_SIZE..(index + 1) * MODULE_HEADER_SIZE],
            what: "SYCLBIN module header",
        };
        Ok(ModuleHeader {
            metadata: (fields.u64(0)?, fields.u64(8)?),
            second: (fields.u64(16)?, fields.u64(24)?),
        })
    };
    let property_sets = |range: (u64, u64)| -> Result<Vec<PropertySet>, BundleError> {
        parse_property_sets(metadata_table.slice(range.0, range.1)?)
    };
    let single_set = |range: (u64, u64), name: &str| -> Result<PropertySet, BundleError> {
        property_sets(range)?
            .into_iter()
            .find(|set| set.name == name)
            .ok_or_else(|| corrupt(format!("no `[{name}]` property set where one belongs")))
    };

    let global = single_set(global, GLOBAL_METADATA)?;
    let state = match global.get("state") {
        Some(PropertyValue::U32(value)) => State::from_value(*value)
            .ok_or_else(|| corrupt(format!("unknown bundle state {value}")))?,
        _ => return Err(corrupt("the global metadata has no integer `state`")),
    };

    let mut ir_modules = Vec::with_capacity(ir_count);
    for index in 0..ir_count {
        let fields = header(module_count + index)?;
        let properties = single_set(fields.metadata, IR_MODULE_METADATA)?;
        let ir_type = match properties.get("type") {
            Some(PropertyValue::U32(value)) => IrType::from_value(*value),
            _ => return Err(corrupt(format!("IR module {index} has no integer `type`"))),
        };
        ir_modules.push(IrModule {
            ir_type,
            bytes: binary_table
                .slice(fields.second.0, fields.second.1)?
                .to_vec(),
        });
    }
    let mut native_images = Vec::with_capacity(native_count);
    for index in 0..native_count {
        let fields = header(module_count + ir_count + index)?;
        let properties = single_set(fields.metadata, NATIVE_IMAGE_METADATA)?;
        let text = |key: &str| -> Result<String, BundleError> {
            match properties.get(key) {
                Some(PropertyValue::Bytes(bytes)) => String::from_utf8(bytes.clone())
                    .map_err(|_| corrupt(format!("native image {index}: `{key}` is not UTF-8"))),
                _ => Err(corrupt(format!(
                    "native image {index} has no byte-array `{key}`"
                ))),
            }
        };
        native_images.push(NativeImage {
            target: text("target")?,
            arch: text("arch")?,
            bytes: binary_table
                .slice(fields.second.0, fields.second.1)?
                .to_vec(),
        });
    }

    let mut modules = Vec::with_capacity(module_count);
    for index in 0..module_count {
        let fields = header(index)?;
        let counts = Reader {
            bytes: &headers[index * MODULE_HEADER_SIZE + 16..(index + 1) * MODULE_HEADER_SIZE],
            what: "abstract module header",
        };
        let ir_range = index_range(counts.u32(0)?, counts.u32(4)?, ir_count, "IR module")?;
        let native_range = index_range(
            counts.u32(8)?,
            counts.u32(12)?,
            native_count,
            "native image",
        )?;
        let mut module = AbstractModule {
            ir_modules: ir_modules[ir_range].to_vec(),
            native_images: native_images[native_range].to_vec(),
            ..AbstractModule::default()
        };
        for set in property_sets(fields.metadata)? {
            match set.name.as_str() {
                KERNEL_NAMES => {
                    module.kernel_names = set.properties.into_iter().map(|(k, _)| k).collect()
                }
                KDSL_METADATA => {
                    module.kdsl = Some(parse_kdsl_metadata(&set)?);
                    match set.get("checksums") {
                        Some(PropertyValue::Bytes(recorded)) => {
                            module.verify_checksums(recorded)?
                        }
                        _ => {
                            return Err(corrupt("`[kdsl/metadata]` has no byte-array `checksums`"))
                        }
                    }
                }
                _ => module.other_property_sets.push(set),
            }
        }
        modules.push(module);
    }
    Ok(Syclbin { state, modules })
}

fn index_range(
    count: u32,
    first: u32,
    total: usize,
    what: &str,
) -> Result<std::ops::Range<usize>, BundleError> {
    let start = first as usize;
    start
        .checked_add(count as usize)
        .filter(|&end| end <= total)
        .map(|end| start..end)
        .ok_or_else(|| {
            corrupt(format!(
                "an abstract module names {what}s {first}..{first}+{count} of {total}"
            ))
        })
}

fn parse_kdsl_metadata(set: &PropertySet) -> Result<KdslMetadata, BundleError> {
    match set.get("version") {
        Some(PropertyValue::U32(KDSL_METADATA_VERSION)) => {}
        Some(PropertyValue::U32(found)) => {
            return Err(BundleError::UnsupportedSyclbinVersion {
                container: "kdsl metadata",
                found: *found,
                supported: KDSL_METADATA_VERSION,
            })
        }
        _ => return Err(corrupt("`[kdsl/metadata]` has no integer `version`")),
    }
    let bytes = |key: &str| match set.get(key) {
        Some(PropertyValue::Bytes(bytes)) => Ok(bytes.as_slice()),
        _ => Err(corrupt(format!(
            "`[kdsl/metadata]` has no byte-array `{key}`"
        ))),
    };
    let source_name = String::from_utf8(bytes("source")?.to_vec())
        .map_err(|_| corrupt("`[kdsl/metadata]`: `source` is not UTF-8"))?;
    let KernelList(kernels) = serde_json::from_slice(bytes("kernels")?)?;
    // Optional (absent in files written before them, and where empty).
    let list = |key: &str| -> Result<Vec<String>, BundleError> {
        match set.get(key) {
            None => Ok(Vec::new()),
            Some(PropertyValue::Bytes(bytes)) => std::str::from_utf8(bytes)
                .map(|text| text.split(',').map(str::to_string).collect())
                .map_err(|_| corrupt(format!("`[kdsl/metadata]`: `{key}` is not UTF-8"))),
            Some(_) => Err(corrupt(format!(
                "`[kdsl/metadata]` has a `{key}` that is no byte array"
            ))),
        }
    };
    Ok(KdslMetadata {
        source_name,
        kernels,
        matrix_units: list("matrix_units")?,
        matrix_groups: list("matrix_groups")?,
        tile_sub_groups: list("tile_sub_groups")?,
    })
}
