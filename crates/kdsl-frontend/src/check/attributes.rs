//! Function attributes: `#[work_group_size(x)]`, `#[work_group_size(x, y)]` and
//! `#[work_group_size(x, y, z)]` before a kernel, and the constants `WORK_GROUP_SIZE_X`,
//! `WORK_GROUP_SIZE_Y` and `WORK_GROUP_SIZE_Z` they give the kernel's body.

use super::{suggest, Checker};
use crate::ast;
use kdsl_ir::ErrorCode;
use kdsl_ir::{Diagnostic, Literal, ScalarType};

/// The one attribute the language has.
const WORK_GROUP_SIZE: &str = "work_group_size";

/// The constants a kernel with a required work-group size sees, one per dimension.
pub(crate) const WORK_GROUP_SIZE_NAMES: [&str; 3] = [
    "WORK_GROUP_SIZE_X",
    "WORK_GROUP_SIZE_Y",
    "WORK_GROUP_SIZE_Z",
];

/// What a function's attributes say about its work-group size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WorkGroupSize {
    /// No `#[work_group_size]`: any size may be launched.
    Any,
    /// The required size, unused dimensions 1.
    Required([u32; 3]),
    /// The attribute is malformed (already reported): uses of its constants report nothing more.
    Invalid,
}

impl WorkGroupSize {
    pub fn required(self) -> Option<[u32; 3]> {
        match self {
            WorkGroupSize::Required(size) => Some(size),
            WorkGroupSize::Any | WorkGroupSize::Invalid => None,
        }
    }
}

/// The value `WORK_GROUP_SIZE_X` (or `_Y`, `_Z`) has under `size`; `None` for other names.
/// `Some(None)` means the name is one of them but the attribute is malformed.
pub(crate) fn work_group_size_constant(size: WorkGroupSize, name: &str) -> Option<Option<u32>> {
    let dimension = WORK_GROUP_SIZE_NAMES.iter().position(|n| *n == name)?;
    match size {
        WorkGroupSize::Any => None,
        WorkGroupSize::Required(size) => Some(Some(size[dimension])),
        WorkGroupSize::Invalid => Some(None),
    }
}

/// A hint for an unknown name that is one of the work-group size constants.
pub(crate) fn work_group_size_hint(name: &str) -> Option<String> {
    WORK_GROUP_SIZE_NAMES.contains(&name).then(|| {
        format!(
            "`{name}` exists only in kernels declared with `#[{WORK_GROUP_SIZE}(...)]`, such as `#[{WORK_GROUP_SIZE}(256)] kernel name(...)`"
        )
    })
}

fn attribute_error(attribute: &ast::Attribute, message: String, label: &str) -> Diagnostic {
    Diagnostic::error(ErrorCode::E0514, message, attribute.span, label)
}

const FORM_HINT: &str =
    "write `#[work_group_size(x)]`, `#[work_group_size(x, y)]` or `#[work_group_size(x, y, z)]` with constant sizes of at least 1";

impl Checker<'_> {
    /// Checks the attributes of `item` and returns the work-group size they require.
    pub(crate) fn function_attributes(&mut self, item: &ast::FunctionItem) -> WorkGroupSize {
        let mut result = WorkGroupSize::Any;
        let mut first: Option<&ast::Attribute> = None;
        for attribute in &item.attributes {
            if attribute.name.name != WORK_GROUP_SIZE {
                let mut diagnostic = attribute_error(
                    attribute,
                    format!("unknown attribute `{}`", attribute.name.name),
                    "not an attribute of kdsl",
                );
                diagnostic = match suggest(&attribute.name.name, [WORK_GROUP_SIZE]) {
                    Some(best) => diagnostic.with_hint(format!("did you mean `{best}`?")),
                    None => diagnostic.with_hint(format!(
                        "the only attribute is `#[{WORK_GROUP_SIZE}(...)]` on kernels"
                    )),
                };
                self.report(diagnostic);
                continue;
            }
            if item.kind != ast::FunctionKind::Kernel {
                self.report(
                    attribute_error(
                        attribute,
                        format!(
                            "`#[{WORK_GROUP_SIZE}]` on the device function `{}`",
                            item.name.name
                        ),
                        "allowed on kernels only",
                    )
                    .with_label(item.name.span, "a device function")
                    .with_hint("put the attribute on the kernels that call this function"),
                );
                result = WorkGroupSize::Invalid;
                continue;
            }
            if let Some(first) = first {
                self.report(
                    attribute_error(
                        attribute,
                        format!(
                            "kernel `{}` has two `#[{WORK_GROUP_SIZE}]` attributes",
                            item.name.name
                        ),
                        "given again here",
                    )
                    .with_label(first.span, "first given here")
                    .with_hint("give the work-group size once"),
                );
                result = WorkGroupSize::Invalid;
                continue;
            }
            first = Some(attribute);
            result = match self.work_group_size_attribute(attribute) {
                Some(size) => WorkGroupSize::Required(size),
                None => WorkGroupSize::Invalid,
            };
        }
        result
    }

    fn work_group_size_attribute(&mut self, attribute: &ast::Attribute) -> Option<[u32; 3]> {
        let arguments = attribute.arguments.as_deref().unwrap_or_default();
        if arguments.is_empty() || arguments.len() > 3 {
            let found = match &attribute.arguments {
                None => "no sizes".to_string(),
                Some(list) => format!("{} sizes", list.len()),
            };
            self.report(
                attribute_error(
                    attribute,
                    format!("`#[{WORK_GROUP_SIZE}]` takes 1 to 3 sizes, found {found}"),
                    "one size per dimension",
                )
                .with_hint(FORM_HINT),
            );
            return None;
        }
        let mut size = [1u32; 3];
        let mut valid = true;
        for (dimension, argument) in arguments.iter().enumerate() {
            let Some((ty, value)) = self.constant_expression(argument, Some(ScalarType::U32))
            else {
                valid = false;
                continue;
            };
            if ty != ScalarType::U32 {
                self.mismatch(ScalarType::U32, ty, argument.span, "a work-group size");
                valid = false;
                continue;
            }
            match value {
                Literal::Integer(bits) if bits >= 1 => size[dimension] = bits as u32,
                _ => {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0514,
                            "a work-group size must be at least 1",
                            argument.span,
                            "this dimension is 0",
                        )
                        .with_hint(FORM_HINT),
                    );
                    valid = false;
                }
            }
        }
        let total: u64 = size.iter().map(|&d| u64::from(d)).product();
        if valid && total > u64::from(u32::MAX) {
            self.report(
                attribute_error(
                    attribute,
                    format!("a work-group of {total} work-items is too large"),
                    "more than 2^32 - 1 work-items",
                )
                .with_hint("GPUs run at most 1024 work-items per work-group"),
            );
            return None;
        }
        valid.then_some(size)
    }
}
