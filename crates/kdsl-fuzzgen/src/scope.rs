//! What a generated statement can refer to: variables, private and local arrays, buffers,
//! constants and device functions, and the control context it sits in.

use crate::facts::{Facts, Uniformity, ValueFacts};
use crate::types::ValueType;
use kdsl_ir::ScalarType;

/// How far a mutable float (or `T`) may grow: every value stored is at most `plain_bound`,
/// and all accumulations (`+=`, `-=`, atomic adds) together add at most `accumulated`, so
/// the value never leaves `magnitude` and stays exact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GrowthBudget {
    pub magnitude: f64,
    pub granularity: i32,
    pub plain_bound: f64,
    pub accumulated: f64,
}

impl GrowthBudget {
    pub fn new(magnitude: f64, granularity: i32) -> GrowthBudget {
        GrowthBudget {
            magnitude,
            granularity,
            plain_bound: 0.0,
            accumulated: 0.0,
        }
    }

    /// What is still free for stores and accumulations.
    pub fn headroom(&self) -> f64 {
        (self.magnitude - self.plain_bound - self.accumulated).max(0.0)
    }

    pub fn facts(&self) -> ValueFacts {
        ValueFacts::exact(self.magnitude, self.granularity)
    }
}

/// A mutable variable's rules.
#[derive(Clone, Debug, PartialEq)]
pub struct Mutability {
    /// Only work-group-uniform values may be assigned, and only in uniform control flow,
    /// so reads are uniform.
    pub uniform: bool,
    /// For floats: the growth budget that keeps the value exact.
    pub budget: Option<GrowthBudget>,
    /// The execution bound (see [`Control::execution_bound`]) where it was declared.
    pub declared_at_bound: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    pub name: String,
    pub ty: ValueType,
    /// For immutable variables: what is known of the value. Mutable ones answer from
    /// [`Mutability`].
    pub facts: Facts,
    pub mutability: Option<Mutability>,
}

impl Variable {
    pub fn read_facts(&self) -> Facts {
        match &self.mutability {
            None => self.facts,
            Some(rules) => {
                let uniformity = if rules.uniform {
                    Uniformity::WorkGroup
                } else {
                    Uniformity::Varying
                };
                let value = match rules.budget {
                    Some(budget) => budget.facts(),
                    None => self.facts.value,
                };
                Facts::new(uniformity, value)
            }
        }
    }
}

/// A private array: `let mut name: [T; N];` or `[[T; N]; M]` (dimensions outermost first).
#[derive(Clone, Debug, PartialEq)]
pub struct PrivateArray {
    pub name: String,
    pub element: ScalarType,
    pub dimensions: Vec<u32>,
    pub budget: Option<GrowthBudget>,
    pub declared_at_bound: u64,
}

/// What a work-group local array is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalUse {
    /// Each work-item writes its own slot between two barriers; then anyone reads any slot.
    Exchange,
    /// Initialized by slot, then updated with commutative atomics between barriers.
    Atomics,
}

/// How a local array is declared and laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalShape {
    /// `local name: [T; N];`
    Flat,
    /// A kernel parameter `name: local mut [T]` whose length the launch gives (at least one
    /// slot per work-item; the slots past those are never used).
    Launched { length: u32 },
    /// `local name: [[T; padded]; rows];`: work-item `lid` owns `[lid / columns][lid %
    /// columns]`; the columns from `columns` to `padded` are never used.
    Grid {
        rows: u32,
        columns: u32,
        padded: u32,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct LocalArray {
    pub name: String,
    pub element: ScalarType,
    /// One slot per work-item of the group.
    pub length: u32,
    pub shape: LocalShape,
    pub usage: LocalUse,
    /// What the stored values are bounded by (floats), fixed for the kernel.
    pub element_facts: ValueFacts,
    /// For float atomics: the budget shared by all atomic additions of one phase.
    pub atomic_magnitude: f64,
}

/// How a kernel uses a buffer parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferUse {
    /// `global [T]`: read anywhere.
    Input,
    /// `constant [T]`: read anywhere.
    Constant,
    /// `global mut [T]` with `slots` elements per work-item; each work-item reads and writes
    /// only its own.
    Output { slots: u32, approximate: bool },
    /// `global mut [T]` updated only by commutative atomics from every work-item.
    Accumulator,
    /// `global mut [u32]` of one element: the sub-group size the device used.
    SubGroupProbe,
    /// `global mut [[T]]` written only by tile stores: work-group `g` (linear) stores boxes of
    /// `rows` rows from row `g * rows`, column 0; its shape may cut the last boxes short.
    TileStores { rows: u32 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct BufferParameter {
    pub name: String,
    pub element: ValueType,
    pub length: u32,
    pub usage: BufferUse,
    /// What the initial contents are bounded by.
    pub data_facts: ValueFacts,
    /// A multi-dimensional buffer (`global [[T]]`, `global mut [[[T]]]`): its shape and
    /// strides; `length` elements hold it.
    pub shape: Option<Shape>,
}

/// The extents and strides (in elements) of a multi-dimensional buffer argument, outermost
/// dimension first.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    pub extents: Vec<u32>,
    pub strides: Vec<u64>,
    /// For an output: the dimension indexed by the work-item's `gid` (its extent is the
    /// number of work-items); the other dimensions hold the work-item's own slots.
    pub owner: Option<usize>,
}

impl Shape {
    pub fn rank(&self) -> usize {
        self.extents.len()
    }

    /// Elements from the first to one past the last element the shape reaches.
    pub fn span(&self) -> u64 {
        1 + self
            .extents
            .iter()
            .zip(&self.strides)
            .map(|(&extent, &stride)| u64::from(extent - 1) * stride)
            .sum::<u64>()
    }
}

impl BufferParameter {
    pub fn declaration(&self) -> String {
        let access = match self.usage {
            BufferUse::Input => "global",
            BufferUse::Constant => "constant",
            _ => "global mut",
        };
        let element = self.element.name();
        let rank = self.shape.as_ref().map_or(1, Shape::rank);
        format!(
            "{}: {access} {}{element}{}",
            self.name,
            "[".repeat(rank),
            "]".repeat(rank)
        )
    }
}

/// A buffer of the module's record type (`struct Rec { ... }`, `Generator::record_fields`).
#[derive(Clone, Debug, PartialEq)]
pub struct RecordBuffer {
    pub name: String,
    /// Records in the buffer.
    pub length: u32,
    /// `global [Rec]`, read anywhere; or `global mut [Rec]`, where each work-item reads and
    /// writes only its own record `out[gid]`.
    pub output: bool,
}

/// A scalar kernel parameter with the value it is launched with.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarParameter {
    pub name: String,
    pub ty: ValueType,
    pub facts: Facts,
}

/// A module constant.
#[derive(Clone, Debug, PartialEq)]
pub struct Constant {
    pub name: String,
    pub ty: ScalarType,
    pub facts: ValueFacts,
}

/// A device function as callers see it.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionSignature {
    pub name: String,
    pub parameters: Vec<FunctionParameter>,
    /// `None` for a function that stores into its buffer parameter and returns nothing.
    pub result: Option<(ScalarType, ValueFacts)>,
    /// The result comes as the first element of a `(T, u32)` tuple: callers bind it with
    /// `let (value, tag) = f(...);` before using it.
    pub tuple_result: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FunctionParameter {
    /// A scalar argument; callers must pass values within `facts`.
    Scalar {
        name: String,
        ty: ScalarType,
        facts: ValueFacts,
    },
    /// A read-only buffer of inputs of this element type.
    InputBuffer { name: String, element: ScalarType },
    /// The output buffer the function stores into, at the slot passed after it.
    OutputBuffer {
        name: String,
        element: ScalarType,
        length: u32,
    },
    /// The output slot (a `u32`): callers pass one of their own.
    Slot { name: String },
    /// A tuple of two scalars, each within its facts; the body reads `name.0` and `name.1`.
    Pair {
        name: String,
        types: [ScalarType; 2],
        facts: [ValueFacts; 2],
    },
}

/// Where a statement is: what it may synchronize on and how often it can run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Control {
    /// Every work-item of the group gets here together (barriers are allowed).
    pub work_group_uniform: bool,
    /// Every lane of the sub-group gets here together (sub-group operations are allowed).
    pub sub_group_uniform: bool,
    /// Inside a loop (break and continue are allowed).
    pub in_loop: bool,
    /// Break and continue conditions must be work-group-uniform (the loop synchronizes).
    pub loop_exits_uniform: bool,
    /// An upper bound of how many times a statement here runs per work-item.
    pub execution_bound: u64,
    /// Nesting of blocks, to bound the program's size.
    pub depth: u32,
}

impl Control {
    pub fn top_level(uniform: bool) -> Control {
        Control {
            work_group_uniform: uniform,
            sub_group_uniform: uniform,
            in_loop: false,
            loop_exits_uniform: false,
            execution_bound: 1,
            depth: 0,
        }
    }

    /// The uniformity a value must have to decide a branch that keeps this control as
    /// uniform as it is.
    pub fn uniformity_needed(&self) -> Uniformity {
        if self.work_group_uniform {
            Uniformity::WorkGroup
        } else if self.sub_group_uniform {
            Uniformity::SubGroup
        } else {
            Uniformity::Varying
        }
    }

    /// The control inside a branch on a value of uniformity `condition`.
    pub fn branch(&self, condition: Uniformity) -> Control {
        let work_group_uniform = self.work_group_uniform && condition == Uniformity::WorkGroup;
        let sub_group_uniform = self.sub_group_uniform && condition <= Uniformity::SubGroup;
        // A `break` or `continue` under a branch less uniform than a synchronizing loop's body
        // would leave the rest of that body (and the next iterations) to some work-items only,
        // where barriers and sub-group operations still follow: none here.
        let diverges = work_group_uniform != self.work_group_uniform
            || sub_group_uniform != self.sub_group_uniform;
        Control {
            work_group_uniform,
            sub_group_uniform,
            in_loop: self.in_loop && !(self.loop_exits_uniform && diverges),
            depth: self.depth + 1,
            ..*self
        }
    }
}

/// Variables and private arrays, block by block.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    frames: Vec<Frame>,
}

#[derive(Clone, Debug, Default)]
struct Frame {
    variables: Vec<Variable>,
    arrays: Vec<PrivateArray>,
    /// Local arrays (by index) whose every slot has been written and fenced by a barrier in
    /// this block, so reads are defined from here to the block's end.
    readable_locals: Vec<usize>,
}

impl Scope {
    pub fn push(&mut self) {
        self.frames.push(Frame::default());
    }

    pub fn pop(&mut self) {
        self.frames.pop();
    }

    pub fn add_variable(&mut self, variable: Variable) {
        self.frames
            .last_mut()
            .expect("a scope frame")
            .variables
            .push(variable);
    }

    pub fn add_array(&mut self, array: PrivateArray) {
        self.frames
            .last_mut()
            .expect("a scope frame")
            .arrays
            .push(array);
    }

    pub fn mark_local_readable(&mut self, local: usize) {
        self.frames
            .last_mut()
            .expect("a scope frame")
            .readable_locals
            .push(local);
    }

    pub fn local_readable(&self, local: usize) -> bool {
        self.frames
            .iter()
            .any(|frame| frame.readable_locals.contains(&local))
    }

    /// Visible variables, innermost last, later shadowing earlier ones of the same name.
    pub fn variables(&self) -> Vec<&Variable> {
        let mut visible: Vec<&Variable> = Vec::new();
        for frame in &self.frames {
            for variable in &frame.variables {
                visible.retain(|v| v.name != variable.name);
                visible.push(variable);
            }
        }
        visible
    }

    pub fn arrays(&self) -> Vec<&PrivateArray> {
        self.frames.iter().flat_map(|f| f.arrays.iter()).collect()
    }

    pub fn variable_mut(&mut self, name: &str) -> Option<&mut Variable> {
        self.frames
            .iter_mut()
            .rev()
            .flat_map(|f| f.variables.iter_mut().rev())
            .find(|v| v.name == name)
    }

    pub fn array_mut(&mut self, name: &str) -> Option<&mut PrivateArray> {
        self.frames
            .iter_mut()
            .rev()
            .flat_map(|f| f.arrays.iter_mut().rev())
            .find(|a| a.name == name)
    }
}

impl LocalArray {
    /// The work-item's own slot (`lid` the linear local id).
    pub fn own_slot(&self) -> String {
        match self.shape {
            LocalShape::Grid { columns, .. } => {
                format!("{}[lid / {columns}u32][lid % {columns}u32]", self.name)
            }
            _ => format!("{}[lid]", self.name),
        }
    }
}
