//! Scopes: bindings of names to variables, parameters and constants, and name lookup.

use super::*;

impl Checker<'_> {
    pub(super) fn state(&mut self) -> Option<&mut FunctionState> {
        self.function.as_mut()
    }

    pub(super) fn new_variable(
        &mut self,
        name: &str,
        ty: VariableType,
        space: AddressSpace,
        span: Span,
    ) -> Option<VariableId> {
        let state = self.state()?;
        state.variables.push(Variable {
            name: name.to_string(),
            ty,
            space,
            span,
        });
        Some(VariableId((state.variables.len() - 1) as u32))
    }

    /// A new private scalar variable `name` declared at `declared_at`, assigned `value` by a
    /// statement at `span` in `out`.
    pub(super) fn assigned_variable(
        &mut self,
        name: &str,
        value: Expression,
        (declared_at, span): (Span, Span),
        out: &mut Block,
    ) -> Option<VariableId> {
        let ty = VariableType::Scalar { ty: value.ty };
        let id = self.new_variable(name, ty, AddressSpace::Private, declared_at)?;
        out.push(statement(
            StatementKind::Assign {
                variable: id,
                value,
            },
            span,
        ));
        Some(id)
    }

    /// E0301 for `let name;` without `mut` or a value; the hint writes `let name{rest};`.
    pub(super) fn no_initial_value(&mut self, name: &ast::Identifier, rest: &str) {
        self.report(
            Diagnostic::error(
                ErrorCode::E0301,
                format!("immutable binding `{}` has no value", name.name),
                name.span,
                "needs a value",
            )
            .with_hint(format!("write `let {}{rest};`", name.name)),
        );
    }

    pub(super) fn bind(&mut self, name: &str, binding: Binding) {
        if let Some(state) = self.state() {
            if let Some(scope) = state.scopes.last_mut() {
                scope.push((name.to_string(), binding));
            }
        }
    }

    pub(super) fn lookup(&self, name: &str) -> Resolved {
        if let Some(state) = &self.function {
            for scope in state.scopes.iter().rev() {
                if let Some((_, binding)) = scope.iter().rev().find(|(n, _)| n == name) {
                    return Resolved::Binding(binding.clone());
                }
            }
            if state.poisoned_parameters.iter().any(|p| p == name) {
                return Resolved::Binding(Binding::Poisoned);
            }
            if let Some(index) = state.parameters.iter().position(|p| p.name == name) {
                let parameter = &state.parameters[index];
                return Resolved::Parameter(
                    ParameterId(index as u32),
                    parameter.ty.clone(),
                    parameter.span,
                );
            }
            if let Some(value) = work_group_size_constant(state.work_group_size, name) {
                return Resolved::WorkGroupSize(value);
            }
        }
        match self.globals.get(name) {
            Some(Global::Constant(index)) => Resolved::Constant(*index),
            Some(Global::Function(_) | Global::Instance(_)) => Resolved::Function,
            None => Resolved::Unknown,
        }
    }

    /// Names visible here, for suggestions.
    pub(super) fn visible_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        if let Some(state) = &self.function {
            for scope in &state.scopes {
                names.extend(scope.iter().map(|(n, _)| n.clone()));
            }
            names.extend(state.parameters.iter().map(|p| p.name.clone()));
        }
        names.extend(
            self.globals
                .iter()
                .filter(|(_, g)| matches!(g, Global::Constant(_)))
                .map(|(n, _)| n.clone()),
        );
        names
    }

    pub(super) fn unknown_name(&mut self, name: &ast::Identifier) {
        if self.suppress_unknown_names {
            return;
        }
        let mut diagnostic = Diagnostic::error(
            ErrorCode::E0201,
            format!("unknown name `{}`", name.name),
            name.span,
            "not found in this scope",
        );
        if Builtin::from_name(&name.name).is_some() {
            diagnostic = diagnostic.with_hint(format!(
                "`{}` is a built-in function: call it with `(...)`",
                name.name
            ));
        } else if let Some(hint) = work_group_size_hint(&name.name) {
            diagnostic = diagnostic.with_hint(hint);
        } else {
            let names = self.visible_names();
            if let Some(best) = suggest(&name.name, names.iter().map(String::as_str)) {
                diagnostic = diagnostic.with_hint(format!("did you mean `{best}`?"));
            }
        }
        self.report(diagnostic);
    }
}
