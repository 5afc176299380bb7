//! Tile copies on NVIDIA sm_90a through the tensor memory accelerator: one
//! `cp.async.bulk.tensor.2d` per copy, issued by work-item 0 from a tensor map the host encodes
//! (a hidden `grid_constant` parameter per source and row count, after the declared ones), and
//! an `mbarrier` per slot in local memory, which expects one arrival: work-item 0 arrives at a
//! wait, after its copies set the bytes they bring, and every work-item waits for the phase by
//! its parity, a bit a slot in a register of the kernel, as CUTLASS's consumers do. No
//! work-item falls two phases behind, as the language puts every work-item's wait before the
//! slot's next copy (a barrier or a release between). A release arrives on a second barrier of
//! the slot (every work-item), without waiting;
//! work-item 0 keeps its arrival's phase, and its next copy on the slot waits for that phase
//! (every work-item's release) first, so only the work-item that copies waits. A tile store
//! is a proxy fence and a barrier in every work-item, then work-item 0's
//! `cp.async.bulk.tensor.2d` store in a bulk group of its own; its wait is
//! `cp.async.bulk.wait_group 0` and a barrier, and a kernel's returns first wait until its
//! stores have read local memory. Only kernels' entries for contiguous rows get here
//! ([`TargetDescription::takes_tensor_maps`]); elsewhere tile statements were expanded into
//! plain loads and stores (`kdsl_ir::tile_copy::expand_plain`).

use super::{FunctionLowering, LowerError, Result};
use crate::target::TargetDescription;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::module::Linkage;
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, FunctionValue, IntValue};
use inkwell::AddressSpace as LlvmAddressSpace;
use kdsl_ir::tile_copy::{self, TensorMapUse, TileCopyOp, ROW_BYTES, SLOTS};
use kdsl_ir::{Function, FunctionKind};

/// The bytes of a `CUtensorMap`, and the alignment its parameter needs.
const TENSOR_MAP_BYTES: u32 = 128;
const TENSOR_MAP_ALIGNMENT: u64 = 64;

/// Work-item 0's arrival on a slot's barrier at a wait.
const ARRIVE: &str = "{\n\t.reg .b64 state;\n\t\
    mbarrier.arrive.shared::cta.b64 state, [$0];\n}";

/// Waits on a slot's barrier (`$0`) until the phase of parity `$1` has completed.
const WAIT: &str = "{\n\t.reg .pred done;\n\
    kdsl_tile_wait${:uid}:\n\t\
    mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n\t\
    @!done bra kdsl_tile_wait${:uid};\n}";

/// Waits until the phase of a release arrival (`$1`, its state) has completed on the slot's
/// release barrier (`$0`).
const WAIT_FOR_RELEASE: &str = "{\n\t.reg .pred done;\n\
    kdsl_tile_free${:uid}:\n\t\
    mbarrier.try_wait.shared::cta.b64 done, [$0], $1;\n\t\
    @!done bra kdsl_tile_free${:uid};\n}";

/// The per-kernel local arrays of the slots: the copies' barriers, the releases' barriers,
/// work-item 0's last release state and whether a release is pending (its own, so no other
/// work-item touches the last two).
const FULL: &str = "tile_full";
const EMPTY: &str = "tile_empty";
const TOKENS: &str = "tile_release_state";
const PENDING: &str = "tile_release_pending";

/// The tensor maps `function` takes as hidden parameters on `target`: none unless it keeps
/// tile copies there.
pub(crate) fn hidden_tensor_maps(
    target: &TargetDescription,
    module: &kdsl_ir::Module,
    function: &Function,
) -> Vec<TensorMapUse> {
    if target.takes_tensor_maps(module, function) {
        tile_copy::tensor_maps(&function.body)
    } else {
        Vec::new()
    }
}

/// Appends `maps` tensor map parameters to `parameter_types` (pointers to the 128-byte
/// objects, passed by value: [`mark_hidden_parameters`]).
pub(crate) fn hidden_parameter_types<'ctx>(
    context: &'ctx Context,
    maps: usize,
    parameter_types: &mut Vec<BasicMetadataTypeEnum<'ctx>>,
) {
    let pointer = context.ptr_type(LlvmAddressSpace::default());
    parameter_types.extend(std::iter::repeat_n(
        BasicMetadataTypeEnum::from(pointer),
        maps,
    ));
}

/// Marks the tensor map parameters from `first` on as 128-byte `byval` objects the kernel only
/// reads (`nvvm.grid_constant`), so their address is in the parameter space, as a tensor copy
/// needs.
pub(crate) fn mark_hidden_parameters(
    context: &Context,
    function: &Function,
    maps: usize,
    value: FunctionValue<'_>,
) {
    let first = function.parameters.len() as u32;
    let map_type = context.i8_type().array_type(TENSOR_MAP_BYTES);
    for index in 0..maps as u32 {
        let location = AttributeLoc::Param(first + index);
        let byval = context
            .create_type_attribute(Attribute::get_named_enum_kind_id("byval"), map_type.into());
        value.add_attribute(location, byval);
        value.add_attribute(
            location,
            context.create_enum_attribute(
                Attribute::get_named_enum_kind_id("align"),
                TENSOR_MAP_ALIGNMENT,
            ),
        );
        value.add_attribute(
            location,
            context.create_string_attribute("nvvm.grid_constant", ""),
        );
    }
}

impl<'ctx> FunctionLowering<'_, 'ctx> {
    /// At a kernel's start: work-item 0 makes each slot's barrier wait for the whole group's
    /// arrivals, then the group synchronizes, so no copy or wait comes before the barriers.
    pub(super) fn start_tile_slots(&mut self) -> Result<()> {
        if self.function.kind != FunctionKind::Kernel || !tile_copy::uses_slots(&self.function.body)
        {
            return Ok(());
        }
        let items = self.linear_local_size()?;
        // The phases start at 0, every bit; in the entry block, so it lives in a register.
        let i32_type = self.context.i32_type();
        let entry = self
            .value
            .get_first_basic_block()
            .ok_or_else(|| LowerError("a kernel without an entry block".into()))?;
        let at_entry = self.context.create_builder();
        match entry.get_first_instruction() {
            Some(first) => at_entry.position_before(&first),
            None => at_entry.position_at_end(entry),
        }
        let phases = at_entry.build_alloca(i32_type, "tile.phases")?;
        self.builder.build_store(phases, i32_type.const_zero())?;
        self.tile_phases = Some(phases);
        let first = self.first_work_item()?;
        let (init, after) = (self.new_block("tile.init"), self.new_block("tile.started"));
        self.builder.build_conditional_branch(first, init, after)?;
        self.builder.position_at_end(init);
        for slot in 0..SLOTS {
            let slot = self.i32_constant(u64::from(slot));
            // A round of copies completes with work-item 0's arrival; a release with all.
            for (array, arrivals) in [(FULL, self.i32_constant(1)), (EMPTY, items)] {
                let barrier = self.slot_barrier(array, slot)?;
                self.assembly(
                    "mbarrier.init.shared::cta.b64 [$0], $1;",
                    "r,r",
                    &[barrier.into(), arrivals.into()],
                )?;
            }
            let pending = self.slot_element(PENDING, slot)?;
            self.builder
                .build_store(pending, self.context.i64_type().const_zero())?;
        }
        self.assembly("fence.mbarrier_init.release.cluster;", "", &[])?;
        self.builder.build_unconditional_branch(after)?;
        self.builder.position_at_end(after);
        self.barrier(kdsl_ir::FenceFlags {
            local: true,
            global: false,
        })
    }

    pub(super) fn tile_copy(&mut self, op: &TileCopyOp) -> Result<()> {
        match op {
            TileCopyOp::Copy {
                destination,
                source,
                element,
                row,
                column,
                rows,
                slot,
            } => {
                let map = self.tensor_map(*source, *element, *rows)?;
                // Every work-item evaluates the operands (they are the same in all); one copies.
                let to = self.address(destination)?;
                let row = self.expression(row)?.into_int_value();
                let column = self.expression(column)?.into_int_value();
                let slot = self.expression(slot)?.into_int_value();
                self.tensor_copy(map, to, row, column, *rows, slot)
            }
            TileCopyOp::Store {
                destination,
                element,
                row,
                column,
                rows,
                source,
            } => {
                let map = self.tensor_map(*destination, *element, *rows)?;
                let row = self.expression(row)?.into_int_value();
                let column = self.expression(column)?.into_int_value();
                let from = self.address(source)?;
                self.tensor_store(map, from, row, column)
            }
            TileCopyOp::Wait { slot } => {
                let slot = self.expression(slot)?.into_int_value();
                self.wait(slot)
            }
            TileCopyOp::Release { slot } => {
                let slot = self.expression(slot)?.into_int_value();
                self.release(slot)
            }
            TileCopyOp::StoreWait => self.store_wait(),
        }
    }

    /// The address (as an `i64`) of the hidden parameter holding the tensor map of `buffer`'s
    /// boxes of `rows` rows.
    fn tensor_map(
        &mut self,
        buffer: kdsl_ir::ParameterId,
        element: kdsl_ir::ScalarType,
        rows: u32,
    ) -> Result<IntValue<'ctx>> {
        let index = tile_copy::tensor_maps(&self.function.body)
            .iter()
            .position(|map| map.describes(buffer, rows) && map.element == element)
            .ok_or_else(|| LowerError("a tile statement without its tensor map".into()))?;
        let map = self
            .value
            .get_nth_param((self.function.parameters.len() + index) as u32)
            .ok_or_else(|| LowerError("a tensor map parameter is missing".into()))?
            .into_pointer_value();
        Ok(self
            .builder
            .build_ptr_to_int(map, self.context.i64_type(), "")?)
    }

    /// Work-item 0 waits until the slot is released, sets the bytes the copy brings and starts
    /// it.
    fn tensor_copy(
        &mut self,
        map: IntValue<'ctx>,
        to: inkwell::values::PointerValue<'ctx>,
        row: IntValue<'ctx>,
        column: IntValue<'ctx>,
        rows: u32,
        slot_index: IntValue<'ctx>,
    ) -> Result<()> {
        let slot = self.slot_barrier(FULL, slot_index)?;
        let first = self.first_work_item()?;
        let (copy, after) = (self.new_block("tile.copy"), self.new_block("tile.started"));
        self.builder.build_conditional_branch(first, copy, after)?;
        self.builder.position_at_end(copy);
        self.wait_for_release(slot_index)?;
        let i32_type = self.context.i32_type();
        let to = self.builder.build_ptr_to_int(to, i32_type, "")?;
        let bytes = self.i32_constant(u64::from(rows * ROW_BYTES));
        self.assembly(
            "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$0], $1;",
            "r,r",
            &[slot.into(), bytes.into()],
        )?;
        self.assembly(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes \
             [$0], [$1, {$2, $3}], [$4];",
            "r,l,r,r,r",
            &[
                to.into(),
                map.into(),
                column.into(),
                row.into(),
                slot.into(),
            ],
        )?;
        self.builder.build_unconditional_branch(after)?;
        self.builder.position_at_end(after);
        Ok(())
    }

    /// Every work-item makes its writes to local memory visible to the tensor copies, the
    /// group synchronizes, and work-item 0 starts the store in a bulk group of its own.
    fn tensor_store(
        &mut self,
        map: IntValue<'ctx>,
        from: inkwell::values::PointerValue<'ctx>,
        row: IntValue<'ctx>,
        column: IntValue<'ctx>,
    ) -> Result<()> {
        self.assembly("fence.proxy.async.shared::cta;", "", &[])?;
        self.barrier(kdsl_ir::FenceFlags {
            local: true,
            global: false,
        })?;
        let first = self.first_work_item()?;
        let (store, after) = (self.new_block("tile.store"), self.new_block("tile.stored"));
        self.builder.build_conditional_branch(first, store, after)?;
        self.builder.position_at_end(store);
        let from = self
            .builder
            .build_ptr_to_int(from, self.context.i32_type(), "")?;
        self.assembly(
            "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], [$3];\n\t\
             cp.async.bulk.commit_group;",
            "l,r,r,r",
            &[map.into(), column.into(), row.into(), from.into()],
        )?;
        self.builder.build_unconditional_branch(after)?;
        self.builder.position_at_end(after);
        Ok(())
    }

    /// Every work-item waits for its stores (work-item 0 has them all) to complete and their
    /// writes to be visible to plain accesses; then the group synchronizes.
    fn store_wait(&mut self) -> Result<()> {
        self.assembly(
            "cp.async.bulk.wait_group 0;\n\tfence.proxy.async.global;",
            "",
            &[],
        )?;
        self.barrier(kdsl_ir::FenceFlags {
            local: true,
            global: true,
        })
    }

    /// Before a kernel with tensor stores returns: its stores have read their local memory,
    /// which ends with the work-group (the writes complete with the launch).
    pub(super) fn finish_tile_stores(&mut self) -> Result<()> {
        if self.function.kind != FunctionKind::Kernel || !tile_copy::stores(&self.function.body) {
            return Ok(());
        }
        self.assembly("cp.async.bulk.wait_group.read 0;", "", &[])
    }

    /// Work-item 0 arrives on the slot's barrier (its copies of the round are all issued), then
    /// every work-item waits for the phase of its parity bit, and flips the bit.
    fn wait(&mut self, slot: IntValue<'ctx>) -> Result<()> {
        let barrier = self.slot_barrier(FULL, slot)?;
        let first = self.first_work_item()?;
        let (arrive, after) = (
            self.new_block("tile.arrive"),
            self.new_block("tile.arrived"),
        );
        self.builder
            .build_conditional_branch(first, arrive, after)?;
        self.builder.position_at_end(arrive);
        self.assembly(ARRIVE, "r", &[barrier.into()])?;
        self.builder.build_unconditional_branch(after)?;
        self.builder.position_at_end(after);
        let phases = self
            .tile_phases
            .ok_or_else(|| LowerError("a tile wait outside a kernel with tile copies".into()))?;
        let i32_type = self.context.i32_type();
        let b = &self.builder;
        let bits = b.build_load(i32_type, phases, "")?.into_int_value();
        let mask = b.build_left_shift(i32_type.const_int(1, false), slot, "")?;
        let parity = b.build_and(
            b.build_right_shift(bits, slot, false, "")?,
            i32_type.const_int(1, false),
            "",
        )?;
        b.build_store(phases, b.build_xor(bits, mask, "")?)?;
        self.assembly(WAIT, "r,r", &[barrier.into(), parity.into()])
    }

    /// Every work-item arrives on the slot's release barrier; work-item 0 keeps the state of
    /// its arrival for its next copy on the slot.
    fn release(&mut self, slot: IntValue<'ctx>) -> Result<()> {
        let barrier = self.slot_barrier(EMPTY, slot)?;
        let i64_type = self.context.i64_type();
        let arrive = self.context.create_inline_asm(
            i64_type.fn_type(&[self.context.i32_type().into()], false),
            "mbarrier.arrive.shared::cta.b64 $0, [$1];".to_string(),
            "=l,r,~{memory}".to_string(),
            true,
            false,
            None,
            false,
        );
        let state = self
            .builder
            .build_indirect_call(
                i64_type.fn_type(&[self.context.i32_type().into()], false),
                arrive,
                &[barrier.into()],
                "",
            )?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError("an arrival without its state".into()))?;
        let first = self.first_work_item()?;
        let (keep, after) = (
            self.new_block("tile.release"),
            self.new_block("tile.released"),
        );
        self.builder.build_conditional_branch(first, keep, after)?;
        self.builder.position_at_end(keep);
        let token = self.slot_element(TOKENS, slot)?;
        self.builder.build_store(token, state)?;
        let pending = self.slot_element(PENDING, slot)?;
        self.builder
            .build_store(pending, i64_type.const_int(1, false))?;
        self.builder.build_unconditional_branch(after)?;
        self.builder.position_at_end(after);
        Ok(())
    }

    /// In work-item 0, before a copy: where the slot was released since its last copy, waits
    /// for every work-item's release.
    fn wait_for_release(&mut self, slot: IntValue<'ctx>) -> Result<()> {
        let i64_type = self.context.i64_type();
        let pending = self.slot_element(PENDING, slot)?;
        let flag = self
            .builder
            .build_load(i64_type, pending, "")?
            .into_int_value();
        let released = self.builder.build_int_compare(
            inkwell::IntPredicate::NE,
            flag,
            i64_type.const_zero(),
            "",
        )?;
        let (wait, after) = (self.new_block("tile.free"), self.new_block("tile.freed"));
        self.builder
            .build_conditional_branch(released, wait, after)?;
        self.builder.position_at_end(wait);
        let token = self.slot_element(TOKENS, slot)?;
        let state = self.builder.build_load(i64_type, token, "")?;
        let barrier = self.slot_barrier(EMPTY, slot)?;
        self.assembly(WAIT_FOR_RELEASE, "r,l", &[barrier.into(), state.into()])?;
        self.builder.build_store(pending, i64_type.const_zero())?;
        self.builder.build_unconditional_branch(after)?;
        self.builder.position_at_end(after);
        Ok(())
    }

    /// Whether this work-item's linear local id is 0.
    fn first_work_item(&mut self) -> Result<IntValue<'ctx>> {
        let linear = self.linear_local_id()?;
        let zero = self.i32_constant(0);
        Ok(self
            .builder
            .build_int_compare(inkwell::IntPredicate::EQ, linear, zero, "")?)
    }

    /// The 32-bit local-memory address of `slot`'s element of the kernel's slot array
    /// `array` (an `mbarrier`).
    fn slot_barrier(&mut self, array: &str, slot: IntValue<'ctx>) -> Result<IntValue<'ctx>> {
        let pointer = self.slot_element(array, slot)?;
        let i32_type = self.context.i32_type();
        Ok(self.builder.build_ptr_to_int(pointer, i32_type, "")?)
    }

    /// `slot`'s 8-byte element of the kernel's slot array `array`, in local memory (a slot
    /// past the array is undefined behaviour).
    fn slot_element(
        &mut self,
        array: &str,
        slot: IntValue<'ctx>,
    ) -> Result<inkwell::values::PointerValue<'ctx>> {
        let name = format!("{}.{array}", self.function.name);
        let i64_type = self.context.i64_type();
        let array = i64_type.array_type(SLOTS);
        let global = match self.module.get_global(&name) {
            Some(global) => global,
            None => {
                let space = LlvmAddressSpace::from(self.target.address_spaces.local);
                let global = self.module.add_global(array, Some(space), &name);
                global.set_linkage(Linkage::Internal);
                global.set_initializer(&array.get_poison());
                global.set_alignment(8);
                global
            }
        };
        let i32_type = self.context.i32_type();
        // SAFETY: the language makes a slot below the array's length.
        let pointer = unsafe {
            self.builder.build_in_bounds_gep(
                array,
                global.as_pointer_value(),
                &[i32_type.const_zero(), slot],
                "",
            )
        }?;
        Ok(pointer)
    }

    /// One statement of inline assembly without results, ordered with every memory access.
    fn assembly(
        &mut self,
        text: &str,
        constraints: &str,
        operands: &[BasicMetadataValueEnum<'ctx>],
    ) -> Result<()> {
        let types: Vec<BasicMetadataTypeEnum<'ctx>> = operands
            .iter()
            .map(|operand| match operand {
                BasicMetadataValueEnum::IntValue(value) => value.get_type().into(),
                BasicMetadataValueEnum::PointerValue(value) => value.get_type().into(),
                _ => self.context.i32_type().into(),
            })
            .collect();
        let void = self.context.void_type().fn_type(&types, false);
        let constraints = if constraints.is_empty() {
            "~{memory}".to_string()
        } else {
            format!("{constraints},~{{memory}}")
        };
        let assembly = self.context.create_inline_asm(
            void,
            text.to_string(),
            constraints,
            true,
            false,
            None,
            false,
        );
        self.builder
            .build_indirect_call(void, assembly, operands, "")?;
        Ok(())
    }
}
