//! Statements: assignments, stores, structured control flow, barriers and fences.

use super::{FunctionLowering, LoopTargets, LowerError, Result};
use kdsl_ir::{Block, Statement, StatementKind};

impl<'ctx> FunctionLowering<'_, 'ctx> {
    pub(super) fn block(&mut self, block: &Block) -> Result<()> {
        for statement in block {
            self.statement(statement)?;
        }
        Ok(())
    }

    fn statement(&mut self, statement: &Statement) -> Result<()> {
        match &statement.kind {
            StatementKind::Assign { variable, value } => {
                let value = self.expression(value)?;
                let storage = self.variables[variable.0 as usize];
                self.builder.build_store(storage.pointer, value)?;
            }
            StatementKind::Store { place, value } => {
                let value = self.expression(value)?;
                self.store(place, value)?;
            }
            StatementKind::VectorStore { place, values } => {
                let mut components = Vec::with_capacity(values.len());
                for value in values {
                    components.push(self.expression(value)?);
                }
                self.vector_store(place, &components)?;
            }
            StatementKind::If {
                condition,
                accept,
                reject,
            } => {
                let condition = self.expression(condition)?.into_int_value();
                let then_block = self.new_block("then");
                let else_block = self.new_block("else");
                let join = self.new_block("endif");
                self.builder
                    .build_conditional_branch(condition, then_block, else_block)?;
                for (block, statements) in [(then_block, accept), (else_block, reject)] {
                    self.builder.position_at_end(block);
                    self.block(statements)?;
                    if !self.is_terminated() {
                        self.builder.build_unconditional_branch(join)?;
                    }
                }
                self.builder.position_at_end(join);
            }
            StatementKind::Loop { body, .. } if self.zeroes_cooperative_tiles(body) => {
                self.zero_cooperative_tiles(body)?;
            }
            StatementKind::Loop {
                body,
                continuing,
                unroll,
            } => {
                let body_block = self.new_block("loop");
                let continuing_block = self.new_block("continuing");
                let exit = self.new_block("endloop");
                self.builder.build_unconditional_branch(body_block)?;
                self.builder.position_at_end(body_block);
                self.loops.push(LoopTargets {
                    continuing: continuing_block,
                    exit,
                });
                let result = self.block(body);
                self.loops.pop();
                result?;
                if !self.is_terminated() {
                    self.builder.build_unconditional_branch(continuing_block)?;
                }
                self.builder.position_at_end(continuing_block);
                self.block(continuing)?;
                if !self.is_terminated() {
                    let back_edge = self.loop_back_edge(body_block, exit, body, continuing)?;
                    crate::llvm::set_loop_unroll(self.context, back_edge, *unroll);
                }
                self.builder.position_at_end(exit);
            }
            StatementKind::Break | StatementKind::Continue => {
                let targets = self
                    .loops
                    .last()
                    .copied()
                    .ok_or_else(|| LowerError("`break` or `continue` outside a loop".into()))?;
                let destination = if statement.kind == StatementKind::Break {
                    targets.exit
                } else {
                    targets.continuing
                };
                self.builder.build_unconditional_branch(destination)?;
                self.continue_in_dead_block();
            }
            StatementKind::Return { value } => {
                match value {
                    Some(value) => {
                        let value = self.expression(value)?;
                        self.builder.build_return(Some(&value))?;
                    }
                    None => {
                        self.finish_tile_stores()?;
                        self.builder.build_return(None)?;
                    }
                }
                self.continue_in_dead_block();
            }
            StatementKind::Barrier { fence } => self.barrier(*fence)?,
            StatementKind::DeviceFence => self.device_fence()?,
            StatementKind::Matrix(op) => self.matrix(op)?,
            StatementKind::AsyncCopy(op) => self.async_copy(op)?,
            StatementKind::TileCopy(op) => self.tile_copy(op)?,
            StatementKind::Print { text, arguments } => self.print(text, arguments)?,
            StatementKind::Evaluate { value } => {
                self.evaluate(value)?;
            }
        }
        Ok(())
    }
}
