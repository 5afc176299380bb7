//! The typed, structured intermediate representation.
//!
//! The front end produces it, [`crate::validate()`] checks it, and every back end (and a
//! reference interpreter) consumes it. Control flow is structured (if / loop / break /
//! continue / return), every expression carries its scalar type, generics are already
//! instantiated and module constants already folded into literals.

use crate::span::Span;
use crate::types::{AddressSpace, ArrayType, ParameterType, ScalarType};
use serde::{Deserialize, Serialize};

/// A whole translation unit after type checking.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Module {
    /// Kernels and device functions. A [`FunctionId`] indexes this list.
    /// A callee always has a smaller index than its callers (no recursion), so
    /// lowering in order never meets an undeclared function.
    pub functions: Vec<Function>,
    /// The module constants with their folded values, in source order, for the bundle's
    /// metadata (a host reads `BLOCK` from there). Uses of constants are already literals.
    #[serde(default)]
    pub constants: Vec<ModuleConstant>,
}

/// A module constant after folding, with the value actually used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModuleConstant {
    pub name: String,
    pub ty: ScalarType,
    pub value: Literal,
    /// True when the value came from a compile-time definition (`kdsl compile -D NAME=value`)
    /// instead of the declaration.
    pub defined: bool,
}

impl Module {
    /// The kernels the source declares, which hosts launch by name (contiguous copies, which
    /// hosts reach through their kernel, left out).
    pub fn kernels(&self) -> impl Iterator<Item = &Function> {
        self.functions
            .iter()
            .filter(|f| f.kind == FunctionKind::Kernel && f.contiguous_copy_of.is_none())
    }

    /// Every kernel entry point of the images: the kernels and their contiguous copies.
    pub fn entry_points(&self) -> impl Iterator<Item = &Function> {
        self.functions
            .iter()
            .filter(|f| f.kind == FunctionKind::Kernel)
    }

    pub fn function(&self, id: FunctionId) -> &Function {
        &self.functions[id.0 as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FunctionId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ParameterId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VariableId(pub u32);

/// An [`Expression`]'s identity: dense within its function (`0..n` for its `n` expressions),
/// assigned by [`crate::ids::number_function`] once a function is built and checked by
/// [`crate::validate()`]. Analyses ([`crate::analysis`]) key their results by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExprId(pub u32);

/// A [`Place`]'s identity: dense within its function, like [`ExprId`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PlaceId(pub u32);

impl ExprId {
    /// The id of a node not numbered yet: what builders write before numbering.
    pub const UNNUMBERED: ExprId = ExprId(u32::MAX);
}

impl PlaceId {
    /// The id of a place not numbered yet.
    pub const UNNUMBERED: PlaceId = PlaceId(u32::MAX);
}

impl Default for ExprId {
    fn default() -> Self {
        ExprId::UNNUMBERED
    }
}

impl Default for PlaceId {
    fn default() -> Self {
        PlaceId::UNNUMBERED
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FunctionKind {
    /// An entry point launched from the host. Returns nothing.
    Kernel,
    /// A function callable from kernels and other device functions.
    Device,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Function {
    pub name: String,
    pub kind: FunctionKind,
    pub parameters: Vec<Parameter>,
    /// `None` for kernels and for device functions without a result.
    pub return_type: Option<ScalarType>,
    /// Every variable of the body, scalar or array, private or work-group local.
    /// A [`VariableId`] indexes this list.
    pub variables: Vec<Variable>,
    pub body: Block,
    pub span: Span,
    /// The work-group size a kernel requires (`#[work_group_size(x, y, z)]`), unused
    /// dimensions 1; `None` when any size may be launched. Always `None` for device functions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_group_size: Option<[u32; 3]>,
    /// The multi-dimensional buffer parameters (`global [[f32]]`) and the hidden scalar
    /// parameters that carry their shape and strides (see [`ShapedBuffer`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shaped_buffers: Vec<ShapedBuffer>,
    /// A kernel with multi-dimensional buffers: its entry point for contiguous rows, a copy of
    /// this kernel whose innermost strides are the literal 1 (its
    /// [`Function::contiguous_copy_of`] names this kernel). A host launches the copy instead
    /// when every innermost stride argument is 1 ([`Function::takes_contiguous_entry`]), so
    /// that code vectorized for unit strides runs without the strided form beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contiguous_entry: Option<FunctionId>,
    /// On such a copy, the kernel it copies. A copy is an entry point of the images, never a
    /// kernel of its own: hosts name the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contiguous_copy_of: Option<FunctionId>,
}

/// What a kernel's contiguous copy is called, in the IR and as an entry point of every image:
/// the kernel's name and this suffix, which no kdsl name contains and every target's symbols
/// allow (PTX identifiers take `$`).
pub const CONTIGUOUS_ENTRY_SUFFIX: &str = "$contiguous";

/// A buffer parameter declared with two or three dimensions (`a: global [[f32]]`). The buffer
/// itself is an ordinary [`ParameterType::Buffer`] parameter; `shape[k]` is a `u32` parameter
/// holding dimension `k`'s extent and `strides[k]` a `u64` parameter holding the distance in
/// elements between neighbours along dimension `k` (outermost first, as NumPy orders them).
/// The front end turns `a[i, j]` into `a[i' * strides[0] + j' * strides[1]]`, where each index
/// is checked against its extent by [`ExpressionKind::DimensionIndex`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShapedBuffer {
    pub buffer: ParameterId,
    pub shape: Vec<ParameterId>,
    pub strides: Vec<ParameterId>,
}

impl ShapedBuffer {
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
}

impl Function {
    pub fn parameter(&self, id: ParameterId) -> &Parameter {
        &self.parameters[id.0 as usize]
    }

    pub fn variable(&self, id: VariableId) -> &Variable {
        &self.variables[id.0 as usize]
    }

    /// The parameters holding each multi-dimensional buffer's innermost stride: those a
    /// kernel's contiguous copy takes as 1.
    pub fn innermost_strides(&self) -> impl Iterator<Item = ParameterId> + '_ {
        self.shaped_buffers
            .iter()
            .filter_map(|shaped| shaped.strides.last().copied())
    }

    /// Whether a launch whose parameter `i` is the `u64` scalar `scalar(i)` (`None` for any
    /// other argument) takes the kernel's contiguous entry: it has one and every innermost
    /// stride is 1. The interpreter's choice; the runtime chooses alike from the bundle's
    /// metadata (`KernelInfo::contiguous_entry`).
    pub fn takes_contiguous_entry(&self, scalar: impl Fn(usize) -> Option<u64>) -> bool {
        self.contiguous_entry.is_some()
            && self
                .innermost_strides()
                .all(|id| scalar(id.0 as usize) == Some(1))
    }

    /// Bytes of work-group local memory the function declares itself.
    pub fn local_memory_bytes(&self) -> u64 {
        self.variables
            .iter()
            .filter(|v| v.space == AddressSpace::Local)
            .map(|v| v.ty.size_in_bytes())
            .sum()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Parameter {
    pub name: String,
    pub ty: ParameterType,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Variable {
    pub name: String,
    pub ty: VariableType,
    /// `Private` for `let`/`var` and private arrays, `Local` for work-group arrays.
    pub space: AddressSpace,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum VariableType {
    Scalar { ty: ScalarType },
    Array { ty: ArrayType },
}

impl VariableType {
    pub fn size_in_bytes(&self) -> u64 {
        match self {
            VariableType::Scalar { ty } => u64::from(ty.size_in_bytes()),
            VariableType::Array { ty } => ty.size_in_bytes(),
        }
    }
}

pub type Block = Vec<Statement>;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    pub kind: StatementKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StatementKind {
    /// Write a scalar variable (declaration with initializer, assignment, compound assignment).
    Assign {
        variable: VariableId,
        value: Expression,
    },
    /// Write one element of a buffer or array.
    Store {
        place: Place,
        value: Expression,
    },
    /// Write `values` (one per component) as one vector to the buffer vector at vector index
    /// `place.indices[0]` (`vstore4`).
    VectorStore {
        place: Place,
        values: Vec<Expression>,
    },
    If {
        condition: Expression,
        accept: Block,
        reject: Block,
    },
    /// Runs `body` then `continuing` forever, until a `Break` or `Return`.
    /// `Continue` inside `body` jumps to `continuing`. `while` and `for` lower to this.
    Loop {
        body: Block,
        continuing: Block,
        /// How the loop asks to be unrolled; a hint only, with no effect on what it computes.
        unroll: Unroll,
    },
    Break,
    Continue,
    Return {
        value: Option<Expression>,
    },
    /// Work-group barrier with the given memory fences.
    Barrier {
        fence: FenceFlags,
    },
    /// `device_fence()`: a sequentially consistent fence at device scope over global and local
    /// memory: this work-item's accesses before it are seen by every work-item of the device
    /// before its accesses after it (with a relaxed atomic as the flag between them).
    DeviceFence,
    /// An expression evaluated for its effect (a call or an atomic whose result is unused).
    Evaluate {
        value: Expression,
    },
    /// A sub-group matrix operation (`matrix_mma`, ...): see [`crate::matrix`].
    Matrix(crate::matrix::MatrixOp),
    /// An asynchronous copy from global to local memory, or its commit or wait: see
    /// [`crate::async_copy`].
    AsyncCopy(crate::async_copy::AsyncCopyOp),
    /// A work-group's copy of a 2-D tile into local memory, or its wait: see
    /// [`crate::tile_copy`].
    TileCopy(crate::tile_copy::TileCopyOp),
    /// `print("x = {}", x)`: writes `text[0]`, the first argument's text, `text[1]`, ... to the
    /// host's standard output (`text.len() == arguments.len() + 1`; the front end ends the last
    /// piece with the newline). How a value reads: [`crate::print_format::display`].
    Print {
        text: Vec<String>,
        arguments: Vec<Expression>,
    },
}

/// How a loop asks to be unrolled (`for .. unroll`, `for .. unroll(4)`). Back ends pass it
/// to their optimizer; it never changes what the loop computes, so interpreters ignore it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Unroll {
    /// The optimizer decides.
    #[default]
    Default,
    /// Unroll completely: the trip count is a compile-time constant.
    Full,
    /// Unroll by this factor (at least 1; 1 asks for no unrolling).
    Count(u32),
}

/// Which memories a barrier makes consistent across the work-group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FenceFlags {
    pub local: bool,
    pub global: bool,
}

/// An element of memory: `buffer[i]`, `tile[y][x]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Place {
    /// The place's identity within its function ([`crate::ids`]); not serialized.
    #[serde(skip)]
    pub id: PlaceId,
    pub base: PlaceBase,
    /// One index per dimension (one for buffers); each of integer type.
    pub indices: Vec<Expression>,
    /// The element type (the field's, for a field of a record).
    pub element: ScalarType,
    /// The address space of the memory.
    pub space: AddressSpace,
    /// For a buffer of records: the index of the field in the record, which `indices[0]`
    /// selects (`nodes[i].start`). `None` everywhere else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<u32>,
}

/// The alignment in bytes of a vector access of `width` elements of `element`: the vector's
/// size for 2 and 4 elements (what native vector loads need), the element's for 3.
pub fn vector_alignment(element: ScalarType, width: u8) -> u32 {
    match width {
        2 | 4 => element.size_in_bytes() * u32::from(width),
        _ => element.size_in_bytes(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PlaceBase {
    /// A buffer or array parameter.
    Parameter(ParameterId),
    /// An array variable (private or local).
    Variable(VariableId),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expression {
    /// The expression's identity within its function ([`crate::ids`]); not serialized.
    #[serde(skip)]
    pub id: ExprId,
    pub kind: ExpressionKind,
    /// The value's type.
    pub ty: ScalarType,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ExpressionKind {
    Literal(Literal),
    /// The value of a scalar parameter.
    Parameter(ParameterId),
    /// The current value of a scalar variable.
    Variable(VariableId),
    /// Read one element of memory.
    Load(Box<Place>),
    /// Component `component` of the `width`-element vector at vector index `place.indices[0]`
    /// of a buffer (elements `index * width` to `index * width + width - 1`), read as one
    /// vector access (`vload4`). The front end flattens vectors into their components, so one
    /// source `vload4` is four of these with equal places; the lowering loads the whole vector
    /// each time and LLVM merges the equal loads.
    VectorLoad {
        place: Box<Place>,
        width: u8,
        component: u8,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expression>,
    },
    /// Both operands have the same type, except shifts where the amount may be any integer type.
    /// Comparisons give `bool`.
    Binary {
        op: BinaryOp,
        left: Box<Expression>,
        right: Box<Expression>,
    },
    /// `&&` and `||`: the right side is evaluated only when needed.
    ShortCircuit {
        op: LogicalOp,
        left: Box<Expression>,
        right: Box<Expression>,
    },
    /// `if condition { accept } else { reject }` as a value: only the chosen arm is evaluated.
    Conditional {
        condition: Box<Expression>,
        accept: Box<Expression>,
        reject: Box<Expression>,
    },
    /// An explicit conversion between scalar types (`as`).
    Cast {
        value: Box<Expression>,
    },
    /// `select(condition, if_true, if_false)`; both arms are evaluated.
    Select {
        condition: Box<Expression>,
        accept: Box<Expression>,
        reject: Box<Expression>,
    },
    Call {
        function: FunctionId,
        arguments: Vec<Argument>,
    },
    /// A work-item query such as `get_global_id(0)`. `dimension` is 0, 1 or 2.
    WorkItem {
        query: WorkItemQuery,
        dimension: u8,
    },
    Math {
        function: MathFunction,
        arguments: Vec<Expression>,
    },
    /// A read-modify-write on memory; the value is the old content of the place.
    Atomic {
        op: AtomicOp,
        place: Box<Place>,
        value: Box<Expression>,
        /// The expected value, for `CompareExchange` only.
        comparand: Option<Box<Expression>>,
    },
    SubGroup {
        op: SubGroupOp,
        arguments: Vec<Expression>,
    },
    /// A work-group collective; reached by every work-item of the group or by none.
    WorkGroup {
        op: WorkGroupOp,
        arguments: Vec<Expression>,
    },
    /// The index `index` (any integer type) of dimension `dimension` of the multi-dimensional
    /// buffer `buffer`, as a `u64` (the expression's type). An index outside
    /// `0..extent` (`extent`: the `u32` shape parameter of that dimension) is out of bounds:
    /// undefined behaviour that the interpreter reports and checked mode checks.
    DimensionIndex {
        index: Box<Expression>,
        buffer: ParameterId,
        dimension: u8,
        extent: ParameterId,
    },
}

/// An argument of a device-function call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Argument {
    Value(Expression),
    /// A buffer parameter of the caller passed on to the callee.
    Buffer(ParameterId),
    /// A local or private array of the caller, by reference: one of its array variables
    /// or an array parameter it was given.
    Array(PlaceBase),
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Literal {
    Bool(bool),
    /// The two's-complement bits of an integer, already truncated to the type's width.
    Integer(u64),
    Float(f64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnaryOp {
    /// Arithmetic negation of a signed integer or float.
    Negate,
    /// Logical not of a `bool`.
    Not,
    /// Bitwise complement of an integer.
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinaryOp {
    Add,
    Subtract,
    Multiply,
    /// Integer division truncates toward zero; division by zero and `MIN / -1` are
    /// undefined behaviour (see docs/language.md, "Semantics").
    Divide,
    /// Remainder with the sign of the dividend (C semantics).
    Remainder,
    BitAnd,
    BitOr,
    BitXor,
    /// The amount is taken modulo the bit width (Rust's `wrapping_shl`).
    ShiftLeft,
    /// Arithmetic for signed integers, logical for unsigned ones.
    ShiftRight,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
}

impl BinaryOp {
    /// The operator as written in source: `+`, `<<`, `>=`.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Subtract => "-",
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::Remainder => "%",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::ShiftLeft => "<<",
            BinaryOp::ShiftRight => ">>",
            BinaryOp::Equal => "==",
            BinaryOp::NotEqual => "!=",
            BinaryOp::Less => "<",
            BinaryOp::LessEqual => "<=",
            BinaryOp::Greater => ">",
            BinaryOp::GreaterEqual => ">=",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Equal
                | BinaryOp::NotEqual
                | BinaryOp::Less
                | BinaryOp::LessEqual
                | BinaryOp::Greater
                | BinaryOp::GreaterEqual
        )
    }

    pub fn is_shift(self) -> bool {
        matches!(self, BinaryOp::ShiftLeft | BinaryOp::ShiftRight)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LogicalOp {
    And,
    Or,
}

/// Work-item queries. Ids and sizes are `u32`: see `docs/language.md`, "Index width".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WorkItemQuery {
    GlobalId,
    LocalId,
    GroupId,
    LocalSize,
    GlobalSize,
    NumGroups,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MathFunction {
    Sqrt,
    Rsqrt,
    Exp,
    Exp2,
    Log,
    Log2,
    Sin,
    Cos,
    Tan,
    Tanh,
    Pow,
    Fma,
    Abs,
    Floor,
    Ceil,
    Round,
    Min,
    Max,
    Clamp,
    Atan2,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Asinh,
    Acosh,
    Atanh,
    Log1p,
    Expm1,
    Log10,
    Exp10,
    Cbrt,
    Hypot,
    Fmod,
    Copysign,
    Erf,
    Erfc,
    Lgamma,
    /// `isnan(x)`, `isinf(x)`, `isfinite(x)`: `bool` results.
    IsNan,
    IsInf,
    IsFinite,
    /// `wrapping_add(a, b)` and friends: integer arithmetic that wraps on overflow, also in
    /// constant expressions (where the operators' overflow is an error).
    WrappingAdd,
    WrappingSub,
    WrappingMul,
    /// `popcount(x)`, `clz(x)`, `ctz(x)`: the integer's one bits, leading and trailing zero
    /// bits (the bit width for 0), of its own type, as OpenCL C.
    Popcount,
    Clz,
    Ctz,
    /// `rotate(x, n)`: `x` rotated left by `n` modulo its bit width, as OpenCL C.
    Rotate,
    /// `native_exp(x)` and friends: the target's fast, less accurate `f32` versions (see
    /// docs/language.md, "Math"); `f64` uses the accurate function, `f16` the `f32` one.
    NativeExp,
    NativeExp2,
    NativeExp10,
    NativeLog,
    NativeLog2,
    NativeLog10,
    NativeSin,
    NativeCos,
    NativeTan,
    NativePowr,
    NativeSqrt,
    NativeRsqrt,
    /// `native_recip(x)`: `1 / x`, fast.
    NativeRecip,
    /// `native_divide(x, y)`: `x / y`, fast.
    NativeDivide,
    /// `round_tf32(x)`: `x` rounded to tf32's 10 mantissa bits, to nearest with ties away
    /// from zero (`f32` only).
    RoundTf32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AtomicOp {
    Add,
    Subtract,
    Min,
    Max,
    And,
    Or,
    Xor,
    Exchange,
    CompareExchange,
}

/// How a reduction or scan combines two values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Reduction {
    /// Wrapping for integers.
    Add,
    /// `min`: for floats the number when one operand is NaN (IEEE `minNum`).
    Min,
    /// `max`: for floats the number when one operand is NaN (IEEE `maxNum`).
    Max,
}

/// Sub-group (warp, wavefront) operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SubGroupOp {
    /// `sub_group_local_id()`: the lane index, `u32`.
    LocalId,
    /// `sub_group_size()`: the number of lanes, `u32`.
    Size,
    /// `get_sub_group_id()`: the index of the sub-group within its work-group, `u32`.
    GroupId,
    /// `get_num_sub_groups()`: how many sub-groups the work-group has, `u32`.
    GroupCount,
    /// `get_matrix_group_id()`: the index of the work-item's matrix group (local linear id /
    /// 128, `crate::matrix_group`), `u32`; the same in every lane, as sub-groups never straddle
    /// two matrix groups.
    MatrixGroupId,
    /// `sub_group_shuffle(value, lane)`: `value` as held by lane `lane` (a `u32`).
    Shuffle,
    /// `sub_group_shuffle_xor(value, mask)`: `value` as held by lane `id ^ mask`.
    ShuffleXor,
    /// `sub_group_shuffle_up(value, delta)`: `value` as held by lane `id - delta`, or the
    /// lane's own value where that lane does not exist.
    ShuffleUp,
    /// `sub_group_shuffle_down(value, delta)`: `value` as held by lane `id + delta`, or the
    /// lane's own value where that lane does not exist.
    ShuffleDown,
    /// `sub_group_broadcast(value, lane)`: `value` as held by lane `lane`, which must be the
    /// same in every lane.
    Broadcast,
    /// `sub_group_reduce_add(value)` and friends: every lane gets the combination of all.
    Reduce(Reduction),
    /// `sub_group_scan_inclusive_add(value)`: lane `i` gets lanes `0..=i` combined.
    InclusiveScan(Reduction),
    /// `sub_group_scan_exclusive_add(value)`: lane `i` gets lanes `0..i` combined (the
    /// reduction's identity in lane 0).
    ExclusiveScan(Reduction),
    /// `sub_group_any(condition)`: whether any lane's condition holds.
    Any,
    /// `sub_group_all(condition)`: whether every lane's condition holds.
    All,
    /// `sub_group_ballot(condition)`: a `u64` with bit `i` set when lane `i`'s condition holds.
    Ballot,
}

/// Work-group collectives: every work-item of the group must reach them, like a barrier.
/// Targets without native ones use compiler-managed local memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WorkGroupOp {
    /// `work_group_broadcast(value, id)`: `value` as held by the work-item whose linear local
    /// id is `id` (the same in every work-item).
    Broadcast,
    /// `work_group_reduce_add(value)` and friends.
    Reduce(Reduction),
    /// `work_group_scan_inclusive_add(value)`: in linear local id order.
    InclusiveScan(Reduction),
    /// `work_group_scan_exclusive_add(value)`: in linear local id order.
    ExclusiveScan(Reduction),
}
