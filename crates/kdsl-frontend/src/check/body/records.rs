//! Records in function bodies: fields of buffer elements (`nodes[i].start`, `out[i].edges =
//! 3`), whole records bound to a name (`let n = nodes[i];`, one variable per field, like a
//! tuple) and stored (`out[i] = n;`, `out[i] = Node { start: 1, edges: 2 };`, one store per
//! field). A field access is a [`Place`] with `field` set.

use super::*;
use kdsl_ir::RecordType;

impl Checker<'_> {
    /// For `nodes[i]` (in parentheses or not) where `nodes` is a buffer of records: the buffer.
    fn record_buffer(
        &self,
        expression: &ast::Expression,
    ) -> Option<(ast::Identifier, ast::Expression)> {
        let E::Index { base, index } = &strip_parentheses(expression).kind else {
            return None;
        };
        let E::Name(name) = &strip_parentheses(base).kind else {
            return None;
        };
        match self.lookup(&name.name) {
            Resolved::Parameter(
                _,
                ParameterType::Buffer {
                    record: Some(_), ..
                },
                _,
            ) => Some((name.clone(), index.as_ref().clone())),
            _ => None,
        }
    }

    /// The record type of an expression that is a whole record: an element of a buffer of
    /// records, a record binding, or a record literal naming a declared record.
    pub(super) fn record_shape(&self, expression: &ast::Expression) -> Option<Box<RecordType>> {
        match &strip_parentheses(expression).kind {
            E::Index { base, .. } => match &strip_parentheses(base).kind {
                E::Name(name) => match self.lookup(&name.name) {
                    Resolved::Parameter(_, ParameterType::Buffer { record, .. }, _) => record,
                    _ => None,
                },
                _ => None,
            },
            E::Name(name) => match self.lookup(&name.name) {
                Resolved::Binding(Binding::Record { record, .. }) => Some(record),
                _ => None,
            },
            E::RecordLiteral { name, .. } => self
                .records
                .get(&name.name)
                .map(|(record, _)| record.clone()),
            _ => None,
        }
    }

    /// E0209 for a whole record element used as a scalar (`nodes[i] + 1`).
    pub(super) fn whole_record_as_scalar(
        &mut self,
        expression: &ast::Expression,
        buffer: &str,
        record: &RecordType,
    ) {
        let first = &record.fields[0].name;
        self.report(
            Diagnostic::error(
                ErrorCode::E0209,
                format!("an element of `{buffer}` is a whole `{record}` record, not a scalar"),
                expression.span,
                "a record",
            )
            .with_hint(format!(
                "read a field (`{buffer}[i].{first}`) or bind the record (`let r = {buffer}[i];`)"
            )),
        );
    }

    /// E0209 for a record value where a scalar is expected.
    pub(super) fn record_value_as_scalar(&mut self, expression: &ast::Expression) {
        if let E::RecordLiteral { name, fields } = &strip_parentheses(expression).kind {
            if !self.records.contains_key(&name.name) {
                // Reports the unknown record (or nothing more for a record that failed to check).
                let _ = self.record_literal(name, fields, expression.span, &mut Vec::new());
                return;
            }
        }
        let described = match self.record_shape(expression) {
            Some(record) => format!("a `{record}` record"),
            None => "a record".to_string(),
        };
        if let E::RecordLiteral { fields, .. } = &strip_parentheses(expression).kind {
            for (_, value) in fields {
                let _ = self.expression(value, None);
            }
        }
        self.report(
            Diagnostic::error(
                ErrorCode::E0209,
                format!("{described} cannot be used as a scalar value"),
                expression.span,
                "a record",
            )
            .with_hint("bind it (`let r = ...;`), store it (`out[i] = ...;`) or read a field"),
        );
    }

    /// `nodes[i].field` as a place.
    pub(super) fn record_field_place(
        &mut self,
        base: &ast::Expression,
        field: &ast::Identifier,
    ) -> Option<(Place, PlaceAccess)> {
        let (name, index) = self.record_buffer(base)?;
        let Resolved::Parameter(
            id,
            ParameterType::Buffer {
                space,
                writable,
                record: Some(record),
                ..
            },
            declared_at,
        ) = self.lookup(&name.name)
        else {
            return None;
        };
        let index_span = index.span;
        let index = self
            .expression(&index, Some(ScalarType::U32))
            .and_then(|index| self.integer_index(index, index_span));
        let Some((position, found)) = record.field(&field.name) else {
            self.unknown_field(&record, field);
            return None;
        };
        let access = PlaceAccess {
            writable,
            array_parameter: false,
            base_name: name.name.clone(),
            declared_at,
            origin: PlaceOrigin::Buffer,
        };
        let place = Place {
            id: kdsl_ir::PlaceId::UNNUMBERED,
            base: PlaceBase::Parameter(id),
            indices: vec![index?],
            element: found.ty,
            space,
            field: Some(position as u32),
        };
        Some((place, access))
    }

    pub(super) fn unknown_field(&mut self, record: &RecordType, field: &ast::Identifier) {
        let names: Vec<&str> = record.fields.iter().map(|f| f.name.as_str()).collect();
        let hint = match suggest(&field.name, names.iter().copied()) {
            Some(best) => format!("did you mean `{best}`?"),
            None => format!("`{record}` has the fields {}", quoted_list(&names)),
        };
        self.report(
            Diagnostic::error(
                ErrorCode::E0209,
                format!("record `{record}` has no field `{}`", field.name),
                field.span,
                "unknown field",
            )
            .with_hint(hint),
        );
    }

    /// The value of a whole record, one expression per field in declaration order. Effects are
    /// kept in source order and happen once: an index that is more than a name or literal, and
    /// the fields of a literal written out of declaration order, are first assigned to
    /// variables (statements in `out`).
    pub(super) fn record_value(
        &mut self,
        expression: &ast::Expression,
        out: &mut Block,
    ) -> Option<(Box<RecordType>, Vec<Expression>)> {
        let expression = strip_parentheses(expression);
        let span = expression.span;
        match &expression.kind {
            E::Index { .. } => {
                let (name, index) = self.record_buffer(expression)?;
                let Resolved::Parameter(
                    id,
                    ParameterType::Buffer {
                        space,
                        record: Some(record),
                        ..
                    },
                    _,
                ) = self.lookup(&name.name)
                else {
                    return None;
                };
                let index_span = index.span;
                let index = self.expression(&index, Some(ScalarType::U32))?;
                let index = self.integer_index(index, index_span)?;
                let index = self.evaluated_once(index, "index", out)?;
                let values = record
                    .fields
                    .iter()
                    .enumerate()
                    .map(|(position, field)| Expression {
                        id: kdsl_ir::ExprId::UNNUMBERED,
                        kind: ExpressionKind::Load(Box::new(Place {
                            id: kdsl_ir::PlaceId::UNNUMBERED,
                            base: PlaceBase::Parameter(id),
                            indices: vec![index.clone()],
                            element: field.ty,
                            space,
                            field: Some(position as u32),
                        })),
                        ty: field.ty,
                        span,
                    })
                    .collect();
                Some((record, values))
            }
            E::Name(name) => match self.lookup(&name.name) {
                Resolved::Binding(Binding::Record { fields, record, .. }) => {
                    let values = fields
                        .iter()
                        .zip(&record.fields)
                        .map(|(&id, field)| variable_expression(id, field.ty, span))
                        .collect();
                    Some((record, values))
                }
                _ => None,
            },
            E::RecordLiteral { name, fields } => self.record_literal(name, fields, span, out),
            _ => None,
        }
    }

    fn record_literal(
        &mut self,
        name: &ast::Identifier,
        written: &[(ast::Identifier, ast::Expression)],
        span: Span,
        out: &mut Block,
    ) -> Option<(Box<RecordType>, Vec<Expression>)> {
        let Some((record, _)) = self.records.get(&name.name).cloned() else {
            for (_, value) in written {
                let _ = self.expression(value, None);
            }
            if !self.is_declared_record_name(&name.name) {
                let mut diagnostic = Diagnostic::error(
                    ErrorCode::E0203,
                    format!("unknown record `{}`", name.name),
                    name.span,
                    "not a record",
                );
                if let Some(best) = self.suggest_record(&name.name) {
                    diagnostic = diagnostic.with_hint(format!("did you mean `{best}`?"));
                }
                self.report(diagnostic);
            }
            return None;
        };
        let mut values: Vec<Option<Expression>> = vec![None; record.fields.len()];
        let in_order = written
            .iter()
            .enumerate()
            .all(|(i, (field, _))| record.fields.get(i).is_some_and(|f| f.name == field.name));
        let mut ok = true;
        for (field, value) in written {
            let Some((position, declared)) = record.field(&field.name) else {
                let _ = self.expression(value, None);
                self.unknown_field(&record, field);
                ok = false;
                continue;
            };
            if values[position].is_some() {
                let _ = self.expression(value, None);
                self.report(Diagnostic::error(
                    ErrorCode::E0209,
                    format!("field `{}` is given more than once", field.name),
                    field.span,
                    "given again here",
                ));
                ok = false;
                continue;
            }
            let what = format!("field `{}` of `{record}`", field.name);
            let Some(value) = self.coerce(value, declared.ty, &what) else {
                ok = false;
                continue;
            };
            values[position] = if in_order {
                Some(value)
            } else {
                Some(self.evaluated_once(value, &field.name, out)?)
            };
        }
        let missing: Vec<&str> = record
            .fields
            .iter()
            .zip(&values)
            .filter(|(_, value)| value.is_none())
            .map(|(field, _)| field.name.as_str())
            .collect();
        if ok && !missing.is_empty() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0209,
                    format!("missing {} in `{record}`", quoted_list(&missing)),
                    span,
                    "every field needs a value",
                )
                .with_hint(format!("write `{}: value`", missing[0])),
            );
            return None;
        }
        let values: Option<Vec<Expression>> = values.into_iter().collect();
        Some((record, values?))
    }

    fn is_declared_record_name(&self, name: &str) -> bool {
        self.file
            .items
            .iter()
            .any(|item| matches!(item, ast::Item::Record(r) if r.name.name == name))
    }

    /// `value` itself when reading it again is free and has no effect, else a new variable
    /// assigned it (in `out`).
    fn evaluated_once(
        &mut self,
        value: Expression,
        what: &str,
        out: &mut Block,
    ) -> Option<Expression> {
        if matches!(
            value.kind,
            ExpressionKind::Literal(_) | ExpressionKind::Variable(_) | ExpressionKind::Parameter(_)
        ) {
            return Some(value);
        }
        let (ty, span) = (value.ty, value.span);
        let id = self.assigned_variable(&format!("record.{what}"), value, (span, span), out)?;
        Some(variable_expression(id, ty, span))
    }

    /// `let n = nodes[i];`, `let mut n = Node { ... };`: a variable per field.
    pub(super) fn let_record(
        &mut self,
        mutable: bool,
        name: &ast::Identifier,
        value: &ast::Expression,
        span: Span,
        out: &mut Block,
    ) {
        let Some((record, values)) = self.record_value(value, out) else {
            self.bind(&name.name, Binding::Poisoned);
            return;
        };
        let variable = |index: usize| format!("{}.{}", name.name, record.fields[index].name);
        let Some(fields) = self.element_variables(values, variable, (name.span, span), out) else {
            return;
        };
        self.bind(
            &name.name,
            Binding::Record {
                fields,
                record,
                mutable,
                span: name.span,
            },
        );
    }

    /// `out[i] = value;` and `n = value;` where either side is a whole record.
    pub(super) fn assign_record(
        &mut self,
        target: &ast::Expression,
        operator: (AssignOperator, Span),
        value: &ast::Expression,
        span: Span,
        out: &mut Block,
    ) {
        let target_record = self.record_shape(target);
        let value_record = self.record_shape(value);
        if let AssignOperator::Compound(_) = operator.0 {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0209,
                    "compound assignment to a whole record",
                    operator.1,
                    "records have no arithmetic",
                )
                .with_hint("assign the fields one by one: `out[i].field += x;`"),
            );
            return;
        }
        let (Some(target_record), Some(_)) = (&target_record, &value_record) else {
            // One side is a record, the other is not.
            match target_record {
                Some(record) => {
                    if self.expression(value, None).is_some() {
                        self.report(Diagnostic::error(
                            ErrorCode::E0209,
                            format!("cannot assign a scalar to a whole `{record}` record"),
                            value.span,
                            "not a record",
                        )
                        .with_hint(format!("assign a field instead, or build a record: `{record} {{ {}: ... }}`", record.fields[0].name)));
                    }
                }
                None => self.record_value_as_scalar(value),
            }
            return;
        };
        let Some((record, values)) = self.record_value(value, out) else {
            return;
        };
        if record != *target_record {
            self.report(Diagnostic::error(
                ErrorCode::E0301,
                format!("expected a `{target_record}` record, found a `{record}` record"),
                value.span,
                "another record type",
            ));
            return;
        }
        let target = strip_parentheses(target);
        match &target.kind {
            E::Name(name) => {
                let Resolved::Binding(Binding::Record {
                    fields,
                    mutable,
                    span: declared_at,
                    ..
                }) = self.lookup(&name.name)
                else {
                    return;
                };
                if !mutable {
                    let hint = format!("declare it `let mut {}`", name.name);
                    self.assigned_immutable(&name.name, target.span, declared_at, hint);
                    return;
                }
                // Every field is read before any is written, so `r = Node { a: r.b, b: r.a }`
                // swaps.
                let temporary =
                    |index: usize| format!("{}.new.{}", name.name, record.fields[index].name);
                let targets = fields.into_iter().map(TupleElement::Variable);
                self.assign_elements(targets, values, temporary, span, out);
            }
            _ => {
                let first = &record.fields[0].name;
                let field = ast::Identifier {
                    name: first.clone(),
                    span: target.span,
                };
                let Some((place, access)) = self.record_field_place(target, &field) else {
                    return;
                };
                if !access.writable {
                    self.report_read_only(&access, target.span, "store to");
                    return;
                }
                let index = place.indices[0].clone();
                let Some(index) = self.evaluated_once(index, "index", out) else {
                    return;
                };
                for (position, (field, value)) in record.fields.iter().zip(values).enumerate() {
                    let place = Place {
                        indices: vec![index.clone()],
                        element: field.ty,
                        field: Some(position as u32),
                        ..place.clone()
                    };
                    out.push(statement(StatementKind::Store { place, value }, span));
                }
            }
        }
    }

    /// The field `field` of the record binding `name`, for `n.start` and `n.start = x`.
    pub(super) fn record_binding_field(
        &mut self,
        name: &ast::Identifier,
        field: &ast::Identifier,
    ) -> Option<(TupleElement, ScalarType, bool, Span)> {
        let Resolved::Binding(Binding::Record {
            fields,
            record,
            mutable,
            span,
        }) = self.lookup(&name.name)
        else {
            return None;
        };
        let Some((position, found)) = record.field(&field.name) else {
            self.unknown_field(&record, field);
            return None;
        };
        Some((
            TupleElement::Variable(fields[position]),
            found.ty,
            mutable,
            span,
        ))
    }
}

fn quoted_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    quoted.join(", ")
}
