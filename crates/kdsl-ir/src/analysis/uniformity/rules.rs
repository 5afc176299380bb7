//! The uniformity lattice and the rules of each operation: what control it needs around it
//! and how uniform its result is.

use crate::ir::*;

/// How far a value (or the control flow at a point) is the same across work-items.
/// Ordered from most to least uniform; the join of two levels is their maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Uniformity {
    /// The same in every work-item of the work-group.
    Uniform,
    /// The same in every work-item of a sub-group, possibly different between sub-groups.
    SubGroup,
    /// Possibly different in every work-item.
    Varying,
}

/// What a built-in needs of the control flow around it, and how uniform its result is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperationUniformity {
    /// The most divergent control the operation may run under; `None` when it may run
    /// anywhere. `Uniform` for barriers and work-group collectives, `SubGroup` for sub-group
    /// operations.
    pub needs: Option<Uniformity>,
    /// The level of its result.
    pub result: Uniformity,
}

/// The uniformity rules of every sub-group operation, given the levels of its arguments.
/// New operations get their row here (no wildcard, so adding a `SubGroupOp` variant fails to
/// compile until it has one). A lane out of range is undefined behaviour, so the rules may
/// assume every lane read exists.
pub fn sub_group_operation(op: SubGroupOp, arguments: &[Uniformity]) -> OperationUniformity {
    use Uniformity::*;
    let argument = |index: usize| arguments.get(index).copied().unwrap_or(Varying);
    let (needs, result) = match op {
        // Queries: no communication between lanes. A work-group need not be a multiple of the
        // sub-group size, so its last sub-group may have fewer lanes than the others.
        SubGroupOp::LocalId => (None, Varying),
        SubGroupOp::GroupCount => (None, Uniform),
        SubGroupOp::Size | SubGroupOp::GroupId | SubGroupOp::MatrixGroupId => (None, SubGroup),
        // Every lane reads another lane's value, so the whole sub-group must be there. A value
        // already the same in the sub-group stays what it is; a varying one read from the same
        // lane everywhere (a broadcast) becomes the same in the sub-group.
        SubGroupOp::Shuffle | SubGroupOp::Broadcast => {
            let (value, lane) = (argument(0), argument(1));
            let result = if value <= SubGroup {
                value
            } else if lane <= SubGroup {
                SubGroup
            } else {
                Varying
            };
            (Some(SubGroup), result)
        }
        SubGroupOp::ShuffleXor | SubGroupOp::ShuffleUp | SubGroupOp::ShuffleDown => {
            let value = argument(0);
            let result = if value <= SubGroup { value } else { Varying };
            (Some(SubGroup), result)
        }
        // One value for the whole sub-group. Of a work-group-uniform operand, `any`, `all`,
        // `min` and `max` give that operand in every sub-group; a sum and a ballot count the
        // lanes, which differ between sub-groups.
        SubGroupOp::Reduce(Reduction::Min | Reduction::Max) | SubGroupOp::Any | SubGroupOp::All => {
            (Some(SubGroup), argument(0).min(SubGroup))
        }
        SubGroupOp::Reduce(Reduction::Add) | SubGroupOp::Ballot => (Some(SubGroup), SubGroup),
        // Each lane gets its own prefix; a scan of a uniform value still differs by lane.
        SubGroupOp::InclusiveScan(_) | SubGroupOp::ExclusiveScan(_) => (Some(SubGroup), Varying),
    };
    OperationUniformity { needs, result }
}

/// The uniformity rules of every work-group collective: each needs uniform control, like a
/// barrier; reductions and broadcasts give one value for the whole group, scans one per
/// work-item.
pub fn work_group_operation(op: WorkGroupOp) -> OperationUniformity {
    let result = match op {
        WorkGroupOp::Broadcast | WorkGroupOp::Reduce(_) => Uniformity::Uniform,
        WorkGroupOp::InclusiveScan(_) | WorkGroupOp::ExclusiveScan(_) => Uniformity::Varying,
    };
    OperationUniformity {
        needs: Some(Uniformity::Uniform),
        result,
    }
}

/// The uniformity of a work-item query's result.
pub fn work_item_query(query: WorkItemQuery) -> Uniformity {
    match query {
        WorkItemQuery::GlobalId | WorkItemQuery::LocalId => Uniformity::Varying,
        WorkItemQuery::GroupId
        | WorkItemQuery::LocalSize
        | WorkItemQuery::GlobalSize
        | WorkItemQuery::NumGroups => Uniformity::Uniform,
    }
}
