//! Asynchronous copies from global to local memory on NVIDIA (`cp.async`, sm_80 on): a copy of
//! 16 bytes bypasses L1 (`.cg`), one of 4 or 8 bytes goes through it (`.ca`, the only form
//! those sizes have). Targets without asynchronous copies never get here: their statements
//! were expanded into plain loads and stores (`kdsl_ir::async_copy::expand_plain`). On sm_90a
//! a wait also fences the copies for wgmma (`lower::matrix_group`).

use super::{FunctionLowering, LowerError, Result};
use crate::target::AsyncCopies;
use kdsl_ir::AsyncCopyOp;

impl FunctionLowering<'_, '_> {
    pub(super) fn async_copy(&mut self, op: &AsyncCopyOp) -> Result<()> {
        if self.target.async_copies != AsyncCopies::NvvmCpAsync {
            return Err(LowerError(format!(
                "`{}` reached a target without asynchronous copies unexpanded",
                op.name()
            )));
        }
        match op {
            AsyncCopyOp::Copy {
                destination,
                source,
                count,
            } => {
                let bytes = count * source.element.size_in_bytes();
                let name = if bytes == 16 {
                    "llvm.nvvm.cp.async.cg.shared.global.16".to_string()
                } else {
                    format!("llvm.nvvm.cp.async.ca.shared.global.{bytes}")
                };
                let to = self.address(destination)?;
                let from = self.address(source)?;
                let function = self.intrinsic(&name, &[])?;
                self.call_function(function, &[to.into(), from.into()])?;
            }
            AsyncCopyOp::Commit => {
                let function = self.intrinsic("llvm.nvvm.cp.async.commit.group", &[])?;
                self.call_function(function, &[])?;
            }
            AsyncCopyOp::Wait { pending } => {
                let function = self.intrinsic("llvm.nvvm.cp.async.wait.group", &[])?;
                let pending = self.i32_constant(u64::from(*pending));
                // The copies are generic-proxy writes; a wgmma statement's own proxy fence,
                // after the barrier that publishes them, makes them visible to its reads.
                self.call_function(function, &[pending.into()])?;
            }
        }
        Ok(())
    }
}
