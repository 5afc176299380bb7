//! Matrix tiles on AMD matrix cores: MFMA (CDNA, wave64) and WMMA (RDNA3, wave32).
//!
//! Each work-item's private tile array holds its fragment, one tile element per array element,
//! in the array's first [`Fragment::items`] elements (the rest is never touched, so SROA keeps
//! the fragment in registers). Which tile element a lane's `item` is follows the instruction's
//! operand layout ([`Layout`], the data below, checked against the ISA's tables by the
//! emulation test at the end), so loads and stores move data straight between memory and the
//! registers the instruction reads: no shuffles. The lane is the hardware lane in the
//! wavefront (`mbcnt`), so a sub-group must be a whole wavefront (docs/language.md).

use super::{FunctionLowering, LowerError, ParameterValue, Result};
use crate::target::AmdgpuMatrixInstruction;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, PointerValue};
use kdsl_ir::{Expression, MatrixMemory, MatrixOp, MatrixRole, Place, PlaceBase, ScalarType};

/// A row or column index of a fragment element, affine in the lane and the element's index
/// (`item`) in the lane's fragment: `(lane % 16) * lane + (lane / 16) * group + item * item`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Affine {
    pub lane: u32,
    pub group: u32,
    pub item: u32,
}

impl Affine {
    /// The index for `lane`'s element `item` (the emulation test's; lowering builds it in IR).
    #[cfg(test)]
    pub fn at(self, lane: u32, item: u32) -> u32 {
        (lane % 16) * self.lane + (lane / 16) * self.group + item * self.item
    }
}

/// The tile elements a lane holds: element `item` (of `items`) is (row, column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fragment {
    pub items: u32,
    pub row: Affine,
    pub column: Affine,
}

/// How one instruction's operands lie in the lanes, and how a kdsl tile maps onto it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// The wavefront size the layout needs.
    pub lanes: u32,
    pub a: Fragment,
    pub b: Fragment,
    pub accumulator: Fragment,
    /// Instructions per `matrix_mma`; call `s` takes items `s * per_call..` of `A` and `B`
    /// (`per_call = items / calls`) and chains the accumulator.
    pub calls: u32,
    /// Items of the instruction's `A` and `B` operands per lane: `per_call`, or more when
    /// the instruction's k is larger than the tile's and the rest are zeros.
    pub operand_items: u32,
    pub intrinsic: &'static str,
}

const fn affine(lane: u32, group: u32, item: u32) -> Affine {
    Affine { lane, group, item }
}

/// Row `lane % 16`: the `A` operands' rows, the `B`, `C` and `D` operands' columns.
const LANE: Affine = affine(1, 0, 0);

/// The MFMA accumulator of every 16×16 f32 instruction: lane l, item v is
/// (4 · (l / 16) + v, l % 16).
const MFMA_ACCUMULATOR: Fragment = Fragment {
    items: 4,
    row: affine(0, 4, 1),
    column: LANE,
};

impl AmdgpuMatrixInstruction {
    pub(crate) fn layout(self) -> Layout {
        use AmdgpuMatrixInstruction::*;
        match self {
            // A lane holds 4 consecutive k of one row of A and one column of B.
            Mfma16x16x16F16 => Layout {
                lanes: 64,
                a: Fragment {
                    items: 4,
                    row: LANE,
                    column: affine(0, 4, 1),
                },
                b: Fragment {
                    items: 4,
                    row: affine(0, 4, 1),
                    column: LANE,
                },
                accumulator: MFMA_ACCUMULATOR,
                calls: 1,
                operand_items: 4,
                intrinsic: "llvm.amdgcn.mfma.f32.16x16x16f16",
            },
            // One k per lane and instruction: k = l / 16 for the first, 4 + l / 16 for the
            // second.
            Mfma16x16x4F32 => Layout {
                lanes: 64,
                a: Fragment {
                    items: 2,
                    row: LANE,
                    column: affine(0, 1, 4),
                },
                b: Fragment {
                    items: 2,
                    row: affine(0, 1, 4),
                    column: LANE,
                },
                accumulator: MFMA_ACCUMULATOR,
                calls: 2,
                operand_items: 1,
                intrinsic: "llvm.amdgcn.mfma.f32.16x16x4f32",
            },
            // Two consecutive k per lane.
            Mfma16x16x8Xf32 => Layout {
                lanes: 64,
                a: Fragment {
                    items: 2,
                    row: LANE,
                    column: affine(0, 2, 1),
                },
                b: Fragment {
                    items: 2,
                    row: affine(0, 2, 1),
                    column: LANE,
                },
                accumulator: MFMA_ACCUMULATOR,
                calls: 1,
                operand_items: 2,
                intrinsic: "llvm.amdgcn.mfma.f32.16x16x8.xf32",
            },
            // A lane holds a whole row of A and column of B (lanes 16-31 repeat lanes 0-15, as
            // the instruction requires); accumulator item v is row 2v + l / 16.
            Wmma16x16x16F16Wave32 => Layout {
                lanes: 32,
                a: Fragment {
                    items: 16,
                    row: LANE,
                    column: affine(0, 0, 1),
                },
                b: Fragment {
                    items: 16,
                    row: affine(0, 0, 1),
                    column: LANE,
                },
                accumulator: Fragment {
                    items: 8,
                    row: affine(0, 1, 2),
                    column: LANE,
                },
                calls: 1,
                operand_items: 16,
                intrinsic: "llvm.amdgcn.wmma.f32.16x16x16.f16",
            },
            // As `f16`: 4 consecutive k of `i8` per lane, one 32-bit register.
            Mfma16x16x16I8 => Layout {
                intrinsic: "llvm.amdgcn.mfma.i32.16x16x16i8",
                ..Mfma16x16x16F16.layout()
            },
            // The k32 instruction takes 8 consecutive k per lane: items 0-3 are the tile's k
            // 4 (l / 16) + v, items 4-7 zeros (k 8 (l / 16) + 4.. of the instruction).
            Mfma16x16x32I8 => Layout {
                operand_items: 8,
                intrinsic: "llvm.amdgcn.mfma.i32.16x16x32.i8",
                ..Mfma16x16x16F16.layout()
            },
            // As `f16`: a whole row of `A` and column of `B` per lane, 16 `i8` in 4 registers.
            Wmma16x16x16Iu8Wave32 => Layout {
                intrinsic: "llvm.amdgcn.wmma.i32.16x16x16.iu8",
                ..Wmma16x16x16F16Wave32.layout()
            },
            // As `f16`, the `bf16` inputs as their 16 bits.
            Mfma16x16x16Bf16 => Layout {
                intrinsic: "llvm.amdgcn.mfma.f32.16x16x16bf16.1k",
                ..Mfma16x16x16F16.layout()
            },
            Wmma16x16x16Bf16Wave32 => Layout {
                intrinsic: "llvm.amdgcn.wmma.f32.16x16x16.bf16",
                ..Wmma16x16x16F16Wave32.layout()
            },
        }
    }

    /// MFMA takes three immediate operands (`cbsz`, `abid`, `blgp`: no broadcast), WMMA none.
    fn is_mfma(self) -> bool {
        !matches!(
            self,
            AmdgpuMatrixInstruction::Wmma16x16x16F16Wave32
                | AmdgpuMatrixInstruction::Wmma16x16x16Iu8Wave32
                | AmdgpuMatrixInstruction::Wmma16x16x16Bf16Wave32
        )
    }
}

impl Layout {
    fn fragment(&self, role: MatrixRole) -> Fragment {
        match role {
            MatrixRole::A => self.a,
            MatrixRole::B => self.b,
            MatrixRole::Accumulator => self.accumulator,
        }
    }
}

impl<'ctx> FunctionLowering<'_, 'ctx> {
    pub(super) fn amdgpu_matrix(
        &mut self,
        op: &MatrixOp,
        instruction: AmdgpuMatrixInstruction,
    ) -> Result<()> {
        let layout = instruction.layout();
        match op {
            MatrixOp::Load {
                shape,
                role,
                tile,
                memory,
                offset,
                stride,
            } => {
                let fragment = layout.fragment(*role);
                let element = shape.element(*role);
                let round = element == ScalarType::F32 && *role != MatrixRole::Accumulator;
                let addresses =
                    self.fragment_addresses(&layout, fragment, memory, offset, stride)?;
                let memory_type = self.types.memory(memory.element);
                for (item, address) in addresses.into_iter().enumerate() {
                    let value = self.builder.build_load(memory_type, address, "")?;
                    aligned(value, element)?;
                    // tf32 inputs are rounded as they are loaded, so the unit sees exact tf32.
                    let value = if round {
                        self.round_tf32(value.into_float_value())?
                    } else {
                        value
                    };
                    self.store_item(*tile, element, item as u32, value)?;
                }
                Ok(())
            }
            MatrixOp::Store {
                shape,
                tile,
                memory,
                offset,
                stride,
            } => {
                let fragment = layout.accumulator;
                let addresses =
                    self.fragment_addresses(&layout, fragment, memory, offset, stride)?;
                for (item, address) in addresses.into_iter().enumerate() {
                    let value = self.load_item(*tile, shape.accumulator(), item as u32)?;
                    let store = self.builder.build_store(address, value)?;
                    store
                        .set_alignment(4)
                        .map_err(|e| LowerError(e.to_string()))?;
                }
                Ok(())
            }
            MatrixOp::Fill { shape, tile, value } => {
                let value = self.expression(value)?;
                for item in 0..layout.accumulator.items {
                    self.store_item(*tile, shape.accumulator(), item, value)?;
                }
                Ok(())
            }
            MatrixOp::MultiplyAdd { shape, d, a, b, c } => {
                let (input, accumulator_element) = (shape.input(), shape.accumulator());
                let per_call = layout.a.items / layout.calls;
                let mut accumulator =
                    self.fragment_vector(*c, accumulator_element, 0, layout.accumulator.items)?;
                for call in 0..layout.calls {
                    let first = call * per_call;
                    let a = self.operand(*a, input, first, per_call, layout.operand_items)?;
                    let b = self.operand(*b, input, first, per_call, layout.operand_items)?;
                    let (arguments, overloads): (Vec<BasicValueEnum>, Vec<BasicTypeEnum>) =
                        if instruction.is_mfma() {
                            let zero: BasicValueEnum = self.i32_constant(0).into();
                            (vec![a, b, accumulator, zero, zero, zero], Vec::new())
                        } else if input.is_integer() {
                            // Signedness of `A` and `B`, and no clamping: the sum wraps.
                            let bool_type = self.context.bool_type();
                            let signed = bool_type
                                .const_int(u64::from(input.is_signed_integer()), false)
                                .into();
                            let clamp = bool_type.const_zero().into();
                            let arguments = vec![signed, a, signed, b, accumulator, clamp];
                            (arguments, vec![accumulator.get_type(), a.get_type()])
                        } else {
                            (
                                vec![a, b, accumulator],
                                vec![accumulator.get_type(), a.get_type()],
                            )
                        };
                    accumulator = self.call_intrinsic(layout.intrinsic, &overloads, &arguments)?;
                }
                let accumulator = accumulator.into_vector_value();
                for item in 0..layout.accumulator.items {
                    let index = self.i32_constant(u64::from(item));
                    let value = self.builder.build_extract_element(accumulator, index, "")?;
                    self.store_item(*d, accumulator_element, item, value)?;
                }
                Ok(())
            }
            MatrixOp::GroupMultiplyAdd { .. } | MatrixOp::GroupWait { .. } => Err(LowerError(
                "matrix-group tiles reach AMDGPU as their plain definition".into(),
            )),
        }
    }

    /// The address of each of the lane's fragment elements in `memory`: element (r, c) of the
    /// tile is `memory[offset + r * stride + c]`, in wrapping `u32` arithmetic as the plain
    /// lowering computes it.
    fn fragment_addresses(
        &mut self,
        layout: &Layout,
        fragment: Fragment,
        memory: &MatrixMemory,
        offset: &Expression,
        stride: &Expression,
    ) -> Result<Vec<PointerValue<'ctx>>> {
        let offset = self.expression(offset)?.into_int_value();
        let stride = self.expression(stride)?.into_int_value();
        let lane = self.hardware_lane(layout.lanes)?;
        let b = &self.builder;
        let in_group = b.build_and(lane, self.i32_constant(15), "")?;
        let group = b.build_right_shift(lane, self.i32_constant(4), false, "")?;
        let place = Place {
            id: kdsl_ir::PlaceId::UNNUMBERED,
            base: memory.base,
            indices: Vec::new(),
            element: memory.element,
            space: memory.space,
            field: None,
        };
        let mut addresses = Vec::with_capacity(fragment.items as usize);
        for item in 0..fragment.items {
            let row = self.affine_value(fragment.row, in_group, group, item)?;
            let column = self.affine_value(fragment.column, in_group, group, item)?;
            let b = &self.builder;
            let index = b.build_int_mul(row, stride, "")?;
            let index = b.build_int_add(index, column, "")?;
            let index = b.build_int_add(offset, index, "")?;
            let index = b.build_int_z_extend(index, self.context.i64_type(), "")?;
            addresses.push(self.element_address(&place, &[index])?);
        }
        Ok(addresses)
    }

    fn affine_value(
        &self,
        affine: Affine,
        in_group: IntValue<'ctx>,
        group: IntValue<'ctx>,
        item: u32,
    ) -> Result<IntValue<'ctx>> {
        let b = &self.builder;
        let mut value = self.i32_constant(u64::from(item * affine.item));
        for (coefficient, part) in [(affine.lane, in_group), (affine.group, group)] {
            if coefficient != 0 {
                let scaled =
                    b.build_int_mul(part, self.i32_constant(u64::from(coefficient)), "")?;
                value = b.build_int_add(value, scaled, "")?;
            }
        }
        Ok(value)
    }

    /// The work-item's lane in its wavefront of `lanes`, counting inactive lanes too.
    fn hardware_lane(&self, lanes: u32) -> Result<IntValue<'ctx>> {
        let all = self.context.i32_type().const_all_ones();
        let low = self.call_intrinsic(
            "llvm.amdgcn.mbcnt.lo",
            &[],
            &[all.into(), self.i32_constant(0).into()],
        )?;
        if lanes <= 32 {
            return Ok(low.into_int_value());
        }
        Ok(self
            .call_intrinsic("llvm.amdgcn.mbcnt.hi", &[], &[all.into(), low])?
            .into_int_value())
    }

    /// The tile's array as a pointer to its first element.
    fn amdgpu_tile_pointer(&self, tile: PlaceBase) -> Result<PointerValue<'ctx>> {
        match tile {
            PlaceBase::Variable(id) => Ok(self.variables[id.0 as usize].pointer),
            PlaceBase::Parameter(id) => match self.parameters.get(id.0 as usize) {
                Some(ParameterValue::Array(pointer)) => Ok(*pointer),
                _ => Err(LowerError(format!("parameter %{} is not a tile", id.0))),
            },
        }
    }

    fn item_pointer(
        &self,
        tile: PlaceBase,
        element: ScalarType,
        item: u32,
    ) -> Result<PointerValue<'ctx>> {
        let base = self.amdgpu_tile_pointer(tile)?;
        let index = self.context.i64_type().const_int(u64::from(item), false);
        // SAFETY: a tile's array holds the whole tile, more elements than any fragment.
        Ok(unsafe {
            self.builder
                .build_in_bounds_gep(self.types.memory(element), base, &[index], "")?
        })
    }

    fn store_item(
        &self,
        tile: PlaceBase,
        element: ScalarType,
        item: u32,
        value: BasicValueEnum<'ctx>,
    ) -> Result<()> {
        let pointer = self.item_pointer(tile, element, item)?;
        let store = self.builder.build_store(pointer, value)?;
        store
            .set_alignment(element.size_in_bytes())
            .map_err(|e| LowerError(e.to_string()))?;
        Ok(())
    }

    fn load_item(
        &self,
        tile: PlaceBase,
        element: ScalarType,
        item: u32,
    ) -> Result<BasicValueEnum<'ctx>> {
        let pointer = self.item_pointer(tile, element, item)?;
        let value = self
            .builder
            .build_load(self.types.memory(element), pointer, "")?;
        aligned(value, element)?;
        Ok(value)
    }

    /// Items `first..first + count` of a fragment as one instruction operand: a scalar for
    /// one item, else a vector.
    fn fragment_vector(
        &self,
        tile: PlaceBase,
        element: ScalarType,
        first: u32,
        count: u32,
    ) -> Result<BasicValueEnum<'ctx>> {
        if count == 1 {
            return self.load_item(tile, element, first);
        }
        let vector_type = self.types.vector(element, count as u8);
        let mut vector = vector_type.get_poison();
        for index in 0..count {
            let value = self.load_item(tile, element, first + index)?;
            let position = self.i32_constant(u64::from(index));
            vector = self
                .builder
                .build_insert_element(vector, value, position, "")?;
        }
        Ok(vector.into())
    }

    /// Items `first..first + count` of an `A` or `B` fragment as the instruction's operand of
    /// `items` elements (zeros after `count`): floats as the fragment vector, 8-bit integers
    /// packed into a 32- or 64-bit integer or a vector of 32-bit ones.
    fn operand(
        &self,
        tile: PlaceBase,
        element: ScalarType,
        first: u32,
        count: u32,
        items: u32,
    ) -> Result<BasicValueEnum<'ctx>> {
        if !element.is_integer() {
            return self.fragment_vector(tile, element, first, count);
        }
        let element_type = self.types.memory(element).into_int_type();
        let mut vector = element_type.vec_type(items).const_zero();
        for index in 0..count {
            let value = self.load_item(tile, element, first + index)?;
            let position = self.i32_constant(u64::from(index));
            vector = self
                .builder
                .build_insert_element(vector, value, position, "")?;
        }
        let packed: BasicTypeEnum = match items {
            4 => self.context.i32_type().into(),
            8 => self.context.i64_type().into(),
            _ => self.context.i32_type().vec_type(items / 4).into(),
        };
        Ok(self.builder.build_bit_cast(vector, packed, "")?)
    }
}

/// Gives a load of a tile or memory element its element's alignment.
fn aligned(value: BasicValueEnum<'_>, element: ScalarType) -> Result<()> {
    if let Some(instruction) = value.as_instruction_value() {
        instruction
            .set_alignment(element.size_in_bytes())
            .map_err(|e| LowerError(e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
