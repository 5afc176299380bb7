//! Sub-group and work-group collectives, each lowered by the strategy the target description
//! names: OpenCL builtins that the SPIR-V backend turns into `OpGroup*` instructions, or (on
//! NVIDIA and AMD GPUs) lane shuffles, votes and a small compiler-managed array of local
//! memory.

use super::builtins::{itanium_code, mangle};
use super::{FunctionLowering, LowerError, Result};
use crate::target::{
    LaneIdSource, ShufflePrimitive, SubGroupLowering, VotePrimitive, WorkGroupLowering,
};
use inkwell::module::Linkage;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use inkwell::AddressSpace as LlvmAddressSpace;
use inkwell::IntPredicate;
use kdsl_ir::{
    Expression, FenceFlags, FunctionKind, Reduction, ScalarType, SubGroupOp, WorkGroupOp,
    WorkItemQuery,
};

/// The local-memory array work-group collectives combine their sub-groups' results in: one
/// 8-byte slot per sub-group of the largest work-group (1024 work-items of 32 lanes).
const SCRATCH_NAME: &str = "kdsl.collective_scratch";
pub(crate) const SCRATCH_SLOTS: u32 = 32;

/// How a sub-group exchange picks the source lane.
#[derive(Clone, Copy)]
enum Exchange<'ctx> {
    /// From lane `n`.
    Index(IntValue<'ctx>),
    /// From lane `own id ^ mask`.
    Xor(IntValue<'ctx>),
}

/// What the shuffle-based lowering needs from the target.
#[derive(Clone, Copy)]
struct Lanes {
    lane_id: LaneIdSource,
    shuffle: ShufflePrimitive,
    vote: VotePrimitive,
    size: u32,
}

impl<'ctx> FunctionLowering<'_, 'ctx> {
    /// The target's shuffle-based sub-group primitives.
    fn lanes(&self) -> Result<Lanes> {
        match self.target.sub_groups {
            SubGroupLowering::Shuffles {
                lane_id,
                shuffle,
                vote,
                size,
            } => Ok(Lanes {
                lane_id,
                shuffle,
                vote,
                size,
            }),
            SubGroupLowering::OpenClBuiltins => {
                Err(LowerError("the target has no lane shuffles".into()))
            }
        }
    }

    pub(super) fn sub_group(
        &mut self,
        op: SubGroupOp,
        arguments: &[Expression],
        result: ScalarType,
    ) -> Result<BasicValueEnum<'ctx>> {
        let values = self.expressions(arguments)?;
        let operand = arguments.first().map_or(result, |argument| argument.ty);
        match self.target.sub_groups {
            SubGroupLowering::OpenClBuiltins => self.opencl_sub_group(op, &values, operand),
            SubGroupLowering::Shuffles { .. } => {
                let lanes = self.lanes()?;
                self.shuffled_sub_group(op, &values, operand, lanes)
            }
        }
    }

    pub(super) fn work_group(
        &mut self,
        op: WorkGroupOp,
        arguments: &[Expression],
        ty: ScalarType,
    ) -> Result<BasicValueEnum<'ctx>> {
        let values = self.expressions(arguments)?;
        let value = argument(&values, 0, op.name())?;
        if op == WorkGroupOp::Broadcast {
            let id = argument(&values, 1, op.name())?.into_int_value();
            return self.broadcast_through_local_memory(value, id, ty);
        }
        match (self.target.work_groups, self.target.sub_groups) {
            (WorkGroupLowering::OpenClBuiltins, _) => {
                let name = match op {
                    WorkGroupOp::Reduce(reduction) => {
                        format!("work_group_reduce_{}", reduction.name())
                    }
                    WorkGroupOp::InclusiveScan(reduction) => {
                        format!("work_group_scan_inclusive_{}", reduction.name())
                    }
                    WorkGroupOp::ExclusiveScan(reduction) => {
                        format!("work_group_scan_exclusive_{}", reduction.name())
                    }
                    WorkGroupOp::Broadcast => unreachable!("handled above"),
                };
                let value_type = self.types.value(ty);
                let function = self.external_function(
                    &mangle(&name, itanium_code(ty)),
                    Some(value_type),
                    &[value_type],
                    false,
                );
                self.call_value(function, &[value])
            }
            (WorkGroupLowering::SubGroupsAndLocalMemory, SubGroupLowering::Shuffles { .. }) => {
                let lanes = self.lanes()?;
                match op {
                    WorkGroupOp::Reduce(reduction) => {
                        self.work_group_reduce(value, ty, reduction, lanes)
                    }
                    WorkGroupOp::InclusiveScan(reduction) => {
                        self.work_group_scan(value, ty, reduction, true, lanes)
                    }
                    WorkGroupOp::ExclusiveScan(reduction) => {
                        self.work_group_scan(value, ty, reduction, false, lanes)
                    }
                    WorkGroupOp::Broadcast => unreachable!("handled above"),
                }
            }
            (WorkGroupLowering::SubGroupsAndLocalMemory, SubGroupLowering::OpenClBuiltins) => Err(
                LowerError("work-group collectives through local memory need lane shuffles".into()),
            ),
        }
    }

    fn opencl_sub_group(
        &mut self,
        op: SubGroupOp,
        values: &[BasicValueEnum<'ctx>],
        ty: ScalarType,
    ) -> Result<BasicValueEnum<'ctx>> {
        let i32_type: BasicTypeEnum = self.context.i32_type().into();
        let query = |this: &mut Self, name: &str| -> Result<BasicValueEnum<'ctx>> {
            let function = this.external_function(&mangle(name, "v"), Some(i32_type), &[], false);
            this.call_value(function, &[])
        };
        let value_type = self.types.value(ty);
        let code = itanium_code(ty);
        let call = |this: &mut Self, name: &str, lane: bool| -> Result<BasicValueEnum<'ctx>> {
            let (parameters, arguments, codes) = if lane {
                (
                    vec![value_type, i32_type],
                    vec![argument(values, 0, name)?, argument(values, 1, name)?],
                    format!("{code}j"),
                )
            } else {
                (
                    vec![value_type],
                    vec![argument(values, 0, name)?],
                    code.to_string(),
                )
            };
            let function =
                this.external_function(&mangle(name, &codes), Some(value_type), &parameters, false);
            this.call_value(function, &arguments)
        };
        match op {
            SubGroupOp::LocalId => query(self, "get_sub_group_local_id"),
            SubGroupOp::Size => query(self, "get_sub_group_size"),
            SubGroupOp::GroupId => query(self, "get_sub_group_id"),
            SubGroupOp::GroupCount => query(self, "get_num_sub_groups"),
            SubGroupOp::MatrixGroupId => Ok(self
                .linear_local_id_over(kdsl_ir::matrix_group::GROUP_SIZE)?
                .into()),
            SubGroupOp::Shuffle => call(self, "sub_group_shuffle", true),
            SubGroupOp::ShuffleXor => call(self, "sub_group_shuffle_xor", true),
            SubGroupOp::Broadcast => call(self, "sub_group_broadcast", true),
            SubGroupOp::ShuffleUp | SubGroupOp::ShuffleDown => {
                let up = op == SubGroupOp::ShuffleUp;
                let name = if up {
                    "sub_group_shuffle_up"
                } else {
                    "sub_group_shuffle_down"
                };
                let shuffled = call(self, name, true)?;
                let lane = query(self, "get_sub_group_local_id")?.into_int_value();
                let size = query(self, "get_sub_group_size")?.into_int_value();
                let delta = argument(values, 1, name)?.into_int_value();
                let exists = self.source_lane_exists(up, lane, delta, size)?;
                Ok(self
                    .builder
                    .build_select(exists, shuffled, argument(values, 0, name)?, "")?)
            }
            SubGroupOp::Reduce(reduction) => call(
                self,
                &format!("sub_group_reduce_{}", reduction.name()),
                false,
            ),
            SubGroupOp::InclusiveScan(reduction) => call(
                self,
                &format!("sub_group_scan_inclusive_{}", reduction.name()),
                false,
            ),
            SubGroupOp::ExclusiveScan(reduction) => call(
                self,
                &format!("sub_group_scan_exclusive_{}", reduction.name()),
                false,
            ),
            SubGroupOp::Any | SubGroupOp::All | SubGroupOp::Ballot => {
                let condition = argument(values, 0, op.name())?.into_int_value();
                let widened =
                    self.builder
                        .build_int_z_extend(condition, self.context.i32_type(), "")?;
                let b = &self.builder;
                if op == SubGroupOp::Ballot {
                    let mask_type = self.context.i32_type().vec_type(4);
                    let function = self.external_function(
                        &mangle("sub_group_ballot", "i"),
                        Some(mask_type.into()),
                        &[i32_type],
                        false,
                    );
                    let mask = self
                        .call_value(function, &[widened.into()])?
                        .into_vector_value();
                    let i64_type = self.context.i64_type();
                    let low = b.build_extract_element(mask, self.i32_constant(0), "")?;
                    let high = b.build_extract_element(mask, self.i32_constant(1), "")?;
                    let low = b.build_int_z_extend(low.into_int_value(), i64_type, "")?;
                    let high = b.build_int_z_extend(high.into_int_value(), i64_type, "")?;
                    let high = b.build_left_shift(high, i64_type.const_int(32, false), "")?;
                    return Ok(b.build_or(high, low, "")?.into());
                }
                let name = if op == SubGroupOp::Any {
                    "sub_group_any"
                } else {
                    "sub_group_all"
                };
                let function =
                    self.external_function(&mangle(name, "i"), Some(i32_type), &[i32_type], false);
                let vote = self
                    .call_value(function, &[widened.into()])?
                    .into_int_value();
                let zero = self.context.i32_type().const_zero();
                Ok(self
                    .builder
                    .build_int_compare(IntPredicate::NE, vote, zero, "")?
                    .into())
            }
        }
    }

    /// Whether lane `lane - delta` (`up`) or `lane + delta` exists in a sub-group of `size`.
    fn source_lane_exists(
        &self,
        up: bool,
        lane: IntValue<'ctx>,
        delta: IntValue<'ctx>,
        size: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>> {
        let b = &self.builder;
        if up {
            Ok(b.build_int_compare(IntPredicate::UGE, lane, delta, "")?)
        } else {
            // `lane + delta < size` without overflow: `delta < size - lane` (`lane < size`).
            let room = b.build_int_sub(size, lane, "")?;
            Ok(b.build_int_compare(IntPredicate::ULT, delta, room, "")?)
        }
    }

    fn shuffled_sub_group(
        &mut self,
        op: SubGroupOp,
        values: &[BasicValueEnum<'ctx>],
        ty: ScalarType,
        lanes: Lanes,
    ) -> Result<BasicValueEnum<'ctx>> {
        let value = |index: usize| argument(values, index, op.name());
        match op {
            SubGroupOp::LocalId => Ok(self.lane_id(lanes)?.into()),
            SubGroupOp::Size => Ok(self.i32_constant(u64::from(lanes.size)).into()),
            SubGroupOp::GroupId => Ok(self.group_index(lanes.size, lanes)?.into()),
            SubGroupOp::MatrixGroupId => Ok(self
                .group_index(kdsl_ir::matrix_group::GROUP_SIZE, lanes)?
                .into()),
            SubGroupOp::GroupCount => {
                let items = self.linear_local_size()?;
                let padded = self.builder.build_int_nuw_add(
                    items,
                    self.i32_constant(u64::from(lanes.size - 1)),
                    "",
                )?;
                let size = self.i32_constant(u64::from(lanes.size));
                Ok(self
                    .builder
                    .build_int_unsigned_div(padded, size, "")?
                    .into())
            }
            SubGroupOp::Shuffle | SubGroupOp::Broadcast => {
                let lane = value(1)?.into_int_value();
                self.exchange(value(0)?, ty, Exchange::Index(lane), lanes)
            }
            SubGroupOp::ShuffleXor => {
                let mask = value(1)?.into_int_value();
                self.exchange(value(0)?, ty, Exchange::Xor(mask), lanes)
            }
            SubGroupOp::ShuffleUp | SubGroupOp::ShuffleDown => {
                let up = op == SubGroupOp::ShuffleUp;
                let own = value(0)?;
                let delta = value(1)?.into_int_value();
                let lane = self.lane_id(lanes)?;
                let source = if up {
                    self.builder.build_int_sub(lane, delta, "")?
                } else {
                    self.builder.build_int_add(lane, delta, "")?
                };
                let shuffled = self.exchange(own, ty, Exchange::Index(source), lanes)?;
                let size = self.i32_constant(u64::from(lanes.size));
                let exists = self.source_lane_exists(up, lane, delta, size)?;
                Ok(self.builder.build_select(exists, shuffled, own, "")?)
            }
            SubGroupOp::Reduce(reduction) => self.butterfly(value(0)?, ty, reduction, lanes),
            SubGroupOp::InclusiveScan(reduction) => {
                self.inclusive_scan(value(0)?, ty, reduction, lanes)
            }
            SubGroupOp::ExclusiveScan(reduction) => {
                let inclusive = self.inclusive_scan(value(0)?, ty, reduction, lanes)?;
                self.shift_in_identity(inclusive, ty, reduction, lanes)
            }
            SubGroupOp::Any | SubGroupOp::All | SubGroupOp::Ballot => {
                self.vote(op, value(0)?.into_int_value(), lanes)
            }
        }
    }

    /// A butterfly: after log2(size) exchanges every lane holds the combination of all.
    fn butterfly(
        &self,
        value: BasicValueEnum<'ctx>,
        ty: ScalarType,
        reduction: Reduction,
        lanes: Lanes,
    ) -> Result<BasicValueEnum<'ctx>> {
        let mut value = value;
        let mut distance = lanes.size / 2;
        while distance >= 1 {
            let mask = self.i32_constant(u64::from(distance));
            let other = self.exchange(value, ty, Exchange::Xor(mask), lanes)?;
            value = self.combine(reduction, ty, value, other)?;
            distance /= 2;
        }
        Ok(value)
    }

    /// Hillis and Steele's scan: log2(size) steps, each combining the value `distance` lanes
    /// below where that lane exists.
    fn inclusive_scan(
        &self,
        value: BasicValueEnum<'ctx>,
        ty: ScalarType,
        reduction: Reduction,
        lanes: Lanes,
    ) -> Result<BasicValueEnum<'ctx>> {
        let lane = self.lane_id(lanes)?;
        let mut value = value;
        let mut distance = 1;
        while distance < lanes.size {
            let delta = self.i32_constant(u64::from(distance));
            let source = self.builder.build_int_sub(lane, delta, "")?;
            let other = self.exchange(value, ty, Exchange::Index(source), lanes)?;
            let combined = self.combine(reduction, ty, other, value)?;
            let exists = self
                .builder
                .build_int_compare(IntPredicate::UGE, lane, delta, "")?;
            value = self.builder.build_select(exists, combined, value, "")?;
            distance *= 2;
        }
        Ok(value)
    }

    /// Each lane gets the value of the lane below it; lane 0 the reduction's identity. Turns
    /// an inclusive scan into an exclusive one.
    fn shift_in_identity(
        &self,
        inclusive: BasicValueEnum<'ctx>,
        ty: ScalarType,
        reduction: Reduction,
        lanes: Lanes,
    ) -> Result<BasicValueEnum<'ctx>> {
        let lane = self.lane_id(lanes)?;
        let below = self.builder.build_int_sub(lane, self.i32_constant(1), "")?;
        let shifted = self.exchange(inclusive, ty, Exchange::Index(below), lanes)?;
        let first =
            self.builder
                .build_int_compare(IntPredicate::EQ, lane, self.i32_constant(0), "")?;
        Ok(self
            .builder
            .build_select(first, self.identity(reduction, ty)?, shifted, "")?)
    }

    fn vote(
        &self,
        op: SubGroupOp,
        condition: IntValue<'ctx>,
        lanes: Lanes,
    ) -> Result<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        let i64_type = self.context.i64_type();
        match lanes.vote {
            VotePrimitive::NvvmVoteSync => {
                let mask = self.context.i32_type().const_all_ones();
                let name = match op {
                    SubGroupOp::Any => "llvm.nvvm.vote.any.sync",
                    SubGroupOp::All => "llvm.nvvm.vote.all.sync",
                    _ => "llvm.nvvm.vote.ballot.sync",
                };
                let vote = self.call_intrinsic(name, &[], &[mask.into(), condition.into()])?;
                if op == SubGroupOp::Ballot {
                    Ok(b.build_int_z_extend(vote.into_int_value(), i64_type, "")?
                        .into())
                } else {
                    Ok(vote)
                }
            }
            VotePrimitive::AmdgpuBallot => {
                let wave = self.integer_type(lanes.size);
                let ballot = |condition: IntValue<'ctx>| -> Result<IntValue<'ctx>> {
                    Ok(self
                        .call_intrinsic("llvm.amdgcn.ballot", &[wave.into()], &[condition.into()])?
                        .into_int_value())
                };
                match op {
                    SubGroupOp::Any => {
                        let mask = ballot(condition)?;
                        Ok(
                            b.build_int_compare(IntPredicate::NE, mask, wave.const_zero(), "")?
                                .into(),
                        )
                    }
                    SubGroupOp::All => {
                        // No active lane without the condition.
                        let negated = b.build_not(condition, "")?;
                        let mask = ballot(negated)?;
                        Ok(
                            b.build_int_compare(IntPredicate::EQ, mask, wave.const_zero(), "")?
                                .into(),
                        )
                    }
                    _ => {
                        let mask = ballot(condition)?;
                        if lanes.size == 64 {
                            Ok(mask.into())
                        } else {
                            Ok(b.build_int_z_extend(mask, i64_type, "")?.into())
                        }
                    }
                }
            }
        }
    }

    /// `work_group_reduce_*`: each sub-group reduces, lane 0 of each writes its result to the
    /// scratch array, and after a barrier every sub-group reduces the scratch array itself.
    fn work_group_reduce(
        &mut self,
        value: BasicValueEnum<'ctx>,
        ty: ScalarType,
        reduction: Reduction,
        lanes: Lanes,
    ) -> Result<BasicValueEnum<'ctx>> {
        let lane = self.lane_id(lanes)?;
        let sub_group = self.sub_group_index(lanes)?;
        let partial = self.masked_butterfly(value, ty, reduction, lanes)?;
        let first_lane =
            self.builder
                .build_int_compare(IntPredicate::EQ, lane, self.i32_constant(0), "")?;
        self.store_scratch_if(first_lane, sub_group, partial)?;
        self.local_barrier()?;
        let total = self.combine_scratch(ty, reduction, lanes, None)?;
        self.local_barrier()?;
        Ok(total)
    }

    /// `work_group_scan_*`: each sub-group scans, its last lane writes the sub-group's total
    /// to the scratch array, and after a barrier every sub-group adds the totals of the
    /// sub-groups before it.
    fn work_group_scan(
        &mut self,
        value: BasicValueEnum<'ctx>,
        ty: ScalarType,
        reduction: Reduction,
        inclusive: bool,
        lanes: Lanes,
    ) -> Result<BasicValueEnum<'ctx>> {
        let lane = self.lane_id(lanes)?;
        let sub_group = self.sub_group_index(lanes)?;
        let scan = self.inclusive_scan(value, ty, reduction, lanes)?;
        let last_lane = self.last_lane(lanes)?;
        let is_last = self
            .builder
            .build_int_compare(IntPredicate::EQ, lane, last_lane, "")?;
        self.store_scratch_if(is_last, sub_group, scan)?;
        self.local_barrier()?;
        let prefix = self.combine_scratch(ty, reduction, lanes, Some(sub_group))?;
        self.local_barrier()?;
        let own = if inclusive {
            scan
        } else {
            self.shift_in_identity(scan, ty, reduction, lanes)?
        };
        self.combine(reduction, ty, prefix, own)
    }

    /// Every work-item reads the scratch slots of the sub-groups below `limit` (all of them
    /// when `None`), one per lane, and combines them; the result is the same in every lane.
    fn combine_scratch(
        &mut self,
        ty: ScalarType,
        reduction: Reduction,
        lanes: Lanes,
        limit: Option<IntValue<'ctx>>,
    ) -> Result<BasicValueEnum<'ctx>> {
        let lane = self.lane_id(lanes)?;
        let limit = match limit {
            Some(limit) => limit,
            None => {
                let items = self.linear_local_size()?;
                let padded = self.builder.build_int_nuw_add(
                    items,
                    self.i32_constant(u64::from(lanes.size - 1)),
                    "",
                )?;
                let size = self.i32_constant(u64::from(lanes.size));
                self.builder.build_int_unsigned_div(padded, size, "")?
            }
        };
        let in_use = self
            .builder
            .build_int_compare(IntPredicate::ULT, lane, limit, "")?;
        // Lanes past the last slot read slot 0 and drop it; the load stays unconditional.
        let slot = self
            .builder
            .build_select(in_use, lane, self.i32_constant(0), "")?
            .into_int_value();
        let loaded = self.load_scratch(slot, ty)?;
        let identity = self.identity(reduction, ty)?;
        let contribution = self.builder.build_select(in_use, loaded, identity, "")?;
        let combined = self.masked_butterfly(contribution, ty, reduction, lanes)?;
        // In a partial sub-group only lane 0 has every partner.
        let zero = self.i32_constant(0);
        self.exchange(combined, ty, Exchange::Index(zero), lanes)
    }

    /// A butterfly in which lanes past the end of a partial sub-group count as the identity;
    /// lane 0 gets the right result.
    fn masked_butterfly(
        &mut self,
        value: BasicValueEnum<'ctx>,
        ty: ScalarType,
        reduction: Reduction,
        lanes: Lanes,
    ) -> Result<BasicValueEnum<'ctx>> {
        let lane = self.lane_id(lanes)?;
        let last = self.last_lane(lanes)?;
        let identity = self.identity(reduction, ty)?;
        let mut value = value;
        let mut distance = lanes.size / 2;
        while distance >= 1 {
            let mask = self.i32_constant(u64::from(distance));
            let other = self.exchange(value, ty, Exchange::Xor(mask), lanes)?;
            let partner = self.builder.build_xor(lane, mask, "")?;
            let exists = self
                .builder
                .build_int_compare(IntPredicate::ULE, partner, last, "")?;
            let other = self.builder.build_select(exists, other, identity, "")?;
            value = self.combine(reduction, ty, value, other)?;
            distance /= 2;
        }
        Ok(value)
    }

    /// `work_group_broadcast`: the chosen work-item writes slot 0, a barrier, everyone reads
    /// it, and a barrier so the slot may be reused.
    fn broadcast_through_local_memory(
        &mut self,
        value: BasicValueEnum<'ctx>,
        id: IntValue<'ctx>,
        ty: ScalarType,
    ) -> Result<BasicValueEnum<'ctx>> {
        let linear = self.linear_local_id()?;
        let chosen = self
            .builder
            .build_int_compare(IntPredicate::EQ, linear, id, "")?;
        let zero = self.i32_constant(0);
        self.store_scratch_if(chosen, zero, value)?;
        self.local_barrier()?;
        let result = self.load_scratch(zero, ty)?;
        self.local_barrier()?;
        Ok(result)
    }

    /// The index of this work-item's sub-group, by division wherever it is needed (the
    /// work-group collectives' scratch slots; `get_sub_group_id()` is [`Self::group_index`]).
    fn sub_group_index(&mut self, lanes: Lanes) -> Result<IntValue<'ctx>> {
        self.linear_local_id_over(lanes.size)
    }

    /// The linear local id / `size`: the index of this work-item's group of `size`.
    fn linear_local_id_over(&mut self, size: u32) -> Result<IntValue<'ctx>> {
        let linear = self.linear_local_id()?;
        let size = self.i32_constant(u64::from(size));
        Ok(self.builder.build_int_unsigned_div(linear, size, "")?)
    }

    /// The last existing lane of this work-item's sub-group (the last sub-group of a
    /// work-group may be partial).
    fn last_lane(&mut self, lanes: Lanes) -> Result<IntValue<'ctx>> {
        let linear = self.linear_local_id()?;
        let items = self.linear_local_size()?;
        let lane = self.lane_id(lanes)?;
        let b = &self.builder;
        // Work-items from this one's sub-group start on: `items - (linear - lane)`.
        let first = b.build_int_sub(linear, lane, "")?;
        let remaining = b.build_int_sub(items, first, "")?;
        let size = self.i32_constant(u64::from(lanes.size));
        let count = b.build_int_compare(IntPredicate::ULT, remaining, size, "")?;
        let count = b.build_select(count, remaining, size, "")?.into_int_value();
        Ok(b.build_int_sub(count, self.i32_constant(1), "")?)
    }

    /// `x + size_x * (y + size_y * z)`.
    pub(super) fn linear_local_id(&mut self) -> Result<IntValue<'ctx>> {
        let x = self.work_item(WorkItemQuery::LocalId, 0)?;
        let y = self.work_item(WorkItemQuery::LocalId, 1)?;
        let z = self.work_item(WorkItemQuery::LocalId, 2)?;
        let size_x = self.work_item(WorkItemQuery::LocalSize, 0)?;
        let size_y = self.work_item(WorkItemQuery::LocalSize, 1)?;
        let plane = self.multiply_add(size_y, z, y)?;
        self.multiply_add(size_x, plane, x)
    }

    pub(super) fn linear_local_size(&mut self) -> Result<IntValue<'ctx>> {
        let x = self.work_item(WorkItemQuery::LocalSize, 0)?;
        let y = self.work_item(WorkItemQuery::LocalSize, 1)?;
        let z = self.work_item(WorkItemQuery::LocalSize, 2)?;
        let plane = self.builder.build_int_nuw_mul(x, y, "")?;
        Ok(self.builder.build_int_nuw_mul(plane, z, "")?)
    }

    fn local_barrier(&mut self) -> Result<()> {
        self.barrier(FenceFlags {
            local: true,
            global: false,
        })
    }

    /// The module's scratch array for work-group collectives, declared on first use.
    fn scratch(&self) -> PointerValue<'ctx> {
        if let Some(global) = self.module.get_global(SCRATCH_NAME) {
            return global.as_pointer_value();
        }
        let ty = self.context.i64_type().array_type(SCRATCH_SLOTS);
        let space = LlvmAddressSpace::from(self.target.address_spaces.local);
        let global = self.module.add_global(ty, Some(space), SCRATCH_NAME);
        global.set_linkage(Linkage::Internal);
        global.set_initializer(&ty.get_poison());
        global.set_alignment(8);
        global.as_pointer_value()
    }

    fn scratch_slot(&self, slot: IntValue<'ctx>) -> Result<PointerValue<'ctx>> {
        let i64_type = self.context.i64_type();
        // SAFETY: `slot` is below SCRATCH_SLOTS (a sub-group index or lane of a work-group
        // of at most 1024 work-items).
        Ok(unsafe {
            self.builder
                .build_in_bounds_gep(i64_type, self.scratch(), &[slot], "")?
        })
    }

    fn store_scratch_if(
        &mut self,
        condition: IntValue<'ctx>,
        slot: IntValue<'ctx>,
        value: BasicValueEnum<'ctx>,
    ) -> Result<()> {
        let store = self.new_block("collective.store");
        let after = self.new_block("collective.after");
        self.builder
            .build_conditional_branch(condition, store, after)?;
        self.builder.position_at_end(store);
        let pointer = self.scratch_slot(slot)?;
        self.builder.build_store(pointer, value)?;
        self.builder.build_unconditional_branch(after)?;
        self.builder.position_at_end(after);
        Ok(())
    }

    fn load_scratch(&self, slot: IntValue<'ctx>, ty: ScalarType) -> Result<BasicValueEnum<'ctx>> {
        let pointer = self.scratch_slot(slot)?;
        Ok(self.builder.build_load(self.types.value(ty), pointer, "")?)
    }

    /// The reduction's identity as a constant of `ty`.
    fn identity(&self, reduction: Reduction, ty: ScalarType) -> Result<BasicValueEnum<'ctx>> {
        let bits = reduction.identity(ty);
        let integer = self.integer_type(ty.bit_width()).const_int(bits, false);
        if ty.is_float() {
            Ok(self
                .builder
                .build_bit_cast(integer, self.types.value(ty), "")?)
        } else {
            Ok(integer.into())
        }
    }

    fn integer_type(&self, bits: u32) -> inkwell::types::IntType<'ctx> {
        match bits {
            8 => self.context.i8_type(),
            16 => self.context.i16_type(),
            32 => self.context.i32_type(),
            _ => self.context.i64_type(),
        }
    }

    fn lane_id(&self, lanes: Lanes) -> Result<IntValue<'ctx>> {
        match lanes.lane_id {
            LaneIdSource::NvvmLaneId => Ok(self
                .call_intrinsic("llvm.nvvm.read.ptx.sreg.laneid", &[], &[])?
                .into_int_value()),
            LaneIdSource::AmdgpuMbcnt => {
                let all = self.context.i32_type().const_all_ones();
                let low = self.call_intrinsic(
                    "llvm.amdgcn.mbcnt.lo",
                    &[],
                    &[all.into(), self.i32_constant(0).into()],
                )?;
                if lanes.size <= 32 {
                    return Ok(low.into_int_value());
                }
                Ok(self
                    .call_intrinsic("llvm.amdgcn.mbcnt.hi", &[], &[all.into(), low])?
                    .into_int_value())
            }
        }
    }

    /// The index of this work-item's group of `size` work-items (a sub-group, or a matrix group
    /// of whole sub-groups): the linear local id / `size`. In a kernel it is computed once, in
    /// the entry block, and taken from lane 0 there, so the target's compiler knows every lane
    /// of the sub-group holds it: ptxas then keeps it, and the addresses built from it, in
    /// uniform registers (`shfl.sync.idx`), AMDGPU in scalar ones (`readfirstlane`). The entry
    /// block is where every lane is converged, as `shfl.sync` with a full mask needs.
    fn group_index(&mut self, size: u32, lanes: Lanes) -> Result<IntValue<'ctx>> {
        if let Some(&(_, index)) = self.group_indices.iter().find(|(s, _)| *s == size) {
            return Ok(index);
        }
        if self.function.kind != FunctionKind::Kernel {
            return self.linear_local_id_over(size);
        }
        let here = self
            .builder
            .get_insert_block()
            .ok_or_else(|| LowerError("no insertion block".into()))?;
        let entry = self
            .value
            .get_first_basic_block()
            .ok_or_else(|| LowerError("a kernel without an entry block".into()))?;
        match entry.get_first_instruction() {
            Some(first) => self.builder.position_before(&first),
            None => self.builder.position_at_end(entry),
        }
        let index = self.linear_local_id_over(size)?;
        let index = match lanes.shuffle {
            ShufflePrimitive::NvvmShflSync => {
                let zero = self.i32_constant(0);
                self.exchange(index.into(), ScalarType::U32, Exchange::Index(zero), lanes)?
                    .into_int_value()
            }
            ShufflePrimitive::AmdgpuDsBpermute => self
                .call_intrinsic(
                    "llvm.amdgcn.readfirstlane",
                    &[index.get_type().into()],
                    &[index.into()],
                )?
                .into_int_value(),
        };
        self.builder.position_at_end(here);
        self.group_indices.push((size, index));
        Ok(index)
    }

    /// Exchanges a value between lanes, 32 bits at a time.
    fn exchange(
        &self,
        value: BasicValueEnum<'ctx>,
        ty: ScalarType,
        exchange: Exchange<'ctx>,
        lanes: Lanes,
    ) -> Result<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        let i32_type = self.context.i32_type();
        let bits_type = match ty.bit_width() {
            32 => i32_type,
            64 => self.context.i64_type(),
            other => {
                return Err(LowerError(format!(
                    "sub-group exchange of {other}-bit values"
                )));
            }
        };
        let bits = if ty.is_float() {
            b.build_bit_cast(value, bits_type, "")?.into_int_value()
        } else {
            value.into_int_value()
        };
        let source_address = match (lanes.shuffle, exchange) {
            (ShufflePrimitive::AmdgpuDsBpermute, Exchange::Index(lane)) => {
                Some(b.build_left_shift(lane, self.i32_constant(2), "")?)
            }
            (ShufflePrimitive::AmdgpuDsBpermute, Exchange::Xor(mask)) => {
                let own = self.lane_id(lanes)?;
                let lane = b.build_xor(own, mask, "")?;
                Some(b.build_left_shift(lane, self.i32_constant(2), "")?)
            }
            (ShufflePrimitive::NvvmShflSync, _) => None,
        };
        let word = |word: IntValue<'ctx>| -> Result<IntValue<'ctx>> {
            let result = match (lanes.shuffle, exchange) {
                (ShufflePrimitive::NvvmShflSync, exchange) => {
                    let (intrinsic, operand) = match exchange {
                        Exchange::Index(lane) => ("llvm.nvvm.shfl.sync.idx.i32", lane),
                        Exchange::Xor(mask) => ("llvm.nvvm.shfl.sync.bfly.i32", mask),
                    };
                    self.call_intrinsic(
                        intrinsic,
                        &[],
                        &[
                            i32_type.const_all_ones().into(),
                            word.into(),
                            operand.into(),
                            self.i32_constant(31).into(),
                        ],
                    )?
                }
                (ShufflePrimitive::AmdgpuDsBpermute, _) => {
                    let address = source_address
                        .ok_or_else(|| LowerError("no ds_bpermute address".into()))?;
                    self.call_intrinsic(
                        "llvm.amdgcn.ds.bpermute",
                        &[],
                        &[address.into(), word.into()],
                    )?
                }
            };
            Ok(result.into_int_value())
        };
        let exchanged = if ty.bit_width() == 64 {
            let low = b.build_int_truncate(bits, i32_type, "")?;
            let shifted = b.build_right_shift(bits, bits_type.const_int(32, false), false, "")?;
            let high = b.build_int_truncate(shifted, i32_type, "")?;
            let (low, high) = (word(low)?, word(high)?);
            let low = b.build_int_z_extend(low, bits_type, "")?;
            let high = b.build_int_z_extend(high, bits_type, "")?;
            let high = b.build_left_shift(high, bits_type.const_int(32, false), "")?;
            b.build_or(high, low, "")?
        } else {
            word(bits)?
        };
        Ok(if ty.is_float() {
            b.build_bit_cast(exchanged, self.types.value(ty), "")?
        } else {
            exchanged.into()
        })
    }

    /// One step of a reduction or scan: `left` then `right`.
    fn combine(
        &self,
        reduction: Reduction,
        ty: ScalarType,
        left: BasicValueEnum<'ctx>,
        right: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>> {
        match reduction {
            Reduction::Add if ty.is_float() => Ok(self
                .builder
                .build_float_add(left.into_float_value(), right.into_float_value(), "")?
                .into()),
            Reduction::Add => Ok(self
                .builder
                .build_int_add(left.into_int_value(), right.into_int_value(), "")?
                .into()),
            Reduction::Min => self.min_max(kdsl_ir::MathFunction::Min, ty, left, right),
            Reduction::Max => self.min_max(kdsl_ir::MathFunction::Max, ty, left, right),
        }
    }
}

/// Argument `index` of a collective called `name`.
fn argument<'ctx>(
    values: &[BasicValueEnum<'ctx>],
    index: usize,
    name: &str,
) -> Result<BasicValueEnum<'ctx>> {
    values
        .get(index)
        .copied()
        .ok_or_else(|| LowerError(format!("`{name}` lacks argument {index}")))
}
