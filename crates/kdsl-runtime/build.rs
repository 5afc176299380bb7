//! Builds the SYCL shim (runtime-shim/) with cxx-build when the `sycl` feature is on.

fn main() {
    println!("cargo:rerun-if-env-changed=KDSL_PREFIX");
    #[cfg(feature = "sycl")]
    build_sycl_shim();
}

#[cfg(feature = "sycl")]
fn build_sycl_shim() {
    use std::path::PathBuf;

    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
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
    cxx_build::bridge("src/backend/sycl.rs")
        .file(shim.join("src/kdsl_sycl.cpp"))
        .include(shim.join("include"))
        .include(&include)
        .std("c++17")
        .define("SYCL_DISABLE_FSYCL_SYCLHPP_WARNING", None)
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-deprecated-declarations")
        .compile("kdsl_sycl_shim");
    println!("cargo:rustc-link-search=native={}", lib.display());
    println!("cargo:rustc-link-lib=dylib=sycl");
    // Binaries find libsycl.so at run time without LD_LIBRARY_PATH.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    println!("cargo:rerun-if-changed=src/backend/sycl.rs");
    println!(
        "cargo:rerun-if-changed={}",
        shim.join("src/kdsl_sycl.cpp").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        shim.join("include/kdsl_sycl.h").display()
    );
}
