//! The table of the language's built-in functions: each one's name, operands, accepted types,
//! result type and required target feature, written once. The checker, the IR validator, the
//! code generator's support check, the interpreter and the lowering all read it, so adding a
//! built-in is one row here plus its lowering per target.

use crate::async_copy::AsyncCopyKind;
use crate::ir::{AtomicOp, MathFunction, Reduction, SubGroupOp, WorkGroupOp, WorkItemQuery};
use crate::tile_copy::TileCopyKind;
use crate::types::ScalarType;

/// A function the language provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    WorkItem(WorkItemQuery),
    Barrier,
    /// `device_fence()`: a statement (`StatementKind::DeviceFence`).
    DeviceFence,
    Select,
    Math(MathFunction),
    Atomic(AtomicOp),
    SubGroup(SubGroupOp),
    WorkGroup(WorkGroupOp),
    /// `vloadN(buffer, index)`: the `N`-element vector at vector index `index`.
    VectorLoad(u8),
    /// `vstoreN(buffer, index, value)`.
    VectorStore(u8),
    /// `print("format", values...)`: a statement (`StatementKind::Print`).
    Print,
    /// `async_copy`, `async_commit`, `async_wait`: statements (`StatementKind::AsyncCopy`).
    AsyncCopy(AsyncCopyKind),
    /// `async_tile_copy`, `async_tile_wait`, `async_tile_release`, `async_tile_store`,
    /// `async_tile_store_wait`: statements (`StatementKind::TileCopy`).
    TileCopy(TileCopyKind),
}

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltinRow {
    /// The source-level name.
    pub name: &'static str,
    pub builtin: Builtin,
    pub operands: Operands,
    pub result: ResultRule,
    pub requires: Requirement,
}

/// What a built-in's arguments are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operands {
    /// No arguments.
    Nothing,
    /// One constant dimension, 0, 1 or 2.
    Dimension,
    /// A `bool` condition, then two values of one type.
    Condition,
    /// `count` values of one type, taken from `types`.
    Values { count: usize, types: TypeSet },
    /// A value of a type from `types`, then a `u32` lane.
    ValueAndLane { types: TypeSet },
    /// A buffer or local array element of a type from `types`, then `values` values of the
    /// element's type.
    Memory { values: usize, types: TypeSet },
    /// A buffer of a type from `types` and a vector index, then (to store) a vector of the
    /// buffer's element type.
    VectorMemory { store: bool, types: TypeSet },
    /// A string literal with `{}` placeholders, then one value of a type from `types` per
    /// placeholder (a vector counts its components), at most `max_values`.
    Format { max_values: usize, types: TypeSet },
    /// A local memory element, a global buffer element of the same type from `types`, then a
    /// constant element count (`async_copy`).
    Copy { types: TypeSet },
    /// One constant `u32` (`async_wait`'s count of groups left in flight).
    Constant,
    /// A local memory element, a 2-D global buffer's element of the same type from `types`
    /// (the tile's corner), then the constant rows and slot (`async_tile_copy`).
    TileCopy { types: TypeSet },
    /// The corner of a writable 2-D global buffer, a local memory element of the same type
    /// from `types`, then the constant rows (`async_tile_store`).
    TileStore { types: TypeSet },
}

impl Operands {
    /// How many arguments a call has.
    pub fn arity(self) -> usize {
        match self {
            Operands::Nothing => 0,
            Operands::Dimension => 1,
            Operands::Condition => 3,
            Operands::Values { count, .. } => count,
            Operands::ValueAndLane { .. } => 2,
            Operands::Memory { values, .. } => 1 + values,
            Operands::VectorMemory { store, .. } => 2 + usize::from(store),
            Operands::Copy { .. } => 3,
            Operands::TileCopy { .. } => 4,
            Operands::TileStore { .. } => 3,
            Operands::Constant => 1,
            // The format; the values vary with it.
            Operands::Format { .. } => 1,
        }
    }

    /// The types the value operands (or the memory element) may have; `None` when the
    /// operands are fixed (`Nothing`, `Dimension`) or of any type (`Condition`).
    pub fn types(self) -> Option<TypeSet> {
        match self {
            Operands::Values { types, .. }
            | Operands::ValueAndLane { types }
            | Operands::Memory { types, .. }
            | Operands::VectorMemory { types, .. }
            | Operands::Format { types, .. }
            | Operands::Copy { types }
            | Operands::TileCopy { types }
            | Operands::TileStore { types } => Some(types),
            Operands::Nothing | Operands::Dimension | Operands::Condition | Operands::Constant => {
                None
            }
        }
    }
}

/// A set of scalar types a built-in accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeSet {
    /// `f16`, `bf16`, `f32`, `f64`.
    Floats,
    /// Every integer type.
    Integers,
    /// Every integer and float type.
    Numbers,
    /// `i32`, `u32`, `i64`, `u64`: the integers every target has atomics for.
    AtomicIntegers,
    /// The atomic integers, `f32` and `f64`.
    AtomicNumbers,
    /// `i32`, `u32`, `i64`, `u64`, `f32`, `f64`: what sub-group operations move.
    SubGroupValues,
    /// `bool`: the conditions of votes such as `sub_group_any`.
    Conditions,
    /// `f32` alone (`round_tf32`).
    Single,
    /// Every scalar type: what `print` writes.
    Scalars,
}

impl TypeSet {
    pub fn contains(self, ty: ScalarType) -> bool {
        use ScalarType::*;
        match self {
            TypeSet::Floats => ty.is_float(),
            TypeSet::Integers => ty.is_integer(),
            TypeSet::Numbers => ty.is_float() || ty.is_integer(),
            TypeSet::AtomicIntegers => matches!(ty, I32 | U32 | I64 | U64),
            TypeSet::AtomicNumbers | TypeSet::SubGroupValues => {
                matches!(ty, I32 | U32 | I64 | U64 | F32 | F64)
            }
            TypeSet::Conditions => ty == Bool,
            TypeSet::Single => ty == F32,
            TypeSet::Scalars => true,
        }
    }

    /// The set in words, for diagnostics: "floats", "`i32`, `u32`, `i64` and `u64`".
    pub fn describe(self) -> &'static str {
        match self {
            TypeSet::Floats => "floats",
            TypeSet::Integers => "integers",
            TypeSet::Numbers => "integers or floats",
            TypeSet::AtomicIntegers => "`i32`, `u32`, `i64` and `u64`",
            TypeSet::AtomicNumbers => "`i32`, `u32`, `i64`, `u64`, `f32` and `f64`",
            TypeSet::SubGroupValues => "32- and 64-bit integers and floats",
            TypeSet::Conditions => "`bool` conditions",
            TypeSet::Single => "`f32`",
            TypeSet::Scalars => "integers, floats and `bool`",
        }
    }
}

/// How a built-in's result type follows from its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultRule {
    /// No value: a statement (`barrier`).
    Nothing,
    /// Always `u32` (ids, sizes).
    U32,
    /// The type of the value operands.
    Operand,
    /// Always `bool` (tests such as `isnan`).
    Bool,
    /// Always `u64` (`sub_group_ballot`'s lane mask).
    U64,
    /// The type of the memory element (atomics give the old content).
    Element,
    /// A vector of the memory element's type (`vload4`).
    ElementVector,
}

/// What a target must provide for a built-in, depending on the operand type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// Every target has it.
    Always,
    /// Sub-group operations.
    SubGroups,
    /// An atomic: on 64-bit integers it needs 64-bit atomics.
    Atomic,
    /// `atomic_add`: as `Atomic`, and on floats it needs float atomic addition.
    AtomicAdd,
}

/// A target feature a built-in may need.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    SubGroups,
    Int64Atomics,
    FloatAtomicAdd,
    DoubleAtomicAdd,
}

impl Feature {
    /// The feature in words, for diagnostics.
    pub fn describe(self) -> &'static str {
        match self {
            Feature::SubGroups => "sub-group operations",
            Feature::Int64Atomics => "64-bit integer atomics",
            Feature::FloatAtomicAdd => "`atomic_add` on `f32`",
            Feature::DoubleAtomicAdd => "`atomic_add` on `f64`",
        }
    }
}

impl Requirement {
    /// The feature a use with operands (or memory element) of type `ty` needs, if any.
    pub fn feature(self, ty: ScalarType) -> Option<Feature> {
        // 64-bit values need 64-bit atomics (`f64` min/max and exchanges too).
        let wide = matches!(ty, ScalarType::I64 | ScalarType::U64 | ScalarType::F64);
        match self {
            Requirement::Always => None,
            Requirement::SubGroups => Some(Feature::SubGroups),
            Requirement::AtomicAdd if ty == ScalarType::F32 => Some(Feature::FloatAtomicAdd),
            Requirement::AtomicAdd if ty == ScalarType::F64 => Some(Feature::DoubleAtomicAdd),
            Requirement::Atomic | Requirement::AtomicAdd if wide => Some(Feature::Int64Atomics),
            Requirement::Atomic | Requirement::AtomicAdd => None,
        }
    }
}

const fn row(
    name: &'static str,
    builtin: Builtin,
    operands: Operands,
    result: ResultRule,
    requires: Requirement,
) -> BuiltinRow {
    BuiltinRow {
        name,
        builtin,
        operands,
        result,
        requires,
    }
}

const fn vector_memory(name: &'static str, builtin: Builtin) -> BuiltinRow {
    let (store, result) = match builtin {
        Builtin::VectorStore(_) => (true, ResultRule::Nothing),
        _ => (false, ResultRule::ElementVector),
    };
    row(
        name,
        builtin,
        Operands::VectorMemory {
            store,
            types: TypeSet::Numbers,
        },
        result,
        Requirement::Always,
    )
}

const fn work_item(name: &'static str, query: WorkItemQuery) -> BuiltinRow {
    row(
        name,
        Builtin::WorkItem(query),
        Operands::Dimension,
        ResultRule::U32,
        Requirement::Always,
    )
}

const fn math(
    name: &'static str,
    function: MathFunction,
    count: usize,
    types: TypeSet,
) -> BuiltinRow {
    row(
        name,
        Builtin::Math(function),
        Operands::Values { count, types },
        ResultRule::Operand,
        Requirement::Always,
    )
}

const fn float_test(name: &'static str, function: MathFunction) -> BuiltinRow {
    row(
        name,
        Builtin::Math(function),
        Operands::Values {
            count: 1,
            types: TypeSet::Floats,
        },
        ResultRule::Bool,
        Requirement::Always,
    )
}

const fn atomic(name: &'static str, op: AtomicOp, values: usize, types: TypeSet) -> BuiltinRow {
    let requires = if matches!(op, AtomicOp::Add) {
        Requirement::AtomicAdd
    } else {
        Requirement::Atomic
    };
    row(
        name,
        Builtin::Atomic(op),
        Operands::Memory { values, types },
        ResultRule::Element,
        requires,
    )
}

const fn sub_group(name: &'static str, op: SubGroupOp, operands: Operands) -> BuiltinRow {
    let result = if matches!(operands, Operands::Nothing) {
        ResultRule::U32
    } else {
        ResultRule::Operand
    };
    row(
        name,
        Builtin::SubGroup(op),
        operands,
        result,
        Requirement::SubGroups,
    )
}

/// A sub-group operation on one value that gives a value of its type.
const fn sub_group_value(name: &'static str, op: SubGroupOp) -> BuiltinRow {
    sub_group(
        name,
        op,
        Operands::Values {
            count: 1,
            types: SubGroupValues,
        },
    )
}

/// A sub-group operation on a value and a `u32` lane, delta or mask.
const fn sub_group_exchange(name: &'static str, op: SubGroupOp) -> BuiltinRow {
    sub_group(
        name,
        op,
        Operands::ValueAndLane {
            types: SubGroupValues,
        },
    )
}

/// A sub-group vote on a `bool` condition.
const fn sub_group_vote(name: &'static str, op: SubGroupOp, result: ResultRule) -> BuiltinRow {
    row(
        name,
        Builtin::SubGroup(op),
        Operands::Values {
            count: 1,
            types: Conditions,
        },
        result,
        Requirement::SubGroups,
    )
}

/// A work-group collective; every target has them (natively or through local memory).
const fn work_group(name: &'static str, op: WorkGroupOp, operands: Operands) -> BuiltinRow {
    row(
        name,
        Builtin::WorkGroup(op),
        operands,
        ResultRule::Operand,
        Requirement::Always,
    )
}

const fn work_group_value(name: &'static str, op: WorkGroupOp) -> BuiltinRow {
    work_group(
        name,
        op,
        Operands::Values {
            count: 1,
            types: SubGroupValues,
        },
    )
}

use MathFunction as M;
use Reduction::{Add, Max, Min};
use TypeSet::{
    AtomicIntegers, AtomicNumbers, Conditions, Floats, Integers, Numbers, SubGroupValues,
};

/// Every built-in of the language, one row each.
pub static BUILTINS: &[BuiltinRow] = &[
    work_item("get_global_id", WorkItemQuery::GlobalId),
    work_item("get_local_id", WorkItemQuery::LocalId),
    work_item("get_group_id", WorkItemQuery::GroupId),
    work_item("get_local_size", WorkItemQuery::LocalSize),
    work_item("get_global_size", WorkItemQuery::GlobalSize),
    work_item("get_num_groups", WorkItemQuery::NumGroups),
    row(
        "barrier",
        Builtin::Barrier,
        Operands::Nothing,
        ResultRule::Nothing,
        Requirement::Always,
    ),
    row(
        "device_fence",
        Builtin::DeviceFence,
        Operands::Nothing,
        ResultRule::Nothing,
        Requirement::Always,
    ),
    row(
        "print",
        Builtin::Print,
        Operands::Format {
            max_values: crate::print_format::MAX_VALUES,
            types: TypeSet::Scalars,
        },
        ResultRule::Nothing,
        Requirement::Always,
    ),
    row(
        "async_copy",
        Builtin::AsyncCopy(AsyncCopyKind::Copy),
        Operands::Copy { types: Numbers },
        ResultRule::Nothing,
        Requirement::Always,
    ),
    row(
        "async_commit",
        Builtin::AsyncCopy(AsyncCopyKind::Commit),
        Operands::Nothing,
        ResultRule::Nothing,
        Requirement::Always,
    ),
    row(
        "async_wait",
        Builtin::AsyncCopy(AsyncCopyKind::Wait),
        Operands::Constant,
        ResultRule::Nothing,
        Requirement::Always,
    ),
    row(
        "async_tile_copy",
        Builtin::TileCopy(TileCopyKind::Copy),
        Operands::TileCopy { types: Numbers },
        ResultRule::Nothing,
        Requirement::Always,
    ),
    row(
        "async_tile_wait",
        Builtin::TileCopy(TileCopyKind::Wait),
        Operands::Constant,
        ResultRule::Nothing,
        Requirement::Always,
    ),
    row(
        "async_tile_release",
        Builtin::TileCopy(TileCopyKind::Release),
        Operands::Constant,
        ResultRule::Nothing,
        Requirement::Always,
    ),
    row(
        "async_tile_store",
        Builtin::TileCopy(TileCopyKind::Store),
        Operands::TileStore { types: Numbers },
        ResultRule::Nothing,
        Requirement::Always,
    ),
    row(
        "async_tile_store_wait",
        Builtin::TileCopy(TileCopyKind::StoreWait),
        Operands::Nothing,
        ResultRule::Nothing,
        Requirement::Always,
    ),
    row(
        "select",
        Builtin::Select,
        Operands::Condition,
        ResultRule::Operand,
        Requirement::Always,
    ),
    math("sqrt", M::Sqrt, 1, Floats),
    math("rsqrt", M::Rsqrt, 1, Floats),
    math("exp", M::Exp, 1, Floats),
    math("exp2", M::Exp2, 1, Floats),
    math("log", M::Log, 1, Floats),
    math("log2", M::Log2, 1, Floats),
    math("sin", M::Sin, 1, Floats),
    math("cos", M::Cos, 1, Floats),
    math("tan", M::Tan, 1, Floats),
    math("tanh", M::Tanh, 1, Floats),
    math("pow", M::Pow, 2, Floats),
    math("fma", M::Fma, 3, Floats),
    math("abs", M::Abs, 1, Numbers),
    math("floor", M::Floor, 1, Floats),
    math("ceil", M::Ceil, 1, Floats),
    math("round", M::Round, 1, Floats),
    math("min", M::Min, 2, Numbers),
    math("max", M::Max, 2, Numbers),
    math("clamp", M::Clamp, 3, Numbers),
    math("atan2", M::Atan2, 2, Floats),
    math("asin", M::Asin, 1, Floats),
    math("acos", M::Acos, 1, Floats),
    math("atan", M::Atan, 1, Floats),
    math("sinh", M::Sinh, 1, Floats),
    math("cosh", M::Cosh, 1, Floats),
    math("asinh", M::Asinh, 1, Floats),
    math("acosh", M::Acosh, 1, Floats),
    math("atanh", M::Atanh, 1, Floats),
    math("log1p", M::Log1p, 1, Floats),
    math("expm1", M::Expm1, 1, Floats),
    math("log10", M::Log10, 1, Floats),
    math("exp10", M::Exp10, 1, Floats),
    math("cbrt", M::Cbrt, 1, Floats),
    math("hypot", M::Hypot, 2, Floats),
    math("fmod", M::Fmod, 2, Floats),
    math("copysign", M::Copysign, 2, Floats),
    math("erf", M::Erf, 1, Floats),
    math("erfc", M::Erfc, 1, Floats),
    math("lgamma", M::Lgamma, 1, Floats),
    float_test("isnan", M::IsNan),
    float_test("isinf", M::IsInf),
    float_test("isfinite", M::IsFinite),
    math("wrapping_add", M::WrappingAdd, 2, Integers),
    math("wrapping_sub", M::WrappingSub, 2, Integers),
    math("wrapping_mul", M::WrappingMul, 2, Integers),
    math("popcount", M::Popcount, 1, Integers),
    math("clz", M::Clz, 1, Integers),
    math("ctz", M::Ctz, 1, Integers),
    math("rotate", M::Rotate, 2, Integers),
    math("native_exp", M::NativeExp, 1, Floats),
    math("native_exp2", M::NativeExp2, 1, Floats),
    math("native_exp10", M::NativeExp10, 1, Floats),
    math("native_log", M::NativeLog, 1, Floats),
    math("native_log2", M::NativeLog2, 1, Floats),
    math("native_log10", M::NativeLog10, 1, Floats),
    math("native_sin", M::NativeSin, 1, Floats),
    math("native_cos", M::NativeCos, 1, Floats),
    math("native_tan", M::NativeTan, 1, Floats),
    math("native_powr", M::NativePowr, 2, Floats),
    math("native_sqrt", M::NativeSqrt, 1, Floats),
    math("native_rsqrt", M::NativeRsqrt, 1, Floats),
    math("native_recip", M::NativeRecip, 1, Floats),
    math("native_divide", M::NativeDivide, 2, Floats),
    math("round_tf32", M::RoundTf32, 1, TypeSet::Single),
    vector_memory("vload2", Builtin::VectorLoad(2)),
    vector_memory("vload3", Builtin::VectorLoad(3)),
    vector_memory("vload4", Builtin::VectorLoad(4)),
    vector_memory("vstore2", Builtin::VectorStore(2)),
    vector_memory("vstore3", Builtin::VectorStore(3)),
    vector_memory("vstore4", Builtin::VectorStore(4)),
    atomic("atomic_add", AtomicOp::Add, 1, AtomicNumbers),
    atomic("atomic_sub", AtomicOp::Subtract, 1, AtomicIntegers),
    atomic("atomic_min", AtomicOp::Min, 1, AtomicNumbers),
    atomic("atomic_max", AtomicOp::Max, 1, AtomicNumbers),
    atomic("atomic_and", AtomicOp::And, 1, AtomicIntegers),
    atomic("atomic_or", AtomicOp::Or, 1, AtomicIntegers),
    atomic("atomic_xor", AtomicOp::Xor, 1, AtomicIntegers),
    atomic("atomic_exchange", AtomicOp::Exchange, 1, AtomicIntegers),
    atomic(
        "atomic_compare_exchange",
        AtomicOp::CompareExchange,
        2,
        AtomicIntegers,
    ),
    sub_group("sub_group_local_id", SubGroupOp::LocalId, Operands::Nothing),
    sub_group("sub_group_size", SubGroupOp::Size, Operands::Nothing),
    sub_group("get_sub_group_id", SubGroupOp::GroupId, Operands::Nothing),
    sub_group(
        "get_num_sub_groups",
        SubGroupOp::GroupCount,
        Operands::Nothing,
    ),
    // Local linear id / 128: every target has it, with or without sub-groups.
    row(
        "get_matrix_group_id",
        Builtin::SubGroup(SubGroupOp::MatrixGroupId),
        Operands::Nothing,
        ResultRule::U32,
        Requirement::Always,
    ),
    sub_group_exchange("sub_group_shuffle", SubGroupOp::Shuffle),
    sub_group_exchange("sub_group_shuffle_xor", SubGroupOp::ShuffleXor),
    sub_group_exchange("sub_group_shuffle_up", SubGroupOp::ShuffleUp),
    sub_group_exchange("sub_group_shuffle_down", SubGroupOp::ShuffleDown),
    sub_group_exchange("sub_group_broadcast", SubGroupOp::Broadcast),
    sub_group_value("sub_group_reduce_add", SubGroupOp::Reduce(Add)),
    sub_group_value("sub_group_reduce_min", SubGroupOp::Reduce(Min)),
    sub_group_value("sub_group_reduce_max", SubGroupOp::Reduce(Max)),
    sub_group_value(
        "sub_group_scan_inclusive_add",
        SubGroupOp::InclusiveScan(Add),
    ),
    sub_group_value(
        "sub_group_scan_inclusive_min",
        SubGroupOp::InclusiveScan(Min),
    ),
    sub_group_value(
        "sub_group_scan_inclusive_max",
        SubGroupOp::InclusiveScan(Max),
    ),
    sub_group_value(
        "sub_group_scan_exclusive_add",
        SubGroupOp::ExclusiveScan(Add),
    ),
    sub_group_value(
        "sub_group_scan_exclusive_min",
        SubGroupOp::ExclusiveScan(Min),
    ),
    sub_group_value(
        "sub_group_scan_exclusive_max",
        SubGroupOp::ExclusiveScan(Max),
    ),
    sub_group_vote("sub_group_any", SubGroupOp::Any, ResultRule::Bool),
    sub_group_vote("sub_group_all", SubGroupOp::All, ResultRule::Bool),
    sub_group_vote("sub_group_ballot", SubGroupOp::Ballot, ResultRule::U64),
    work_group(
        "work_group_broadcast",
        WorkGroupOp::Broadcast,
        Operands::ValueAndLane {
            types: SubGroupValues,
        },
    ),
    work_group_value("work_group_reduce_add", WorkGroupOp::Reduce(Add)),
    work_group_value("work_group_reduce_min", WorkGroupOp::Reduce(Min)),
    work_group_value("work_group_reduce_max", WorkGroupOp::Reduce(Max)),
    work_group_value(
        "work_group_scan_inclusive_add",
        WorkGroupOp::InclusiveScan(Add),
    ),
    work_group_value(
        "work_group_scan_inclusive_min",
        WorkGroupOp::InclusiveScan(Min),
    ),
    work_group_value(
        "work_group_scan_inclusive_max",
        WorkGroupOp::InclusiveScan(Max),
    ),
    work_group_value(
        "work_group_scan_exclusive_add",
        WorkGroupOp::ExclusiveScan(Add),
    ),
    work_group_value(
        "work_group_scan_exclusive_min",
        WorkGroupOp::ExclusiveScan(Min),
    ),
    work_group_value(
        "work_group_scan_exclusive_max",
        WorkGroupOp::ExclusiveScan(Max),
    ),
];

impl Builtin {
    /// The built-in called `name` in source.
    pub fn from_name(name: &str) -> Option<Builtin> {
        BUILTINS
            .iter()
            .find(|row| row.name == name)
            .map(|row| row.builtin)
    }

    /// This built-in's row of [`BUILTINS`].
    pub fn row(self) -> &'static BuiltinRow {
        BUILTINS
            .iter()
            .find(|row| row.builtin == self)
            .expect("every built-in has a row in BUILTINS")
    }

    pub fn name(self) -> &'static str {
        self.row().name
    }

    pub fn arity(self) -> usize {
        self.row().operands.arity()
    }

    /// Every built-in name, for suggestions.
    pub fn all_names() -> impl Iterator<Item = &'static str> {
        BUILTINS.iter().map(|row| row.name)
    }
}

impl WorkItemQuery {
    /// The source-level name, such as `get_global_id`.
    pub fn name(self) -> &'static str {
        Builtin::WorkItem(self).name()
    }
}

impl MathFunction {
    pub fn name(self) -> &'static str {
        Builtin::Math(self).name()
    }

    /// How many arguments the function takes (all of the result's type).
    pub fn arity(self) -> usize {
        Builtin::Math(self).arity()
    }

    /// The type a call computes in: its arguments' (the result's type `result` when it has
    /// none), which differs from the result for the tests such as `isnan`.
    pub fn operand_type(arguments: &[crate::ir::Expression], result: ScalarType) -> ScalarType {
        arguments.first().map_or(result, |argument| argument.ty)
    }

    /// The result type for arguments of type `operand`.
    pub fn result_type(self, operand: ScalarType) -> ScalarType {
        match Builtin::Math(self).row().result {
            ResultRule::Bool => ScalarType::Bool,
            _ => operand,
        }
    }

    /// Whether the function gives the same bits on every target and on the host, so constant
    /// expressions may use it (library functions such as `sin` differ by a few ULP).
    pub fn folds_exactly(self) -> bool {
        use MathFunction::*;
        matches!(
            self,
            Abs | Min
                | Max
                | Clamp
                | Floor
                | Ceil
                | Round
                | Fmod
                | Copysign
                | IsNan
                | IsInf
                | IsFinite
                | WrappingAdd
                | WrappingSub
                | WrappingMul
                | Popcount
                | Clz
                | Ctz
                | Rotate
                | RoundTf32
        )
    }

    /// The accurate function a `native_` one approximates; `None` for the others and for
    /// `native_recip` and `native_divide`, which approximate operators.
    pub fn accurate(self) -> Option<MathFunction> {
        use MathFunction::*;
        Some(match self {
            NativeExp => Exp,
            NativeExp2 => Exp2,
            NativeExp10 => Exp10,
            NativeLog => Log,
            NativeLog2 => Log2,
            NativeLog10 => Log10,
            NativeSin => Sin,
            NativeCos => Cos,
            NativeTan => Tan,
            NativePowr => Pow,
            NativeSqrt => Sqrt,
            NativeRsqrt => Rsqrt,
            _ => return None,
        })
    }

    /// Whether this is one of the fast `native_` variants.
    pub fn is_native(self) -> bool {
        use MathFunction::*;
        self.accurate().is_some() || matches!(self, NativeRecip | NativeDivide)
    }

    /// The argument types the function accepts.
    pub fn types(self) -> TypeSet {
        match Builtin::Math(self).row().operands {
            Operands::Values { types, .. } => types,
            _ => TypeSet::Numbers,
        }
    }
}

impl AtomicOp {
    /// The source-level name, such as `atomic_add`.
    pub fn name(self) -> &'static str {
        Builtin::Atomic(self).name()
    }

    /// The element types the operation accepts.
    pub fn types(self) -> TypeSet {
        Builtin::Atomic(self)
            .row()
            .operands
            .types()
            .unwrap_or(TypeSet::AtomicIntegers)
    }
}

impl BuiltinRow {
    /// The result type of a call whose value operands (or memory element) have type
    /// `operand` (for `vload4`, each component's); `None` for a statement such as `barrier`.
    pub fn result_type(&self, operand: Option<ScalarType>) -> Option<ScalarType> {
        match self.result {
            ResultRule::Nothing => None,
            ResultRule::U32 => Some(ScalarType::U32),
            ResultRule::U64 => Some(ScalarType::U64),
            ResultRule::Bool => Some(ScalarType::Bool),
            ResultRule::Operand | ResultRule::Element | ResultRule::ElementVector => operand,
        }
    }
}

impl SubGroupOp {
    pub fn name(self) -> &'static str {
        Builtin::SubGroup(self).name()
    }

    /// How many arguments the operation takes.
    pub fn arity(self) -> usize {
        Builtin::SubGroup(self).arity()
    }
}

impl WorkGroupOp {
    pub fn name(self) -> &'static str {
        Builtin::WorkGroup(self).name()
    }

    /// How many arguments the operation takes.
    pub fn arity(self) -> usize {
        Builtin::WorkGroup(self).arity()
    }
}

impl Reduction {
    /// The reduction's identity as the bits of a value of type `ty`: 0 for `Add`, the
    /// largest value (`inf` for floats) for `Min`, the smallest (`-inf`) for `Max`.
    pub fn identity(self, ty: ScalarType) -> u64 {
        use ScalarType::*;
        let bits = ty.bit_width();
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        match (self, ty) {
            (Reduction::Add, _) => 0,
            (Reduction::Min, F16) => 0x7c00,
            (Reduction::Min, Bf16) => 0x7f80,
            (Reduction::Min, F32) => f32::INFINITY.to_bits().into(),
            (Reduction::Min, F64) => f64::INFINITY.to_bits(),
            (Reduction::Max, F16) => 0xfc00,
            (Reduction::Max, Bf16) => 0xff80,
            (Reduction::Max, F32) => f32::NEG_INFINITY.to_bits().into(),
            (Reduction::Max, F64) => f64::NEG_INFINITY.to_bits(),
            (Reduction::Min, _) if ty.is_signed_integer() => mask >> 1,
            (Reduction::Min, _) => mask,
            (Reduction::Max, _) if ty.is_signed_integer() => (mask >> 1) + 1,
            (Reduction::Max, _) => 0,
        }
    }

    /// `add`, `min` or `max`, as in the built-ins' names.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Add => "add",
            Reduction::Min => "min",
            Reduction::Max => "max",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_row_has_a_distinct_name_and_builtin_and_finds_itself() {
        let names: HashSet<_> = BUILTINS.iter().map(|r| r.name).collect();
        let builtins: HashSet<_> = BUILTINS.iter().map(|r| r.builtin).collect();
        assert_eq!(names.len(), BUILTINS.len());
        assert_eq!(builtins.len(), BUILTINS.len());
        for row in BUILTINS {
            assert_eq!(Builtin::from_name(row.name), Some(row.builtin));
            assert_eq!(row.builtin.row(), row);
        }
    }

    #[test]
    fn requirements_follow_the_operand_type() {
        let add = Builtin::Atomic(AtomicOp::Add).row().requires;
        assert_eq!(add.feature(ScalarType::F32), Some(Feature::FloatAtomicAdd));
        assert_eq!(add.feature(ScalarType::U64), Some(Feature::Int64Atomics));
        assert_eq!(add.feature(ScalarType::I32), None);
        assert!(MathFunction::Min.types().contains(ScalarType::I8));
        assert!(!MathFunction::Sqrt.types().contains(ScalarType::I32));
        assert_eq!(MathFunction::Clamp.arity(), 3);
        assert_eq!(SubGroupOp::Shuffle.arity(), 2);
    }
}
