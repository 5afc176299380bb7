//! Checks an AMDGPU code object's kernels against the bundle's metadata before HIP sees it.
//!
//! The runtime packs the kernel arguments by the metadata, which no checksum covers in older
//! bundles and which a re-checksummed file can change. The code object (an ELF file) describes
//! its kernels itself, in the `NT_AMDGPU_METADATA` note (MessagePack): each kernel's name,
//! descriptor symbol (`name.kd`), explicit arguments (kind, size, address space) and kernarg
//! segment size. Every kernel of the bundle's metadata must be there with the arguments the
//! metadata implies (checked mode's hidden ones included), and its descriptor symbol must be
//! in the dynamic symbol table, where HIP looks kernels up. Element types of buffers are not
//! in the note, so they are not compared.

use crate::{KernelInfo, ParameterInfo};
use kdsl_ir::AddressSpace;
use msgpack::Value;

const NT_AMDGPU_METADATA: u32 = 32;
const SHT_NOTE: u32 = 7;
const SHT_DYNSYM: u32 = 11;

/// Reads little-endian integers at offsets of a byte slice, failing past its end.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn slice(&self, offset: u64, length: u64) -> Result<&'a [u8], String> {
        let start = usize::try_from(offset).map_err(|_| "an offset past the file")?;
        let length = usize::try_from(length).map_err(|_| "a length past the file")?;
        start
            .checked_add(length)
            .and_then(|end| self.0.get(start..end))
            .ok_or_else(|| format!("{length} bytes at {start} run past the file"))
    }

    fn u16(&self, offset: u64) -> Result<u16, String> {
        let bytes = self.slice(offset, 2)?;
        Ok(u16::from_le_bytes([bytes[0], bytes[1]]))
    }

    fn u32(&self, offset: u64) -> Result<u32, String> {
        let bytes = self.slice(offset, 4)?;
        Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")))
    }

    fn u64(&self, offset: u64) -> Result<u64, String> {
        let bytes = self.slice(offset, 8)?;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }
}

/// A section: its type, where its bytes are, and the section it links to.
struct Section {
    kind: u32,
    offset: u64,
    size: u64,
    link: u32,
}

fn sections(elf: &Bytes) -> Result<Vec<Section>, String> {
    if elf.slice(0, 6)? != [0x7f, b'E', b'L', b'F', 2, 1] {
        return Err("the code object is not a little-endian 64-bit ELF file".into());
    }
    let table = elf.u64(0x28)?;
    let entry_size = u64::from(elf.u16(0x3a)?);
    let count = u64::from(elf.u16(0x3c)?);
    if entry_size < 64 {
        return Err(format!("section headers of {entry_size} bytes"));
    }
    (0..count)
        .map(|index| {
            let at = table
                .checked_add(index * entry_size)
                .ok_or("a section header past the file")?;
            let header = Bytes(elf.slice(at, entry_size)?);
            Ok(Section {
                kind: header.u32(4)?,
                offset: header.u64(24)?,
                size: header.u64(32)?,
                link: header.u32(40)?,
            })
        })
        .collect()
}

/// The MessagePack bytes of the `AMDGPU` metadata note.
fn metadata_note<'a>(elf: &Bytes<'a>, sections: &[Section]) -> Result<&'a [u8], String> {
    for section in sections.iter().filter(|s| s.kind == SHT_NOTE) {
        let notes = Bytes(elf.slice(section.offset, section.size)?);
        let mut at = 0u64;
        while at + 12 <= section.size {
            let name_size = u64::from(notes.u32(at)?);
            let description_size = u64::from(notes.u32(at + 4)?);
            let kind = notes.u32(at + 8)?;
            let name = notes.slice(at + 12, name_size)?;
            let description_at = at + 12 + name_size.next_multiple_of(4);
            let description = notes.slice(description_at, description_size)?;
            if kind == NT_AMDGPU_METADATA && name.starts_with(b"AMDGPU") {
                return Ok(description);
            }
            at = description_at + description_size.next_multiple_of(4);
        }
    }
    Err("the code object has no AMDGPU metadata note".into())
}

/// The names of the dynamic symbols.
fn dynamic_symbols(elf: &Bytes, sections: &[Section]) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for section in sections.iter().filter(|s| s.kind == SHT_DYNSYM) {
        let strings = sections
            .get(section.link as usize)
            .ok_or("the dynamic symbols' string table is missing")?;
        let strings = elf.slice(strings.offset, strings.size)?;
        let symbols = Bytes(elf.slice(section.offset, section.size)?);
        for index in 0..section.size / 24 {
            let name_at = symbols.u32(index * 24)? as usize;
            let name = strings
                .get(name_at..)
                .and_then(|rest| rest.split(|&b| b == 0).next())
                .ok_or("a symbol name past its string table")?;
            names.push(String::from_utf8_lossy(name).into_owned());
        }
    }
    Ok(names)
}

/// One explicit kernel argument as the metadata implies it: its kind, size and, for a
/// buffer, the address space named in the note.
#[derive(Debug, PartialEq)]
struct Argument {
    kind: &'static str,
    size: u64,
    space: Option<&'static str>,
}

fn expected_arguments(kernel: &KernelInfo) -> Vec<Argument> {
    let buffer = |space| Argument {
        kind: "global_buffer",
        size: 8,
        space: Some(space),
    };
    let mut expected: Vec<Argument> = kernel
        .parameters
        .iter()
        .map(|parameter| match parameter {
            ParameterInfo::Scalar { ty, .. } => Argument {
                kind: "by_value",
                size: u64::from(ty.size_in_bytes()),
                space: None,
            },
            ParameterInfo::Buffer {
                space: AddressSpace::Constant,
                ..
            } => buffer("constant"),
            // A launch-sized local array: a `u32` offset into the dynamic LDS.
            ParameterInfo::Buffer {
                space: AddressSpace::Local,
                ..
            } => Argument {
                kind: "by_value",
                size: 4,
                space: None,
            },
            ParameterInfo::Buffer { .. } => buffer("global"),
        })
        .collect();
    if kernel.checked {
        let buffers = kernel
            .parameters
            .iter()
            .filter(|p| matches!(p, ParameterInfo::Buffer { .. }))
            .count();
        for _ in 0..buffers {
            expected.push(Argument {
                kind: "by_value",
                size: 8,
                space: None,
            });
        }
        expected.push(buffer("global"));
    }
    expected
}

/// An argument of the note, `None` for the implicit (`hidden_*`) ones.
fn found_argument(argument: &Value) -> Result<Option<(String, u64, Option<String>)>, String> {
    let kind = argument
        .get(".value_kind")
        .and_then(Value::as_str)
        .ok_or("an argument without `.value_kind`")?;
    if kind.starts_with("hidden_") {
        return Ok(None);
    }
    let size = argument
        .get(".size")
        .and_then(Value::as_u64)
        .ok_or("an argument without `.size`")?;
    let space = argument
        .get(".address_space")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Some((kind.to_string(), size, space)))
}

/// Checks that every kernel of the metadata is in the code object's metadata note (named
/// `entry_point_prefix` + its name) with the explicit arguments the metadata implies, and that
/// its kernel descriptor symbol is exported.
pub fn check_amdgpu_kernels(
    bytes: &[u8],
    kernels: &[KernelInfo],
    entry_point_prefix: &str,
) -> Result<(), String> {
    let elf = Bytes(bytes);
    let sections = sections(&elf)?;
    let note = msgpack::parse(metadata_note(&elf, &sections)?)?;
    let symbols = dynamic_symbols(&elf, &sections)?;
    let listed = note
        .get("amdhsa.kernels")
        .and_then(Value::as_array)
        .ok_or("the metadata note lists no `amdhsa.kernels`")?;
    for (kernel, entry) in crate::kernel_entry_points(kernels) {
        let name = format!("{entry_point_prefix}{entry}");
        let found = listed
            .iter()
            .find(|k| k.get(".name").and_then(Value::as_str) == Some(name.as_str()))
            .ok_or_else(|| format!("the image has no kernel `{name}`"))?;
        let descriptor = found
            .get(".symbol")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("kernel `{name}` has no descriptor symbol"))?;
        if !symbols.iter().any(|symbol| symbol == descriptor) {
            return Err(format!(
                "kernel `{name}`'s descriptor `{descriptor}` is not an exported symbol"
            ));
        }
        let arguments = found
            .get(".args")
            .map(|a| a.as_array().ok_or("`.args` is not an array"))
            .transpose()?
            .unwrap_or(&[]);
        let mut explicit = Vec::new();
        for argument in arguments {
            if let Some(argument) = found_argument(argument)? {
                explicit.push(argument);
            }
        }
        let expected = expected_arguments(kernel);
        if explicit.len() != expected.len() {
            return Err(format!(
                "kernel `{}` has {} parameters in the image, and the metadata describes {}",
                entry,
                explicit.len(),
                expected.len()
            ));
        }
        for (index, ((kind, size, space), want)) in explicit.iter().zip(&expected).enumerate() {
            if kind != want.kind || *size != want.size || space.as_deref() != want.space {
                let which = kernel
                    .parameters
                    .get(index)
                    .map(|p| format!("parameter `{}`", p.name()))
                    .unwrap_or_else(|| format!("hidden checked-mode parameter {index}"));
                return Err(format!(
                    "{which} of kernel `{}` is a {kind} of {size} bytes in the image, not the metadata's {} of {} bytes",
                    entry, want.kind, want.size
                ));
            }
        }
    }
    Ok(())
}

/// The part of MessagePack the AMDGPU metadata note uses, read defensively: lengths are
/// checked against the bytes left and nesting is bounded.
mod msgpack {
    #[derive(Debug, Clone, PartialEq)]
    pub enum Value {
        Nil,
        Bool(bool),
        Integer(i128),
        Float(f64),
        String(String),
        Binary(Vec<u8>),
        Array(Vec<Value>),
        Map(Vec<(Value, Value)>),
    }

    impl Value {
        /// The value of `key` in a map with string keys.
        pub fn get(&self, key: &str) -> Option<&Value> {
            match self {
                Value::Map(entries) => entries
                    .iter()
                    .find(|(k, _)| k.as_str() == Some(key))
                    .map(|(_, v)| v),
                _ => None,
            }
        }

        pub fn as_str(&self) -> Option<&str> {
            match self {
                Value::String(text) => Some(text),
                _ => None,
            }
        }

        pub fn as_u64(&self) -> Option<u64> {
            match self {
                Value::Integer(value) => u64::try_from(*value).ok(),
                _ => None,
            }
        }

        pub fn as_array(&self) -> Option<&[Value]> {
            match self {
                Value::Array(items) => Some(items),
                _ => None,
            }
        }
    }

    const MAX_DEPTH: usize = 32;

    pub fn parse(bytes: &[u8]) -> Result<Value, String> {
        let mut reader = Reader { bytes, at: 0 };
        reader.value(0)
    }

    struct Reader<'a> {
        bytes: &'a [u8],
        at: usize,
    }

    impl Reader<'_> {
        fn take(&mut self, count: usize) -> Result<&[u8], String> {
            let end = self
                .at
                .checked_add(count)
                .filter(|&end| end <= self.bytes.len())
                .ok_or("the metadata note ends inside a value")?;
            let taken = &self.bytes[self.at..end];
            self.at = end;
            Ok(taken)
        }

        fn unsigned(&mut self, width: usize) -> Result<u64, String> {
            let bytes = self.take(width)?;
            Ok(bytes
                .iter()
                .fold(0u64, |value, &b| (value << 8) | u64::from(b)))
        }

        fn signed(&mut self, width: usize) -> Result<i64, String> {
            let value = self.unsigned(width)?;
            let shift = 64 - 8 * width as u32;
            Ok(((value << shift) as i64) >> shift)
        }

        /// A count of `width` bytes, no larger than the bytes left (each item takes one).
        fn count(&mut self, width: usize) -> Result<usize, String> {
            let count = self.unsigned(width)? as usize;
            if count > self.bytes.len() - self.at {
                return Err("a length past the end of the metadata note".into());
            }
            Ok(count)
        }

        fn text(&mut self, length: usize) -> Result<Value, String> {
            Ok(Value::String(
                String::from_utf8_lossy(self.take(length)?).into_owned(),
            ))
        }

        fn array(&mut self, length: usize, depth: usize) -> Result<Value, String> {
            let items = (0..length)
                .map(|_| self.value(depth + 1))
                .collect::<Result<_, _>>()?;
            Ok(Value::Array(items))
        }

        fn map(&mut self, length: usize, depth: usize) -> Result<Value, String> {
            let entries = (0..length)
                .map(|_| Ok((self.value(depth + 1)?, self.value(depth + 1)?)))
                .collect::<Result<_, String>>()?;
            Ok(Value::Map(entries))
        }

        fn value(&mut self, depth: usize) -> Result<Value, String> {
            if depth > MAX_DEPTH {
                return Err("the metadata note nests too deeply".into());
            }
            let marker = self.take(1)?[0];
            Ok(match marker {
                0x00..=0x7f => Value::Integer(i128::from(marker)),
                0x80..=0x8f => return self.map(usize::from(marker & 0x0f), depth),
                0x90..=0x9f => return self.array(usize::from(marker & 0x0f), depth),
                0xa0..=0xbf => return self.text(usize::from(marker & 0x1f)),
                0xc0 => Value::Nil,
                0xc2 => Value::Bool(false),
                0xc3 => Value::Bool(true),
                0xc4..=0xc6 => {
                    let length = self.count(1 << (marker - 0xc4))?;
                    Value::Binary(self.take(length)?.to_vec())
                }
                0xca => Value::Float(f64::from(f32::from_bits(self.unsigned(4)? as u32))),
                0xcb => Value::Float(f64::from_bits(self.unsigned(8)?)),
                0xcc..=0xcf => Value::Integer(i128::from(self.unsigned(1 << (marker - 0xcc))?)),
                0xd0..=0xd3 => Value::Integer(i128::from(self.signed(1 << (marker - 0xd0))?)),
                0xd9..=0xdb => {
                    let length = self.count(1 << (marker - 0xd9))?;
                    return self.text(length);
                }
                0xdc | 0xdd => {
                    let length = self.count(2 << (marker - 0xdc))?;
                    return self.array(length, depth);
                }
                0xde | 0xdf => {
                    let length = self.count(2 << (marker - 0xde))?;
                    return self.map(length, depth);
                }
                0xe0..=0xff => Value::Integer(i128::from(marker as i8)),
                other => return Err(format!("MessagePack marker {other:#04x} is not read")),
            })
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn reads_maps_arrays_strings_and_integers() {
            // {"a": [1, -1, 300], "b": "x"}
            let bytes = [
                0x82, 0xa1, b'a', 0x93, 0x01, 0xff, 0xcd, 0x01, 0x2c, 0xa1, b'b', 0xa1, b'x',
            ];
            let value = parse(&bytes).unwrap();
            let items = value.get("a").and_then(Value::as_array).unwrap();
            assert_eq!(
                items,
                [Value::Integer(1), Value::Integer(-1), Value::Integer(300)]
            );
            assert_eq!(value.get("b").and_then(Value::as_str), Some("x"));
        }

        #[test]
        fn bad_input_is_an_error_not_a_panic_or_an_allocation() {
            assert!(parse(&[0xdd, 0xff, 0xff, 0xff, 0xff]).is_err());
            assert!(parse(&[0x91; 1000]).is_err());
            assert!(parse(&[0xc1]).is_err());
            for cut in 0..4 {
                assert!(parse(&[0x82, 0xa1, b'a', 0x01][..cut]).is_err());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_that_are_not_code_objects_are_errors_not_panics() {
        for bytes in [
            &b""[..],
            b"\x7fELF",
            b"\x7fELF\x01\x01",
            &[0x7f, b'E', b'L', b'F', 2, 1, 0, 0],
        ] {
            assert!(check_amdgpu_kernels(bytes, &[], "").is_err());
        }
        // A header whose section table points past the file.
        let mut header = vec![0u8; 64];
        header[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1]);
        header[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        header[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        header[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        assert!(check_amdgpu_kernels(&header, &[], "").is_err());
    }
}
