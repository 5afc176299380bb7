//! Kernel arguments and their checks against a kernel's metadata.

use crate::buffer::{AnyBuffer, Buffer, BufferSlice, BufferSliceMut, Region};
use crate::element::Element;
use crate::error::{Result, RuntimeError};
use crate::local_memory::is_local_parameter;
use crate::memory::PendingWork;
use kdsl_bundle::{KernelInfo, ParameterInfo};
use kdsl_ir::ScalarType;
use std::marker::PhantomData;

/// A scalar kernel argument, passed by value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue {
    Bool(bool),
    I8(i8),
    U8(u8),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    /// An IEEE 754 half-precision value, given by its bits (the runtime needs no f16 crate).
    F16(u16),
    /// A bfloat16 value, given by its bits.
    Bf16(u16),
    F32(f32),
    F64(f64),
}

impl ScalarValue {
    /// The kernel-language type of the value.
    pub fn ty(self) -> ScalarType {
        match self {
            ScalarValue::Bool(_) => ScalarType::Bool,
            ScalarValue::I8(_) => ScalarType::I8,
            ScalarValue::U8(_) => ScalarType::U8,
            ScalarValue::I16(_) => ScalarType::I16,
            ScalarValue::U16(_) => ScalarType::U16,
            ScalarValue::I32(_) => ScalarType::I32,
            ScalarValue::U32(_) => ScalarType::U32,
            ScalarValue::I64(_) => ScalarType::I64,
            ScalarValue::U64(_) => ScalarType::U64,
            ScalarValue::F16(_) => ScalarType::F16,
            ScalarValue::Bf16(_) => ScalarType::Bf16,
            ScalarValue::F32(_) => ScalarType::F32,
            ScalarValue::F64(_) => ScalarType::F64,
        }
    }

    /// The value's bytes, little-endian, `ty().size_in_bytes()` long (`bool` is one byte).
    pub fn to_le_bytes(self) -> Vec<u8> {
        match self {
            ScalarValue::Bool(v) => vec![u8::from(v)],
            ScalarValue::I8(v) => v.to_le_bytes().to_vec(),
            ScalarValue::U8(v) => v.to_le_bytes().to_vec(),
            ScalarValue::I16(v) => v.to_le_bytes().to_vec(),
            ScalarValue::U16(v) => v.to_le_bytes().to_vec(),
            ScalarValue::I32(v) => v.to_le_bytes().to_vec(),
            ScalarValue::U32(v) => v.to_le_bytes().to_vec(),
            ScalarValue::I64(v) => v.to_le_bytes().to_vec(),
            ScalarValue::U64(v) => v.to_le_bytes().to_vec(),
            ScalarValue::F16(bits) | ScalarValue::Bf16(bits) => bits.to_le_bytes().to_vec(),
            ScalarValue::F32(v) => v.to_le_bytes().to_vec(),
            ScalarValue::F64(v) => v.to_le_bytes().to_vec(),
        }
    }

    /// The value's bytes zero-extended into a `u64` (little-endian order). Allocates nothing
    /// (a launch calls it for every scalar argument).
    pub fn to_bits(self) -> u64 {
        match self {
            ScalarValue::Bool(v) => u64::from(v),
            ScalarValue::I8(v) => u64::from(v as u8),
            ScalarValue::U8(v) => u64::from(v),
            ScalarValue::I16(v) => u64::from(v as u16),
            ScalarValue::U16(v) => u64::from(v),
            ScalarValue::I32(v) => u64::from(v as u32),
            ScalarValue::U32(v) => u64::from(v),
            ScalarValue::I64(v) => v as u64,
            ScalarValue::U64(v) => v,
            ScalarValue::F16(bits) | ScalarValue::Bf16(bits) => u64::from(bits),
            ScalarValue::F32(v) => u64::from(v.to_bits()),
            ScalarValue::F64(v) => v.to_bits(),
        }
    }
}

macro_rules! scalar_conversions {
    ($($rust:ty => $variant:ident),* $(,)?) => {$(
        impl From<$rust> for ScalarValue {
            fn from(value: $rust) -> ScalarValue {
                ScalarValue::$variant(value)
            }
        }
        impl<'a> IntoArgument<'a> for $rust {
            fn into_argument(self) -> Argument<'a> {
                Argument::scalar(self)
            }
        }
    )*};
}

scalar_conversions! {
    bool => Bool, i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
    i64 => I64, u64 => U64, f32 => F32, f64 => F64,
}

/// What the checks need to know about a buffer argument: the byte range it passes, its
/// element type, whether it is passed for writing, and its memory (device, writability).
#[derive(Clone, Copy)]
pub(crate) struct BufferFacts<'a> {
    pub address: u64,
    pub bytes: usize,
    pub element: ScalarType,
    /// Passed for writing (`&mut buffer`, `Argument::writable`).
    pub writable: bool,
    /// The memory is borrowed read-only foreign memory.
    pub read_only_memory: bool,
    pub device_instance: u64,
    pub device_label: &'a str,
    pub pending: &'a PendingWork,
}

impl std::fmt::Debug for BufferFacts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufferFacts")
            .field("address", &self.address)
            .field("bytes", &self.bytes)
            .field("element", &self.element)
            .field("writable", &self.writable)
            .finish()
    }
}

impl<'a> BufferFacts<'a> {
    fn new(region: Region<'a>, writable: bool) -> BufferFacts<'a> {
        BufferFacts {
            address: region.address,
            bytes: region.bytes,
            element: region.element,
            writable,
            read_only_memory: region.memory.read_only,
            device_instance: region.memory.device.inner.instance,
            device_label: region.memory.device.label(),
            pending: &region.memory.pending,
        }
    }

    fn overlaps(&self, other: &BufferFacts<'_>) -> bool {
        let end = self.address + self.bytes as u64;
        let other_end = other.address + other.bytes as u64;
        self.address < other_end && other.address < end
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum ArgumentKind<'a> {
    Buffer(BufferFacts<'a>),
    Scalar(ScalarValue),
    /// The size of a launch-sized local array (`local mut [T]`): `bytes` of `element`s.
    Local {
        element: ScalarType,
        bytes: u64,
    },
}

/// One kernel argument: a buffer (read-only or writable) or a scalar value.
///
/// Build them with [`args!`](crate::args) or [`IntoArgument`]: `&mut buffer` is a writable buffer,
/// `&buffer` a read-only one, and a Rust scalar (`2.0f32`, `n`) a scalar of the same type.
/// The argument borrows its buffer, so the buffer outlives the call that launches it.
#[derive(Clone, Copy, Debug)]
pub struct Argument<'a> {
    pub(crate) kind: ArgumentKind<'a>,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> Argument<'a> {
    pub fn scalar(value: impl Into<ScalarValue>) -> Argument<'a> {
        Argument::from_kind(ArgumentKind::Scalar(value.into()))
    }

    /// Local memory of `length` elements of `element` for a `local mut [T]` parameter: each
    /// work-group of the launch gets its own, uninitialized (see also [`Argument::local_of`]).
    pub fn local(element: ScalarType, length: u64) -> Argument<'a> {
        let bytes = length.saturating_mul(u64::from(element.size_in_bytes()));
        Argument::from_kind(ArgumentKind::Local { element, bytes })
    }

    /// Local memory of `length` elements of `T` for a `local mut [T]` parameter.
    pub fn local_of<T: Element>(length: usize) -> Argument<'a> {
        Argument::local(T::TYPE, length as u64)
    }

    pub fn read_only<T: Element>(buffer: &'a Buffer<T>) -> Argument<'a> {
        Argument::buffer_region(buffer.region(), false)
    }

    /// A writable use of a buffer reached through a shared reference, for a buffer shared
    /// behind an `Arc` where `&mut` is not available. The launch still rejects overlapping
    /// buffers when one use is writable.
    pub fn writable<T: Element>(buffer: &'a Buffer<T>) -> Argument<'a> {
        Argument::buffer_region(buffer.region(), true)
    }

    /// A writable use of a view reached through a shared reference (see [`Argument::writable`]),
    /// so that disjoint views of one buffer can be written and read by one launch.
    pub fn writable_view<T: Element>(view: &BufferSlice<'a, T>) -> Argument<'a> {
        Argument::buffer_region(view.region(), true)
    }

    /// An untyped buffer, passed for reading or for writing (a `mut` parameter needs
    /// `writable`; borrowed read-only memory is refused for it).
    pub fn buffer(buffer: &'a AnyBuffer, writable: bool) -> Argument<'a> {
        Argument::buffer_region(buffer.region(), writable)
    }

    fn buffer_region(region: Region<'a>, writable: bool) -> Argument<'a> {
        Argument::from_kind(ArgumentKind::Buffer(BufferFacts::new(region, writable)))
    }

    pub(crate) fn from_kind(kind: ArgumentKind<'a>) -> Argument<'a> {
        Argument {
            kind,
            _borrow: PhantomData,
        }
    }

    /// `global mut [f32]`, `global [u32]`, `f32`: what the argument is, for messages.
    pub fn describe(&self) -> String {
        match self.kind {
            ArgumentKind::Buffer(facts) => {
                let mutability = if facts.writable { "mut " } else { "" };
                format!("a {mutability}buffer of {}", facts.element)
            }
            ArgumentKind::Scalar(value) => format!("a {} scalar", value.ty()),
            ArgumentKind::Local { element, bytes } => format!(
                "local memory of {} {element}",
                bytes / u64::from(element.size_in_bytes())
            ),
        }
    }
}

/// Turns a value into a kernel argument: `&Buffer<T>`, `&mut Buffer<T>`, Rust scalars.
pub trait IntoArgument<'a> {
    fn into_argument(self) -> Argument<'a>;
}

impl<'a> IntoArgument<'a> for Argument<'a> {
    fn into_argument(self) -> Argument<'a> {
        self
    }
}

impl<'a, T: Element> IntoArgument<'a> for &'a Buffer<T> {
    fn into_argument(self) -> Argument<'a> {
        Argument::read_only(self)
    }
}

impl<'a, T: Element> IntoArgument<'a> for &'a mut Buffer<T> {
    fn into_argument(self) -> Argument<'a> {
        Argument::writable(self)
    }
}

impl<'a, T: Element> From<BufferSlice<'a, T>> for Argument<'a> {
    fn from(view: BufferSlice<'a, T>) -> Argument<'a> {
        Argument::buffer_region(view.region(), false)
    }
}

impl<'a, T: Element> IntoArgument<'a> for BufferSlice<'a, T> {
    fn into_argument(self) -> Argument<'a> {
        Argument::buffer_region(self.region(), false)
    }
}

impl<'a, T: Element> IntoArgument<'a> for &BufferSlice<'a, T> {
    fn into_argument(self) -> Argument<'a> {
        Argument::buffer_region(self.region(), false)
    }
}

impl<'a, T: Element> IntoArgument<'a> for &'a BufferSliceMut<'_, T> {
    fn into_argument(self) -> Argument<'a> {
        Argument::buffer_region(self.region(), false)
    }
}

impl<'a, T: Element> IntoArgument<'a> for &'a mut BufferSliceMut<'_, T> {
    fn into_argument(self) -> Argument<'a> {
        Argument::buffer_region(self.region(), true)
    }
}

impl<'a> IntoArgument<'a> for &'a AnyBuffer {
    fn into_argument(self) -> Argument<'a> {
        Argument::buffer(self, false)
    }
}

impl<'a> IntoArgument<'a> for &'a mut AnyBuffer {
    fn into_argument(self) -> Argument<'a> {
        Argument::buffer(self, true)
    }
}

/// Builds the argument array of a launch: `&args![&mut y, &x, 2.0f32, n]`.
#[macro_export]
macro_rules! args {
    ($($argument:expr),* $(,)?) => {
        [$($crate::IntoArgument::into_argument($argument)),*]
    };
}

fn describe_parameter(parameter: &ParameterInfo) -> String {
    match parameter {
        ParameterInfo::Scalar { ty, .. } => format!("a {ty} scalar"),
        ParameterInfo::Buffer { element, .. } if is_local_parameter(parameter) => {
            format!("local memory of {element} (`Argument::local`)")
        }
        ParameterInfo::Buffer {
            element,
            writable,
            record,
            ..
        } => {
            let mutability = if *writable { "mut " } else { "" };
            match record {
                Some(record) => format!(
                    "a {mutability}buffer of `{}` records, passed as their bytes (a {mutability}buffer of u8)",
                    record.name
                ),
                None => format!("a {mutability}buffer of {element}"),
            }
        }
    }
}

/// A buffer of records (passed as a buffer of `u8`) holds whole records and starts at an
/// address aligned for them.
fn check_record_buffer(
    kernel: &KernelInfo,
    index: usize,
    name: &str,
    record: &kdsl_ir::RecordType,
    facts: &BufferFacts<'_>,
) -> Result<()> {
    let problem = if !facts.bytes.is_multiple_of(record.size as usize) {
        format!(
            "{} bytes were given, not a multiple of {}",
            facts.bytes, record.size
        )
    } else if !facts.address.is_multiple_of(u64::from(record.alignment)) {
        format!("the memory starts at {:#x}", facts.address)
    } else {
        return Ok(());
    };
    Err(RuntimeError::RecordBufferMismatch {
        kernel: kernel.name.clone(),
        index,
        name: name.to_string(),
        record: record.name.clone(),
        record_size: record.size,
        record_alignment: record.alignment,
        problem,
    })
}

/// One parameter as the per-launch checks see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParameterSlot {
    Scalar(ScalarType),
    /// A launch-sized local array of this element type.
    Local(ScalarType),
    Buffer {
        element: ScalarType,
        writable: bool,
        alignment: u32,
        /// A record's size and alignment for a buffer of records, else 1 and 1.
        record_size: u32,
        record_alignment: u32,
    },
}

/// A kernel's parameters reduced, once per kernel, to what [`check_arguments`] compares: a
/// short array in one place rather than the metadata's names and strings, so that a launch
/// with correct arguments is checked in a few comparisons. A launch it does not accept goes
/// through [`check_arguments`], which finds and reports the error as before.
#[derive(Clone, Debug, Default)]
pub(crate) struct ArgumentLayout {
    slots: Vec<ParameterSlot>,
}

impl ArgumentLayout {
    pub(crate) fn new(kernel: &KernelInfo) -> ArgumentLayout {
        let slots = kernel
            .parameters
            .iter()
            .map(|parameter| match *parameter {
                ParameterInfo::Scalar { ty, .. } => ParameterSlot::Scalar(ty),
                ParameterInfo::Buffer { element, .. } if is_local_parameter(parameter) => {
                    ParameterSlot::Local(element)
                }
                ParameterInfo::Buffer {
                    element,
                    writable,
                    alignment,
                    ref record,
                    ..
                } => ParameterSlot::Buffer {
                    element,
                    writable,
                    alignment,
                    record_size: record.as_ref().map_or(1, |r| r.size),
                    record_alignment: record.as_ref().map_or(1, |r| r.alignment),
                },
            })
            .collect();
        ArgumentLayout { slots }
    }

    pub(crate) fn slots(&self) -> &[ParameterSlot] {
        &self.slots
    }

    /// True when the kernel takes a launch-sized local array.
    pub(crate) fn has_local(&self) -> bool {
        self.slots
            .iter()
            .any(|slot| matches!(slot, ParameterSlot::Local(_)))
    }

    /// True when [`check_arguments`] accepts `arguments` (the same conditions, without
    /// building any message); false when it reports an error.
    pub(crate) fn accepts(&self, device_instance: u64, arguments: &[Argument<'_>]) -> bool {
        if arguments.len() != self.slots.len() {
            return false;
        }
        // By reference throughout: the arguments are not copied.
        for (slot, argument) in self.slots.iter().zip(arguments) {
            match (slot, &argument.kind) {
                (ParameterSlot::Scalar(ty), ArgumentKind::Scalar(value)) => {
                    if value.ty() != *ty {
                        return false;
                    }
                }
                (ParameterSlot::Local(element), ArgumentKind::Local { element: given, .. }) => {
                    if given != element {
                        return false;
                    }
                }
                (
                    ParameterSlot::Buffer {
                        element,
                        writable,
                        alignment,
                        record_size,
                        record_alignment,
                    },
                    ArgumentKind::Buffer(facts),
                ) => {
                    if facts.element != *element
                        || !facts.bytes.is_multiple_of(*record_size as usize)
                        || !facts.address.is_multiple_of(u64::from(*record_alignment))
                        || (*alignment > 1 && facts.address % u64::from(*alignment) != 0)
                        || (*writable && (!facts.writable || facts.read_only_memory))
                        || facts.device_instance != device_instance
                    {
                        return false;
                    }
                }
                _ => return false,
            }
        }
        for (first, (slot, argument)) in self.slots.iter().zip(arguments).enumerate() {
            let (ParameterSlot::Buffer { writable, .. }, ArgumentKind::Buffer(facts)) =
                (slot, &argument.kind)
            else {
                continue;
            };
            for (other_slot, other) in self.slots[first + 1..].iter().zip(&arguments[first + 1..]) {
                if let (
                    ParameterSlot::Buffer {
                        writable: other_writable,
                        ..
                    },
                    ArgumentKind::Buffer(other_facts),
                ) = (other_slot, &other.kind)
                {
                    if (*writable || *other_writable) && facts.overlaps(other_facts) {
                        return false;
                    }
                }
            }
        }
        true
    }
}

/// Checks arguments against a kernel's metadata before anything reaches a driver: the count,
/// each scalar's type, each buffer's element type and writability, that every buffer belongs to
/// the kernel's device instance, and that no buffer is passed twice when one use is writable.
pub(crate) fn check_arguments(
    kernel: &KernelInfo,
    device_instance: u64,
    device_label: &str,
    arguments: &[Argument<'_>],
) -> Result<()> {
    if arguments.len() != kernel.parameters.len() {
        return Err(RuntimeError::ArgumentCount {
            kernel: kernel.name.clone(),
            expected: kernel.parameters.len(),
            found: arguments.len(),
        });
    }
    let type_error =
        |index: usize, parameter: &ParameterInfo, argument: &Argument| RuntimeError::ArgumentType {
            kernel: kernel.name.clone(),
            index,
            name: parameter.name().to_string(),
            expected: describe_parameter(parameter),
            found: argument.describe(),
        };
    for (index, (parameter, argument)) in kernel.parameters.iter().zip(arguments).enumerate() {
        match (parameter, argument.kind) {
            (ParameterInfo::Scalar { ty, .. }, ArgumentKind::Scalar(value)) => {
                if value.ty() != *ty {
                    return Err(type_error(index, parameter, argument));
                }
            }
            (ParameterInfo::Buffer { element, .. }, ArgumentKind::Local { element: given, .. })
                if is_local_parameter(parameter) =>
            {
                if given != *element {
                    return Err(type_error(index, parameter, argument));
                }
            }
            // Local memory for another parameter, or something else for local memory.
            (_, ArgumentKind::Local { .. }) => return Err(type_error(index, parameter, argument)),
            _ if is_local_parameter(parameter) => {
                return Err(type_error(index, parameter, argument))
            }
            (
                ParameterInfo::Buffer {
                    name,
                    element,
                    writable,
                    alignment,
                    record,
                    ..
                },
                ArgumentKind::Buffer(facts),
            ) => {
                if facts.element != *element {
                    return Err(type_error(index, parameter, argument));
                }
                if let Some(record) = record {
                    check_record_buffer(kernel, index, name, record, &facts)?;
                }
                if *alignment > 1 && facts.address % u64::from(*alignment) != 0 {
                    return Err(RuntimeError::MisalignedBuffer {
                        kernel: kernel.name.clone(),
                        index,
                        name: name.clone(),
                        alignment: *alignment,
                        address: facts.address,
                    });
                }
                if *writable && !facts.writable {
                    return Err(RuntimeError::ReadOnlyBufferAsWritable {
                        kernel: kernel.name.clone(),
                        index,
                        name: name.clone(),
                    });
                }
                if *writable && facts.read_only_memory {
                    return Err(RuntimeError::ReadOnlyMemoryAsWritable {
                        kernel: kernel.name.clone(),
                        index,
                        name: name.clone(),
                    });
                }
                if facts.device_instance != device_instance {
                    return Err(RuntimeError::ForeignBuffer {
                        kernel: kernel.name.clone(),
                        index,
                        name: name.clone(),
                        buffer_device: facts.device_label.to_string(),
                        kernel_device: device_label.to_string(),
                    });
                }
            }
            _ => return Err(type_error(index, parameter, argument)),
        }
    }
    // The use of each buffer: writable when the parameter is writable (a `&mut` passed to a
    // read-only parameter is only read). Uses conflict when their byte ranges overlap. The
    // pairs are compared in place (no list is built: this runs on every launch).
    let buffer_use = |index: usize| match (&kernel.parameters[index], arguments[index].kind) {
        (ParameterInfo::Buffer { writable, .. }, ArgumentKind::Buffer(facts)) => {
            Some((facts, *writable))
        }
        _ => None,
    };
    for first in 0..arguments.len() {
        let Some((facts, first_writable)) = buffer_use(first) else {
            continue;
        };
        for second in first + 1..arguments.len() {
            let Some((other_facts, second_writable)) = buffer_use(second) else {
                continue;
            };
            if facts.overlaps(&other_facts) && (first_writable || second_writable) {
                return Err(RuntimeError::AliasedBuffers {
                    kernel: kernel.name.clone(),
                    first,
                    first_name: kernel.parameters[first].name().to_string(),
                    second,
                    second_name: kernel.parameters[second].name().to_string(),
                });
            }
        }
    }
    crate::shaped::check_shapes(kernel, arguments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdsl_ir::AddressSpace;

    fn saxpy() -> KernelInfo {
        KernelInfo {
            work_group_size: None,
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
                ParameterInfo::Buffer {
                    name: "x".into(),
                    element: ScalarType::F32,
                    space: AddressSpace::Global,
                    writable: false,
                    alignment: 0,
                    record: None,
                },
                ParameterInfo::Scalar {
                    name: "a".into(),
                    ty: ScalarType::F32,
                },
                ParameterInfo::Scalar {
                    name: "n".into(),
                    ty: ScalarType::U32,
                },
            ],
            local_memory_bytes: 0,
            ids_fit_in_31_bits: true,
            wide_buffer_indices: false,
            ..KernelInfo::default()
        }
    }

    static PENDING: std::sync::LazyLock<PendingWork> = std::sync::LazyLock::new(Default::default);

    /// A 64-element f32-sized buffer argument; buffers with the same `id` are the same memory.
    fn buffer(id: u64, element: ScalarType, writable: bool, device: u64) -> Argument<'static> {
        Argument::from_kind(ArgumentKind::Buffer(BufferFacts {
            address: 0x1000 * id,
            bytes: 256,
            element,
            writable,
            read_only_memory: false,
            pending: &PENDING,
            device_instance: device,
            device_label: if device == 1 {
                "sycl:0"
            } else {
                "sycl:0 (second instance)"
            },
        }))
    }

    /// Checks with both paths of a launch and requires them to agree.
    fn check(arguments: &[Argument]) -> Result<()> {
        let result = check_arguments(&saxpy(), 1, "sycl:0", arguments);
        assert_eq!(
            ArgumentLayout::new(&saxpy()).accepts(1, arguments),
            result.is_ok(),
            "{result:?}"
        );
        result
    }

    #[test]
    fn accepts_matching_arguments() {
        let good = [
            buffer(1, ScalarType::F32, true, 1),
            buffer(2, ScalarType::F32, false, 1),
            Argument::scalar(2.0f32),
            Argument::scalar(10u32),
        ];
        check(&good).unwrap();
        // A writable buffer may be given to a read-only parameter.
        let both_mut = [
            buffer(1, ScalarType::F32, true, 1),
            buffer(2, ScalarType::F32, true, 1),
            2.0f32.into_argument(),
            10u32.into_argument(),
        ];
        check(&both_mut).unwrap();
    }

    #[test]
    fn rejects_wrong_count() {
        let error = check(&[buffer(1, ScalarType::F32, true, 1)]).unwrap_err();
        assert!(matches!(
            error,
            RuntimeError::ArgumentCount {
                expected: 4,
                found: 1,
                ..
            }
        ));
        assert_eq!(
            error.to_string(),
            "kernel `saxpy` takes 4 arguments, but 1 were given"
        );
    }

    #[test]
    fn rejects_wrong_scalar_and_element_types() {
        let wrong_scalar = [
            buffer(1, ScalarType::F32, true, 1),
            buffer(2, ScalarType::F32, false, 1),
            Argument::scalar(2.0f64),
            Argument::scalar(10u32),
        ];
        match check(&wrong_scalar).unwrap_err() {
            RuntimeError::ArgumentType {
                index,
                name,
                expected,
                found,
                ..
            } => {
                assert_eq!((index, name.as_str()), (2, "a"));
                assert_eq!(expected, "a f32 scalar");
                assert_eq!(found, "a f64 scalar");
            }
            other => panic!("{other:?}"),
        }
        let wrong_element = [
            buffer(1, ScalarType::F32, true, 1),
            buffer(2, ScalarType::I32, false, 1),
            Argument::scalar(2.0f32),
            Argument::scalar(10u32),
        ];
        assert!(matches!(
            check(&wrong_element).unwrap_err(),
            RuntimeError::ArgumentType { index: 1, .. }
        ));
        let scalar_for_buffer = [
            Argument::scalar(1.0f32),
            buffer(2, ScalarType::F32, false, 1),
            Argument::scalar(2.0f32),
            Argument::scalar(10u32),
        ];
        assert!(matches!(
            check(&scalar_for_buffer).unwrap_err(),
            RuntimeError::ArgumentType { index: 0, .. }
        ));
    }

    #[test]
    fn bf16_takes_bf16_alone_not_its_u16_bits_nor_f16() {
        let mut info = saxpy();
        for parameter in &mut info.parameters[..2] {
            if let ParameterInfo::Buffer { element, .. } = parameter {
                *element = ScalarType::Bf16;
            }
        }
        info.parameters[2] = ParameterInfo::Scalar {
            name: "a".into(),
            ty: ScalarType::Bf16,
        };
        let check = |arguments: &[Argument]| {
            let result = check_arguments(&info, 1, "sycl:0", arguments);
            let accepted = ArgumentLayout::new(&info).accepts(1, arguments);
            assert_eq!(accepted, result.is_ok(), "{result:?}");
            result
        };
        let with = |x: ScalarType, a: ScalarValue| {
            [
                buffer(1, ScalarType::Bf16, true, 1),
                buffer(2, x, false, 1),
                Argument::scalar(a),
                Argument::scalar(10u32),
            ]
        };
        let one = crate::Bf16::from_f32(1.0);
        check(&with(ScalarType::Bf16, one.into())).unwrap();
        for (x, a, index) in [
            (ScalarType::U16, one.into(), 1),
            (ScalarType::F16, one.into(), 1),
            (ScalarType::Bf16, ScalarValue::U16(0x3f80), 2),
            (ScalarType::Bf16, ScalarValue::F16(0x3c00), 2),
        ] {
            match check(&with(x, a)).unwrap_err() {
                RuntimeError::ArgumentType {
                    index: found,
                    expected,
                    ..
                } => {
                    assert_eq!(found, index);
                    assert!(expected.contains("bf16"), "{expected}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn rejects_read_only_buffer_for_writable_parameter() {
        let arguments = [
            buffer(1, ScalarType::F32, false, 1),
            buffer(2, ScalarType::F32, false, 1),
            Argument::scalar(2.0f32),
            Argument::scalar(10u32),
        ];
        assert!(matches!(
            check(&arguments).unwrap_err(),
            RuntimeError::ReadOnlyBufferAsWritable { index: 0, .. }
        ));
    }

    #[test]
    fn rejects_buffers_of_another_device_instance() {
        let arguments = [
            buffer(1, ScalarType::F32, true, 1),
            buffer(2, ScalarType::F32, false, 2),
            Argument::scalar(2.0f32),
            Argument::scalar(10u32),
        ];
        let error = check(&arguments).unwrap_err();
        assert!(matches!(
            error,
            RuntimeError::ForeignBuffer { index: 1, .. }
        ));
        assert!(error.to_string().contains("second instance"), "{error}");
    }

    #[test]
    fn rejects_aliasing_when_one_use_is_writable() {
        let aliased = [
            buffer(1, ScalarType::F32, true, 1),
            buffer(1, ScalarType::F32, false, 1),
            Argument::scalar(2.0f32),
            Argument::scalar(10u32),
        ];
        assert!(matches!(
            check(&aliased).unwrap_err(),
            RuntimeError::AliasedBuffers {
                first: 0,
                second: 1,
                ..
            }
        ));
        // Two read-only uses of one buffer are fine.
        let mut reader = saxpy();
        if let ParameterInfo::Buffer { writable, .. } = &mut reader.parameters[0] {
            *writable = false;
        }
        let shared = [
            buffer(1, ScalarType::F32, false, 1),
            buffer(1, ScalarType::F32, false, 1),
            Argument::scalar(2.0f32),
            Argument::scalar(10u32),
        ];
        check_arguments(&reader, 1, "sycl:0", &shared).unwrap();
        assert!(ArgumentLayout::new(&reader).accepts(1, &shared));
        // Disjoint ranges of one allocation may be written and read together.
        let disjoint = [
            buffer(1, ScalarType::F32, true, 1),
            buffer(1, ScalarType::F32, false, 1),
            Argument::scalar(2.0f32),
            Argument::scalar(10u32),
        ];
        let mut moved = disjoint;
        if let ArgumentKind::Buffer(facts) = &mut moved[1].kind {
            facts.address += 256;
        }
        check(&moved).unwrap();
    }

    #[test]
    fn the_layout_rejects_what_the_full_check_rejects() {
        let mut aligned = saxpy();
        if let ParameterInfo::Buffer { alignment, .. } = &mut aligned.parameters[1] {
            *alignment = 16;
        }
        let mut misaligned = [
            buffer(1, ScalarType::F32, true, 1),
            buffer(2, ScalarType::F32, false, 1),
            Argument::scalar(2.0f32),
            Argument::scalar(10u32),
        ];
        let layout = ArgumentLayout::new(&aligned);
        assert!(layout.accepts(1, &misaligned));
        if let ArgumentKind::Buffer(facts) = &mut misaligned[1].kind {
            facts.address += 4;
        }
        assert!(!layout.accepts(1, &misaligned));
        assert!(matches!(
            check_arguments(&aligned, 1, "sycl:0", &misaligned),
            Err(RuntimeError::MisalignedBuffer { index: 1, .. })
        ));
        let mut read_only_memory = [
            buffer(1, ScalarType::F32, true, 1),
            buffer(2, ScalarType::F32, false, 1),
            Argument::scalar(2.0f32),
            Argument::scalar(10u32),
        ];
        if let ArgumentKind::Buffer(facts) = &mut read_only_memory[0].kind {
            facts.read_only_memory = true;
        }
        assert!(matches!(
            check(&read_only_memory),
            Err(RuntimeError::ReadOnlyMemoryAsWritable { index: 0, .. })
        ));
        assert!(check(&[]).is_err());
    }

    #[test]
    fn record_buffers_need_whole_aligned_records() {
        let record = kdsl_ir::RecordType::new(
            "Pair",
            &[("a".into(), ScalarType::U8), ("b".into(), ScalarType::F64)],
        );
        let kernel = KernelInfo {
            name: "pairs".into(),
            parameters: vec![ParameterInfo::Buffer {
                name: "pairs".into(),
                element: ScalarType::U8,
                space: AddressSpace::Global,
                writable: true,
                alignment: 0,
                record: Some(record),
            }],
            ..KernelInfo::default()
        };
        let with = |address: u64, bytes: usize| {
            let mut argument = buffer(1, ScalarType::U8, true, 1);
            if let ArgumentKind::Buffer(facts) = &mut argument.kind {
                facts.address = address;
                facts.bytes = bytes;
            }
            let result = check_arguments(&kernel, 1, "sycl:0", &[argument]);
            assert_eq!(
                ArgumentLayout::new(&kernel).accepts(1, &[argument]),
                result.is_ok(),
                "{result:?}"
            );
            result
        };
        assert!(with(0x1000, 32).is_ok());
        for (address, bytes, problem) in [
            (0x1000, 30, "30 bytes were given, not a multiple of 16"),
            (0x1004, 32, "the memory starts at 0x1004"),
        ] {
            let error = with(address, bytes).unwrap_err();
            assert!(
                matches!(&error, RuntimeError::RecordBufferMismatch { record, .. } if record == "Pair"),
                "{error}"
            );
            assert!(error.to_string().contains(problem), "{error}");
        }
        let mut floats = buffer(1, ScalarType::F32, true, 1);
        if let ArgumentKind::Buffer(facts) = &mut floats.kind {
            facts.bytes = 32;
        }
        let error = check_arguments(&kernel, 1, "sycl:0", &[floats]).unwrap_err();
        assert!(
            error.to_string().contains("buffer of `Pair` records"),
            "{error}"
        );
    }

    #[test]
    fn local_memory_goes_only_to_local_parameters() {
        let mut tiled = saxpy();
        tiled.parameters[1] = ParameterInfo::Buffer {
            name: "tile".into(),
            element: ScalarType::F32,
            space: AddressSpace::Local,
            writable: true,
            alignment: 0,
            record: None,
        };
        let check = |arguments: &[Argument]| {
            let result = check_arguments(&tiled, 1, "sycl:0", arguments);
            assert_eq!(
                ArgumentLayout::new(&tiled).accepts(1, arguments),
                result.is_ok(),
                "{result:?}"
            );
            result
        };
        let with = |second: Argument<'static>, first: Argument<'static>| {
            [
                first,
                second,
                Argument::scalar(2.0f32),
                Argument::scalar(10u32),
            ]
        };
        check(&with(
            Argument::local_of::<f32>(64),
            buffer(1, ScalarType::F32, true, 1),
        ))
        .unwrap();
        for wrong in [
            with(
                Argument::local(ScalarType::F64, 64),
                buffer(1, ScalarType::F32, true, 1),
            ),
            with(
                buffer(2, ScalarType::F32, true, 1),
                buffer(1, ScalarType::F32, true, 1),
            ),
            with(Argument::scalar(64u32), buffer(1, ScalarType::F32, true, 1)),
            with(Argument::local_of::<f32>(64), Argument::local_of::<f32>(64)),
        ] {
            match check(&wrong).unwrap_err() {
                RuntimeError::ArgumentType {
                    expected, found, ..
                } => {
                    assert!(
                        expected.contains("buffer") || expected.contains("local memory of f32")
                    );
                    assert!(!found.is_empty());
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            Argument::local_of::<f32>(64).describe(),
            "local memory of 64 f32"
        );
    }

    #[test]
    fn scalar_bits_are_little_endian_and_sized() {
        assert_eq!(ScalarValue::F32(1.0).to_le_bytes(), 1.0f32.to_le_bytes());
        assert_eq!(ScalarValue::I8(-1).to_bits(), 0xff);
        assert_eq!(ScalarValue::U16(0x1234).to_bits(), 0x1234);
        assert_eq!(ScalarValue::Bool(true).to_le_bytes(), [1]);
        assert_eq!(ScalarValue::I32(-2).to_bits(), 0xffff_fffe);
        assert_eq!(ScalarValue::F32(2.0).to_bits(), u64::from(2.0f32.to_bits()));
        for ty in ScalarType::ALL {
            if let Some(value) = sample(ty) {
                assert_eq!(value.ty(), ty);
                assert_eq!(value.to_le_bytes().len() as u32, ty.size_in_bytes());
                // The bits are the little-endian bytes, zero-extended.
                let mut bytes = [0u8; 8];
                bytes[..value.to_le_bytes().len()].copy_from_slice(&value.to_le_bytes());
                assert_eq!(value.to_bits(), u64::from_le_bytes(bytes), "{ty:?}");
            }
        }
        for value in [
            ScalarValue::I8(-1),
            ScalarValue::I16(-3),
            ScalarValue::I64(-4),
        ] {
            let mut bytes = [0u8; 8];
            bytes[..value.to_le_bytes().len()].copy_from_slice(&value.to_le_bytes());
            assert_eq!(value.to_bits(), u64::from_le_bytes(bytes), "{value:?}");
        }
    }

    fn sample(ty: ScalarType) -> Option<ScalarValue> {
        Some(match ty {
            ScalarType::Bool => ScalarValue::Bool(true),
            ScalarType::I8 => ScalarValue::I8(1),
            ScalarType::U8 => ScalarValue::U8(1),
            ScalarType::I16 => ScalarValue::I16(1),
            ScalarType::U16 => ScalarValue::U16(1),
            ScalarType::I32 => ScalarValue::I32(1),
            ScalarType::U32 => ScalarValue::U32(1),
            ScalarType::I64 => ScalarValue::I64(1),
            ScalarType::U64 => ScalarValue::U64(1),
            ScalarType::F16 => ScalarValue::F16(0x3c00),
            ScalarType::Bf16 => ScalarValue::Bf16(0x3f80),
            ScalarType::F32 => ScalarValue::F32(1.0),
            ScalarType::F64 => ScalarValue::F64(1.0),
        })
    }
}
