//! Math libraries linked into the module as LLVM bitcode: NVIDIA's libdevice for PTX,
//! libclc for AMDGPU (and for PTX when libdevice is missing). SPIR-V needs none: its
//! OpenCL builtins become `OpenCL.std` extended instructions the driver implements.

use inkwell::context::Context;
use inkwell::llvm_sys;
use inkwell::llvm_sys::prelude::{LLVMMemoryBufferRef, LLVMModuleRef, LLVMValueRef};
use inkwell::module::{Linkage, Module};
use inkwell::values::AsValueRef;
use kdsl_ir::{MathFunction, ScalarType};
use std::collections::HashSet;
use std::ffi::CString;
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
        let base = match (self.naming, function.is_native()) {
            (LibraryNaming::Libdevice, true) => libdevice_native(function),
            _ => function.name(),
        };
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

    /// Whether the library's `native_` functions are fast approximations of `f32` ones
    /// (OpenCL's builtins and libdevice's `__nv_fast_*`); `f64` uses the accurate function.
    pub fn has_native(&self, ty: ScalarType) -> bool {
        ty != ScalarType::F64
    }

    /// The library's `fmod` on `ty` (`f16` is computed in `f32`): `__nv_fmodf`, `_Z4fmodff`.
    pub fn remainder_name(&self, ty: ScalarType) -> String {
        let double = ty == ScalarType::F64;
        match self.naming {
            LibraryNaming::OpenCl => format!("_Z4fmod{}", if double { "dd" } else { "ff" }),
            LibraryNaming::Libdevice => format!("__nv_fmod{}", if double { "" } else { "f" }),
        }
    }

    /// Links the library functions `module` calls (and what they call) into it, then
    /// internalizes every definition except `keep`, so that the optimizer inlines and drops
    /// them freely. The library is loaded lazily: only the bodies that are linked are read.
    pub fn link_into<'ctx>(
        &self,
        context: &'ctx Context,
        module: &Module<'ctx>,
        keep: &[String],
    ) -> Result<(), String> {
        let Some(path) = &self.bitcode else {
            return Ok(());
        };
        let needed: HashSet<String> = module
            .get_functions()
            .filter(|function| is_declaration(function.as_value_ref()))
            .map(|function| function.get_name().to_string_lossy().into_owned())
            .filter(|name| !name.starts_with("llvm."))
            .collect();
        if needed.is_empty() {
            return Ok(());
        }
        // The extracted subset when it has every function needed, else the whole library.
        let subset = crate::library_subset::subset(self, path)?;
        let library = if needed.is_subset(&subset.roots) {
            load_lazily_from_buffer(context, &subset.bitcode, &path.display().to_string())?
        } else {
            load_lazily_from_file(context, path)?
        };
        // Local definitions are linked only when something linked refers to them.
        internalize_all_but(&library, &needed);
        library.set_triple(&module.get_triple());
        library.set_data_layout(&module.get_data_layout());
        module
            .link_in_module(library)
            .map_err(|e| format!("cannot link `{}`: {}", path.display(), e.to_string_lossy()))?;
        for function in module.get_functions() {
            let name = function.get_name().to_string_lossy();
            if !is_declaration(function.as_value_ref()) && !keep.iter().any(|k| *k == name) {
                function.set_linkage(Linkage::Internal);
            }
        }
        Ok(())
    }
}

/// The libdevice stem of a `native_` function: `__nv_fast_expf` and friends where libdevice
/// has them; `exp2`, `rsqrt` and `sqrt` are the plain ones (`ex2.approx` and `rsqrt.approx`
/// already, and an exact square root), `recip` and `divide` are lowered as operators.
fn libdevice_native(function: MathFunction) -> &'static str {
    use MathFunction::*;
    match function {
        NativeExp => "fast_exp",
        NativeExp10 => "fast_exp10",
        NativeLog => "fast_log",
        NativeLog2 => "fast_log2",
        NativeLog10 => "fast_log10",
        NativeSin => "fast_sin",
        NativeCos => "fast_cos",
        NativeTan => "fast_tan",
        NativePowr => "fast_pow",
        NativeExp2 => "exp2",
        NativeRsqrt => "rsqrt",
        NativeSqrt => "sqrt",
        _ => "fast_fdivide",
    }
}

/// Gives every definition in `module` internal linkage except the functions named in `keep`.
pub(crate) fn internalize_all_but(module: &Module<'_>, keep: &HashSet<String>) {
    for function in module.get_functions() {
        let name = function.get_name().to_string_lossy();
        if !is_declaration(function.as_value_ref()) && !keep.contains(name.as_ref()) {
            function.set_linkage(Linkage::Internal);
        }
    }
    for global in module.get_globals() {
        if !is_declaration(global.as_value_ref()) {
            global.set_linkage(Linkage::Internal);
        }
    }
}

fn is_declaration(value: LLVMValueRef) -> bool {
    // SAFETY: `value` is a live global value (function or variable).
    unsafe { llvm_sys::core::LLVMIsDeclaration(value) != 0 }
}

/// Opens bitcode held in memory as a lazily materialized module; `what` names it in errors.
pub(crate) fn load_lazily_from_buffer<'ctx>(
    context: &'ctx Context,
    bytes: &[u8],
    what: &str,
) -> Result<Module<'ctx>, String> {
    let name = c"kdsl-math-library";
    // SAFETY: LLVM copies the bytes into a buffer it owns.
    let buffer = unsafe {
        llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy(
            bytes.as_ptr() as *const std::ffi::c_char,
            bytes.len(),
            name.as_ptr(),
        )
    };
    module_from_buffer(context, buffer, what)
}

/// Opens a bitcode file as a lazily materialized module.
pub(crate) fn load_lazily_from_file<'ctx>(
    context: &'ctx Context,
    path: &Path,
) -> Result<Module<'ctx>, String> {
    let c_path = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("`{}` contains a NUL byte", path.display()))?;
    let mut buffer: LLVMMemoryBufferRef = std::ptr::null_mut();
    let mut message: *mut std::ffi::c_char = std::ptr::null_mut();
    // SAFETY: out-pointers are valid; on failure LLVM allocates `message`, which is freed.
    let failed = unsafe {
        llvm_sys::core::LLVMCreateMemoryBufferWithContentsOfFile(
            c_path.as_ptr(),
            &mut buffer,
            &mut message,
        )
    };
    if failed != 0 {
        // SAFETY: LLVM returned a NUL-terminated message it allocated.
        let text = unsafe { take_message(message) };
        return Err(format!("cannot read `{}`: {text}", path.display()));
    }
    module_from_buffer(context, buffer, &path.display().to_string())
}

/// The lazily materialized module of a buffer, which the module then owns.
fn module_from_buffer<'ctx>(
    context: &'ctx Context,
    buffer: LLVMMemoryBufferRef,
    what: &str,
) -> Result<Module<'ctx>, String> {
    let mut raw_module: LLVMModuleRef = std::ptr::null_mut();
    // SAFETY: the lazy module takes ownership of `buffer`, which must outlive it; it is
    // never freed here. The context outlives the module by `'ctx`.
    let failed = unsafe {
        llvm_sys::bit_reader::LLVMGetBitcodeModuleInContext2(context.raw(), buffer, &mut raw_module)
    };
    if failed != 0 || raw_module.is_null() {
        return Err(format!("cannot parse `{what}` as LLVM bitcode"));
    }
    // SAFETY: `raw_module` is a fresh module of `context`, owned by the returned value.
    Ok(unsafe { Module::new(raw_module) })
}

/// Copies and frees a message LLVM allocated.
///
/// # Safety
/// `message` must be null or a NUL-terminated message LLVM allocated, not yet freed.
unsafe fn take_message(message: *mut std::ffi::c_char) -> String {
    if message.is_null() {
        return "unknown error".to_string();
    }
    // SAFETY: a live NUL-terminated message from LLVM (the caller's contract), copied before
    // it is freed, once, with LLVM's own deallocator.
    unsafe {
        let text = std::ffi::CStr::from_ptr(message)
            .to_string_lossy()
            .into_owned();
        llvm_sys::core::LLVMDisposeMessage(message);
        text
    }
}

/// The first of `candidates` that is a file.
pub(crate) fn first_existing(candidates: impl IntoIterator<Item = PathBuf>) -> Option<PathBuf> {
    candidates.into_iter().find(|path| path.is_file())
}

/// libclc's bitcode file `name` (`amdgcn-amd-amdhsa.bc`, `nvptx64--nvidiacl.bc`): in
/// `$KDSL_LIBCLC_DIR` when it is there (the Python wheel ships these two and names its copy),
/// else in Debian's `/usr/lib/clc`.
pub(crate) fn libclc_file(name: &str) -> PathBuf {
    libclc_file_in(
        std::env::var_os(kdsl_bundle::environment::LIBCLC_DIR).map(PathBuf::from),
        name,
    )
}

fn libclc_file_in(directory: Option<PathBuf>, name: &str) -> PathBuf {
    directory
        .map(|directory| directory.join(name))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| Path::new("/usr/lib/clc").join(name))
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

#[cfg(test)]
mod libclc_tests {
    use super::libclc_file_in;
    use std::path::{Path, PathBuf};

    #[test]
    fn a_named_directory_holding_the_file_wins() {
        let directory = std::env::temp_dir().join(format!("kdsl-libclc-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        std::fs::write(directory.join("amdgcn-amd-amdhsa.bc"), b"").unwrap();
        let found = libclc_file_in(Some(directory.clone()), "amdgcn-amd-amdhsa.bc");
        std::fs::remove_dir_all(&directory).unwrap();
        assert_eq!(found, directory.join("amdgcn-amd-amdhsa.bc"));
    }

    #[test]
    fn debians_folder_is_used_without_a_directory_or_where_it_lacks_the_file() {
        let debian = Path::new("/usr/lib/clc/nvptx64--nvidiacl.bc");
        assert_eq!(libclc_file_in(None, "nvptx64--nvidiacl.bc"), debian);
        let empty = PathBuf::from("/nonexistent/kdsl-libclc");
        assert_eq!(libclc_file_in(Some(empty), "nvptx64--nvidiacl.bc"), debian);
    }
}
