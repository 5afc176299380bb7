//! The one error type of the runtime.

use crate::device::BackendKind;

/// Everything that can go wrong between choosing a device and waiting for a launch.
///
/// Misuse errors (arguments, launch sizes, kernel names) are found before anything reaches the
/// driver, so the device's queue or stream stays usable after them.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("no device is available: {why}")]
    NoDevice { why: String },

    #[error("no device matches `{filter}`; the devices found are: {available}")]
    NoMatchingDevice { filter: String, available: String },

    #[error("invalid device filter `{filter}`: {why}")]
    BadFilter { filter: String, why: String },

    #[error("the bundle has no image this device can run: the bundle has {bundle_has}, the device needs {device_needs}")]
    NoMatchingImage {
        bundle_has: String,
        device_needs: String,
    },

    #[error(
        "the bundle has no kernel named `{name}`; its kernels are: {}",
        list_or_none(available)
    )]
    KernelNotFound {
        name: String,
        available: Vec<String>,
    },

    #[error("kernel `{kernel}` takes {expected} arguments, but {found} were given")]
    ArgumentCount {
        kernel: String,
        expected: usize,
        found: usize,
    },

    #[error("argument {index} (`{name}`) of kernel `{kernel}` must be {expected}, but {found} was given")]
    ArgumentType {
        kernel: String,
        index: usize,
        name: String,
        expected: String,
        found: String,
    },

    #[error("argument {index} (`{name}`) of kernel `{kernel}` is a writable buffer, but a read-only `&Buffer` was given; pass `&mut buffer` (or `Argument::writable(&buffer)`)")]
    ReadOnlyBufferAsWritable {
        kernel: String,
        index: usize,
        name: String,
    },

    #[error("argument {index} (`{name}`) of kernel `{kernel}` is a buffer of device `{buffer_device}`, but the kernel was loaded on device `{kernel_device}`; buffers belong to the `Device` instance that allocated them")]
    ForeignBuffer {
        kernel: String,
        index: usize,
        name: String,
        buffer_device: String,
        kernel_device: String,
    },

    #[error("arguments {first} (`{first_name}`) and {second} (`{second_name}`) of kernel `{kernel}` are the same buffer and at least one of them is writable; kernels assume writable buffers do not alias")]
    AliasedBuffers {
        kernel: String,
        first: usize,
        first_name: String,
        second: usize,
        second_name: String,
    },

    #[error("argument {index} (`{name}`) of kernel `{kernel}` is a writable buffer, but the memory given is read-only (a read-only foreign array)")]
    ReadOnlyMemoryAsWritable {
        kernel: String,
        index: usize,
        name: String,
    },

    #[error("argument {index} (`{name}`) of kernel `{kernel}` must start at a multiple of {alignment} bytes for its vector accesses, but starts at {address:#x}")]
    MisalignedBuffer {
        kernel: String,
        index: usize,
        name: String,
        alignment: u32,
        address: u64,
    },

    #[error("argument {index} (`{name}`) of kernel `{kernel}` is a buffer of {length} elements, but its shape {shape:?} with strides {strides:?} reaches past its end")]
    ShapeOutsideBuffer {
        kernel: String,
        index: usize,
        name: String,
        shape: Vec<u64>,
        strides: Vec<u64>,
        length: u64,
    },

    #[error("argument {index} (`{name}`) of kernel `{kernel}` is a buffer of `{record}` records ({record_size} bytes each, aligned to {record_alignment}), but {problem}")]
    RecordBufferMismatch {
        kernel: String,
        index: usize,
        name: String,
        record: String,
        record_size: u32,
        record_alignment: u32,
        /// What is wrong: the byte length or the start address.
        problem: String,
    },

    #[error("cannot write: {what}")]
    ReadOnlyMemory { what: String },

    #[error("kernel `{kernel}` was loaded on device `{kernel_device}`, but the queue belongs to device `{queue_device}`")]
    ForeignQueue {
        kernel: String,
        kernel_device: String,
        queue_device: String,
    },

    #[error("the memory belongs to device `{memory_device}`, but the queue belongs to device `{queue_device}`; buffers belong to the `Device` instance that allocated or borrowed them")]
    ForeignMemory {
        memory_device: String,
        queue_device: String,
    },

    #[error("a buffer of {found} cannot be used as a buffer of {expected}")]
    ElementTypeMismatch {
        expected: kdsl_ir::ScalarType,
        found: kdsl_ir::ScalarType,
    },

    #[error("invalid range: {why}")]
    BadRange { why: String },

    #[error("invalid foreign object: {what}")]
    BadForeignObject { what: String },

    #[error("launch of kernel `{kernel}` is invalid: {why}")]
    BadLaunch { kernel: String, why: String },

    /// The kernel's fixed `local` arrays and the launch-sized ones (`local mut [T]`, each
    /// aligned) need more local memory than the device has for one work-group.
    #[error("kernel `{kernel}` needs {total_bytes} bytes of local memory ({fixed_bytes} in fixed `local` arrays; launch-sized: {launch_sized} bytes), the device has {limit_bytes}")]
    LocalMemoryExceeded {
        kernel: String,
        fixed_bytes: u64,
        /// Each launch-sized array's name and bytes, such as "`tile` 4096".
        launch_sized: String,
        total_bytes: u64,
        limit_bytes: u64,
    },

    #[error("out of device memory: could not allocate {bytes} bytes ({message})")]
    OutOfMemory { bytes: u64, message: String },

    #[error("length mismatch: the buffer holds {expected} elements, but {found} were given")]
    LengthMismatch { expected: usize, found: usize },

    #[error("the bundle's {image} image is invalid and was not given to the driver: {why}")]
    InvalidImage { image: String, why: String },

    #[error("the event has no timing: it ran on a queue without profiling (use `Device::queue()` or the default queue for timings)")]
    ProfilingDisabled,

    #[error("{backend} error: {message}")]
    Backend {
        backend: BackendKind,
        message: String,
    },

    #[error("{backend} does not support {what}")]
    Unsupported { backend: BackendKind, what: String },

    /// A kernel compiled with `--checked` broke a rule while it ran: an index outside its
    /// buffer or array, or an integer division by zero (or of the minimum by -1). The first
    /// fault of the launch is reported when its event is waited for; the faulting access was
    /// skipped and the device stays usable. See [`crate::KernelFault`] for the fields.
    #[error("{0}")]
    KernelFault(Box<crate::fault::KernelFault>),

    #[error(transparent)]
    Bundle(#[from] kdsl_bundle::BundleError),
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".to_string()
    } else {
        names.join(", ")
    }
}

pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;
