//! With the `sycl` feature, builds the SYCL backend's C++ in two parts:
//! - `libkdsl_sycl_shim.so` from `runtime-shim/src/kdsl_sycl.cpp`, the only thing that links
//!   libsycl (with an rpath to `$KDSL_PREFIX/lib`);
//! - the cxx bridge plus `runtime-shim/src/kdsl_sycl_loader.cpp`, linked into every Rust binary,
//!   which opens that library with dlopen at run time. So no binary needs libsycl to start, and a
//!   missing SYCL runtime becomes a note at device discovery.

fn main() {
    println!("cargo:rerun-if-env-changed=KDSL_PREFIX");
    #[cfg(feature = "sycl")]
    build_sycl_backend();
}

#[cfg(feature = "sycl")]
fn build_sycl_backend() {
    use std::path::PathBuf;

    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let shim = manifest.join("../../runtime-shim");
    let prefix = match std::env::var("KDSL_PREFIX") {
        Ok(prefix) if !prefix.is_empty() => PathBuf::from(prefix),
        _ => manifest.join("../../.kdsl/prefix"),
    };
    let include = prefix.join("include");
    let lib = prefix.join("lib");
    if !include.join("sycl/sycl.hpp").exists() || !lib.join("libsycl.so").exists() {
        panic!(
            "\n\nkdsl-runtime's SYCL backend needs the SYCL headers and libsycl.so under KDSL_PREFIX={}\n\
             (looked for {} and {}).\n\
             Run `bash scripts/setup.sh` to install them, or build without the SYCL backend:\n\
             `cargo build -p kdsl-runtime --no-default-features`.\n",
            prefix.display(),
            include.join("sycl/sycl.hpp").display(),
            lib.join("libsycl.so").display()
        );
    }

    let shim_library = out.join("shim").join("libkdsl_sycl_shim.so");
    build_shim_library(&shim, &include, &lib, &shim_library);

    let shim_path = shim_library
        .to_str()
        .expect("the build directory's path is UTF-8");
    let shim_path_literal = format!(
        "\"{}\"",
        shim_path.replace('\\', "\\\\").replace('"', "\\\"")
    );
    cxx_build::bridge("src/backend/sycl.rs")
        .file(shim.join("src/kdsl_sycl_loader.cpp"))
        .include(shim.join("include"))
        .std("c++17")
        .define("KDSL_SYCL_SHIM_BUILT_PATH", shim_path_literal.as_str())
        .flag_if_supported("-Wno-unused-parameter")
        .compile("kdsl_sycl_loader");
    // Tests find the shim library through this, to run a copy of it.
    println!("cargo:rustc-env=KDSL_SYCL_SHIM_BUILT_PATH={shim_path}");
    println!(
        "cargo:rustc-env=KDSL_SYCL_SHIM_LIBSYCL_DIRECTORY={}",
        lib.display()
    );
    println!("cargo:rerun-if-changed=src/backend/sycl.rs");
    for file in [
        "src/kdsl_sycl.cpp",
        "src/kdsl_sycl_loader.cpp",
        "src/kdsl_spirv_validate.cpp",
        "src/kdsl_sycl_opencl.cpp",
        "src/kdsl_sycl_opencl.h",
        "include/kdsl_sycl.h",
        "include/kdsl_sycl_shim.h",
        "include/kdsl_spirv_validate.h",
    ] {
        println!("cargo:rerun-if-changed={}", shim.join(file).display());
    }
}

/// Compiles `kdsl_sycl.cpp` into a shared library that links libsycl, with the C++ compiler and
/// flags the `cc` crate picks for this target and profile.
#[cfg(feature = "sycl")]
fn build_shim_library(
    shim: &std::path::Path,
    include: &std::path::Path,
    lib: &std::path::Path,
    output: &std::path::Path,
) {
    std::fs::create_dir_all(output.parent().expect("the output has a directory"))
        .expect("the build directory is writable");
    let compiler = cc::Build::new()
        .cpp(true)
        .cargo_metadata(false)
        .pic(true)
        .get_compiler();
    let mut command = compiler.to_command();
    command
        .arg("-std=c++17")
        .arg("-shared")
        .arg("-DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING")
        .arg("-Wno-unused-parameter")
        .arg("-Wno-deprecated-declarations")
        .arg("-I")
        .arg(shim.join("include"))
        .arg("-I")
        .arg(include)
        .arg(shim.join("src/kdsl_sycl.cpp"))
        .arg(shim.join("src/kdsl_spirv_validate.cpp"))
        .arg(shim.join("src/kdsl_sycl_opencl.cpp"))
        .arg("-o")
        .arg(output)
        // Every symbol must resolve now, not when a binary first opens the library.
        .arg("-Wl,-z,defs")
        .arg(format!("-L{}", lib.display()))
        .arg("-lsycl")
        // SPIRV-Tools' validator (Debian's spirv-tools ships it as a static library), so the
        // shim validates SPIR-V in process before a driver sees it.
        .arg("-l:libSPIRV-Tools.a")
        // The library finds libsycl.so at run time without LD_LIBRARY_PATH.
        .arg(format!("-Wl,-rpath,{}", lib.display()));
    let status = command
        .status()
        .unwrap_or_else(|error| panic!("could not run the C++ compiler ({command:?}): {error}"));
    if !status.success() {
        panic!(
            "building {} failed: {command:?} exited with {status}",
            output.display()
        );
    }
}
