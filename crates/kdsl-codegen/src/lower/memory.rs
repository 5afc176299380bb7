//! Memory: element addresses, loads, stores and atomics. There are no bounds checks unless
//! the module is checked (`checked.rs`): otherwise an index outside its buffer or array is
//! undefined behaviour, as in OpenCL and CUDA.

use super::{FunctionLowering, LowerError, ParameterValue, Result};
use crate::llvm;
use inkwell::llvm_sys::LLVMAtomicRMWBinOp;
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, PointerValue};
use kdsl_ir::{vector_alignment, AddressSpace, AtomicOp, Expression, Place, PlaceBase, ScalarType};

impl<'ctx> FunctionLowering<'_, 'ctx> {
    /// An index as a 64-bit offset. A signed index of a valid access is never negative, so
    /// it is zero-extended with `nneg`; that keeps address arithmetic in unsigned form.
    fn index(&mut self, index: &Expression) -> Result<IntValue<'ctx>> {
        let value = self.expression(index)?.into_int_value();
        let i64_type = self.context.i64_type();
        if value.get_type().get_bit_width() >= 64 {
            return Ok(value);
        }
        let extended = self.builder.build_int_z_extend(value, i64_type, "")?;
        if index.ty.is_signed_integer() {
            llvm::set_non_negative(extended.as_basic_value_enum());
        }
        Ok(extended)
    }

    /// The address of a place's element.
    pub(super) fn address(&mut self, place: &Place) -> Result<PointerValue<'ctx>> {
        let mut indices = Vec::with_capacity(place.indices.len());
        for index in &place.indices {
            indices.push(self.index(index)?);
        }
        self.element_address(place, &indices)
    }

    /// The address of a place's element at already evaluated 64-bit indices.
    pub(super) fn element_address(
        &mut self,
        place: &Place,
        place_indices: &[IntValue<'ctx>],
    ) -> Result<PointerValue<'ctx>> {
        if let Some(field) = place.field {
            return self.field_address(place, field, place_indices);
        }
        let mut indices = Vec::with_capacity(place.indices.len() + 1);
        let (base, ty) = match place.base {
            PlaceBase::Parameter(id) => match self.parameters.get(id.0 as usize) {
                Some(ParameterValue::Buffer(pointer)) => {
                    (*pointer, self.types.memory(place.element))
                }
                Some(ParameterValue::Array(pointer)) => {
                    let kdsl_ir::ParameterType::Array { ty, .. } = &self.function.parameter(id).ty
                    else {
                        return Err(LowerError(format!("parameter %{} is not an array", id.0)));
                    };
                    indices.push(self.context.i64_type().const_zero());
                    (*pointer, self.types.array(ty))
                }
                _ => return Err(LowerError(format!("parameter %{} is not a buffer", id.0))),
            },
            PlaceBase::Variable(id) => {
                let storage = self.variables[id.0 as usize];
                indices.push(self.context.i64_type().const_zero());
                (storage.pointer, storage.ty)
            }
        };
        indices.extend_from_slice(place_indices);
        // SAFETY: `inbounds` holds for every valid access (an out-of-bounds index is
        // undefined behaviour in kdsl), and the indices match `ty`'s nesting.
        let pointer = unsafe { self.builder.build_in_bounds_gep(ty, base, &indices, "")? };
        Ok(pointer)
    }

    /// The address of field `field` of the record at `indices[0]` in a buffer of records:
    /// the record as `[size x i8]`, then the field's byte offset, so the layout is exactly
    /// the IR's (`kdsl_ir::RecordType`) on every target.
    fn field_address(
        &mut self,
        place: &Place,
        field: u32,
        indices: &[IntValue<'ctx>],
    ) -> Result<PointerValue<'ctx>> {
        let PlaceBase::Parameter(id) = place.base else {
            return Err(LowerError("a field of an array".into()));
        };
        let (
            Some(ParameterValue::Buffer(base)),
            kdsl_ir::ParameterType::Buffer {
                record: Some(record),
                ..
            },
        ) = (
            self.parameters.get(id.0 as usize),
            &self.function.parameter(id).ty,
        )
        else {
            return Err(LowerError(format!(
                "parameter %{} is not a buffer of records",
                id.0
            )));
        };
        let (Some(field), Some(&index)) = (record.fields.get(field as usize), indices.first())
        else {
            return Err(LowerError(format!(
                "no field {field} of `{record}` or no index"
            )));
        };
        let i8_type = self.context.i8_type();
        let record_type = i8_type.array_type(record.size);
        let offset = self
            .context
            .i64_type()
            .const_int(u64::from(field.offset), false);
        // SAFETY: `inbounds` holds for every valid access (an index past the buffer is
        // undefined behaviour), and the field lies inside its record.
        let pointer = unsafe {
            let element = self
                .builder
                .build_in_bounds_gep(record_type, *base, &[index], "")?;
            self.builder
                .build_in_bounds_gep(i8_type, element, &[offset], "")?
        };
        Ok(pointer)
    }

    pub(super) fn load(&mut self, place: &Place) -> Result<BasicValueEnum<'ctx>> {
        if self.checked.is_some() {
            let indices = self.checked_indices(place)?;
            let guard = self.guard_place(place, &indices)?;
            let pointer = self.element_address(place, &indices)?;
            let value = self.load_from(place, pointer)?;
            return self
                .finish_guard(guard, Some(value))?
                .ok_or_else(|| LowerError("a checked load without a value".into()));
        }
        let pointer = self.address(place)?;
        self.load_from(place, pointer)
    }

    fn load_from(
        &mut self,
        place: &Place,
        pointer: PointerValue<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>> {
        let memory_type = self.types.memory(place.element);
        let value = self.builder.build_load(memory_type, pointer, "")?;
        set_alignment(value, place.element)?;
        if place.element == ScalarType::Bool {
            let byte = value.into_int_value();
            return Ok(self
                .builder
                .build_int_truncate(byte, self.context.bool_type(), "")?
                .into());
        }
        Ok(value)
    }

    pub(super) fn store(&mut self, place: &Place, value: BasicValueEnum<'ctx>) -> Result<()> {
        if self.checked.is_some() {
            let indices = self.checked_indices(place)?;
            let guard = self.guard_place(place, &indices)?;
            let pointer = self.element_address(place, &indices)?;
            self.store_to(place, pointer, value)?;
            self.finish_guard(guard, None)?;
            return Ok(());
        }
        let pointer = self.address(place)?;
        self.store_to(place, pointer, value)
    }

    fn store_to(
        &mut self,
        place: &Place,
        pointer: PointerValue<'ctx>,
        value: BasicValueEnum<'ctx>,
    ) -> Result<()> {
        let value = if place.element == ScalarType::Bool {
            self.builder
                .build_int_z_extend(value.into_int_value(), self.context.i8_type(), "")?
                .into()
        } else {
            value
        };
        let store = self.builder.build_store(pointer, value)?;
        store
            .set_alignment(place.element.size_in_bytes())
            .map_err(|e| LowerError(e.to_string()))?;
        Ok(())
    }

    /// The address of the buffer vector at `place` (its index counts vectors of `width`).
    fn vector_address(
        &mut self,
        place: &Place,
        width: u8,
        vector_index: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>> {
        let width = self.context.i64_type().const_int(u64::from(width), false);
        let first = self.builder.build_int_nuw_mul(vector_index, width, "")?;
        self.element_address(place, &[first])
    }

    /// Component `component` of a buffer vector (`vload4`): a load of the whole vector,
    /// aligned as [`vector_alignment`] says, then the component. The components of one source
    /// `vload4` are equal loads, which LLVM merges into one.
    pub(super) fn vector_load(
        &mut self,
        place: &Place,
        width: u8,
        component: u8,
    ) -> Result<BasicValueEnum<'ctx>> {
        let (index, guard) = self.vector_index(place, width)?;
        let pointer = self.vector_address(place, width, index)?;
        let vector =
            self.builder
                .build_load(self.types.vector(place.element, width), pointer, "")?;
        if let Some(instruction) = vector.as_instruction_value() {
            instruction
                .set_alignment(vector_alignment(place.element, width))
                .map_err(|e| LowerError(e.to_string()))?;
        }
        let lane = self
            .context
            .i32_type()
            .const_int(u64::from(component), false);
        let value = self
            .builder
            .build_extract_element(vector.into_vector_value(), lane, "")?;
        match guard {
            Some(guard) => self
                .finish_guard(guard, Some(value))?
                .ok_or_else(|| LowerError("a checked vector load without a value".into())),
            None => Ok(value),
        }
    }

    /// `vstore4`: one aligned store of `components` as a vector.
    pub(super) fn vector_store(
        &mut self,
        place: &Place,
        components: &[BasicValueEnum<'ctx>],
    ) -> Result<()> {
        let width = components.len() as u8;
        let mut vector = self.types.vector(place.element, width).get_undef();
        for (lane, component) in components.iter().enumerate() {
            let lane = self.context.i32_type().const_int(lane as u64, false);
            vector = self
                .builder
                .build_insert_element(vector, *component, lane, "")?;
        }
        let (index, guard) = self.vector_index(place, width)?;
        let pointer = self.vector_address(place, width, index)?;
        let store = self.builder.build_store(pointer, vector)?;
        store
            .set_alignment(vector_alignment(place.element, width))
            .map_err(|e| LowerError(e.to_string()))?;
        if let Some(guard) = guard {
            self.finish_guard(guard, None)?;
        }
        Ok(())
    }

    /// The 64-bit vector index of a vector access and, in a checked module, the guard that
    /// checks it against the buffer's length in vectors.
    fn vector_index(
        &mut self,
        place: &Place,
        width: u8,
    ) -> Result<(IntValue<'ctx>, Option<super::checked::Guard<'ctx>>)> {
        if self.checked.is_some() {
            let indices = self.checked_indices(place)?;
            let guard = self.guard_vector_place(place, width, indices[0])?;
            return Ok((indices[0], Some(guard)));
        }
        let index = place
            .indices
            .first()
            .ok_or_else(|| LowerError("a vector access without an index".into()))?;
        Ok((self.index(index)?, None))
    }

    /// A relaxed read-modify-write: device scope on global memory, work-group scope on local
    /// memory. Barriers order memory; atomics only make the update indivisible.
    pub(super) fn atomic(
        &mut self,
        op: AtomicOp,
        place: &Place,
        value: &Expression,
        comparand: Option<&Expression>,
    ) -> Result<BasicValueEnum<'ctx>> {
        if self.checked.is_some() {
            let indices = self.checked_indices(place)?;
            let value = self.expression(value)?;
            let expected = comparand.map(|e| self.expression(e)).transpose()?;
            let guard = self.guard_place(place, &indices)?;
            let pointer = self.element_address(place, &indices)?;
            let old = self.atomic_at(op, place, pointer, value, expected)?;
            return self
                .finish_guard(guard, Some(old))?
                .ok_or_else(|| LowerError("a checked atomic without a value".into()));
        }
        let pointer = self.address(place)?;
        let value = self.expression(value)?;
        let expected = comparand.map(|e| self.expression(e)).transpose()?;
        self.atomic_at(op, place, pointer, value, expected)
    }

    fn atomic_at(
        &mut self,
        op: AtomicOp,
        place: &Place,
        pointer: PointerValue<'ctx>,
        value: BasicValueEnum<'ctx>,
        expected: Option<BasicValueEnum<'ctx>>,
    ) -> Result<BasicValueEnum<'ctx>> {
        let scope = if place.space == AddressSpace::Local {
            self.target.sync_scopes.work_group
        } else {
            self.target.sync_scopes.device
        };
        let ty = place.element;
        if op == AtomicOp::CompareExchange {
            let expected = expected
                .ok_or_else(|| LowerError("compare-exchange without an expected value".into()))?;
            if self
                .target
                .legalization
                .compare_exchange_through_spirv_builtin
            {
                return self.spirv_compare_exchange(place, pointer, expected, value);
            }
            return Ok(llvm::compare_exchange(
                self.context,
                &self.builder,
                pointer,
                expected,
                value,
                scope,
            )?);
        }
        let signed = ty.is_signed_integer();
        let binary_op = match op {
            AtomicOp::Add if ty.is_float() => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpFAdd,
            AtomicOp::Add => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpAdd,
            AtomicOp::Subtract if ty.is_float() => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpFSub,
            AtomicOp::Subtract => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpSub,
            AtomicOp::Min if ty.is_float() => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpFMin,
            AtomicOp::Min if signed => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpMin,
            AtomicOp::Min => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpUMin,
            AtomicOp::Max if ty.is_float() => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpFMax,
            AtomicOp::Max if signed => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpMax,
            AtomicOp::Max => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpUMax,
            AtomicOp::And => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpAnd,
            AtomicOp::Or => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpOr,
            AtomicOp::Xor => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpXor,
            AtomicOp::Exchange => LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpXchg,
            AtomicOp::CompareExchange => {
                return Err(LowerError(
                    "compare-exchange reached the read-modify-write path".into(),
                ))
            }
        };
        let old = llvm::atomic_rmw(
            self.context,
            &self.builder,
            binary_op,
            pointer,
            value,
            scope,
        );
        if let Some(instruction) = old.as_instruction_value() {
            for kind in &self.target.atomic_metadata {
                let empty = self.context.metadata_node(&[]);
                instruction
                    .set_metadata(empty, self.context.get_kind_id(kind))
                    .map_err(|e| LowerError(e.to_string()))?;
            }
        }
        Ok(old)
    }
}

impl<'ctx> FunctionLowering<'_, 'ctx> {
    /// `__spirv_AtomicCompareExchange(pointer, scope, equal, unequal, value, comparator)`,
    /// relaxed (semantics 0), device scope (1) on global memory, work-group scope (2) on local.
    fn spirv_compare_exchange(
        &mut self,
        place: &Place,
        pointer: PointerValue<'ctx>,
        expected: BasicValueEnum<'ctx>,
        value: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>> {
        let element = match place.element {
            ScalarType::I32 => 'i',
            ScalarType::U32 => 'j',
            ScalarType::I64 => 'l',
            ScalarType::U64 => 'm',
            other => {
                return Err(LowerError(format!("compare-exchange on `{other}`")));
            }
        };
        let (space, scope) = if place.space == AddressSpace::Local {
            (self.target.address_spaces.local, 2)
        } else {
            (self.target.address_spaces.global, 1)
        };
        let name =
            format!("_Z29__spirv_AtomicCompareExchangePU3AS{space}{element}iii{element}{element}");
        let word = self.context.i32_type();
        let value_type = self.types.value(place.element);
        let declaration = self.external_function(
            &name,
            Some(value_type),
            &[
                pointer.get_type().into(),
                word.into(),
                word.into(),
                word.into(),
                value_type,
                value_type,
            ],
            false,
        );
        let constant =
            |number: u64| -> BasicValueEnum<'ctx> { word.const_int(number, false).into() };
        self.call_value(
            declaration,
            &[
                pointer.into(),
                constant(scope),
                constant(0),
                constant(0),
                value,
                expected,
            ],
        )
    }
}

fn set_alignment(value: BasicValueEnum<'_>, element: ScalarType) -> Result<()> {
    if let Some(instruction) = value.as_instruction_value() {
        instruction
            .set_alignment(element.size_in_bytes())
            .map_err(|e| LowerError(e.to_string()))?;
    }
    Ok(())
}
