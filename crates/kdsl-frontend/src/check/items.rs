//! The file's items: collecting names, instantiating generic kernels, and module constants
//! and array lengths folded to values.

use super::{constant, suggest, Builtin, Checker, ConstantState, Global};
use crate::ast::{self, FunctionKind as AstFunctionKind, Item};
use kdsl_ir::{Diagnostic, ErrorCode, Function, Literal, ScalarType, Span, Undefined};
use std::collections::HashMap;

impl Checker<'_> {
    /// Records every item's name (constants, functions, instances); reports names defined twice
    /// or hiding a built-in, and repeated type parameters.
    pub(super) fn collect_items(&mut self) {
        let file = self.file;
        for item in &file.items {
            let (name, global) = match item {
                Item::Constant(constant) => {
                    self.constants.push(constant);
                    self.constant_states.push(ConstantState::Unvisited);
                    (&constant.name, Global::Constant(self.constants.len() - 1))
                }
                Item::Function(function) => {
                    self.functions.push(function);
                    (&function.name, Global::Function(self.functions.len() - 1))
                }
                Item::Instance(instance) => {
                    self.instances.push(instance);
                    (&instance.alias, Global::Instance(self.instances.len() - 1))
                }
                Item::Error(_) | Item::Record(_) => continue,
            };
            if !matches!(global, Global::Constant(_)) && Builtin::from_name(&name.name).is_some() {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0204,
                        format!("`{}` is the name of a built-in function", name.name),
                        name.span,
                        "this definition would hide the built-in",
                    )
                    .with_hint("choose another name"),
                );
                continue;
            }
            if let Some(previous) = self.globals.get(&name.name) {
                let previous_span = self.global_name_span(*previous);
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0204,
                        format!("`{}` is defined more than once", name.name),
                        name.span,
                        "redefined here",
                    )
                    .with_label(previous_span, "first defined here")
                    .with_hint("rename one of the definitions"),
                );
                continue;
            }
            self.globals.insert(name.name.clone(), global);
        }
        for function in self.functions.clone() {
            for (index, parameter) in function.type_parameters.iter().enumerate() {
                let earlier = function.type_parameters[..index]
                    .iter()
                    .find(|p| p.name == parameter.name);
                if let Some(earlier) = earlier {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0204,
                            format!(
                                "type parameter `{}` is defined more than once",
                                parameter.name
                            ),
                            parameter.span,
                            "redefined here",
                        )
                        .with_label(earlier.span, "first defined here")
                        .with_hint("give each type parameter its own name"),
                    );
                }
            }
            if function.kind == AstFunctionKind::Device && !function.type_parameters.is_empty() {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0208,
                        "generic device functions are not supported",
                        function.type_parameters[0].span,
                        "type parameters are allowed on kernels only",
                    )
                    .with_hint("write one function per type, or make this a generic kernel"),
                );
            }
            if function.kind == AstFunctionKind::Kernel {
                if let Some(return_type) = &function.return_type {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0506,
                            format!("kernel `{}` declares a return type", function.name.name),
                            return_type.span(),
                            "kernels return nothing",
                        )
                        .with_hint("remove `-> ...` and write results to a `global mut` buffer"),
                    );
                }
            }
        }
    }

    /// Where `global`'s name is declared.
    pub(super) fn global_name_span(&self, global: Global) -> Span {
        match global {
            Global::Constant(i) => self.constants[i].name.span,
            Global::Function(i) => self.functions[i].name.span,
            Global::Instance(i) => self.instances[i].alias.span,
        }
    }

    /// Checks an `instance` item: its generic kernel with the type arguments it names.
    pub(super) fn check_instance(&mut self, instance: &ast::InstanceItem) -> Option<Function> {
        let generic = match self.globals.get(&instance.generic.name) {
            Some(Global::Function(index)) => self.functions[*index],
            Some(_) | None => {
                let candidates: Vec<&str> = self
                    .functions
                    .iter()
                    .filter(|f| !f.type_parameters.is_empty())
                    .map(|f| f.name.name.as_str())
                    .collect();
                let mut diagnostic = Diagnostic::error(
                    ErrorCode::E0208,
                    format!("`{}` is not a generic kernel", instance.generic.name),
                    instance.generic.span,
                    "expected the name of a generic kernel",
                );
                if let Some(best) = suggest(&instance.generic.name, candidates) {
                    diagnostic = diagnostic.with_hint(format!("did you mean `{best}`?"));
                }
                self.report(diagnostic);
                return None;
            }
        };
        if generic.kind != AstFunctionKind::Kernel || generic.type_parameters.is_empty() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0208,
                    format!("`{}` is not a generic kernel", instance.generic.name),
                    instance.generic.span,
                    "only kernels with type parameters can be instantiated",
                )
                .with_label(generic.name.span, "defined here"),
            );
            return None;
        }
        if generic.type_parameters.len() != instance.type_arguments.len() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0208,
                    format!(
                        "`{}` takes {} type argument(s) but {} were given",
                        generic.name.name,
                        generic.type_parameters.len(),
                        instance.type_arguments.len()
                    ),
                    instance.span,
                    "wrong number of type arguments",
                )
                .with_label(generic.name.span, "defined here"),
            );
            return None;
        }
        let mut arguments = HashMap::new();
        for (parameter, argument) in generic.type_parameters.iter().zip(&instance.type_arguments) {
            let ty = self.resolve_scalar_type(argument, "a type argument")?;
            arguments.insert(parameter.name.clone(), ty);
        }
        self.type_arguments = arguments;
        self.instance_note = Some((instance.span, instance.alias.name.clone()));
        let function = self.check_function(generic, &instance.alias.name);
        self.instance_note = None;
        self.type_arguments.clear();
        function
    }

    /// Returns the value of constant `index`, evaluating it (and the constants it uses) once.
    pub(super) fn constant_value(&mut self, index: usize) -> Option<(ScalarType, Literal)> {
        match &self.constant_states[index] {
            ConstantState::Done(value) => return *value,
            ConstantState::InProgress => {
                let item = self.constants[index];
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0509,
                        format!("constant `{}` depends on itself", item.name.name),
                        item.value.span,
                        "this initializer uses the constant being defined",
                    )
                    .with_label(item.name.span, "constant defined here"),
                );
                self.constant_states[index] = ConstantState::Done(None);
                return None;
            }
            ConstantState::Unvisited => {}
        }
        self.constant_states[index] = ConstantState::InProgress;
        let item = self.constants[index];
        // Constants never see type parameters or the function being checked.
        let saved_function = self.function.take();
        let saved_types = std::mem::take(&mut self.type_arguments);
        let saved_note = self.instance_note.take();
        let saved_context = std::mem::replace(&mut self.constant_context, true);
        let value = self.evaluate_constant_item(item);
        self.constant_context = saved_context;
        self.function = saved_function;
        self.type_arguments = saved_types;
        self.instance_note = saved_note;
        if matches!(self.constant_states[index], ConstantState::InProgress) {
            self.constant_states[index] = ConstantState::Done(value);
        }
        match &self.constant_states[index] {
            ConstantState::Done(value) => *value,
            _ => None,
        }
    }

    /// A constant item's value: its `-D` define where one names it, else its folded initializer.
    pub(super) fn evaluate_constant_item(
        &mut self,
        item: &ast::ConstantItem,
    ) -> Option<(ScalarType, Literal)> {
        let ty = self.resolve_scalar_type(&item.ty, "a constant");
        if let Some(define) = self.define_for(item) {
            return self.defined_value(item, ty?, define);
        }
        let value = self.constant_expression(&item.value, ty)?;
        let ty = ty?;
        if value.0 != ty {
            self.mismatch(ty, value.0, item.value.span, "constant initializer");
            return None;
        }
        Some(value)
    }

    /// Checks and evaluates an expression that must be a compile-time constant.
    pub(crate) fn constant_expression(
        &mut self,
        expression: &ast::Expression,
        expected: Option<ScalarType>,
    ) -> Option<(ScalarType, Literal)> {
        let saved_context = std::mem::replace(&mut self.constant_context, true);
        let typed = self.expression(expression, expected);
        self.constant_context = saved_context;
        let typed = typed?;
        match constant::evaluate(&typed) {
            Ok(value) => Some((typed.ty, value.to_literal())),
            Err(constant::ConstantError::NotConstant(span)) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0509,
                        "expected a constant expression",
                        span,
                        "not known at compile time",
                    )
                    .with_hint("use literals, `const` items, operators and casts"),
                );
                None
            }
            Err(constant::ConstantError::Undefined(span, undefined)) => {
                let (message, label) = match undefined {
                    Undefined::DivisionByZero { .. } => (
                        "division by zero in a constant expression",
                        "divides by zero",
                    ),
                    Undefined::DivisionOverflow { .. } => (
                        "signed division overflow in a constant expression",
                        "the smallest value divided by -1",
                    ),
                    // Reported as E0516 before evaluation gets here.
                    Undefined::Overflow { .. } => (
                        "integer overflow in a constant expression",
                        "does not fit in its type",
                    ),
                };
                self.report(Diagnostic::error(ErrorCode::E0510, message, span, label));
                None
            }
            Err(constant::ConstantError::Overflow(span, what)) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0516,
                        "arithmetic overflow in a constant expression",
                        span,
                        what,
                    )
                    .with_hint(
                        "use a wider type, or `wrapping_add`, `wrapping_sub` or `wrapping_mul` to wrap on purpose",
                    ),
                );
                None
            }
        }
    }

    /// The length of an array dimension: a positive constant that fits in `u32`.
    pub(super) fn array_length(&mut self, length: &ast::Expression) -> Option<u32> {
        let (ty, value) = self.constant_expression(length, Some(ScalarType::U32))?;
        let number = match value {
            Literal::Integer(bits) if ty.is_integer() => constant::sign_extend(bits, ty),
            _ => {
                self.report(Diagnostic::error(
                    ErrorCode::E0502,
                    format!("array length must be an integer, found `{ty}`"),
                    length.span,
                    "not an integer",
                ));
                return None;
            }
        };
        if number <= 0 || number > i128::from(u32::MAX) {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0502,
                    format!(
                        "array length must be between 1 and {}, found {number}",
                        u32::MAX
                    ),
                    length.span,
                    "invalid length",
                )
                .with_hint("arrays need at least one element"),
            );
            return None;
        }
        Some(number as u32)
    }
}
