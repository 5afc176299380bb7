//! Record declarations (`struct Node { start: i32, edges: i32 }`): their fields, types and
//! C layout ([`kdsl_ir::RecordType`]). Their uses in bodies are in `body/records.rs`.

use super::{suggest, Checker, VectorType};
use crate::ast;
use kdsl_ir::{Diagnostic, ErrorCode, RecordType, ScalarType, Span};

impl Checker<'_> {
    /// Checks and lays out every record of the file, before anything refers to one.
    pub(super) fn declare_records(&mut self) {
        let file = self.file;
        for item in &file.items {
            let ast::Item::Record(record) = item else {
                continue;
            };
            self.declare_record(record);
        }
    }

    fn declare_record(&mut self, item: &ast::RecordItem) {
        let name = &item.name;
        let builtin_type = ScalarType::from_name(&name.name).is_some()
            || VectorType::from_name(&name.name).is_some();
        if builtin_type {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0204,
                    format!("`{}` is the name of a built-in type", name.name),
                    name.span,
                    "this record would hide the type",
                )
                .with_hint("choose another name"),
            );
            return;
        }
        if let Some((_, previous)) = self.records.get(&name.name) {
            let previous = *previous;
            self.report(
                Diagnostic::error(
                    ErrorCode::E0204,
                    format!("record `{}` is defined more than once", name.name),
                    name.span,
                    "redefined here",
                )
                .with_label(previous, "first defined here")
                .with_hint("rename one of the definitions"),
            );
            return;
        }
        if item.fields.is_empty() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0209,
                    format!("record `{}` has no fields", name.name),
                    item.span,
                    "empty record",
                )
                .with_hint("give it at least one field: `struct Name { value: f32 }`"),
            );
            return;
        }
        let mut fields: Vec<(String, ScalarType)> = Vec::new();
        let mut ok = true;
        for (index, field) in item.fields.iter().enumerate() {
            if let Some(earlier) = item.fields[..index]
                .iter()
                .find(|f| f.name.name == field.name.name)
            {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0204,
                        format!("field `{}` is defined more than once", field.name.name),
                        field.name.span,
                        "redefined here",
                    )
                    .with_label(earlier.name.span, "first defined here")
                    .with_hint("give each field its own name"),
                );
                ok = false;
                continue;
            }
            match self.field_type(&field.ty) {
                Some(ty) => fields.push((field.name.name.clone(), ty)),
                None => ok = false,
            }
        }
        if ok {
            let record = RecordType::new(name.name.clone(), &fields);
            self.records
                .insert(name.name.clone(), (Box::new(record), name.span));
        }
    }

    /// The type of a field: a scalar. Arrays, vectors, tuples and records are refused (E0209).
    fn field_type(&mut self, ty: &ast::TypeExpression) -> Option<ScalarType> {
        if let ast::TypeExpression::Named(name) = ty {
            if let Some(scalar) = ScalarType::from_name(&name.name) {
                return Some(scalar);
            }
            if self.records.contains_key(&name.name) || self.is_declared_record(&name.name) {
                self.unsupported_field_type(ty.span(), &format!("the record `{}`", name.name));
                return None;
            }
        }
        let described = match ty {
            ast::TypeExpression::Named(name) => match VectorType::from_name(&name.name) {
                Some(vector) => format!("the vector `{vector}`"),
                None => return self.resolve_scalar_type(ty, "a field"),
            },
            ast::TypeExpression::Array { .. } => "an array".to_string(),
            ast::TypeExpression::Tuple { .. } => "a tuple".to_string(),
        };
        self.unsupported_field_type(ty.span(), &described);
        None
    }

    fn unsupported_field_type(&mut self, span: Span, described: &str) {
        self.report(
            Diagnostic::error(
                ErrorCode::E0209,
                format!("a record field cannot have {described} as its type"),
                span,
                "unsupported field type",
            )
            .with_hint(
                "fields are scalars (`i32`, `f32`, ...): write one field per component or element",
            ),
        );
    }

    fn is_declared_record(&self, name: &str) -> bool {
        self.file
            .items
            .iter()
            .any(|item| matches!(item, ast::Item::Record(r) if r.name.name == name))
    }

    /// The record a buffer's element type names, if it names one.
    pub(super) fn record_element(&self, ty: &ast::TypeExpression) -> Option<Box<RecordType>> {
        match ty {
            ast::TypeExpression::Named(name) if !self.type_arguments.contains_key(&name.name) => {
                self.records
                    .get(&name.name)
                    .map(|(record, _)| record.clone())
            }
            _ => None,
        }
    }

    /// E0209 for a record type written where only scalars, arrays, vectors and tuples may
    /// be; `true` when `name` is a record (reported), `false` otherwise.
    pub(super) fn record_type_misused(&mut self, name: &ast::Identifier) -> bool {
        if !self.records.contains_key(&name.name) && !self.is_declared_record(&name.name) {
            return false;
        }
        self.report(
            Diagnostic::error(
                ErrorCode::E0209,
                format!("the record `{}` is not a value type", name.name),
                name.span,
                "records live in buffers",
            )
            .with_hint(format!(
                "use it as a buffer element (`global [{0}]`), read fields (`nodes[i].start`) or bind a whole one without a type: `let n = nodes[i];`",
                name.name
            )),
        );
        true
    }

    /// Record names, for "did you mean" hints on unknown types.
    pub(super) fn suggest_record(&self, name: &str) -> Option<String> {
        suggest(name, self.records.keys().map(String::as_str)).map(str::to_string)
    }
}
