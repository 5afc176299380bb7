//! `print`: one C `printf` call, in the form the target description's [`PrintfLowering`]
//! names. The format and the argument promotions come from `kdsl_ir::print_format`, so every
//! target writes the text the interpreter writes.

use super::{FunctionLowering, LowerError, Result};
use crate::target::PrintfLowering;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Linkage;
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValueEnum, FunctionValue, IntValue, PointerValue,
};
use inkwell::AddressSpace as LlvmAddressSpace;
use kdsl_ir::print_format::{c_format, c_format_with_bools, PrintfArgument};
use kdsl_ir::{Expression, ScalarType};

/// How many `bool` arguments of one `print` `vprintf` gets written into its format (one format
/// per combination of their values); later ones are passed as `%s` strings.
const FORMAT_BOOLS: usize = 4;

impl<'ctx> FunctionLowering<'_, 'ctx> {
    pub(super) fn print(&mut self, text: &[String], arguments: &[Expression]) -> Result<()> {
        let types: Vec<ScalarType> = arguments.iter().map(|a| a.ty).collect();
        let format = c_format(text, &types);
        let (strings, generic, branch_bools) = match self.target.printf {
            PrintfLowering::OpenClPrintf {
                strings,
                constant_strings_only,
                ..
            } => (strings, false, constant_strings_only),
            PrintfLowering::Vprintf { strings } => (strings, true, false),
        };
        let mut values = Vec::with_capacity(arguments.len());
        // Where `branch_bools`: each `bool` argument's position and value; its slot in
        // `values` is filled with a constant string in each branch.
        let mut bools = Vec::new();
        // For `vprintf`: the first `bool` arguments, chosen between formats instead of passed.
        let mut format_bools = Vec::new();
        let vprintf = matches!(self.target.printf, PrintfLowering::Vprintf { .. });
        for argument in arguments {
            let value = self.expression(argument)?;
            if branch_bools && argument.ty == ScalarType::Bool {
                bools.push((values.len(), value.into_int_value()));
                values.push(value);
            } else if vprintf
                && argument.ty == ScalarType::Bool
                && format_bools.len() < FORMAT_BOOLS
            {
                format_bools.push(value.into_int_value());
            } else {
                values.push(self.printf_argument(value, argument.ty, strings, generic)?);
            }
        }
        let format = if format_bools.is_empty() {
            self.string_constant("kdsl.print.format", &format, strings, generic)?
        } else {
            let (text, types) = (text, types.as_slice());
            self.format_by_bools(
                &mut Vec::new(),
                &format_bools,
                &|chosen: &[bool]| c_format_with_bools(text, types, chosen),
                strings,
                generic,
            )?
        };
        let i32_type = self.context.i32_type();
        match self.target.printf {
            PrintfLowering::OpenClPrintf {
                function, support, ..
            } => {
                if let Some(support) = support {
                    self.link_printf_support(support)?;
                }
                let printf = match self.module.get_function(function) {
                    Some(existing) => existing,
                    None => {
                        let parameters: [BasicMetadataTypeEnum; 1] =
                            [self.types.pointer(strings).into()];
                        let declaration = self.module.add_function(
                            function,
                            i32_type.fn_type(&parameters, true),
                            Some(Linkage::External),
                        );
                        declaration.set_call_conventions(self.target.device_calling_convention);
                        declaration
                    }
                };
                self.printf_calls(printf, format, &mut values, &bools, strings)?;
            }
            PrintfLowering::Vprintf { .. } => {
                let generic_pointer = self.types.pointer(0);
                let buffer = if values.is_empty() {
                    generic_pointer.const_null()
                } else {
                    self.argument_buffer(&values)?
                };
                let vprintf = match self.module.get_function("vprintf") {
                    Some(existing) => existing,
                    None => self.module.add_function(
                        "vprintf",
                        i32_type.fn_type(&[generic_pointer.into(), generic_pointer.into()], false),
                        Some(Linkage::External),
                    ),
                };
                self.builder
                    .build_call(vprintf, &[format.into(), buffer.into()], "")?;
            }
        }
        Ok(())
    }

    /// Calls `printf(format, values...)`; for each of `bools` (position in `values`, value)
    /// first branches on the value, passing the constant `true` or `false` string there.
    fn printf_calls(
        &mut self,
        printf: FunctionValue<'ctx>,
        format: PointerValue<'ctx>,
        values: &mut [BasicValueEnum<'ctx>],
        bools: &[(usize, IntValue<'ctx>)],
        strings: u16,
    ) -> Result<()> {
        let Some((&(position, condition), rest)) = bools.split_first() else {
            let mut call_arguments: Vec<BasicMetadataValueEnum> = vec![format.into()];
            call_arguments.extend(values.iter().map(|&v| BasicMetadataValueEnum::from(v)));
            let call = self.builder.build_call(printf, &call_arguments, "")?;
            call.set_call_convention(printf.get_call_conventions());
            return Ok(());
        };
        let accept = self.new_block("print.true");
        let reject = self.new_block("print.false");
        let join = self.new_block("print.join");
        self.builder
            .build_conditional_branch(condition, accept, reject)?;
        for (block, name, text) in [
            (accept, "kdsl.print.true", "true"),
            (reject, "kdsl.print.false", "false"),
        ] {
            self.builder.position_at_end(block);
            values[position] = self.string_constant(name, text, strings, false)?.into();
            self.printf_calls(printf, format, values, rest, strings)?;
            self.builder.build_unconditional_branch(join)?;
        }
        self.builder.position_at_end(join);
        Ok(())
    }

    /// The format for the values of `conditions`: one constant format per combination (made
    /// by `format_of` from the values chosen so far), picked by selects on the conditions.
    fn format_by_bools(
        &mut self,
        chosen: &mut Vec<bool>,
        conditions: &[IntValue<'ctx>],
        format_of: &dyn Fn(&[bool]) -> String,
        strings: u16,
        generic: bool,
    ) -> Result<PointerValue<'ctx>> {
        let Some(&condition) = conditions.get(chosen.len()) else {
            return self.string_constant("kdsl.print.format", &format_of(chosen), strings, generic);
        };
        chosen.push(true);
        let yes = self.format_by_bools(chosen, conditions, format_of, strings, generic)?;
        chosen.pop();
        chosen.push(false);
        let no = self.format_by_bools(chosen, conditions, format_of, strings, generic)?;
        chosen.pop();
        Ok(self
            .builder
            .build_select(condition, yes, no, "")?
            .into_pointer_value())
    }

    /// Links `support` (LLVM IR text) into the module, once.
    fn link_printf_support(&self, support: &str) -> Result<()> {
        if self.module.get_global("kdsl.print.support").is_some() {
            return Ok(());
        }
        let buffer = MemoryBuffer::create_from_memory_range_copy(support.as_bytes(), "printf");
        let support = self
            .context
            .create_module_from_ir(buffer)
            .map_err(|e| LowerError(format!("the printf support IR: {e}")))?;
        support.set_triple(&self.module.get_triple());
        support.set_data_layout(&self.module.get_data_layout());
        self.module
            .link_in_module(support)
            .map_err(|e| LowerError(format!("linking the printf support IR: {e}")))?;
        // A marker, so the next `print` does not link it again.
        let marker = self
            .module
            .add_global(self.context.i8_type(), None, "kdsl.print.support");
        marker.set_initializer(&self.context.i8_type().const_zero());
        marker.set_linkage(Linkage::Private);
        Ok(())
    }

    /// `value` after C's default argument promotions, as `PrintfArgument` says.
    fn printf_argument(
        &mut self,
        value: BasicValueEnum<'ctx>,
        ty: ScalarType,
        strings: u16,
        generic: bool,
    ) -> Result<BasicValueEnum<'ctx>> {
        let context = self.context;
        Ok(match PrintfArgument::of(ty) {
            PrintfArgument::Int | PrintfArgument::UnsignedInt if ty.bit_width() < 32 => {
                let value = value.into_int_value();
                let int = context.i32_type();
                if ty.is_signed_integer() {
                    self.builder.build_int_s_extend(value, int, "")?.into()
                } else {
                    self.builder.build_int_z_extend(value, int, "")?.into()
                }
            }
            PrintfArgument::Double if ty == ScalarType::Bf16 => {
                let single = self.bf16_to_f32(value.into_int_value())?;
                self.builder
                    .build_float_ext(single, context.f64_type(), "")?
                    .into()
            }
            PrintfArgument::Double if ty != ScalarType::F64 => self
                .builder
                .build_float_ext(value.into_float_value(), context.f64_type(), "")?
                .into(),
            PrintfArgument::BoolString => {
                let yes = self.string_constant("kdsl.print.true", "true", strings, generic)?;
                let no = self.string_constant("kdsl.print.false", "false", strings, generic)?;
                self.builder
                    .build_select(value.into_int_value(), yes, no, "")?
            }
            _ => value,
        })
    }

    /// A NUL-terminated constant string in address space `space`, as a generic pointer when
    /// `generic`. The `true` and `false` strings are made once per module; each format is
    /// its own global.
    fn string_constant(
        &self,
        name: &str,
        text: &str,
        space: u16,
        generic: bool,
    ) -> Result<PointerValue<'ctx>> {
        let bytes = self.context.const_string(text.as_bytes(), true);
        let shared = name != "kdsl.print.format";
        let existing = self.module.get_global(name).filter(|_| shared);
        let global = match existing {
            Some(global) => global,
            None => {
                let global = self.module.add_global(
                    bytes.get_type(),
                    Some(LlvmAddressSpace::from(space)),
                    name,
                );
                global.set_initializer(&bytes);
                global.set_constant(true);
                global.set_linkage(Linkage::Private);
                global.set_unnamed_addr(true);
                global.set_alignment(1);
                global
            }
        };
        let pointer = global.as_pointer_value();
        if generic && space != 0 {
            Ok(self
                .builder
                .build_address_space_cast(pointer, self.types.pointer(0), "")?)
        } else {
            Ok(pointer)
        }
    }

    /// The private buffer `vprintf` reads: the values in order, each at an offset aligned to
    /// its size (an LLVM struct of them has that layout), as a generic pointer.
    fn argument_buffer(&mut self, values: &[BasicValueEnum<'ctx>]) -> Result<PointerValue<'ctx>> {
        let field_types: Vec<BasicTypeEnum> = values.iter().map(|v| v.get_type()).collect();
        let buffer_type = self.context.struct_type(&field_types, false);
        // In the entry block, so a `print` in a loop reuses one buffer.
        let entry = self
            .value
            .get_first_basic_block()
            .ok_or_else(|| LowerError("a function without an entry block".into()))?;
        let at_entry = self.context.create_builder();
        match entry.get_first_instruction() {
            Some(first) => at_entry.position_before(&first),
            None => at_entry.position_at_end(entry),
        }
        let buffer = at_entry.build_alloca(buffer_type, "print.arguments")?;
        for (index, value) in values.iter().enumerate() {
            let field = self
                .builder
                .build_struct_gep(buffer_type, buffer, index as u32, "")?;
            self.builder.build_store(field, *value)?;
        }
        let private = self.target.address_spaces.private;
        if private == 0 {
            Ok(buffer)
        } else {
            Ok(self
                .builder
                .build_address_space_cast(buffer, self.types.pointer(0), "")?)
        }
    }
}
