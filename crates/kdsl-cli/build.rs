//! With the `sycl` feature, the `kdsl` binary links libsycl.so from the project's prefix;
//! an rpath lets it run without LD_LIBRARY_PATH.

fn main() {
    println!("cargo:rerun-if-env-changed=KDSL_PREFIX");
    if std::env::var_os("CARGO_FEATURE_SYCL").is_none() {
        return;
    }
    if let Some(prefix) = std::env::var_os("KDSL_PREFIX") {
        let lib = std::path::Path::new(&prefix).join("lib");
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    }
}
