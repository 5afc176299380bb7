//! What tuples, vectors and records bound to a name share: one private variable per element,
//! an assignment of every element at once, and the error for assigning an immutable binding.

use super::*;

impl Checker<'_> {
    /// One new variable per value, the `index`th named `name(index)` and declared at
    /// `declared_at`, assigned its value by a statement at `span` in `out`; `None` when one
    /// could not be declared.
    pub(super) fn element_variables(
        &mut self,
        values: Vec<Expression>,
        name: impl Fn(usize) -> String,
        (declared_at, span): (Span, Span),
        out: &mut Block,
    ) -> Option<Vec<VariableId>> {
        values
            .into_iter()
            .enumerate()
            .map(|(index, value)| {
                self.assigned_variable(&name(index), value, (declared_at, span), out)
            })
            .collect()
    }

    /// `targets = values`, element by element, as one assignment: every value is first
    /// assigned to a new temporary (named `temporary(index)`), so a value that reads a target
    /// sees its old value and `t = (t.1, t.0);` swaps. A target that is not a variable is
    /// skipped; nothing is assigned when a temporary could not be declared.
    pub(super) fn assign_elements(
        &mut self,
        targets: impl IntoIterator<Item = TupleElement>,
        values: Vec<Expression>,
        temporary: impl Fn(usize) -> String,
        span: Span,
        out: &mut Block,
    ) {
        let types: Vec<ScalarType> = values.iter().map(|value| value.ty).collect();
        let Some(temporaries) = self.element_variables(values, temporary, (span, span), out) else {
            return;
        };
        for ((target, temporary), ty) in targets.into_iter().zip(temporaries).zip(types) {
            if let TupleElement::Variable(variable) = target {
                let value = variable_expression(temporary, ty, span);
                out.push(statement(StatementKind::Assign { variable, value }, span));
            }
        }
    }

    /// E0401 for an assignment at `span` to `name`, declared immutable at `declared_at`.
    pub(super) fn assigned_immutable(
        &mut self,
        name: &str,
        span: Span,
        declared_at: Span,
        hint: String,
    ) {
        self.report(
            Diagnostic::error(
                ErrorCode::E0401,
                format!("cannot assign to immutable binding `{name}`"),
                span,
                "cannot assign",
            )
            .with_label(declared_at, "declared immutable here")
            .with_hint(hint),
        );
    }
}
