//! Sub-group and work-group collectives: each work-item's value meets its group's at a
//! rendezvous.

use super::{Execution, Frame, WorkItem};
use kdsl_ir::scalar;
use kdsl_ir::{Expression, Reduction, ScalarType, Span, SubGroupOp, WorkGroupOp};

impl<'g> WorkItem<'g> {
    /// A sub-group query, or a collective that meets the sub-group's lanes at a rendezvous.
    pub(super) fn sub_group_operation(
        &self,
        frame: &mut Frame<'g>,
        op: SubGroupOp,
        arguments: &'g [Expression],
        ty: ScalarType,
        span: Span,
    ) -> Execution<u64> {
        let values = self.expressions(frame, arguments)?;
        let lanes_per_group = self.group.launch.launch.sub_group_size as usize;
        match op {
            SubGroupOp::LocalId => return Ok(self.lane as u64),
            SubGroupOp::Size => return Ok(u64::from(self.sub_group_size)),
            SubGroupOp::GroupId => return Ok(self.sub_group as u64),
            SubGroupOp::MatrixGroupId => {
                return Ok(self.linear_local as u64 / u64::from(kdsl_ir::matrix_group::GROUP_SIZE))
            }
            SubGroupOp::GroupCount => {
                let group_size = self.group.launch.launch.work_group_size() as usize;
                return Ok(group_size.div_ceil(lanes_per_group) as u64);
            }
            _ => {}
        }
        let Some(rendezvous) = self.group.sub_groups.get(self.sub_group) else {
            return Err(self.undefined(span, "sub-group operation outside a sub-group".into()));
        };
        let own = values.first().copied().unwrap_or(0);
        let second = values.get(1).copied().unwrap_or(0);
        let arrive = |value: u64| {
            rendezvous
                .arrive(
                    self.lane,
                    value,
                    span,
                    "sub-group operation",
                    &self.group.aborted,
                )
                .map_err(|failure| self.rendezvous_failure(failure))
        };
        let lanes = arrive(own)?;
        let source_lane = match op {
            SubGroupOp::Shuffle => second,
            SubGroupOp::ShuffleXor => self.lane as u64 ^ second,
            SubGroupOp::ShuffleUp => match (self.lane as u64).checked_sub(second) {
                Some(lane) => lane,
                None => return Ok(own),
            },
            SubGroupOp::ShuffleDown => {
                let lane = (self.lane as u64).saturating_add(second);
                if lane >= lanes.len() as u64 {
                    return Ok(own);
                }
                lane
            }
            SubGroupOp::Broadcast => {
                let chosen = arrive(second)?;
                if chosen.iter().any(|&lane| lane != second) {
                    return Err(self.undefined(
                        span,
                        "`sub_group_broadcast` from lanes that differ across the sub-group".into(),
                    ));
                }
                second
            }
            SubGroupOp::Reduce(reduction) => return Ok(combine_all(reduction, ty, &lanes)),
            SubGroupOp::InclusiveScan(reduction) => {
                return Ok(combine_all(reduction, ty, &lanes[..=self.lane]))
            }
            SubGroupOp::ExclusiveScan(reduction) => {
                return Ok(combine_all(reduction, ty, &lanes[..self.lane]))
            }
            SubGroupOp::Any => return Ok(u64::from(lanes.iter().any(|&c| c != 0))),
            SubGroupOp::All => return Ok(u64::from(lanes.iter().all(|&c| c != 0))),
            SubGroupOp::Ballot => {
                if lanes.len() > 64 {
                    return Err(self.undefined(
                        span,
                        format!(
                            "`sub_group_ballot` in a sub-group of {} lanes (at most 64)",
                            lanes.len()
                        ),
                    ));
                }
                return Ok(lanes
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c != 0)
                    .fold(0, |mask, (lane, _)| mask | 1 << lane));
            }
            SubGroupOp::LocalId
            | SubGroupOp::Size
            | SubGroupOp::GroupId
            | SubGroupOp::GroupCount
            | SubGroupOp::MatrixGroupId => return Ok(0),
        };
        match lanes.get(source_lane as usize) {
            Some(&value) => Ok(value),
            None => Err(self.undefined(
                span,
                format!(
                    "{} from lane {source_lane} of a sub-group of {} lanes",
                    op.name(),
                    lanes.len()
                ),
            )),
        }
    }

    /// A work-group collective: every work-item's value meets the group's at a rendezvous.
    pub(super) fn work_group_operation(
        &self,
        frame: &mut Frame<'g>,
        op: WorkGroupOp,
        arguments: &'g [Expression],
        ty: ScalarType,
        span: Span,
    ) -> Execution<u64> {
        let values = self.expressions(frame, arguments)?;
        let own = values.first().copied().unwrap_or(0);
        let Some(rendezvous) = &self.group.barrier else {
            return Err(self.undefined(span, "work-group operation outside a work-group".into()));
        };
        let arrive = |value: u64| {
            rendezvous
                .arrive(
                    self.linear_local,
                    value,
                    span,
                    "work-group operation",
                    &self.group.aborted,
                )
                .map_err(|failure| self.rendezvous_failure(failure))
        };
        let items = arrive(own)?;
        let position = self.linear_local;
        Ok(match op {
            WorkGroupOp::Reduce(reduction) => combine_all(reduction, ty, &items),
            WorkGroupOp::InclusiveScan(reduction) => {
                combine_all(reduction, ty, &items[..=position])
            }
            WorkGroupOp::ExclusiveScan(reduction) => combine_all(reduction, ty, &items[..position]),
            WorkGroupOp::Broadcast => {
                let source = values.get(1).copied().unwrap_or(0);
                let chosen = arrive(source)?;
                if chosen.iter().any(|&id| id != source) {
                    return Err(self.undefined(
                        span,
                        "`work_group_broadcast` from ids that differ across the work-group".into(),
                    ));
                }
                match items.get(source as usize) {
                    Some(&value) => value,
                    None => {
                        return Err(self.undefined(
                            span,
                            format!(
                                "`work_group_broadcast` from local id {source} of a work-group of {} work-items",
                                items.len()
                            ),
                        ))
                    }
                }
            }
        })
    }
}

/// `values` combined in order by `reduction`; its identity when there are none.
fn combine_all(reduction: Reduction, ty: ScalarType, values: &[u64]) -> u64 {
    values
        .iter()
        .fold(reduction.identity(ty), |total, &value| match reduction {
            Reduction::Add => scalar::add(ty, total, value),
            Reduction::Min => scalar::minimum(ty, total, value),
            Reduction::Max => scalar::maximum(ty, total, value),
        })
}
