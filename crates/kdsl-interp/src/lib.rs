//! A reference interpreter for the kdsl IR.
//!
//! [`run_kernel`] executes one kernel of a [`kdsl_ir::Module`] over a launch range on host
//! data, and defines what a kernel computes: compiled code on any device is checked against it
//! (`tests/differential.rs`). It knows nothing of LLVM.
//!
//! # Semantics
//!
//! - **Integers** wrap. Division and remainder truncate toward zero (remainder takes the
//!   dividend's sign). Division or remainder by zero, signed `MIN / -1` and `MIN % -1`, and
//!   shifts by a negative amount or by at least the bit width are
//!   [`InterpError::UndefinedBehaviour`]. `>>` is arithmetic on signed types.
//! - **Floats** are IEEE-754 with round-to-nearest-even. `f16` arithmetic and math are computed
//!   in `f32` and rounded to `f16` (exact for `+ - * /`). Comparisons are ordered (false with a
//!   NaN) except `!=`, which is true with a NaN. `%` on floats is C's `fmod`.
//! - **Math** uses Rust's `f32`/`f64` functions (the platform's libm): `sqrt`, `fma`, `floor`,
//!   `ceil`, `round` (halfway away from zero) and `abs` are exact; `exp exp2 log log2 sin cos tan
//!   tanh pow` are within a few ULP of the true result, and so are device libraries (OpenCL
//!   allows up to 4 ULP for `exp`, 16 for `pow`), so compare them with a relative tolerance (the
//!   differential tests use 1e-5 for `f32` and 1e-12 for `f64`, relative to the magnitude of the
//!   result or 1). Devices may also contract `a * b + c` into an `fma`. `rsqrt(x)` is
//!   `1 / sqrt(x)`. `min`/`max` on floats return the other operand when one is a NaN (`minNum`);
//!   `clamp(x, low, high)` is `min(max(x, low), high)`; `abs` of the most negative integer is itself.
//! - **Casts**: integer to integer truncates or extends by the source's signedness; anything to
//!   `bool` is `!= 0` (so NaN is `true`); `bool` to a number is 0 or 1; integer to float rounds to
//!   nearest; float to float rounds to nearest. Float to integer truncates toward zero, like
//!   LLVM's `fptosi`/`fptoui`; a NaN or a value whose truncation the target type cannot hold is
//!   [`InterpError::UndefinedBehaviour`] (LLVM gives poison there, so no saturation is promised).
//! - **Memory**: an index outside a buffer or an array dimension (negative ones included) is
//!   [`InterpError::OutOfBounds`]. Private arrays and typed-but-unassigned scalars start at zero.
//!   Local arrays are per work-group and start filled with a poison pattern, all bits set
//!   ([`LOCAL_MEMORY_POISON`]: a NaN for floats, `-1` or the maximum for integers), so a kernel
//!   that reads local memory it never wrote gives visibly wrong results.
//! - **Records**: a buffer of records is passed as its bytes ([`HostBuffer::U8`], a whole number
//!   of records in C layout, [`kdsl_ir::RecordType`]); the interpreter reads each field at its
//!   offset, bounds the record index by the number of records, writes fields back at their
//!   offsets and leaves padding bytes as they were.
//! - **Atomics** are indivisible read-modify-writes (relaxed); they return the old value.
//!   Compare-exchange stores `desired` only when the old value equals `expected`.
//! - **Evaluation order**: operands left to right; `&&`/`||` evaluate the right side only when
//!   needed; `select` evaluates both arms.
//! - **Launches** of a kernel with `#[work_group_size]` must use exactly that work-group size
//!   ([`InterpError::InvalidLaunch`] otherwise), as the runtime requires on devices.
//! - **Work-groups** run one after another. Each work-item of a group that uses `barrier()` or a
//!   sub-group operation runs on its own thread, and `barrier()` waits for the whole group.
//!   Sub-groups are consecutive linear local ids (`x + y * lx + z * lx * ly`) in chunks of
//!   [`InterpLaunch::sub_group_size`]; the last chunk may be smaller, and `sub_group_size()`
//!   returns its actual size. A sub-group operation waits for its whole sub-group. Shuffling
//!   from a lane outside the sub-group is [`InterpError::UndefinedBehaviour`]. Reductions fold
//!   lanes in order 0, 1, 2, ... (devices may use another order, so float sums differ slightly).
//! - **Divergence**: a barrier or sub-group operation that some work-items of the group (or
//!   sub-group) never reach, or work-items meeting at different such statements, is
//!   [`InterpError::DivergentSynchronization`] instead of a hang.
//! - **Launch-sized local arrays** (`local mut [T]` parameters) have the length the launch
//!   gives ([`InterpArgument::Local`]); each work-group gets its own, poisoned like `local`
//!   arrays, and an index outside it is [`InterpError::OutOfBounds`].
//! - **Asynchronous copies** (`async_copy`) read their source when they start and write their
//!   destination at the `async_wait` that completes their group (uncommitted copies and groups
//!   never waited for land when the work-item ends): the latest moment the language allows, so
//!   a kernel that reads copied memory before its wait sees the old contents. An index that is
//!   not a multiple of the count is [`InterpError::UndefinedBehaviour`].
//! - **`print`** writes each value as `kdsl_ir::print_format::display` says; the lines of a
//!   launch come out ordered by linear global work-item id, each work-item's in program order
//!   ([`run_kernel_with_output`]). Devices print in their own order.
//! - Any error stops the launch; buffers then hold what was written before it.

mod execute;
mod records;
mod sync;

pub use half::{bf16, f16};
pub use kdsl_ir::ScalarValue;
use kdsl_ir::{AddressSpace, Module, ParameterType, ScalarType, Span};

/// Every bit set: the initial content of each local-memory element, truncated to its width.
pub const LOCAL_MEMORY_POISON: u64 = u64::MAX;

/// The largest work-group the interpreter runs (one thread per work-item when it synchronizes).
pub const MAX_WORK_GROUP_SIZE: u32 = 1024;

/// The shape of a launch: dimension 0 is `get_global_id(0)`; unused dimensions are 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InterpLaunch {
    /// Work-items in each dimension; each a multiple of `local`'s and below 2^31.
    pub global: [u32; 3],
    /// Work-items per work-group in each dimension; at most [`MAX_WORK_GROUP_SIZE`] in all.
    pub local: [u32; 3],
    /// Lanes per sub-group (the last sub-group of a work-group may have fewer).
    pub sub_group_size: u32,
}

impl InterpLaunch {
    /// The sub-group size a launch gets unless [`InterpLaunch::with_sub_group_size`] says otherwise.
    pub const DEFAULT_SUB_GROUP_SIZE: u32 = 16;

    /// A launch of up to three dimensions; missing dimensions are 1.
    ///
    /// # Panics
    /// If `D` is above 3 (a programming error, not input).
    pub fn new<const D: usize>(global: [u32; D], local: [u32; D]) -> InterpLaunch {
        assert!(D <= 3, "a launch has at most three dimensions");
        let mut launch = InterpLaunch {
            global: [1; 3],
            local: [1; 3],
            sub_group_size: Self::DEFAULT_SUB_GROUP_SIZE,
        };
        launch.global[..D].copy_from_slice(&global);
        launch.local[..D].copy_from_slice(&local);
        launch
    }

    /// A one-dimensional launch covering `count` work-items with groups of `local`, rounded up.
    pub fn covering(count: u32, local: u32) -> InterpLaunch {
        let local = local.max(1);
        InterpLaunch::new([count.div_ceil(local).max(1) * local], [local])
    }

    pub fn with_sub_group_size(mut self, sub_group_size: u32) -> InterpLaunch {
        self.sub_group_size = sub_group_size;
        self
    }

    /// Work-items per work-group.
    pub fn work_group_size(&self) -> u64 {
        self.local.iter().map(|&d| u64::from(d)).product()
    }

    /// Work-groups in each dimension.
    pub fn group_counts(&self) -> [u32; 3] {
        [0, 1, 2].map(|d| self.global[d] / self.local[d].max(1))
    }

    fn check(&self) -> Result<(), InterpError> {
        let invalid = |message: String| Err(InterpError::InvalidLaunch(message));
        for dimension in 0..3 {
            let (global, local) = (self.global[dimension], self.local[dimension]);
            if global == 0 || local == 0 {
                return invalid(format!("dimension {dimension} has size 0"));
            }
            if global % local != 0 {
                return invalid(format!(
                    "global size {global} in dimension {dimension} is not a multiple of the work-group size {local}"
                ));
            }
            if global >= 1 << 31 {
                return invalid(format!(
                    "global size {global} in dimension {dimension} is not below 2^31"
                ));
            }
        }
        if self.work_group_size() > u64::from(MAX_WORK_GROUP_SIZE) {
            return invalid(format!(
                "a work-group of {} work-items is above the interpreter's limit of {MAX_WORK_GROUP_SIZE}",
                self.work_group_size()
            ));
        }
        if self.sub_group_size == 0 {
            return invalid("the sub-group size is 0".into());
        }
        Ok(())
    }
}

/// Host data for one buffer parameter, typed by its element.
#[derive(Clone, Debug, PartialEq)]
pub enum HostBuffer {
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F16(Vec<f16>),
    Bf16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// One argument of a launch, in the order of the kernel's parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum InterpArgument {
    /// For a `global` or `constant` buffer parameter. Writes land here.
    Buffer(HostBuffer),
    /// For a scalar parameter.
    Scalar(ScalarValue),
    /// For a launch-sized local array parameter (`local mut [T]`): its element type and
    /// length. Each work-group gets its own array, which starts poisoned like `local` arrays.
    Local { element: ScalarType, length: u64 },
}

/// A Rust type a [`HostBuffer`] can hold.
pub trait HostElement: Copy + Sized {
    /// The kernel-language type of one element.
    const TYPE: ScalarType;
    fn into_buffer(values: Vec<Self>) -> HostBuffer;
    fn slice_of(buffer: &HostBuffer) -> Option<&[Self]>;
}

macro_rules! host_types {
    ($($rust:ty => $variant:ident),* $(,)?) => {$(
        impl HostElement for $rust {
            const TYPE: ScalarType = ScalarType::$variant;
            fn into_buffer(values: Vec<Self>) -> HostBuffer {
                HostBuffer::$variant(values)
            }
            fn slice_of(buffer: &HostBuffer) -> Option<&[Self]> {
                match buffer {
                    HostBuffer::$variant(values) => Some(values),
                    _ => None,
                }
            }
        }
        impl From<Vec<$rust>> for HostBuffer {
            fn from(values: Vec<$rust>) -> HostBuffer {
                HostBuffer::$variant(values)
            }
        }
    )*};
}

host_types! {
    i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64,
    f16 => F16, bf16 => Bf16, f32 => F32, f64 => F64,
}

macro_rules! each_buffer {
    ($buffer:expr, $values:ident => $body:expr) => {
        match $buffer {
            HostBuffer::I8($values) => $body,
            HostBuffer::U8($values) => $body,
            HostBuffer::I16($values) => $body,
            HostBuffer::U16($values) => $body,
            HostBuffer::I32($values) => $body,
            HostBuffer::U32($values) => $body,
            HostBuffer::I64($values) => $body,
            HostBuffer::U64($values) => $body,
            HostBuffer::F16($values) => $body,
            HostBuffer::Bf16($values) => $body,
            HostBuffer::F32($values) => $body,
            HostBuffer::F64($values) => $body,
        }
    };
}

impl HostBuffer {
    pub fn element_type(&self) -> ScalarType {
        match self {
            HostBuffer::I8(_) => ScalarType::I8,
            HostBuffer::U8(_) => ScalarType::U8,
            HostBuffer::I16(_) => ScalarType::I16,
            HostBuffer::U16(_) => ScalarType::U16,
            HostBuffer::I32(_) => ScalarType::I32,
            HostBuffer::U32(_) => ScalarType::U32,
            HostBuffer::I64(_) => ScalarType::I64,
            HostBuffer::U64(_) => ScalarType::U64,
            HostBuffer::F16(_) => ScalarType::F16,
            HostBuffer::Bf16(_) => ScalarType::Bf16,
            HostBuffer::F32(_) => ScalarType::F32,
            HostBuffer::F64(_) => ScalarType::F64,
        }
    }

    pub fn len(&self) -> usize {
        each_buffer!(self, values => values.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements, if they are of type `T`.
    pub fn as_slice<T: HostElement>(&self) -> Option<&[T]> {
        T::slice_of(self)
    }

    /// Element `index` as bits (see the `value` module's representation).
    fn bits(&self, index: usize) -> u64 {
        match self {
            HostBuffer::I8(v) => u64::from(v[index] as u8),
            HostBuffer::U8(v) => u64::from(v[index]),
            HostBuffer::I16(v) => u64::from(v[index] as u16),
            HostBuffer::U16(v) => u64::from(v[index]),
            HostBuffer::I32(v) => u64::from(v[index] as u32),
            HostBuffer::U32(v) => u64::from(v[index]),
            HostBuffer::I64(v) => v[index] as u64,
            HostBuffer::U64(v) => v[index],
            HostBuffer::F16(v) => u64::from(v[index].to_bits()),
            HostBuffer::Bf16(v) => u64::from(v[index].to_bits()),
            HostBuffer::F32(v) => u64::from(v[index].to_bits()),
            HostBuffer::F64(v) => v[index].to_bits(),
        }
    }

    fn set_bits(&mut self, index: usize, bits: u64) {
        match self {
            HostBuffer::I8(v) => v[index] = bits as i8,
            HostBuffer::U8(v) => v[index] = bits as u8,
            HostBuffer::I16(v) => v[index] = bits as i16,
            HostBuffer::U16(v) => v[index] = bits as u16,
            HostBuffer::I32(v) => v[index] = bits as i32,
            HostBuffer::U32(v) => v[index] = bits as u32,
            HostBuffer::I64(v) => v[index] = bits as i64,
            HostBuffer::U64(v) => v[index] = bits,
            HostBuffer::F16(v) => v[index] = f16::from_bits(bits as u16),
            HostBuffer::Bf16(v) => v[index] = bf16::from_bits(bits as u16),
            HostBuffer::F32(v) => v[index] = f32::from_bits(bits as u32),
            HostBuffer::F64(v) => v[index] = f64::from_bits(bits),
        }
    }
}

impl InterpArgument {
    /// A buffer argument holding `values`.
    pub fn buffer<T: HostElement>(values: Vec<T>) -> InterpArgument {
        InterpArgument::Buffer(T::into_buffer(values))
    }

    pub fn scalar(value: impl Into<ScalarValue>) -> InterpArgument {
        InterpArgument::Scalar(value.into())
    }

    /// A launch-sized local array of `length` elements of `element`.
    pub fn local(element: ScalarType, length: u64) -> InterpArgument {
        InterpArgument::Local { element, length }
    }

    /// The elements of a buffer argument, if it is one of type `T`.
    pub fn as_slice<T: HostElement>(&self) -> Option<&[T]> {
        match self {
            InterpArgument::Buffer(buffer) => buffer.as_slice(),
            InterpArgument::Scalar(_) | InterpArgument::Local { .. } => None,
        }
    }
}

/// Which work-item an error happened in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkItemId {
    pub global: [u32; 3],
    pub local: [u32; 3],
    pub group: [u32; 3],
}

impl std::fmt::Display for WorkItemId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [x, y, z] = self.global;
        write!(f, "work-item ({x}, {y}, {z})")
    }
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InterpError {
    #[error("the module is not valid IR: {0}")]
    InvalidModule(String),
    #[error("no kernel `{name}` in the module (it has: {})", available.join(", "))]
    KernelNotFound {
        name: String,
        available: Vec<String>,
    },
    #[error("invalid launch: {0}")]
    InvalidLaunch(String),
    #[error("argument {index}: {message}")]
    ArgumentMismatch { index: usize, message: String },
    /// An operation with no defined result: see the crate documentation for the list.
    #[error("undefined behaviour in {work_item} at bytes {}..{}: {message}", span.start, span.end)]
    UndefinedBehaviour {
        span: Span,
        work_item: WorkItemId,
        message: String,
    },
    #[error("out-of-bounds access in {work_item} at bytes {}..{}: {message}", span.start, span.end)]
    OutOfBounds {
        span: Span,
        work_item: WorkItemId,
        message: String,
    },
    /// A barrier or sub-group operation not reached by its whole group or sub-group.
    #[error("divergent synchronization in {work_item} at bytes {}..{}: {message}", span.start, span.end)]
    DivergentSynchronization {
        span: Span,
        work_item: WorkItemId,
        message: String,
    },
    #[error("the interpreter could not start a work-item thread: {0}")]
    Resources(String),
}

impl InterpError {
    /// The source location of a run-time error, if it has one.
    pub fn span(&self) -> Option<Span> {
        match self {
            InterpError::UndefinedBehaviour { span, .. }
            | InterpError::OutOfBounds { span, .. }
            | InterpError::DivergentSynchronization { span, .. } => Some(*span),
            _ => None,
        }
    }
}

/// The stack the interpreter runs on: evaluation recurses over expression trees, up to the
/// front end's depth cap (1024 levels).
const INTERPRETER_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Runs `kernel` of `module` over `launch`, reading and writing `arguments` (one per kernel
/// parameter, in order). On success every buffer argument holds the kernel's writes. Runs on a
/// thread of its own with a large stack, so deep expressions never overflow the caller's.
/// What the kernel `print`s goes to standard output when the launch ends (also when it
/// fails): see [`run_kernel_with_output`] for the order.
pub fn run_kernel(
    module: &Module,
    kernel: &str,
    launch: &InterpLaunch,
    arguments: &mut [InterpArgument],
) -> Result<(), InterpError> {
    let (result, output) = run_kernel_with_output(module, kernel, launch, arguments);
    if !output.is_empty() {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        // Output that cannot be written (a closed pipe) is no error of the kernel.
        let _ = stdout.write_all(output.as_bytes());
        let _ = stdout.flush();
    }
    result
}

/// [`run_kernel`], returning what the kernel `print`ed instead of writing it: every line of
/// work-item 0 (by linear global id, `x + gx * (y + gy * z)`), then every line of work-item 1,
/// and so on, each work-item's lines in the order it printed them. Lines printed before an
/// error are kept.
pub fn run_kernel_with_output(
    module: &Module,
    kernel: &str,
    launch: &InterpLaunch,
    arguments: &mut [InterpArgument],
) -> (Result<(), InterpError>, String) {
    let mut output = String::new();
    let result = std::thread::scope(|scope| {
        let output = &mut output;
        let worker = std::thread::Builder::new()
            .name("kdsl-interp".into())
            .stack_size(INTERPRETER_STACK_BYTES)
            .spawn_scoped(scope, move || {
                run_kernel_on_this_thread(module, kernel, launch, arguments, output)
            });
        match worker {
            Ok(worker) => worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(error) => Err(InterpError::Resources(format!(
                "the interpreter's thread could not start: {error}"
            ))),
        }
    });
    (result, output)
}

fn run_kernel_on_this_thread(
    module: &Module,
    kernel: &str,
    launch: &InterpLaunch,
    arguments: &mut [InterpArgument],
    output: &mut String,
) -> Result<(), InterpError> {
    // Matrix tiles run as their one definition in plain IR (`kdsl_ir::matrix`), the loops
    // targets without matrix units compile.
    let features = kdsl_ir::analysis::ModuleFeatures::new(module);
    let expanded;
    let module = if features.uses_matrix() {
        expanded = kdsl_ir::matrix::expand_plain(module);
        &expanded
    } else {
        module
    };
    kdsl_ir::validate(module).map_err(|errors| {
        let messages: Vec<String> = errors
            .iter()
            .map(|e| format!("{}: {}", e.function, e.message))
            .collect();
        InterpError::InvalidModule(messages.join("; "))
    })?;
    let (mut index, mut function) = module
        .functions
        .iter()
        .enumerate()
        .find(|(_, f)| {
            f.kind == kdsl_ir::FunctionKind::Kernel
                && f.contiguous_copy_of.is_none()
                && f.name == kernel
        })
        .ok_or_else(|| InterpError::KernelNotFound {
            name: kernel.to_string(),
            available: module.kernels().map(|f| f.name.clone()).collect(),
        })?;
    launch.check()?;
    check_required_work_group_size(function, launch)?;
    check_arguments(function, arguments)?;
    // Contiguous arrays run the kernel's contiguous copy, as on devices.
    let stride = |parameter: usize| match arguments.get(parameter) {
        Some(InterpArgument::Scalar(ScalarValue::U64(value))) => Some(*value),
        _ => None,
    };
    if let (Some(copy), true) = (
        function.contiguous_entry,
        function.takes_contiguous_entry(stride),
    ) {
        (index, function) = (copy.0 as usize, module.function(copy));
    }
    // The expansion keeps the functions' order, and its loops exchange nothing.
    let synchronizes = features.synchronizes(kdsl_ir::FunctionId(index as u32));

    let parameters: Vec<execute::KernelParameter> = arguments
        .iter()
        .zip(&function.parameters)
        .map(
            |(argument, parameter)| match (argument, record_of(parameter)) {
                (InterpArgument::Scalar(value), _) => {
                    execute::KernelParameter::Scalar(value.bits())
                }
                (InterpArgument::Buffer(HostBuffer::U8(bytes)), Some(record)) => {
                    execute::KernelParameter::Buffer(records::cells_of(bytes, record))
                }
                (InterpArgument::Buffer(buffer), _) => execute::KernelParameter::Buffer(
                    (0..buffer.len()).map(|i| buffer.bits(i)).collect(),
                ),
                (InterpArgument::Local { element, length }, _) => execute::KernelParameter::Local {
                    element: *element,
                    length: *length,
                },
            },
        )
        .collect();
    let memories = execute::run(module, function, synchronizes, launch, parameters, output)?;
    for ((argument, memory), parameter) in
        arguments.iter_mut().zip(memories).zip(&function.parameters)
    {
        match (argument, memory, record_of(parameter)) {
            (InterpArgument::Buffer(HostBuffer::U8(bytes)), Some(memory), Some(record)) => {
                records::write_back(bytes, &memory, record)
            }
            (InterpArgument::Buffer(buffer), Some(memory), _) => {
                for (index, bits) in memory.into_iter().enumerate() {
                    buffer.set_bits(index, bits);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn record_of(parameter: &kdsl_ir::Parameter) -> Option<&kdsl_ir::RecordType> {
    match &parameter.ty {
        ParameterType::Buffer {
            record: Some(record),
            ..
        } => Some(record),
        _ => None,
    }
}

/// A kernel declared with `#[work_group_size]` runs only with that work-group size, as on
/// devices (whose runtime rejects another size before launching).
fn check_required_work_group_size(
    function: &kdsl_ir::Function,
    launch: &InterpLaunch,
) -> Result<(), InterpError> {
    match function.work_group_size {
        Some(required) if required != launch.local => {
            Err(InterpError::InvalidLaunch(format!(
                "kernel `{}` requires work-groups of {required:?} (`#[work_group_size]`), the launch has {:?}",
                function.name, launch.local
            )))
        }
        _ => Ok(()),
    }
}

fn check_arguments(
    function: &kdsl_ir::Function,
    arguments: &[InterpArgument],
) -> Result<(), InterpError> {
    if arguments.len() != function.parameters.len() {
        return Err(InterpError::ArgumentMismatch {
            index: arguments.len().min(function.parameters.len()),
            message: format!(
                "kernel `{}` takes {} arguments, {} given",
                function.name,
                function.parameters.len(),
                arguments.len()
            ),
        });
    }
    for (index, (parameter, argument)) in function.parameters.iter().zip(arguments).enumerate() {
        let mismatch = |message: String| InterpError::ArgumentMismatch { index, message };
        let local_parameter = matches!(
            parameter.ty,
            ParameterType::Buffer {
                space: AddressSpace::Local,
                ..
            }
        );
        match (&parameter.ty, argument) {
            (ParameterType::Buffer { element, .. }, InterpArgument::Local { element: given, .. })
                if local_parameter && given != element =>
            {
                return Err(mismatch(format!(
                    "`{}` is a local array of {element}, given one of {given}",
                    parameter.name
                )));
            }
            (_, InterpArgument::Local { .. }) if local_parameter => {}
            (_, InterpArgument::Local { .. }) => {
                return Err(mismatch(format!(
                    "`{}` is `{}`, given a local array",
                    parameter.name, parameter.ty
                )))
            }
            (ParameterType::Buffer { element, .. }, _) if local_parameter => {
                return Err(mismatch(format!(
                    "`{}` is a launch-sized local array (`{}`): pass its length, `InterpArgument::local({element}, n)`",
                    parameter.name, parameter.ty
                )))
            }
            (ParameterType::Scalar { ty }, InterpArgument::Scalar(value)) if value.ty() != *ty => {
                return Err(mismatch(format!(
                    "`{}` is a {ty}, given a {}",
                    parameter.name,
                    value.ty()
                )))
            }
            (
                ParameterType::Buffer {
                    record: Some(record),
                    ..
                },
                InterpArgument::Buffer(buffer),
            ) if buffer.element_type() != ScalarType::U8
                || !buffer.len().is_multiple_of(record.size as usize) =>
            {
                return Err(mismatch(format!(
                    "`{}` is a buffer of `{record}` records ({} bytes each), given {} {} elements (pass the records' bytes as `u8`)",
                    parameter.name,
                    record.size,
                    buffer.len(),
                    buffer.element_type()
                )))
            }
            (ParameterType::Buffer { element, .. }, InterpArgument::Buffer(buffer))
                if buffer.element_type() != *element =>
            {
                return Err(mismatch(format!(
                    "`{}` is a buffer of {element}, given a buffer of {}",
                    parameter.name,
                    buffer.element_type()
                )))
            }
            (ParameterType::Scalar { ty }, InterpArgument::Buffer(_)) => {
                return Err(mismatch(format!(
                    "`{}` is a {ty} scalar, given a buffer",
                    parameter.name
                )))
            }
            (ParameterType::Buffer { .. }, InterpArgument::Scalar(_)) => {
                return Err(mismatch(format!(
                    "`{}` is a buffer, given a scalar",
                    parameter.name
                )))
            }
            _ => {}
        }
    }
    Ok(())
}
