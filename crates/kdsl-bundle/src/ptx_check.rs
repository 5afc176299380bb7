//! Checks a PTX image's kernels against the bundle's metadata before the CUDA driver sees it.
//!
//! The runtime packs launch arguments and sizes buffers by the metadata, which no checksum
//! covers in older bundles and which a re-checksummed file can change: metadata that disagrees
//! with the image (a parameter dropped, an element type narrowed) would make the driver read
//! argument bytes that were never written, or the kernel read and write past its buffers. Each
//! `.entry name(...)` parameter list is compared with the metadata's parameters, checked mode's
//! hidden ones included: their count, each one's size, and for a buffer the alignment its
//! pointer is declared with (the compiler sets the element's size), which may be weaker than
//! the metadata's but never stronger. PTX from other compilers (nvcc: plain `.u64`, no `.ptr`,
//! no alignment) passes when its sizes agree.

use crate::{KernelInfo, ParameterInfo};
use kdsl_ir::AddressSpace;
use std::collections::HashMap;

/// One `.param` of an entry: its size in bytes, whether it is a pointer (`.ptr`), and the
/// alignment a pointer declares for what it points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PtxParameter {
    size: u64,
    pointer: bool,
    pointee_alignment: Option<u64>,
}

/// The bytes of a tensor map parameter (a `CUtensorMap`).
const TENSOR_MAP_BYTES: u64 = 128;

/// The size of a PTX fundamental type (`.u32`, `.b8`, `.f64`, ...).
fn type_size(token: &str) -> Option<u64> {
    let bits = token.strip_prefix('.')?.get(1..)?;
    let kind = token.as_bytes().get(1)?;
    if !matches!(kind, b'u' | b's' | b'b' | b'f') {
        return None;
    }
    match bits {
        "8" => Some(1),
        "16" => Some(2),
        "32" => Some(4),
        "64" => Some(8),
        _ => None,
    }
}

/// Parses one parameter declaration: `.param [.align N] .type [.ptr [.space] [.align N]] name[[count]]`.
fn parse_parameter(text: &str) -> Result<PtxParameter, String> {
    let mut tokens = text.split_whitespace().peekable();
    if tokens.next() != Some(".param") {
        return Err(format!("`{text}` is not a `.param` declaration"));
    }
    let mut size = None;
    let mut pointer = false;
    let mut pointee_alignment = None;
    let mut name = None;
    while let Some(token) = tokens.next() {
        match token {
            ".align" => {
                let value = tokens
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
                    .ok_or_else(|| format!("`{text}`: `.align` without a number"))?;
                if pointer {
                    pointee_alignment = Some(value);
                }
            }
            ".ptr" => pointer = true,
            ".global" | ".const" | ".local" | ".shared" => {}
            _ if token.starts_with('.') => {
                size =
                    Some(type_size(token).ok_or_else(|| format!("`{text}`: unknown `{token}`"))?);
            }
            _ => name = Some(token),
        }
    }
    let (Some(element), Some(name)) = (size, name) else {
        return Err(format!("`{text}` has no type or no name"));
    };
    // `name[count]`: an array of `count` elements.
    let count = match name.split_once('[') {
        Some((_, rest)) => rest
            .strip_suffix(']')
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| format!("`{text}`: a bad array count"))?,
        None => 1,
    };
    Ok(PtxParameter {
        size: element.saturating_mul(count),
        pointer,
        pointee_alignment,
    })
}

/// The parameters of every `.entry` of the PTX text, by entry name.
fn entries(ptx: &str) -> Result<HashMap<String, Vec<PtxParameter>>, String> {
    let mut entries = HashMap::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry") {
        let after = &rest[at + ".entry".len()..];
        // `.entry` must be a whole directive, not the start of a longer word.
        if !after.starts_with(|c: char| c.is_whitespace()) {
            rest = after;
            continue;
        }
        let open = after
            .find('(')
            .ok_or_else(|| "an `.entry` without a parameter list".to_string())?;
        let name = after[..open].trim().to_string();
        let close = after[open..]
            .find(')')
            .ok_or_else(|| format!("the parameter list of `.entry {name}` is not closed"))?;
        let list = &after[open + 1..open + close];
        let parameters = list
            .split(',')
            .map(str::trim)
            .filter(|declaration| !declaration.is_empty())
            .map(parse_parameter)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|why| format!("`.entry {name}`: {why}"))?;
        entries.insert(name, parameters);
        rest = &after[open + close..];
    }
    Ok(entries)
}

/// The parameters the metadata gives a kernel at the PTX level: its own, then in checked mode
/// one 64-bit length per buffer and the fault record's pointer. A buffer's pointee alignment is
/// its element's size (a record buffer's: the record's alignment).
fn expected_parameters(kernel: &KernelInfo) -> Vec<PtxParameter> {
    let mut expected: Vec<PtxParameter> = kernel
        .parameters
        .iter()
        .map(|parameter| match parameter {
            ParameterInfo::Scalar { ty, .. } => PtxParameter {
                size: u64::from(ty.size_in_bytes()),
                pointer: false,
                pointee_alignment: None,
            },
            // A launch-sized local array: a `u32` offset into the dynamic shared memory.
            ParameterInfo::Buffer {
                space: AddressSpace::Local,
                ..
            } => PtxParameter {
                size: 4,
                pointer: false,
                pointee_alignment: None,
            },
            ParameterInfo::Buffer {
                element,
                alignment,
                record,
                ..
            } => {
                // A record buffer's elements are bytes, addressed at the record's alignment.
                let element_alignment = match record {
                    Some(record) => record.alignment,
                    None => element.size_in_bytes(),
                };
                PtxParameter {
                    size: 8,
                    pointer: true,
                    pointee_alignment: Some(
                        u64::from(element_alignment).max(u64::from(*alignment)),
                    ),
                }
            }
        })
        .collect();
    if kernel.checked {
        let buffers = kernel
            .parameters
            .iter()
            .filter(|p| matches!(p, ParameterInfo::Buffer { .. }))
            .count();
        let length = PtxParameter {
            size: 8,
            pointer: false,
            pointee_alignment: None,
        };
        expected.extend(std::iter::repeat_n(length, buffers));
        expected.push(PtxParameter {
            size: 8,
            pointer: true,
            pointee_alignment: None,
        });
    }
    expected
}

/// Checks that every kernel of the metadata is an `.entry` of the PTX (named
/// `entry_point_prefix` + its name) whose parameters have the count, sizes and buffer element
/// alignments the metadata implies.
pub fn check_ptx_kernels(
    bytes: &[u8],
    kernels: &[KernelInfo],
    entry_point_prefix: &str,
) -> Result<(), String> {
    check_ptx_image(bytes, kernels, entry_point_prefix, &[])
}

/// [`check_ptx_kernels`] for an image whose entries `tensor_maps` name take tensor maps after
/// their parameters (128 bytes each, `crate::Image::tensor_maps`).
pub fn check_ptx_image(
    bytes: &[u8],
    kernels: &[KernelInfo],
    entry_point_prefix: &str,
    tensor_maps: &[crate::EntryTensorMaps],
) -> Result<(), String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "the PTX text is not UTF-8".to_string())?;
    let entries = entries(text)?;
    for (kernel, entry) in crate::kernel_entry_points(kernels) {
        let maps = tensor_maps
            .iter()
            .find(|maps| maps.entry == entry)
            .map_or(0, |maps| maps.maps.len());
        let entry = format!("{entry_point_prefix}{entry}");
        let found = entries.get(&entry).ok_or_else(|| {
            format!(
                "the image has no entry `{entry}` for kernel `{}`",
                kernel.name
            )
        })?;
        let mut expected = expected_parameters(kernel);
        let map = PtxParameter {
            size: TENSOR_MAP_BYTES,
            pointer: false,
            pointee_alignment: None,
        };
        expected.extend(std::iter::repeat_n(map, maps));
        if found.len() != expected.len() {
            return Err(format!(
                "kernel `{}` has {} parameters in the image, and the metadata describes {}",
                entry,
                found.len(),
                expected.len()
            ));
        }
        for (index, (found, expected)) in found.iter().zip(&expected).enumerate() {
            let name = kernel
                .parameters
                .get(index)
                .map(|p| format!("parameter `{}`", p.name()))
                .unwrap_or_else(|| format!("hidden parameter {index}"));
            // A pointer may declare no alignment (the fault record's) or a weaker one (hand-
            // written PTX says `.align 1`), never more than the buffers the runtime passes
            // have: that is what an edited element type (f32 to u8) would promise.
            let alignment_differs = match (found.pointee_alignment, expected.pointee_alignment) {
                (Some(image), Some(metadata)) => image > metadata,
                _ => false,
            };
            // `.ptr` is an optional annotation: PTX from nvcc passes buffers as plain `.u64`,
            // so only a pointer where the metadata has a scalar is a mismatch.
            let pointer_differs = found.pointer && !expected.pointer;
            if found.size != expected.size || pointer_differs || alignment_differs {
                return Err(format!(
                    "{name} of kernel `{}` does not have the size or type the metadata gives it",
                    entry
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdsl_ir::{AddressSpace, ScalarType};

    const PTX: &str = "//
.version 8.0
.target sm_90
.address_size 64

.visible .entry mix(
\t.param .u64 .ptr .global .align 4 mix_param_0,
\t.param .u32 mix_param_1,
\t.param .align 2 .b8 mix_param_2[2],
\t.param .u8 mix_param_3
)
{
\tret;
}

.visible .entry empty()
{
\tret;
}
";

    fn mix(element: ScalarType) -> KernelInfo {
        KernelInfo {
            name: "mix".into(),
            parameters: vec![
                ParameterInfo::Buffer {
                    name: "y".into(),
                    element,
                    space: AddressSpace::Global,
                    writable: true,
                    alignment: 0,
                    record: None,
                },
                ParameterInfo::Scalar {
                    name: "n".into(),
                    ty: ScalarType::U32,
                },
                ParameterInfo::Scalar {
                    name: "h".into(),
                    ty: ScalarType::F16,
                },
                ParameterInfo::Scalar {
                    name: "s".into(),
                    ty: ScalarType::I8,
                },
            ],
            ..KernelInfo::default()
        }
    }

    #[test]
    fn parameter_lists_are_read_with_sizes_and_alignments() {
        let entries = entries(PTX).unwrap();
        assert_eq!(entries["empty"], []);
        let sizes: Vec<u64> = entries["mix"].iter().map(|p| p.size).collect();
        assert_eq!(sizes, [8, 4, 2, 1]);
        assert_eq!(entries["mix"][0].pointee_alignment, Some(4));
        assert!(entries["mix"][0].pointer && !entries["mix"][1].pointer);
    }

    #[test]
    fn a_contiguous_entry_must_be_there_with_the_kernels_parameters() {
        let with_entry = |entry: &str| KernelInfo {
            contiguous_entry: Some(entry.into()),
            ..mix(ScalarType::F32)
        };
        let copy = PTX.replace(".entry empty()", ".entry mix$contiguous()");
        let message =
            check_ptx_kernels(copy.as_bytes(), &[with_entry("mix$contiguous")], "").unwrap_err();
        assert!(
            message.contains("has 0 parameters in the image"),
            "{message}"
        );
        let message =
            check_ptx_kernels(PTX.as_bytes(), &[with_entry("mix$contiguous")], "").unwrap_err();
        assert!(message.contains("no entry `mix$contiguous`"), "{message}");
        let both = format!(
            "{PTX}{}",
            PTX.replace(".entry mix(", ".entry mix$contiguous(")
        );
        let both = both.replacen(".entry empty()", ".entry other()", 1);
        check_ptx_kernels(both.as_bytes(), &[with_entry("mix$contiguous")], "").unwrap();
    }

    #[test]
    fn the_metadata_must_describe_the_entries() {
        check_ptx_kernels(PTX.as_bytes(), &[mix(ScalarType::F32)], "").unwrap();
        check_ptx_kernels(PTX.as_bytes(), &[mix(ScalarType::I32)], "").unwrap();
        let narrower = check_ptx_kernels(PTX.as_bytes(), &[mix(ScalarType::U8)], "");
        assert!(narrower.unwrap_err().contains("parameter `y`"));
        let mut dropped = mix(ScalarType::F32);
        dropped.parameters.pop();
        let message = check_ptx_kernels(PTX.as_bytes(), &[dropped], "").unwrap_err();
        assert!(message.contains("4 parameters in the image"), "{message}");
        let mut wider = mix(ScalarType::F32);
        wider.parameters[1] = ParameterInfo::Scalar {
            name: "n".into(),
            ty: ScalarType::U64,
        };
        assert!(check_ptx_kernels(PTX.as_bytes(), &[wider], "").is_err());
        let checked = KernelInfo {
            checked: true,
            ..mix(ScalarType::F32)
        };
        assert!(check_ptx_kernels(PTX.as_bytes(), &[checked], "").is_err());
        // A weaker declared alignment is a weaker promise, which holds.
        let weaker = PTX.replace(".align 4 mix_param_0", ".align 1 mix_param_0");
        check_ptx_kernels(weaker.as_bytes(), &[mix(ScalarType::F32)], "").unwrap();
        // nvcc writes no `.ptr` annotation: a plain `.u64` carries a buffer too.
        let plain = PTX.replace(".u64 .ptr .global .align 4 mix_param_0", ".u64 mix_param_0");
        check_ptx_kernels(plain.as_bytes(), &[mix(ScalarType::F32)], "").unwrap();
        let prefixed = check_ptx_kernels(PTX.as_bytes(), &[mix(ScalarType::F32)], "__x_");
        assert!(prefixed.unwrap_err().contains("no entry `__x_mix`"));
    }

    #[test]
    fn a_launch_sized_local_array_is_a_u32_offset() {
        let local = |element| ParameterInfo::Buffer {
            name: "tile".into(),
            element,
            space: AddressSpace::Local,
            writable: true,
            alignment: 0,
            record: None,
        };
        // `mix_param_1` is a `.u32`: the offset of local memory of any element type.
        let mut offset = mix(ScalarType::F32);
        offset.parameters[1] = local(ScalarType::F64);
        check_ptx_kernels(PTX.as_bytes(), &[offset], "").unwrap();
        // `mix_param_0` is a global pointer, not an offset.
        let mut pointer = mix(ScalarType::F32);
        pointer.parameters[0] = local(ScalarType::F32);
        assert!(check_ptx_kernels(PTX.as_bytes(), &[pointer], "").is_err());
        // Checked: one hidden length for the local array as for a buffer.
        let mut checked = mix(ScalarType::F32);
        checked.parameters[1] = local(ScalarType::U32);
        checked.checked = true;
        let hidden = PTX.replace(
            "\t.param .u8 mix_param_3\n",
            "\t.param .u8 mix_param_3,\n\t.param .u64 mix_param_4,\n\t.param .u64 mix_param_5,\n\t.param .u64 .ptr .align 1 mix_param_6\n",
        );
        check_ptx_kernels(hidden.as_bytes(), &[checked], "").unwrap();
    }

    #[test]
    fn truncated_and_garbage_text_is_an_error_not_a_panic() {
        for cut in 0..PTX.len() {
            let _ = check_ptx_kernels(&PTX.as_bytes()[..cut], &[mix(ScalarType::F32)], "");
        }
        assert!(check_ptx_kernels(&[0xff, 0xfe], &[mix(ScalarType::F32)], "").is_err());
        let odd = PTX.replace(".u32 mix_param_1", ".q32 mix_param_1");
        assert!(check_ptx_kernels(odd.as_bytes(), &[mix(ScalarType::F32)], "").is_err());
    }
}
