//! The one lowering from kdsl IR to LLVM IR. Target differences come from the
//! [`TargetDescription`]; this module and its children never test which target it is.
//!
//! - `mod.rs`: declarations (kernel ABI, parameter attributes, local-memory globals) and types.
//! - `statement.rs`: structured control flow and variables.
//! - `expression.rs`: operators, casts, calls.
//! - `bf16.rs`: `bf16` as `i16`, computed in `f32`: every conversion between the two.
//! - `memory.rs`: places, loads, stores, atomics.
//! - `builtins.rs`: work-item queries, barriers, math.
//! - `collectives.rs`: sub-group and work-group collectives.
//! - `checked.rs`: checked mode's hidden parameters, bounds and division checks.
//! - `inlining.rs`: which device functions are inlined, within a size budget.
//! - `print.rs`: `print` as the target's C `printf`.

mod async_copy;
mod bf16;
mod builtins;
pub(crate) mod checked;
pub(crate) mod collectives;
mod expression;
mod inlining;
mod local_parameters;
mod matrix;
pub(crate) mod matrix_amdgpu;
mod matrix_group;
mod matrix_group_warps;
mod matrix_spirv;
mod memory;
mod print;
mod shaped;
mod statement;
pub(crate) mod tile_copy;

pub(crate) use builtins::{opencl_work_item_function, WORK_ITEM_QUERIES};

use crate::target::{SizeFormat, TargetDescription};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum, VectorType};
use inkwell::values::{BasicValueEnum, FunctionValue, PointerValue};
use inkwell::AddressSpace as LlvmAddressSpace;
use kdsl_ir::{AddressSpace, Function, FunctionKind, ParameterType, ScalarType, VariableType};

/// An internal lowering failure: a bug, reported with LLVM's or the builder's message.
#[derive(Debug)]
pub(crate) struct LowerError(pub String);

impl From<BuilderError> for LowerError {
    fn from(error: BuilderError) -> Self {
        LowerError(format!("LLVM builder: {error}"))
    }
}

pub(crate) type Result<T> = std::result::Result<T, LowerError>;

/// The LLVM name of a device function: prefixed so that it never collides with a kernel,
/// a library function or an OpenCL builtin.
fn device_function_name(name: &str) -> String {
    format!("kdsl.{name}")
}

/// Lowers every function of `ir` into `module`, whose triple and data layout are set. Kernel
/// symbols are `entry_point_prefix` followed by the kernel's name. `info`: the module's
/// analyses, read by every target ([`kdsl_ir::ModuleInfo`]), with checked mode's sites
/// (numbered once for all targets) where the module is compiled checked.
pub(crate) fn lower_module<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
    ir: &kdsl_ir::Module,
    target: &TargetDescription,
    entry_point_prefix: &str,
    info: &kdsl_ir::ModuleInfo,
) -> Result<()> {
    let check_sites = info.check_sites.as_ref();
    let checked = check_sites.is_some();
    // In checked mode (whose check sites every image of a bundle numbers alike) matrix tiles
    // become plain loops and asynchronous copies plain loads and stores
    // (`kdsl_ir::analysis::checked_form`). Otherwise tiles become loops without matrix units
    // (`kdsl_ir::matrix`) and stay in registers with them (`kdsl_ir::tile_registers`), and
    // copies are plain where the target cannot copy asynchronously (`kdsl_ir::async_copy`).
    let features = &info.features;
    let mut form = std::borrow::Cow::Borrowed(ir);
    if checked {
        form = kdsl_ir::analysis::checked_form(ir, features);
    } else {
        if features.uses_group_matrix()
            && target.matrix_groups == crate::target::MatrixGroups::Plain
        {
            // The accumulators' zeroing loops unrolled, as the plain definition's loops over
            // them are, so that they stay in registers.
            let zeroed = kdsl_ir::tile_registers::unroll_tile_zeroing(&form);
            form = std::borrow::Cow::Owned(kdsl_ir::matrix::expand_plain_groups(&zeroed));
        }
        if features.uses_matrix() {
            form = std::borrow::Cow::Owned(if target.uses_matrix_units(features) {
                kdsl_ir::tile_registers::unroll_tile_zeroing(&form)
            } else {
                kdsl_ir::matrix::expand_plain_in(&form, target.plain_tile_layout(features))
            });
        }
        if target.async_copies == crate::target::AsyncCopies::Plain && features.uses_async_copies()
        {
            form = std::borrow::Cow::Owned(kdsl_ir::async_copy::expand_plain(&form));
        }
        if features.uses_tile_copies() {
            // Tensor copies stay where the host makes tensor maps; the rest share copies out.
            form = std::borrow::Cow::Owned(kdsl_ir::tile_copy::expand_plain_where(
                &form,
                |function| !target.takes_tensor_maps(&form, function),
            ));
        }
    }
    let ir: &kdsl_ir::Module = &form;
    let types = Types { context };
    // The sites were numbered on the same expansion, so the ids of its nodes find them.
    let plan = check_sites;
    if plan.is_some() {
        checked::define_report_function(context, module, &types, target)?;
    }
    for (flag, value) in &target.module_flags {
        module.add_basic_value_flag(
            flag,
            inkwell::module::FlagBehavior::Error,
            context.i32_type().const_int(u64::from(*value), false),
        );
    }
    let inlined = inlining::inlined_functions(ir, &info.features);
    let mut functions = Vec::with_capacity(ir.functions.len());
    for (index, (function, &inline)) in ir.functions.iter().zip(&inlined).enumerate() {
        functions.push(declare_function(
            context,
            module,
            &types,
            target,
            function,
            Declaration {
                entry_point_prefix,
                checked: plan.is_some(),
                inline,
                synchronizes: features.synchronizes(kdsl_ir::FunctionId(index as u32)),
                // Checked mode runs tiles as plain loops, which need no sub-group size.
                sub_group_size: target
                    .required_sub_group_size(features, kdsl_ir::FunctionId(index as u32))
                    .filter(|_| !checked),
                tensor_maps: tile_copy::hidden_tensor_maps(target, ir, function).len(),
            },
        ));
    }
    let local_alignment = local_array_alignment(ir, target);
    for (index, (function, value)) in ir.functions.iter().zip(&functions).enumerate() {
        let builder = context.create_builder();
        let mut lowering = FunctionLowering::new(
            context,
            module,
            builder,
            target,
            &functions,
            function,
            *value,
            local_alignment,
        )?;
        if let Some(plan) = &plan {
            lowering.checked = Some(checked::CheckedFunction::new(
                plan,
                kdsl_ir::FunctionId(index as u32),
                module,
                &lowering.builder,
                function,
                *value,
            )?);
        }
        lowering.lower_body()?;
    }
    Ok(())
}

/// LLVM types of kdsl scalars.
#[derive(Clone, Copy)]
pub(crate) struct Types<'ctx> {
    pub context: &'ctx Context,
}

impl<'ctx> Types<'ctx> {
    /// The type of a value in registers (`bool` is `i1`).
    pub fn value(&self, ty: ScalarType) -> BasicTypeEnum<'ctx> {
        let c = self.context;
        match ty {
            ScalarType::Bool => c.bool_type().into(),
            ScalarType::I8 | ScalarType::U8 => c.i8_type().into(),
            ScalarType::I16 | ScalarType::U16 => c.i16_type().into(),
            ScalarType::I32 | ScalarType::U32 => c.i32_type().into(),
            ScalarType::I64 | ScalarType::U64 => c.i64_type().into(),
            ScalarType::F16 => c.f16_type().into(),
            // Computed in `f32` (`bf16.rs`), so no target needs a bfloat type.
            ScalarType::Bf16 => c.i16_type().into(),
            ScalarType::F32 => c.f32_type().into(),
            ScalarType::F64 => c.f64_type().into(),
        }
    }

    /// The type of a value in memory and at the kernel ABI (`bool` is a byte).
    pub fn memory(&self, ty: ScalarType) -> BasicTypeEnum<'ctx> {
        match ty {
            ScalarType::Bool => self.context.i8_type().into(),
            other => self.value(other),
        }
    }

    /// A vector of `width` elements of `ty` (never `bool`).
    pub fn vector(&self, ty: ScalarType, width: u8) -> VectorType<'ctx> {
        let width = u32::from(width);
        match self.value(ty) {
            BasicTypeEnum::FloatType(float) => float.vec_type(width),
            other => other.into_int_type().vec_type(width),
        }
    }

    /// A fixed-size array, outermost dimension first.
    pub fn array(&self, ty: &kdsl_ir::ArrayType) -> BasicTypeEnum<'ctx> {
        let mut result = self.memory(ty.element);
        for &dimension in ty.dimensions.iter().rev() {
            result = result.array_type(dimension).into();
        }
        result
    }

    pub fn pointer(&self, space: u16) -> inkwell::types::PointerType<'ctx> {
        self.context.ptr_type(LlvmAddressSpace::from(space))
    }
}

fn enum_attribute(context: &Context, name: &str, value: u64) -> Attribute {
    context.create_enum_attribute(Attribute::get_named_enum_kind_id(name), value)
}

/// How a function is declared besides its signature.
struct Declaration<'a> {
    /// Put before a kernel's name.
    entry_point_prefix: &'a str,
    /// With checked mode's hidden parameters.
    checked: bool,
    /// A device function inlined into every caller (else kept a real function).
    inline: bool,
    /// Its work-items synchronize, in it or in a function it calls
    /// ([`kdsl_ir::analysis::ModuleFeatures::synchronizes`]).
    synchronizes: bool,
    /// The sub-group size a kernel requires (`TargetDescription::required_sub_group_size`).
    sub_group_size: Option<u32>,
    /// How many tensor maps it takes after its parameters (`lower::tile_copy`).
    tensor_maps: usize,
}

fn declare_function<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
    types: &Types<'ctx>,
    target: &TargetDescription,
    function: &Function,
    declaration: Declaration,
) -> FunctionValue<'ctx> {
    let Declaration {
        entry_point_prefix,
        checked,
        inline,
        synchronizes,
        sub_group_size,
        tensor_maps,
    } = declaration;
    let is_kernel = function.kind == FunctionKind::Kernel;
    let mut parameter_types: Vec<BasicMetadataTypeEnum> = function
        .parameters
        .iter()
        .map(|parameter| match parameter.ty {
            _ if local_parameters::arrives_as_offset(target, function.kind, parameter) => {
                local_parameters::offset_type(types)
            }
            ParameterType::Scalar { ty } if is_kernel => types.memory(ty).into(),
            ParameterType::Scalar { ty } => types.value(ty).into(),
            ParameterType::Buffer { space, .. } | ParameterType::Array { space, .. } => {
                types.pointer(target.address_spaces.of(space)).into()
            }
        })
        .collect();
    if checked {
        parameter_types.extend(checked::hidden_parameter_types(types, target, function));
    }
    tile_copy::hidden_parameter_types(context, tensor_maps, &mut parameter_types);
    let function_type = match function.return_type {
        Some(ty) => types.value(ty).fn_type(&parameter_types, false),
        None => context.void_type().fn_type(&parameter_types, false),
    };
    let (name, linkage, convention) = if is_kernel {
        (
            format!("{entry_point_prefix}{}", function.name),
            Linkage::External,
            target.kernel_calling_convention,
        )
    } else {
        (
            device_function_name(&function.name),
            Linkage::Internal,
            target.device_calling_convention,
        )
    };
    let value = module.add_function(&name, function_type, Some(linkage));
    value.set_call_conventions(convention);
    tile_copy::mark_hidden_parameters(context, function, tensor_maps, value);
    value.add_attribute(
        AttributeLoc::Function,
        enum_attribute(context, "nounwind", 0),
    );
    // Barriers and sub-group operations must not be moved across control flow.
    value.add_attribute(
        AttributeLoc::Function,
        enum_attribute(context, "convergent", 0),
    );
    if is_kernel {
        for (key, attribute_value) in &target.kernel_attributes {
            value.add_attribute(
                AttributeLoc::Function,
                context.create_string_attribute(key, attribute_value),
            );
        }
        if let Some(size) = function.work_group_size {
            require_work_group_size(context, target, value, size);
        }
        if let Some(size) = sub_group_size {
            // The SPIR-V backend writes `OpExecutionMode SubgroupSize`.
            let size = context.i32_type().const_int(u64::from(size), false);
            let kind = context.get_kind_id("intel_reqd_sub_group_size");
            // SAFETY: the function, the constant and the context are alive and belong together.
            unsafe {
                use inkwell::llvm_sys::core::{
                    LLVMGlobalSetMetadata, LLVMMDNodeInContext2, LLVMValueAsMetadata,
                };
                use inkwell::values::AsValueRef;
                let mut operands = [LLVMValueAsMetadata(size.as_value_ref())];
                let node = LLVMMDNodeInContext2(context.raw(), operands.as_mut_ptr(), 1);
                LLVMGlobalSetMetadata(value.as_value_ref(), kind, node);
            }
        }
    } else {
        // Above the budget a function stays one, called: LLVM's inliner must not undo that.
        let inlining = if inline { "alwaysinline" } else { "noinline" };
        value.add_attribute(AttributeLoc::Function, enum_attribute(context, inlining, 0));
    }
    for (index, parameter) in function.parameters.iter().enumerate() {
        let location = AttributeLoc::Param(index as u32);
        value.add_attribute(location, enum_attribute(context, "noundef", 0));
        if local_parameters::arrives_as_offset(target, function.kind, parameter) {
            continue;
        }
        if let ParameterType::Buffer {
            element,
            writable,
            ref record,
            space,
        } = parameter.ty
        {
            let alignment = match record {
                Some(record) => record.alignment,
                None => element.size_in_bytes(),
            };
            // The language forbids overlapping buffers in a launch when one is writable, so
            // a kernel's buffers never alias. A device function may get one buffer twice.
            // Memory that work-items share through barriers is not `noalias` either: LLVM
            // takes a call that is not passed a `noalias` pointer (`barrier()`) for one that
            // cannot touch its memory, so it deleted stores before a barrier and forwarded
            // loads across one (fuzzgen seed 9109). That is launch-sized local memory, and a
            // writable buffer of a kernel that synchronizes.
            let shared = space == AddressSpace::Local || (writable && synchronizes);
            if is_kernel && !shared {
                value.add_attribute(location, enum_attribute(context, "noalias", 0));
            }
            // `captures(none)`: the pointer does not escape.
            value.add_attribute(location, enum_attribute(context, "captures", 0));
            if !writable {
                value.add_attribute(location, enum_attribute(context, "readonly", 0));
            }
            value.add_attribute(
                location,
                enum_attribute(context, "align", u64::from(alignment)),
            );
        }
        if let ParameterType::Array { ty, writable, .. } = &parameter.ty {
            value.add_attribute(location, enum_attribute(context, "captures", 0));
            if !writable {
                value.add_attribute(location, enum_attribute(context, "readonly", 0));
            }
            value.add_attribute(
                location,
                enum_attribute(context, "dereferenceable", ty.size_in_bytes()),
            );
        }
    }
    value
}

/// Passes a kernel's `#[work_group_size]` to the backend as the target describes.
fn require_work_group_size<'ctx>(
    context: &'ctx Context,
    target: &TargetDescription,
    kernel: FunctionValue<'ctx>,
    size: [u32; 3],
) {
    let required = &target.required_work_group_size;
    if required.metadata {
        let dimensions = size.map(|d| context.i32_type().const_int(u64::from(d), false).into());
        let node = context.metadata_node(&dimensions);
        kernel
            .as_global_value()
            .set_metadata(node, context.get_kind_id("reqd_work_group_size"));
    }
    for (key, format) in &required.attributes {
        let text = match format {
            SizeFormat::Dimensions => format!("{},{},{}", size[0], size[1], size[2]),
            SizeFormat::FlatRange => {
                let total: u64 = size.iter().map(|&d| u64::from(d)).product();
                format!("{total},{total}")
            }
        };
        kernel.add_attribute(
            AttributeLoc::Function,
            context.create_string_attribute(key, &text),
        );
    }
}

/// Where a parameter's value lives.
#[derive(Clone, Copy)]
pub(crate) enum ParameterValue<'ctx> {
    Scalar(BasicValueEnum<'ctx>),
    Buffer(PointerValue<'ctx>),
    /// A local or private array of the caller, by reference.
    Array(PointerValue<'ctx>),
}

/// Where a variable lives.
#[derive(Clone, Copy)]
pub(crate) struct VariableStorage<'ctx> {
    pub pointer: PointerValue<'ctx>,
    /// The scalar or array type stored at `pointer`.
    pub ty: BasicTypeEnum<'ctx>,
}

/// The branch targets of the innermost loops.
#[derive(Clone, Copy)]
pub(crate) struct LoopTargets<'ctx> {
    pub continuing: BasicBlock<'ctx>,
    pub exit: BasicBlock<'ctx>,
}

/// The state of lowering one function.
pub(crate) struct FunctionLowering<'a, 'ctx> {
    pub context: &'ctx Context,
    pub module: &'a Module<'ctx>,
    pub builder: Builder<'ctx>,
    pub target: &'a TargetDescription,
    pub types: Types<'ctx>,
    pub functions: &'a [FunctionValue<'ctx>],
    pub function: &'a Function,
    pub value: FunctionValue<'ctx>,
    pub parameters: Vec<ParameterValue<'ctx>>,
    pub variables: Vec<VariableStorage<'ctx>>,
    pub loops: Vec<LoopTargets<'ctx>>,
    /// The hidden parameters of a checked module's function; `None` when unchecked.
    pub checked: Option<checked::CheckedFunction<'a, 'ctx>>,
    /// The tile variables held as cooperative matrices (`lower::matrix_spirv`), with their
    /// shape and role; empty on other targets.
    pub cooperative_tiles:
        std::collections::HashMap<kdsl_ir::VariableId, (kdsl_ir::MatrixShape, kdsl_ir::MatrixRole)>,
    /// A kernel's sub-group and matrix-group indices, by group size, computed once in its
    /// entry block (`lower::collectives`).
    pub group_indices: Vec<(u32, inkwell::values::IntValue<'ctx>)>,
    /// With tensor copies: the phase each slot's copies are waited in, one bit a slot, a
    /// private `i32` of the kernel (`lower::tile_copy`).
    pub tile_phases: Option<inkwell::values::PointerValue<'ctx>>,
}

impl<'a, 'ctx> FunctionLowering<'a, 'ctx> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        context: &'ctx Context,
        module: &'a Module<'ctx>,
        builder: Builder<'ctx>,
        target: &'a TargetDescription,
        functions: &'a [FunctionValue<'ctx>],
        function: &'a Function,
        value: FunctionValue<'ctx>,
        local_alignment: u32,
    ) -> Result<Self> {
        let types = Types { context };
        let entry = context.append_basic_block(value, "entry");
        builder.position_at_end(entry);
        let mut parameters = Vec::with_capacity(function.parameters.len());
        for (index, parameter) in function.parameters.iter().enumerate() {
            let llvm = value
                .get_nth_param(index as u32)
                .ok_or_else(|| LowerError(format!("parameter {index} is missing")))?;
            llvm.set_name(&parameter.name);
            parameters.push(match parameter.ty {
                ParameterType::Scalar {
                    ty: ScalarType::Bool,
                } if function.kind == FunctionKind::Kernel => {
                    // Kernel `bool`s arrive as a byte.
                    let byte = llvm.into_int_value();
                    let truth = builder.build_int_compare(
                        inkwell::IntPredicate::NE,
                        byte,
                        byte.get_type().const_zero(),
                        &parameter.name,
                    )?;
                    ParameterValue::Scalar(truth.into())
                }
                ParameterType::Scalar { .. } => ParameterValue::Scalar(llvm),
                ParameterType::Buffer { .. }
                    if local_parameters::arrives_as_offset(target, function.kind, parameter) =>
                {
                    ParameterValue::Buffer(local_parameters::pointer_at_offset(
                        module,
                        &builder,
                        &types,
                        target,
                        local_alignment,
                        llvm.into_int_value(),
                        &format!("{}.local", parameter.name),
                    )?)
                }
                ParameterType::Buffer { .. } => ParameterValue::Buffer(llvm.into_pointer_value()),
                ParameterType::Array { .. } => ParameterValue::Array(llvm.into_pointer_value()),
            });
        }
        let mut variables = Vec::with_capacity(function.variables.len());
        for variable in &function.variables {
            let ty = match &variable.ty {
                VariableType::Scalar { ty } => types.value(*ty),
                VariableType::Array { ty } => types.array(ty),
            };
            let pointer = match variable.space {
                AddressSpace::Local => {
                    let space = target.address_spaces.local;
                    let global = module.add_global(
                        ty,
                        Some(LlvmAddressSpace::from(space)),
                        &format!("{}.{}", function.name, variable.name),
                    );
                    global.set_linkage(Linkage::Internal);
                    global.set_initializer(&poison(ty));
                    global.set_alignment(alignment_of(&variable.ty).max(local_alignment));
                    global.as_pointer_value()
                }
                _ => {
                    let pointer = builder.build_alloca(ty, &variable.name)?;
                    if let Some(instruction) = pointer.as_instruction() {
                        instruction
                            .set_alignment(alignment_of(&variable.ty))
                            .map_err(|e| LowerError(e.to_string()))?;
                    }
                    pointer
                }
            };
            variables.push(VariableStorage { pointer, ty });
        }
        Ok(FunctionLowering {
            context,
            module,
            builder,
            target,
            types,
            functions,
            function,
            value,
            parameters,
            variables,
            loops: Vec::new(),
            group_indices: Vec::new(),
            tile_phases: None,
            cooperative_tiles: match target.matrix_units {
                crate::target::MatrixUnits::CooperativeMatrix(_) => {
                    kdsl_ir::tile_registers::tile_roles(function)
                }
                _ => Default::default(),
            },
            checked: None,
        })
    }

    fn lower_body(&mut self) -> Result<()> {
        let body = self.context.append_basic_block(self.value, "body");
        self.builder.build_unconditional_branch(body)?;
        self.builder.position_at_end(body);
        self.start_tile_slots()?;
        self.block(&self.function.body)?;
        if !self.is_terminated() {
            match self.function.return_type {
                None => {
                    self.finish_tile_stores()?;
                    self.builder.build_return(None)?;
                }
                // In checked mode a loop left after a fault can reach the end: give 0.
                Some(ty) if self.checked.is_some() => {
                    let zero = self.types.value(ty).const_zero();
                    self.builder.build_return(Some(&zero))?;
                }
                // The front end rejects a function that can fall off its end without a value.
                Some(_) => {
                    self.builder.build_unreachable()?;
                }
            }
        }
        Ok(())
    }

    /// Whether the current block already ends in a branch or return.
    pub fn is_terminated(&self) -> bool {
        self.builder
            .get_insert_block()
            .and_then(|block| block.get_terminator())
            .is_some()
    }

    /// Continues in a fresh block without predecessors after a `break`, `continue` or
    /// `return`, so that statements after them still have somewhere to go.
    pub fn continue_in_dead_block(&mut self) {
        let dead = self.context.append_basic_block(self.value, "dead");
        self.builder.position_at_end(dead);
    }

    pub fn new_block(&self, name: &str) -> BasicBlock<'ctx> {
        self.context.append_basic_block(self.value, name)
    }
}

fn poison(ty: BasicTypeEnum<'_>) -> BasicValueEnum<'_> {
    match ty {
        BasicTypeEnum::ArrayType(t) => t.get_poison().into(),
        BasicTypeEnum::FloatType(t) => t.get_poison().into(),
        BasicTypeEnum::IntType(t) => t.get_poison().into(),
        BasicTypeEnum::PointerType(t) => t.get_poison().into(),
        BasicTypeEnum::StructType(t) => t.get_poison().into(),
        BasicTypeEnum::VectorType(t) => t.get_poison().into(),
        BasicTypeEnum::ScalableVectorType(t) => t.get_poison().into(),
    }
}

/// Arrays are 16-byte aligned so the backend may use wide accesses; scalars naturally.
/// The alignment of every local array of a module (`ir`, after the expansions) whose matrix
/// statements reach `target`'s units, since an array may reach them through calls: 32 bytes,
/// where the tensor cores read and write sub-group tiles; 1024 bytes, the swizzle's period,
/// where matrix groups read tiles (wgmma's swizzle follows address bits) or tensor copies
/// write them (so does theirs). 1 otherwise.
fn local_array_alignment(ir: &kdsl_ir::Module, target: &TargetDescription) -> u32 {
    let unexpanded = kdsl_ir::analysis::ModuleFeatures::new(ir);
    let tensor_copies = unexpanded.uses_tile_copies()
        && target.tile_copies == crate::target::TileCopies::TensorMaps;
    if tensor_copies
        || (unexpanded.uses_group_matrix()
            && target.matrix_groups != crate::target::MatrixGroups::Plain)
    {
        kdsl_ir::matrix_group::TILE_ALIGNMENT_BYTES
    } else if unexpanded.uses_matrix() {
        32
    } else {
        1
    }
}

fn alignment_of(ty: &VariableType) -> u32 {
    match ty {
        VariableType::Scalar { ty } => ty.size_in_bytes(),
        VariableType::Array { ty } => ty.element.size_in_bytes().max(16),
    }
}
