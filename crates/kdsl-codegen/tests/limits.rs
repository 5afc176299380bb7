//! Memory a target cannot give a kernel is a diagnostic with the kernel's source, not an
//! internal error from the backend.

use kdsl_codegen::{compile, Options, TargetSpec};

fn codes(source: &str, spec: &TargetSpec) -> Vec<String> {
    let module = kdsl_frontend::compile_to_ir(source).expect("valid kdsl");
    match compile(&module, spec, &Options::default()) {
        Ok(_) => Vec::new(),
        Err(error) => error
            .into_diagnostics()
            .into_iter()
            .map(|d| d.code.to_string())
            .collect(),
    }
}

/// AMDGPU gives a gfx9 work-item at most 131,056 bytes of scratch; LLVM's backend failed
/// (E0902) on a kernel that needs more.
#[test]
fn private_arrays_beyond_amdgpu_scratch_are_a_diagnostic() {
    let direct = "
kernel k(output: global mut [f32], n: u32) {
    let i = get_global_id(0);
    let mut big: [f32; 1000000];
    for j in 0..n { big[(j * 7u32) % 1000000u32] = output[j]; }
    output[i] = big[i % 1000000u32];
}";
    let gfx90a = TargetSpec::amdgpu(Some("gfx90a"));
    assert_eq!(codes(direct, &gfx90a), ["E0604"]);
    // Through a device function, which shares the work-item's scratch.
    let called = "
fn pick(output: global [f32], n: u32, i: u32) -> f32 {
    let mut big: [f32; 40000];
    for j in 0..n { big[(j * 7u32) % 40000u32] = output[j]; }
    return big[i % 40000u32];
}
kernel k(output: global mut [f32], input: global [f32], n: u32) {
    let i = get_global_id(0);
    output[i] = pick(input, n, i);
}";
    assert_eq!(codes(called, &gfx90a), ["E0604"]);
    // Within the limit, it compiles.
    let small = called.replace("40000", "4000");
    assert!(codes(&small, &gfx90a).is_empty());
}
