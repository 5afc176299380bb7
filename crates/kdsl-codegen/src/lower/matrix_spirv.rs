//! Matrix tiles on Intel GPUs' matrix engines through `SPV_KHR_cooperative_matrix`
//! (`MatrixUnits::CooperativeMatrix`).
//!
//! A tile is a grid of cooperative matrices of the engine's shape (`CooperativeMatrixUnit`: on
//! PVC an m16n16k16 `A` is two 8 x 16 matrices, `B` one 16 x 16, the accumulator two 8 x 16),
//! each an LLVM `target("spirv.CooperativeMatrixKHR", T, 3 (sub-group), rows, columns, use)`
//! value that the SPIR-V backend turns into `OpTypeCooperativeMatrixKHR`. Piece `p` of the grid
//! (row-major) is stored at index `p` of the tile's private array viewed as an array of that
//! type; nothing else of the array is touched, so SROA keeps the pieces in registers. Loads,
//! stores, fills and products are calls of the `__spirv_CooperativeMatrix*KHR` and
//! `__spirv_CompositeConstruct` builtins the backend knows. Inkwell has no target extension
//! types, so these values are handled through LLVM's C API.

use super::{FunctionLowering, LowerError, Result};
use crate::target::CooperativeMatrixUnit;
use inkwell::llvm_sys::core::{
    LLVMAddFunction, LLVMBuildCall2, LLVMBuildInBoundsGEP2, LLVMBuildLoad2, LLVMBuildStore,
    LLVMFunctionType, LLVMGetNamedFunction, LLVMGlobalGetValueType, LLVMSetAlignment,
    LLVMSetInstructionCallConv, LLVMTargetExtTypeInContext,
};
use inkwell::llvm_sys::prelude::{LLVMTypeRef, LLVMValueRef};
use inkwell::types::AsTypeRef;
use inkwell::values::{AsValueRef, BasicValueEnum, FunctionValue, IntValue, PointerValue};
use kdsl_ir::{MatrixMemory, MatrixOp, MatrixRole, MatrixShape, PlaceBase, ScalarType};
use std::ffi::CString;

/// `RowMajorKHR`, the layout of every tile in memory.
const ROW_MAJOR: u64 = 0;

/// How a tile of one role splits into cooperative matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Grid {
    /// Pieces down and across the tile.
    pieces: (u32, u32),
    /// Rows and columns of one piece.
    piece: (u32, u32),
}

impl Grid {
    fn of(shape: MatrixShape, role: MatrixRole, unit: CooperativeMatrixUnit) -> Grid {
        let (rows, columns) = shape.dimensions(role);
        let piece = match role {
            MatrixRole::A => (unit.m, unit.k),
            MatrixRole::B => (unit.k, unit.n),
            MatrixRole::Accumulator => (unit.m, unit.n),
        };
        Grid {
            pieces: (rows / piece.0, columns / piece.1),
            piece,
        }
    }

    /// Piece (i, j)'s index in the tile's array of cooperative matrices.
    fn index(self, i: u32, j: u32) -> u32 {
        i * self.pieces.1 + j
    }

    /// Every piece as (i, j), row-major.
    fn pieces(self) -> impl Iterator<Item = (u32, u32)> {
        let (down, across) = self.pieces;
        (0..down).flat_map(move |i| (0..across).map(move |j| (i, j)))
    }
}

/// The `use` operand of a cooperative matrix type: `MatrixAKHR`, `MatrixBKHR`,
/// `MatrixAccumulatorKHR`.
fn matrix_use(role: MatrixRole) -> u32 {
    match role {
        MatrixRole::A => 0,
        MatrixRole::B => 1,
        MatrixRole::Accumulator => 2,
    }
}

/// The Itanium code of an element type in builtin names (`bf16` travels as `i16`).
fn mangled(element: ScalarType) -> Result<&'static str> {
    Ok(match element {
        ScalarType::F16 => "Dh",
        ScalarType::Bf16 | ScalarType::I16 => "s",
        ScalarType::F32 => "f",
        ScalarType::I32 => "i",
        ScalarType::I8 => "a",
        ScalarType::U8 => "h",
        other => {
            return Err(LowerError(format!(
                "no cooperative matrix of `{other}` elements"
            )))
        }
    })
}

impl<'ctx> FunctionLowering<'_, 'ctx> {
    /// One sub-group tile statement on cooperative matrices of `unit`'s shape.
    pub(super) fn cooperative_matrix(
        &mut self,
        op: &MatrixOp,
        unit: CooperativeMatrixUnit,
    ) -> Result<()> {
        match op {
            MatrixOp::Load {
                shape,
                role,
                tile,
                memory,
                offset,
                stride,
            } => {
                let grid = Grid::of(*shape, *role, unit);
                let element = shape.element(*role);
                let matrix = self.cooperative_type(element, grid, *role);
                let base = self.matrix_element_address(memory, offset)?;
                let stride = self.expression(stride)?.into_int_value();
                let name = self.memory_builtin(
                    "_Z32__spirv_CooperativeMatrixLoadKHR",
                    memory,
                    grid,
                    *role,
                )?;
                let pointer_type = base.get_type().as_type_ref();
                let word = self.context.i32_type().as_type_ref();
                let long = self.context.i64_type().as_type_ref();
                let load = self.builtin(&name, matrix, &mut [pointer_type, word, long], false);
                let wide_stride = self.wide(stride)?;
                let layout = self.word(ROW_MAJOR);
                for (i, j) in grid.pieces() {
                    let pointer = self.piece_pointer(base, memory.element, grid, (i, j), stride)?;
                    let value = self.call_raw(
                        load,
                        &mut [pointer.as_value_ref(), layout, wide_stride.as_value_ref()],
                    );
                    self.store_piece(*tile, element, matrix, grid.index(i, j), value)?;
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
                let role = MatrixRole::Accumulator;
                let grid = Grid::of(*shape, role, unit);
                let element = shape.accumulator();
                let matrix = self.cooperative_type(element, grid, role);
                let base = self.matrix_element_address(memory, offset)?;
                let stride = self.expression(stride)?.into_int_value();
                let name = self.memory_builtin(
                    "_Z33__spirv_CooperativeMatrixStoreKHR",
                    memory,
                    grid,
                    role,
                )?;
                let pointer_type = base.get_type().as_type_ref();
                let word = self.context.i32_type().as_type_ref();
                let long = self.context.i64_type().as_type_ref();
                let void = self.context.void_type().as_type_ref();
                let store =
                    self.builtin(&name, void, &mut [pointer_type, matrix, word, long], false);
                let wide_stride = self.wide(stride)?;
                let layout = self.word(ROW_MAJOR);
                for (i, j) in grid.pieces() {
                    let value = self.load_piece(*tile, element, matrix, grid.index(i, j))?;
                    let pointer = self.piece_pointer(base, memory.element, grid, (i, j), stride)?;
                    self.call_raw(
                        store,
                        &mut [
                            pointer.as_value_ref(),
                            value,
                            layout,
                            wide_stride.as_value_ref(),
                        ],
                    );
                }
                Ok(())
            }
            MatrixOp::Fill { shape, tile, value } => {
                let role = MatrixRole::Accumulator;
                let grid = Grid::of(*shape, role, unit);
                let element = shape.accumulator();
                let matrix = self.cooperative_type(element, grid, role);
                let value = self.expression(value)?;
                let filled = self.construct(element, grid, role, matrix, value)?;
                for (i, j) in grid.pieces() {
                    self.store_piece(*tile, element, matrix, grid.index(i, j), filled)?;
                }
                Ok(())
            }
            MatrixOp::MultiplyAdd { shape, d, a, b, c } => {
                self.cooperative_multiply_add(*shape, unit, [*d, *a, *b, *c])
            }
            MatrixOp::GroupMultiplyAdd { .. } | MatrixOp::GroupWait { .. } => Err(LowerError(
                format!("`{}` is no sub-group tile statement", op.name()),
            )),
        }
    }

    /// Whether a loop is the front end's zeroing of tiles held as cooperative matrices.
    pub(super) fn zeroes_cooperative_tiles(&self, body: &kdsl_ir::Block) -> bool {
        !self.cooperative_tiles.is_empty() && self.cooperative_zeroing(body).is_some()
    }

    /// The tiles (variable, shape, role) a zeroing loop zeroes, where every one is held as
    /// cooperative matrices.
    fn cooperative_zeroing(
        &self,
        body: &kdsl_ir::Block,
    ) -> Option<Vec<(kdsl_ir::VariableId, MatrixShape, MatrixRole)>> {
        let tiles = self.cooperative_tiles.keys().copied().collect();
        let zeroed = kdsl_ir::tile_registers::zeroed_tiles(body, &tiles)?;
        zeroed
            .into_iter()
            .map(|id| {
                let (shape, role) = self.cooperative_tiles.get(&id)?;
                self.target.matrix_units.cooperative_unit(*shape)?;
                Some((id, *shape, *role))
            })
            .collect()
    }

    /// A zeroing loop of cooperative tiles as zero matrices in each tile's pieces: the array's
    /// other elements are never read, and zeroed elements would overlap the pieces and keep
    /// them out of registers.
    pub(super) fn zero_cooperative_tiles(&mut self, body: &kdsl_ir::Block) -> Result<()> {
        let tiles = self
            .cooperative_zeroing(body)
            .ok_or_else(|| LowerError("not a zeroing of cooperative tiles".into()))?;
        for (id, shape, role) in tiles {
            let unit = self
                .target
                .matrix_units
                .cooperative_unit(shape)
                .ok_or_else(|| LowerError(format!("no cooperative unit for {}", shape.name())))?;
            let grid = Grid::of(shape, role, unit);
            let element = shape.element(role);
            let matrix = self.cooperative_type(element, grid, role);
            let zero = self.zero_matrix(element, grid, role, matrix)?;
            for (i, j) in grid.pieces() {
                self.store_piece(
                    PlaceBase::Variable(id),
                    element,
                    matrix,
                    grid.index(i, j),
                    zero,
                )?;
            }
        }
        Ok(())
    }

    /// `__spirv_CompositeConstruct(value)`: a matrix of pieces of `grid` with every element
    /// `value`.
    fn construct(
        &self,
        element: ScalarType,
        grid: Grid,
        role: MatrixRole,
        matrix: LLVMTypeRef,
        value: BasicValueEnum<'ctx>,
    ) -> Result<LLVMValueRef> {
        let name = format!(
            "_Z26__spirv_CompositeConstructILi{}ELi{}ELi{}EEv{}",
            grid.piece.0,
            grid.piece.1,
            matrix_use(role),
            mangled(element)?
        );
        // Pure: an unused zero matrix is deleted.
        let construct = self.builtin(&name, matrix, &mut [value.get_type().as_type_ref()], true);
        Ok(self.call_raw(construct, &mut [value.as_value_ref()]))
    }

    fn zero_matrix(
        &self,
        element: ScalarType,
        grid: Grid,
        role: MatrixRole,
        matrix: LLVMTypeRef,
    ) -> Result<LLVMValueRef> {
        let zero = self.types.memory(element).const_zero();
        self.construct(element, grid, role, matrix, zero)
    }

    /// `d = a * b + c`: each accumulator piece (i, j) is `c`'s plus the products of `A`'s
    /// pieces (i, l) and `B`'s pieces (l, j) in `l` order. `d` may be `c`: piece (i, j) of
    /// `d` depends only on piece (i, j) of `c`.
    fn cooperative_multiply_add(
        &mut self,
        shape: MatrixShape,
        unit: CooperativeMatrixUnit,
        [d, a, b, c]: [PlaceBase; 4],
    ) -> Result<()> {
        let input = shape.input();
        let accumulator = shape.accumulator();
        let (a_grid, b_grid, c_grid) = (
            Grid::of(shape, MatrixRole::A, unit),
            Grid::of(shape, MatrixRole::B, unit),
            Grid::of(shape, MatrixRole::Accumulator, unit),
        );
        let a_type = self.cooperative_type(input, a_grid, MatrixRole::A);
        let b_type = self.cooperative_type(input, b_grid, MatrixRole::B);
        let c_type = self.cooperative_type(accumulator, c_grid, MatrixRole::Accumulator);
        let name = format!(
            "_Z34__spirv_CooperativeMatrixMulAddKHRILi{}ELi{}ELi{}EEv{}{}",
            unit.m,
            unit.n,
            unit.k,
            mangled(input)?,
            mangled(accumulator)?
        );
        let word = self.context.i32_type().as_type_ref();
        let multiply_add = self.builtin(&name, c_type, &mut [a_type, b_type, c_type, word], false);
        // `MatrixMultiplyAccumulateOperands`: none (float components, no saturation).
        let operands = self.word(0);
        for (i, j) in c_grid.pieces() {
            let mut sum = self.load_piece(c, accumulator, c_type, c_grid.index(i, j))?;
            for l in 0..a_grid.pieces.1 {
                let left = self.load_piece(a, input, a_type, a_grid.index(i, l))?;
                let right = self.load_piece(b, input, b_type, b_grid.index(l, j))?;
                sum = self.call_raw(multiply_add, &mut [left, right, sum, operands]);
            }
            self.store_piece(d, accumulator, c_type, c_grid.index(i, j), sum)?;
        }
        Ok(())
    }

    /// `target("spirv.CooperativeMatrixKHR", element, 3, rows, columns, use)` of one piece.
    fn cooperative_type(&self, element: ScalarType, grid: Grid, role: MatrixRole) -> LLVMTypeRef {
        let name = CString::new("spirv.CooperativeMatrixKHR").expect("no NUL");
        let mut types = [self.types.memory(element).as_type_ref()];
        // Scope 3 is `Subgroup`.
        let mut integers = [3, grid.piece.0, grid.piece.1, matrix_use(role)];
        // SAFETY: the context is alive, the name NUL-terminated, the arrays as long as given.
        unsafe {
            LLVMTargetExtTypeInContext(
                self.context.raw(),
                name.as_ptr(),
                types.as_mut_ptr(),
                types.len() as u32,
                integers.as_mut_ptr(),
                integers.len() as u32,
            )
        }
    }

    /// The name of a load or store builtin for pieces of `grid` in `memory`, as a template
    /// instance (`<rows, columns, use>`, one declaration per piece type) whose first
    /// parameter's pointee, the element type, the backend reads from the name: the stride
    /// counts elements of that type.
    fn memory_builtin(
        &self,
        prefix: &str,
        memory: &MatrixMemory,
        grid: Grid,
        role: MatrixRole,
    ) -> Result<String> {
        let space = self.target.address_spaces.of(memory.space);
        Ok(format!(
            "{prefix}ILi{}ELi{}ELi{}EEvPU3AS{space}{}iil",
            grid.piece.0,
            grid.piece.1,
            matrix_use(role),
            mangled(memory.element)?
        ))
    }

    /// The declaration of a convergent builtin, made on first use; a `pure` one reads and
    /// writes no memory and returns (LLVM may delete it when unused).
    fn builtin(
        &self,
        name: &str,
        result: LLVMTypeRef,
        parameters: &mut [LLVMTypeRef],
        pure: bool,
    ) -> LLVMValueRef {
        let c_name = CString::new(name).expect("builtin names have no NUL");
        // SAFETY: the module and the types belong to this lowering's live context.
        unsafe {
            let existing = LLVMGetNamedFunction(self.module.as_mut_ptr(), c_name.as_ptr());
            if !existing.is_null() {
                return existing;
            }
            let function_type =
                LLVMFunctionType(result, parameters.as_mut_ptr(), parameters.len() as u32, 0);
            let function =
                LLVMAddFunction(self.module.as_mut_ptr(), c_name.as_ptr(), function_type);
            if let Some(value) = FunctionValue::new(function) {
                value.set_call_conventions(self.target.device_calling_convention);
                // `memory(none)` is the `memory` attribute with value 0.
                let pure_attributes: &[&str] = if pure { &["willreturn", "memory"] } else { &[] };
                for attribute in ["nounwind", "convergent"].iter().chain(pure_attributes) {
                    value.add_attribute(
                        inkwell::attributes::AttributeLoc::Function,
                        super::enum_attribute(self.context, attribute, 0),
                    );
                }
            }
            function
        }
    }

    fn call_raw(&self, function: LLVMValueRef, arguments: &mut [LLVMValueRef]) -> LLVMValueRef {
        let empty = CString::default();
        // SAFETY: `function` is a declaration of this module whose parameters `arguments`
        // match (made by `builtin` for these calls); the builder is positioned in a block.
        unsafe {
            let call = LLVMBuildCall2(
                self.builder.as_mut_ptr(),
                LLVMGlobalGetValueType(function),
                function,
                arguments.as_mut_ptr(),
                arguments.len() as u32,
                empty.as_ptr(),
            );
            LLVMSetInstructionCallConv(call, self.target.device_calling_convention);
            call
        }
    }

    /// Piece `index` of a tile's array viewed as an array of `matrix` values.
    fn piece_slot(&self, tile: PlaceBase, matrix: LLVMTypeRef, index: u32) -> Result<LLVMValueRef> {
        let base = self.tile_pointer(tile)?;
        let empty = CString::default();
        let mut indices = [self
            .context
            .i64_type()
            .const_int(u64::from(index), false)
            .as_value_ref()];
        // SAFETY: as in `call_raw`; a tile's array (at least 128 bytes) holds its few pieces
        // (8 bytes each in the data layout).
        Ok(unsafe {
            LLVMBuildInBoundsGEP2(
                self.builder.as_mut_ptr(),
                matrix,
                base.as_value_ref(),
                indices.as_mut_ptr(),
                1,
                empty.as_ptr(),
            )
        })
    }

    fn store_piece(
        &self,
        tile: PlaceBase,
        element: ScalarType,
        matrix: LLVMTypeRef,
        index: u32,
        value: LLVMValueRef,
    ) -> Result<()> {
        let slot = self.piece_slot(tile, matrix, index)?;
        // SAFETY: as in `piece_slot`.
        unsafe {
            let store = LLVMBuildStore(self.builder.as_mut_ptr(), value, slot);
            LLVMSetAlignment(store, element.size_in_bytes());
        }
        Ok(())
    }

    fn load_piece(
        &self,
        tile: PlaceBase,
        element: ScalarType,
        matrix: LLVMTypeRef,
        index: u32,
    ) -> Result<LLVMValueRef> {
        let slot = self.piece_slot(tile, matrix, index)?;
        let empty = CString::default();
        // SAFETY: as in `piece_slot`.
        unsafe {
            let load = LLVMBuildLoad2(self.builder.as_mut_ptr(), matrix, slot, empty.as_ptr());
            LLVMSetAlignment(load, element.size_in_bytes());
            Ok(load)
        }
    }

    /// The address of piece (i, j)'s first element: `base` advanced by
    /// `i * rows * stride + j * columns` elements.
    fn piece_pointer(
        &mut self,
        base: PointerValue<'ctx>,
        element: ScalarType,
        grid: Grid,
        (i, j): (u32, u32),
        stride: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>> {
        if (i, j) == (0, 0) {
            return Ok(base);
        }
        let word = self.context.i32_type();
        let rows = self.builder.build_int_mul(
            stride,
            word.const_int(u64::from(i * grid.piece.0), false),
            "",
        )?;
        let index = self.builder.build_int_add(
            rows,
            word.const_int(u64::from(j * grid.piece.1), false),
            "",
        )?;
        let wide = self.wide(index)?;
        // SAFETY: the tile lies inside `memory` (the statement's contract, as for the
        // plain lowering's accesses).
        Ok(unsafe {
            self.builder
                .build_in_bounds_gep(self.types.memory(element), base, &[wide], "")?
        })
    }

    /// A `u32` widened to the `i64` the builtins take.
    fn wide(&self, value: IntValue<'ctx>) -> Result<IntValue<'ctx>> {
        Ok(self
            .builder
            .build_int_z_extend(value, self.context.i64_type(), "")?)
    }

    fn word(&self, value: u64) -> LLVMValueRef {
        let constant: BasicValueEnum = self.context.i32_type().const_int(value, false).into();
        constant.as_value_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_split_into_the_engines_matrices() {
        let pvc = CooperativeMatrixUnit { m: 8, n: 16, k: 16 };
        let shape = MatrixShape::F16M16N16K16;
        let a = Grid::of(shape, MatrixRole::A, pvc);
        assert_eq!((a.pieces, a.piece), ((2, 1), (8, 16)));
        let b = Grid::of(shape, MatrixRole::B, pvc);
        assert_eq!((b.pieces, b.piece), ((1, 1), (16, 16)));
        let dg2 = CooperativeMatrixUnit { m: 8, n: 8, k: 16 };
        let c = Grid::of(shape, MatrixRole::Accumulator, dg2);
        assert_eq!((c.pieces, c.piece), ((2, 2), (8, 8)));
        assert_eq!(
            c.pieces().collect::<Vec<_>>(),
            [(0, 0), (0, 1), (1, 0), (1, 1)]
        );
        assert_eq!(c.index(1, 0), 2);
    }
}
