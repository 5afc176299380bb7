fn main() {
    // The grammar lives in the top-level grammar/ folder (see ARCHITECTURE.md).
    println!("cargo:rerun-if-changed=../../grammar");
}
