//! Math libraries linked into the module as LLVM bitcode: NVIDIA's libdevice for PTX,
//! libclc for AMDGPU (and for PTX when libdevice is missing). SPIR-V needs none: its
//! OpenCL builtins become `OpenCL.std` extended instructions the driver implements.

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::{Linkage, Module};
use kdsl_ir::{MathFunction, ScalarType};
use std::path::{Path, PathBuf};

/// How library functions are named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LibraryNaming {
    /// OpenCL C builtins with Itanium mangling: `_Z3sinf`, `_Z3powdd`.
    OpenCl,
    /// libdevice: `__nv_sinf` for `f32`, `__nv_sin` for `f64`.
    Libdevice,
}

/// A target's math library: how its functions are named and, unless the driver provides
/// them, the bitcode file that defines them.
#[derive(Clone, Debug)]
pub(crate) struct MathLibrary {
    pub naming: LibraryNaming,
    pub bitcode: Option<PathBuf>,
}

impl MathLibrary {
    /// The library function for `function` on `ty`, and whether `f16` is computed in `f32`
    /// (every library here is called in `f32` for `f16`, which is exact enough for `f16`).
    pub fn function_name(&self, function: MathFunction, ty: ScalarType) -> (String, bool) {
        let base = function.name();
        let promote_half = ty == ScalarType::F16;
        let double = ty == ScalarType::F64;
        let name = match self.naming {
            LibraryNaming::OpenCl => {
                let code = if double { "d" } else { "f" };
                let codes = code.repeat(function.arity());
                format!("_Z{}{base}{codes}", base.len())
            }
            LibraryNaming::Libdevice => {
                let suffix = if double { "" } else { "f" };
                format!("__nv_{base}{suffix}")
            }
        };
        (name, promote_half)
    }

    /// Links the library into `module` if the module calls anything not defined in it,
    /// then internalizes every definition except `keep` so that the optimizer drops what is
    /// unused.
    pub fn link_into<'ctx>(
        &self,
        context: &'ctx Context,
        module: &Module<'ctx>,
        keep: &[String],
    ) -> Result<(), String> {
        let Some(path) = &self.bitcode else {
            return Ok(());
        };
        let needs_library = module.get_functions().any(|function| {
            function.count_basic_blocks() == 0
                && !function.get_name().to_bytes().starts_with(b"llvm.")
        });
        if !needs_library {
            return Ok(());
        }
        let library = parse_bitcode(context, path)?;
        library.set_triple(&module.get_triple());
        library.set_data_layout(&module.get_data_layout());
        module
            .link_in_module(library)
            .map_err(|e| format!("cannot link `{}`: {}", path.display(), e.to_string_lossy()))?;
        for function in module.get_functions() {
            let name = function.get_name().to_string_lossy();
            if function.count_basic_blocks() > 0 && !keep.iter().any(|k| *k == name) {
                function.set_linkage(Linkage::Internal);
            }
        }
        for global in module.get_globals() {
            if global.get_initializer().is_some() {
                global.set_linkage(Linkage::Internal);
            }
        }
        Ok(())
    }
}

fn parse_bitcode<'ctx>(context: &'ctx Context, path: &Path) -> Result<Module<'ctx>, String> {
    let buffer = MemoryBuffer::create_from_file(path)
        .map_err(|e| format!("cannot read `{}`: {}", path.display(), e.to_string_lossy()))?;
    Module::parse_bitcode_from_buffer(&buffer, context)
        .map_err(|e| format!("cannot parse `{}`: {}", path.display(), e.to_string_lossy()))
}

/// The first of `candidates` that is a file.
pub(crate) fn first_existing(candidates: impl IntoIterator<Item = PathBuf>) -> Option<PathBuf> {
    candidates.into_iter().find(|path| path.is_file())
}

/// `$KDSL_PREFIX` at run time, else as configured at build time.
pub(crate) fn kdsl_prefix() -> Option<PathBuf> {
    std::env::var_os("KDSL_PREFIX")
        .map(PathBuf::from)
        .or_else(|| option_env!("KDSL_PREFIX").map(PathBuf::from))
}

/// `PREFIX/lib/python3.*/site-packages/RELATIVE` for every Python version present.
pub(crate) fn in_python_site_packages(prefix: &Path, relative: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("python3"))
        .map(|entry| entry.path().join("site-packages").join(relative))
        .collect();
    found.sort();
    found
}
