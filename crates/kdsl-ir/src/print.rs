//! A compact text form of the IR, for snapshots and debugging.
//!
//! Parameters print as `%N`, variables as `$N`, calls as `@name`; literals carry their type
//! (`1u32`, `0.5f32`) and every loop shows its `continuing` block.

use crate::ir::*;
use crate::types::ScalarType;
use std::fmt::{self, Display, Formatter, Write};

impl Display for Module {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (index, function) in self.functions.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            write_function(f, self, function)?;
        }
        Ok(())
    }
}

fn write_function(f: &mut Formatter<'_>, module: &Module, function: &Function) -> fmt::Result {
    let keyword = match function.kind {
        FunctionKind::Kernel => "kernel",
        FunctionKind::Device => "fn",
    };
    if let Some([x, y, z]) = function.work_group_size {
        writeln!(f, "#[work_group_size({x}, {y}, {z})]")?;
    }
    write!(f, "{keyword} {}(", function.name)?;
    for (index, parameter) in function.parameters.iter().enumerate() {
        if index > 0 {
            write!(f, ", ")?;
        }
        write!(f, "%{index} {}: {}", parameter.name, parameter.ty)?;
    }
    write!(f, ")")?;
    if let Some(ty) = function.return_type {
        write!(f, " -> {ty}")?;
    }
    writeln!(f, " {{")?;
    for (index, variable) in function.variables.iter().enumerate() {
        let ty = match &variable.ty {
            VariableType::Scalar { ty } => ty.to_string(),
            VariableType::Array { ty } => ty.to_string(),
        };
        writeln!(
            f,
            "  var ${index} {}: {ty} {}",
            variable.name, variable.space
        )?;
    }
    let printer = Printer { module };
    let mut text = String::new();
    printer.block(&mut text, &function.body, 1)?;
    f.write_str(&text)?;
    writeln!(f, "}}")
}

struct Printer<'a> {
    module: &'a Module,
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn literal(out: &mut String, literal: &Literal, ty: ScalarType) -> fmt::Result {
    match literal {
        Literal::Bool(b) => write!(out, "{b}"),
        Literal::Integer(bits) if ty.is_signed_integer() => {
            let shift = 64 - ty.bit_width();
            write!(out, "{}{ty}", ((*bits << shift) as i64) >> shift)
        }
        Literal::Integer(bits) => write!(out, "{bits}{ty}"),
        Literal::Float(value) => write!(out, "{value:?}{ty}"),
    }
}

impl Printer<'_> {
    fn block(&self, out: &mut String, block: &Block, depth: usize) -> fmt::Result {
        for statement in block {
            self.statement(out, statement, depth)?;
        }
        Ok(())
    }

    fn statement(&self, out: &mut String, statement: &Statement, depth: usize) -> fmt::Result {
        indent(out, depth);
        match &statement.kind {
            StatementKind::Assign { variable, value } => {
                write!(out, "${} = ", variable.0)?;
                self.expression(out, value)?;
            }
            StatementKind::Store { place, value } => {
                self.place(out, place)?;
                out.push_str(" = ");
                self.expression(out, value)?;
            }
            StatementKind::Print { text, arguments } => {
                write!(out, "print({text:?}")?;
                for argument in arguments {
                    out.push_str(", ");
                    self.expression(out, argument)?;
                }
                out.push(')');
            }
            StatementKind::VectorStore { place, values } => {
                write!(out, "vstore{}(", values.len())?;
                self.place(out, place)?;
                for value in values {
                    out.push_str(", ");
                    self.expression(out, value)?;
                }
                out.push(')');
            }
            StatementKind::If {
                condition,
                accept,
                reject,
            } => {
                out.push_str("if ");
                self.expression(out, condition)?;
                out.push_str(" {\n");
                self.block(out, accept, depth + 1)?;
                indent(out, depth);
                out.push('}');
                if !reject.is_empty() {
                    out.push_str(" else {\n");
                    self.block(out, reject, depth + 1)?;
                    indent(out, depth);
                    out.push('}');
                }
            }
            StatementKind::Loop {
                body,
                continuing,
                unroll,
            } => {
                match unroll {
                    Unroll::Default => out.push_str("loop {\n"),
                    Unroll::Full => out.push_str("loop unroll {\n"),
                    Unroll::Count(count) => out.push_str(&format!("loop unroll({count}) {{\n")),
                }
                self.block(out, body, depth + 1)?;
                indent(out, depth);
                out.push('}');
                if !continuing.is_empty() {
                    out.push_str(" continuing {\n");
                    self.block(out, continuing, depth + 1)?;
                    indent(out, depth);
                    out.push('}');
                }
            }
            StatementKind::Break => out.push_str("break"),
            StatementKind::Continue => out.push_str("continue"),
            StatementKind::Return { value } => {
                out.push_str("return");
                if let Some(value) = value {
                    out.push(' ');
                    self.expression(out, value)?;
                }
            }
            StatementKind::Barrier { fence } => {
                write!(
                    out,
                    "barrier(local: {}, global: {})",
                    fence.local, fence.global
                )?;
            }
            StatementKind::DeviceFence => out.push_str("device_fence"),
            StatementKind::Matrix(op) => self.matrix(out, op)?,
            StatementKind::AsyncCopy(op) => {
                out.push_str(op.name());
                match op {
                    crate::AsyncCopyOp::Copy {
                        destination,
                        source,
                        count,
                    } => {
                        out.push('(');
                        self.place(out, destination)?;
                        out.push_str(", ");
                        self.place(out, source)?;
                        write!(out, ", {count})")?;
                    }
                    crate::AsyncCopyOp::Commit => out.push_str("()"),
                    crate::AsyncCopyOp::Wait { pending } => write!(out, "({pending})")?,
                }
            }
            StatementKind::TileCopy(op) => {
                out.push_str(op.name());
                match op {
                    crate::TileCopyOp::Copy {
                        destination,
                        source,
                        row,
                        column,
                        rows,
                        slot,
                        ..
                    } => {
                        out.push('(');
                        self.place(out, destination)?;
                        write!(out, ", %{}[", source.0)?;
                        self.expression(out, row)?;
                        out.push_str(", ");
                        self.expression(out, column)?;
                        write!(out, "], {rows}, ")?;
                        self.expression(out, slot)?;
                        out.push(')');
                    }
                    crate::TileCopyOp::Store {
                        destination,
                        row,
                        column,
                        rows,
                        source,
                        ..
                    } => {
                        write!(out, "(%{}[", destination.0)?;
                        self.expression(out, row)?;
                        out.push_str(", ");
                        self.expression(out, column)?;
                        out.push_str("], ");
                        self.place(out, source)?;
                        write!(out, ", {rows})")?;
                    }
                    crate::TileCopyOp::Wait { slot } | crate::TileCopyOp::Release { slot } => {
                        out.push('(');
                        self.expression(out, slot)?;
                        out.push(')');
                    }
                    crate::TileCopyOp::StoreWait => out.push_str("()"),
                }
            }
            StatementKind::Evaluate { value } => {
                out.push_str("eval ");
                self.expression(out, value)?;
            }
        }
        out.push('\n');
        Ok(())
    }

    fn place(&self, out: &mut String, place: &Place) -> fmt::Result {
        match place.base {
            PlaceBase::Parameter(id) => write!(out, "%{}", id.0)?,
            PlaceBase::Variable(id) => write!(out, "${}", id.0)?,
        }
        for index in &place.indices {
            out.push('[');
            self.expression(out, index)?;
            out.push(']');
        }
        if let Some(field) = place.field {
            write!(out, ".{field}")?;
        }
        Ok(())
    }

    fn matrix(&self, out: &mut String, op: &crate::matrix::MatrixOp) -> fmt::Result {
        let base = |base: PlaceBase| match base {
            PlaceBase::Parameter(id) => format!("%{}", id.0),
            PlaceBase::Variable(id) => format!("${}", id.0),
        };
        let (written, read) = op.tiles();
        let memory: Vec<String> = op.memories().into_iter().map(|m| base(m.base)).collect();
        let tiles: Vec<String> = written.into_iter().chain(read).map(base).collect();
        write!(
            out,
            "{}<{}>[{}",
            op.name(),
            op.shape_name(),
            [tiles, memory].concat().join(", ")
        )?;
        out.push(']');
        self.list(out, "", &op.expressions())
    }

    fn list(&self, out: &mut String, name: &str, arguments: &[&Expression]) -> fmt::Result {
        write!(out, "{name}(")?;
        for (index, argument) in arguments.iter().enumerate() {
            if index > 0 {
                out.push_str(", ");
            }
            self.expression(out, argument)?;
        }
        out.push(')');
        Ok(())
    }

    fn expression(&self, out: &mut String, expression: &Expression) -> fmt::Result {
        match &expression.kind {
            ExpressionKind::Literal(value) => literal(out, value, expression.ty)?,
            ExpressionKind::Parameter(id) => write!(out, "%{}", id.0)?,
            ExpressionKind::Variable(id) => write!(out, "${}", id.0)?,
            ExpressionKind::Load(place) => self.place(out, place)?,
            ExpressionKind::VectorLoad {
                place,
                width,
                component,
            } => {
                write!(out, "vload{width}(")?;
                self.place(out, place)?;
                write!(out, ").{component}")?;
            }
            ExpressionKind::Unary { op, operand } => {
                out.push(match op {
                    UnaryOp::Negate => '-',
                    UnaryOp::Not => '!',
                    UnaryOp::BitNot => '~',
                });
                self.expression(out, operand)?;
            }
            ExpressionKind::Binary { op, left, right } => {
                out.push('(');
                self.expression(out, left)?;
                write!(out, " {} ", op.symbol())?;
                self.expression(out, right)?;
                out.push(')');
            }
            ExpressionKind::ShortCircuit { op, left, right } => {
                out.push('(');
                self.expression(out, left)?;
                out.push_str(match op {
                    LogicalOp::And => " && ",
                    LogicalOp::Or => " || ",
                });
                self.expression(out, right)?;
                out.push(')');
            }
            ExpressionKind::Conditional {
                condition,
                accept,
                reject,
            } => {
                out.push_str("(if ");
                self.expression(out, condition)?;
                out.push_str(" { ");
                self.expression(out, accept)?;
                out.push_str(" } else { ");
                self.expression(out, reject)?;
                out.push_str(" })");
            }
            ExpressionKind::DimensionIndex {
                index,
                buffer,
                dimension,
                extent,
            } => {
                write!(out, "dimension_index(%{}, {dimension}, ", buffer.0)?;
                self.expression(out, index)?;
                write!(out, " < %{})", extent.0)?;
            }
            ExpressionKind::Cast { value } => {
                out.push('(');
                self.expression(out, value)?;
                write!(out, " as {})", expression.ty)?;
            }
            ExpressionKind::Select {
                condition,
                accept,
                reject,
            } => self.list(out, "select", &[condition, accept, reject])?,
            ExpressionKind::Call {
                function,
                arguments,
            } => {
                let name = self
                    .module
                    .functions
                    .get(function.0 as usize)
                    .map_or("<invalid>", |f| f.name.as_str());
                write!(out, "@{name}(")?;
                for (index, argument) in arguments.iter().enumerate() {
                    if index > 0 {
                        out.push_str(", ");
                    }
                    match argument {
                        Argument::Value(value) => self.expression(out, value)?,
                        Argument::Buffer(id) => write!(out, "%{}", id.0)?,
                        Argument::Array(PlaceBase::Parameter(id)) => write!(out, "&%{}", id.0)?,
                        Argument::Array(PlaceBase::Variable(id)) => write!(out, "&${}", id.0)?,
                    }
                }
                out.push(')');
            }
            ExpressionKind::WorkItem { query, dimension } => {
                write!(out, "{}({dimension})", query.name())?
            }
            ExpressionKind::Math {
                function,
                arguments,
            } => self.list(out, function.name(), &arguments.iter().collect::<Vec<_>>())?,
            ExpressionKind::Atomic {
                op,
                place,
                value,
                comparand,
            } => {
                write!(out, "{}(", op.name())?;
                self.place(out, place)?;
                if let Some(comparand) = comparand {
                    out.push_str(", ");
                    self.expression(out, comparand)?;
                }
                out.push_str(", ");
                self.expression(out, value)?;
                out.push(')');
            }
            ExpressionKind::SubGroup { op, arguments } => {
                self.list(out, op.name(), &arguments.iter().collect::<Vec<_>>())?
            }
            ExpressionKind::WorkGroup { op, arguments } => {
                self.list(out, op.name(), &arguments.iter().collect::<Vec<_>>())?
            }
        }
        Ok(())
    }
}
