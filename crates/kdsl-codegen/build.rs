//! Links SPIRV-Tools' validator (Debian's `spirv-tools` ships it as a static library) through
//! the shared C wrapper in `runtime-shim/src/kdsl_spirv_validate.cpp`, so every SPIR-V image
//! is validated in process before the compiler returns it.

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
