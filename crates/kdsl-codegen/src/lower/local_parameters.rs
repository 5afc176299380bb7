//! Launch-sized local arrays (`tile: local mut [f32]` kernel parameters), as the target
//! description says they arrive: a local pointer parameter (SPIR-V), or a `u32` byte offset
//! into the launch's dynamic local memory (NVPTX `extern .shared`, AMDGPU dynamic LDS).

use super::{LowerError, Types};
use crate::target::{LocalParameterLowering, TargetDescription};
use inkwell::builder::Builder;
use inkwell::module::{Linkage, Module};
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{IntValue, PointerValue};
use inkwell::AddressSpace as LlvmAddressSpace;
use kdsl_ir::{AddressSpace, FunctionKind, Parameter, ParameterType};

/// The external, zero-length local array whose address is the start of the launch's dynamic
/// local memory: what CUDA's `extern __shared__` and HIP's `HIP_DYNAMIC_SHARED` declare.
pub(crate) const DYNAMIC_LOCAL: &str = "kdsl_dynamic_local";

/// The alignment of the dynamic local memory's start; the runtime's offsets keep it
/// (`kdsl_runtime::LOCAL_ALIGNMENT`).
const DYNAMIC_LOCAL_ALIGNMENT: u32 = 16;

/// True for a kernel parameter that arrives as an offset into dynamic local memory.
pub(crate) fn arrives_as_offset(
    target: &TargetDescription,
    kind: FunctionKind,
    parameter: &Parameter,
) -> bool {
    kind == FunctionKind::Kernel
        && target.local_parameters == LocalParameterLowering::DynamicOffset
        && matches!(
            parameter.ty,
            ParameterType::Buffer {
                space: AddressSpace::Local,
                ..
            }
        )
}

/// The LLVM type of an offset parameter.
pub(crate) fn offset_type<'ctx>(types: &Types<'ctx>) -> BasicMetadataTypeEnum<'ctx> {
    types.context.i32_type().into()
}

/// The local pointer `offset` bytes into the launch's dynamic local memory.
pub(crate) fn pointer_at_offset<'ctx>(
    module: &Module<'ctx>,
    builder: &Builder<'ctx>,
    types: &Types<'ctx>,
    target: &TargetDescription,
    local_alignment: u32,
    offset: IntValue<'ctx>,
    name: &str,
) -> Result<PointerValue<'ctx>, LowerError> {
    let byte = types.context.i8_type();
    let base = match module.get_global(DYNAMIC_LOCAL) {
        Some(global) => global,
        None => {
            let space = LlvmAddressSpace::from(target.address_spaces.local);
            let global = module.add_global(byte.array_type(0), Some(space), DYNAMIC_LOCAL);
            global.set_linkage(Linkage::External);
            // As the module's local arrays (1024 bytes where matrix groups read tiles).
            let alignment = DYNAMIC_LOCAL_ALIGNMENT.max(local_alignment);
            global.set_alignment(alignment);
            global
        }
    };
    let offset = builder.build_int_z_extend(offset, types.context.i64_type(), "")?;
    // Not `inbounds`: the declared array has no length, the launch gives its memory.
    // SAFETY: a byte GEP with one index on a pointer, which is all `build_gep` requires.
    let pointer = unsafe { builder.build_gep(byte, base.as_pointer_value(), &[offset], name) }?;
    Ok(pointer)
}
