//! Links SPIRV-Tools' validator (Debian's `spirv-tools` ships it as a static library) through
//! the C wrapper in `runtime-shim/src/kdsl_spirv_validate.cpp` that the runtime's SYCL shim
//! shares, so every SPIR-V image is validated in process before the compiler returns it; and
//! builds the compiler's own C++ in `cpp/`: the containment of LLVM aborts
//! (`cpp/kdsl_llvm_contain.cpp`) against LLVM 22's headers and, where Debian's
//! `liblld-22-dev` is installed, lld's ELF driver with its wrapper (`cpp/kdsl_lld_link.cpp`),
//! so AMDGPU code objects are linked in process (cfg `kdsl_in_process_lld`; without it they are
//! linked by an `ld.lld` child process).

use std::path::PathBuf;

fn main() {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let shim = manifest.join("../../runtime-shim");
    let source = shim.join("src/kdsl_spirv_validate.cpp");
    let header = shim.join("include/kdsl_spirv_validate.h");
    println!("cargo:rerun-if-changed={}", source.display());
    println!("cargo:rerun-if-changed={}", header.display());
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .include(shim.join("include"))
        .file(&source)
        .compile("kdsl_spirv_validate");
    // The compiler's C++ (LLVM and lld, never SYCL), apart from the runtime's shim.
    let compiler_cpp = manifest.join("cpp");
    let contain = compiler_cpp.join("kdsl_llvm_contain.cpp");
    let contain_header = compiler_cpp.join("kdsl_llvm_contain.h");
    println!("cargo:rerun-if-changed={}", contain.display());
    println!("cargo:rerun-if-changed={}", contain_header.display());
    println!("cargo:rerun-if-env-changed=LLVM_SYS_221_PREFIX");
    let llvm_prefix = PathBuf::from(
        std::env::var("LLVM_SYS_221_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".to_string()),
    );
    against_llvm(&compiler_cpp, &llvm_prefix)
        .file(&contain)
        .compile("kdsl_llvm_contain");
    build_in_process_lld(&compiler_cpp, &llvm_prefix);
    find_spirv_module_analysis(&llvm_prefix);
    let library_directory = std::process::Command::new("pkg-config")
        .args(["--variable=libdir", "SPIRV-Tools"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string())
        .filter(|directory| !directory.is_empty())
        .unwrap_or_else(|| "/usr/lib/x86_64-linux-gnu".to_string());
    if !PathBuf::from(&library_directory)
        .join("libSPIRV-Tools.a")
        .exists()
    {
        panic!(
            "\n\nkdsl-codegen validates SPIR-V with SPIRV-Tools, but {library_directory}/libSPIRV-Tools.a \
             was not found. Install Debian's `spirv-tools` package (`bash scripts/setup.sh` does).\n"
        );
    }
    println!("cargo:rustc-link-search=native={library_directory}");
    println!("cargo:rustc-link-lib=static=SPIRV-Tools");
    println!("cargo:rustc-link-lib=dylib=stdc++");
}

/// Builds the in-process linker when lld's static libraries are there.
fn build_in_process_lld(compiler_cpp: &std::path::Path, llvm_prefix: &std::path::Path) {
    println!("cargo::rustc-check-cfg=cfg(kdsl_in_process_lld)");
    let source = compiler_cpp.join("kdsl_lld_link.cpp");
    println!("cargo:rerun-if-changed={}", source.display());
    println!(
        "cargo:rerun-if-changed={}",
        compiler_cpp.join("kdsl_lld_link.h").display()
    );
    let library_directory = llvm_prefix.join("lib");
    let libraries = ["lldELF", "lldCommon"];
    let missing = libraries
        .iter()
        .map(|name| library_directory.join(format!("lib{name}.a")))
        .find(|path| !path.exists());
    if let Some(missing) = missing {
        println!(
            "cargo:warning=AMDGPU code objects will be linked by an ld.lld child process: {} is \
             missing (install Debian's liblld-22-dev; `bash scripts/setup.sh` does)",
            missing.display()
        );
        return;
    }
    against_llvm(compiler_cpp, llvm_prefix)
        .define(
            "KDSL_TARGETS_LLD_NEED_NOT_INITIALIZE",
            Some(unused_target_stubs(llvm_prefix).as_str()),
        )
        .file(&source)
        .compile("kdsl_lld_link");
    println!(
        "cargo:rustc-link-search=native={}",
        library_directory.display()
    );
    for name in libraries {
        println!("cargo:rustc-link-lib=static={name}");
    }
    // lld compresses and decompresses debug sections itself.
    println!("cargo:rustc-link-lib=dylib=z");
    println!("cargo:rustc-link-lib=dylib=zstd");
    println!("cargo:rustc-cfg=kdsl_in_process_lld");
}

/// The size of the SPIR-V backend's static module analysis, so that the compiler can give
/// every module fresh backend state (`src/target/spirv/backend_state.rs`; cfg
/// `kdsl_spirv_state_reset`): where LLVM is linked statically, from its archive, which must
/// also hold the analysis's destructor.
fn find_spirv_module_analysis(llvm_prefix: &std::path::Path) {
    const STATIC: &str = "_ZN4llvm19SPIRVModuleAnalysis3MAIE";
    const DESTRUCTOR: &str = "_ZN4llvm5SPIRV18ModuleAnalysisInfoD2Ev";
    println!("cargo::rustc-check-cfg=cfg(kdsl_spirv_state_reset)");
    let archive = llvm_prefix.join("lib/libLLVMSPIRVCodeGen.a");
    let listing = std::process::Command::new(llvm_prefix.join("bin/llvm-nm"))
        .args(["--print-size", "--defined-only"])
        .arg(&archive)
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
        .unwrap_or_default();
    // "<address> <size> <kind> <symbol>", both numbers hexadecimal.
    let defined = |wanted: &str| {
        listing.lines().find_map(|line| {
            match line.split_whitespace().collect::<Vec<_>>().as_slice() {
                [_, size, _, symbol] if *symbol == wanted => usize::from_str_radix(size, 16).ok(),
                _ => None,
            }
        })
    };
    let (Some(size), Some(_)) = (defined(STATIC), defined(DESTRUCTOR)) else {
        println!(
            "cargo:warning=SPIR-V modules after a process's first will be compiled by an llc child \
             process: {STATIC} or {DESTRUCTOR} is missing from {}",
            archive.display()
        );
        return;
    };
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(
        out_dir.join("spirv_module_analysis_bytes.rs"),
        format!("pub(super) const MODULE_ANALYSIS_BYTES: usize = {size};\n"),
    )
    .expect("OUT_DIR is writable");
    println!("cargo:rustc-cfg=kdsl_spirv_state_reset");
}

/// `KDSL_UNUSED_TARGET(Name)` for every target LLVM was built with that kdsl does not generate
/// code for: lld's ELF driver initializes all of them (for LTO, which kdsl never asks of it), and
/// `kdsl_lld_link.cpp` defines their initializers as no-ops so they stay out of the binary.
fn unused_target_stubs(llvm_prefix: &std::path::Path) -> String {
    const GENERATED: [&str; 3] = ["AMDGPU", "NVPTX", "SPIRV"];
    let config = llvm_prefix.join("bin/llvm-config");
    let output = std::process::Command::new(&config)
        .arg("--targets-built")
        .output()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", config.display()));
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .filter(|target| !GENERATED.contains(target))
        .map(|target| format!("KDSL_UNUSED_TARGET({target})"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A C++ build against LLVM 22's headers, configured as LLVM's own code is (no RTTI).
fn against_llvm(compiler_cpp: &std::path::Path, llvm_prefix: &std::path::Path) -> cc::Build {
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .include(compiler_cpp)
        .include(llvm_prefix.join("include"))
        .define("__STDC_CONSTANT_MACROS", None)
        .define("__STDC_FORMAT_MACROS", None)
        .define("__STDC_LIMIT_MACROS", None)
        .flag_if_supported("-fno-rtti");
    build
}
