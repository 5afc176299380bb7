//! Giving a `.kbundle` image the entry point names a SYCL runtime looks up.
//!
//! A SYCL runtime finds kernels of a native image only under [`KERNEL_NAME_PREFIX`]`<name>`
//! (see [`crate::syclbin`]), while a `.kbundle` compiled for the CUDA and HIP driver APIs names
//! them plainly. PTX is text, so its `.entry` names can be rewritten exactly; an AMDGPU code
//! object is an ELF file whose kernel descriptors are named too, so it is not rewritten here.

use crate::syclbin::{entry_point_name, KERNEL_NAME_PREFIX};
use crate::{Bundle, BundleError, Image, TargetKind};

/// A one-image bundle holding `image` of `bundle` with `__sycl_kernel_` entry points, ready for
/// [`crate::syclbin::Syclbin::from_bundle`]. Images that already have them are taken as they
/// are; a PTX image is renamed; an AMDGPU image without them is refused.
pub fn single_image_for_sycl(bundle: &Bundle, image: &Image) -> Result<Bundle, BundleError> {
    let bytes = if bundle.entry_point_prefix == KERNEL_NAME_PREFIX {
        image.bytes.clone()
    } else if image.target == TargetKind::Ptx && bundle.entry_point_prefix.is_empty() {
        let names: Vec<&str> = crate::kernel_entry_points(&bundle.kernels)
            .map(|(_, entry)| entry)
            .collect();
        rename_ptx_entries(&image.bytes, &names).map_err(|entry_point| {
            BundleError::MissingEntryPoint {
                entry_point,
                image: image.describe(),
            }
        })?
    } else {
        return Err(BundleError::MissingEntryPoint {
            entry_point: entry_point_name(bundle.kernels.first().map_or("", |k| k.name.as_str())),
            image: image.describe(),
        });
    };
    Ok(Bundle {
        images: vec![Image {
            bytes,
            matrix_units: false,
            matrix_groups: false,
            ..image.clone()
        }],
        entry_point_prefix: KERNEL_NAME_PREFIX.to_string(),
        ..bundle.clone()
    })
}

fn is_identifier_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$'
}

/// PTX text with each `.entry NAME` of `names` renamed to `__sycl_kernel_NAME`; the first name
/// that has no `.entry` (or more than one) is the error.
fn rename_ptx_entries(ptx: &[u8], names: &[&str]) -> Result<Vec<u8>, String> {
    const ENTRY: &[u8] = b".entry";
    let mut renamed = Vec::with_capacity(ptx.len() + names.len() * KERNEL_NAME_PREFIX.len());
    let mut counts = vec![0usize; names.len()];
    let mut at = 0;
    while let Some(found) = find(&ptx[at..], ENTRY).map(|offset| at + offset) {
        let mut name_start = found + ENTRY.len();
        renamed.extend_from_slice(&ptx[at..name_start]);
        let directive_ends = ptx
            .get(name_start)
            .is_some_and(|byte| byte.is_ascii_whitespace());
        while ptx.get(name_start).is_some_and(|b| b.is_ascii_whitespace()) {
            renamed.push(ptx[name_start]);
            name_start += 1;
        }
        let mut name_end = name_start;
        while ptx.get(name_end).copied().is_some_and(is_identifier_byte) {
            name_end += 1;
        }
        let name = &ptx[name_start..name_end];
        if let Some(index) = names.iter().position(|n| n.as_bytes() == name) {
            if directive_ends {
                renamed.extend_from_slice(KERNEL_NAME_PREFIX.as_bytes());
                counts[index] += 1;
            }
        }
        renamed.extend_from_slice(name);
        at = name_end;
    }
    renamed.extend_from_slice(&ptx[at..]);
    match counts.iter().position(|&count| count != 1) {
        Some(index) => Err(entry_point_name(names[index])),
        None => Ok(renamed),
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KernelInfo;

    const PTX: &str = "//\n// .globl\tsaxpy\n.visible .entry saxpy(\n\t.param .u64 saxpy_param_0\n)\n{\n\tld.param.u64 %rd1, [saxpy_param_0];\n\tret;\n}\n.visible .entry saxpy_twice(\n)\n{\n\tret;\n}\n";

    fn bundle(names: &[&str], target: TargetKind, bytes: &str) -> Bundle {
        Bundle {
            source_name: "k.krn".into(),
            kernels: names
                .iter()
                .map(|name| KernelInfo {
                    name: name.to_string(),
                    ..KernelInfo::default()
                })
                .collect(),
            constants: Vec::new(),
            images: vec![Image {
                target,
                arch: "sm_90".into(),
                bytes: bytes.as_bytes().to_vec(),
                matrix_units: false,
                matrix_groups: false,
                tile_sub_group_size: None,
                tensor_maps: Vec::new(),
            }],
            entry_point_prefix: String::new(),
        }
    }

    #[test]
    fn renames_exactly_the_entry_directives() {
        let b = bundle(&["saxpy", "saxpy_twice"], TargetKind::Ptx, PTX);
        let single = single_image_for_sycl(&b, &b.images[0]).unwrap();
        let text = String::from_utf8(single.images[0].bytes.clone()).unwrap();
        assert!(text.contains(".visible .entry __sycl_kernel_saxpy(\n"));
        assert!(text.contains(".visible .entry __sycl_kernel_saxpy_twice(\n"));
        // Parameter names and comments are left alone: only the entry symbols change.
        assert!(text.contains("[saxpy_param_0]"));
        assert!(text.contains("// .globl\tsaxpy\n"));
        assert_eq!(single.entry_point_prefix, KERNEL_NAME_PREFIX);
        assert_eq!(text.len(), PTX.len() + 2 * KERNEL_NAME_PREFIX.len());
    }

    #[test]
    fn refuses_a_kernel_without_its_entry() {
        let b = bundle(&["saxpy", "missing"], TargetKind::Ptx, PTX);
        match single_image_for_sycl(&b, &b.images[0]) {
            Err(BundleError::MissingEntryPoint { entry_point, image }) => {
                assert_eq!(entry_point, "__sycl_kernel_missing");
                assert_eq!(image, "ptx:sm_90");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn amdgpu_code_objects_need_the_prefix_at_compile_time() {
        let b = bundle(&["saxpy"], TargetKind::Amdgpu, "\x7fELF saxpy");
        assert!(matches!(
            single_image_for_sycl(&b, &b.images[0]),
            Err(BundleError::MissingEntryPoint { .. })
        ));
        let prefixed = Bundle {
            entry_point_prefix: KERNEL_NAME_PREFIX.into(),
            ..bundle(
                &["saxpy"],
                TargetKind::Amdgpu,
                "\x7fELF __sycl_kernel_saxpy",
            )
        };
        let single = single_image_for_sycl(&prefixed, &prefixed.images[0]).unwrap();
        assert_eq!(single.images, prefixed.images);
    }
}
