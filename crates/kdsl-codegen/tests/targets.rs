use kdsl_codegen::*;

#[test]
fn scratch() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/saxpy.krn"
    ))
    .unwrap();
    let module = kdsl_frontend::compile_to_ir(&source).unwrap();
    for spec in [
        TargetSpec::spirv(),
        TargetSpec::ptx(Some("sm_90")),
        TargetSpec::amdgpu(None),
    ] {
        match compile(&module, &spec, &Options::default()) {
            Ok(a) => {
                println!("=== {spec}\n{}\n{:?}", a.llvm_ir, a.requirements);
                std::fs::write(format!("/tmp/cg/out-{}", spec.kind), &a.image.bytes).unwrap();
            }
            Err(e) => println!("=== {spec} ERROR {e}"),
        }
    }
}
