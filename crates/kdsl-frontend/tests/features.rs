//! The features analysis (`kdsl_ir::analysis::features`) on checked modules: first uses in
//! evaluation order with their spans, calls, synchronization through calls, matrix shapes.

use kdsl_ir::analysis::{FunctionFeatures, ModuleFeatures, Use};
use kdsl_ir::{
    Builtin, FunctionId, MathFunction, MatrixShape, Module, Reduction, ScalarType, SubGroupOp,
};
use std::collections::HashSet;

fn module(source: &str) -> Module {
    kdsl_frontend::compile_to_ir(source).unwrap_or_else(|diagnostics| {
        panic!(
            "{}",
            kdsl_frontend::render_diagnostics("test.krn", source, &diagnostics, false)
        )
    })
}

fn id(module: &Module, name: &str) -> FunctionId {
    let index = module.functions.iter().position(|f| f.name == name);
    FunctionId(index.unwrap_or_else(|| panic!("no function `{name}`")) as u32)
}

/// The index of `used` among the body's first uses and the source text at its span.
fn first<'s>(features: &FunctionFeatures, used: Use, source: &'s str) -> (usize, &'s str) {
    let index = features
        .body
        .iter()
        .position(|first| first.used == used)
        .unwrap_or_else(|| panic!("{used:?} not in {:#?}", features.body));
    (index, &source[features.body[index].span.range()])
}

#[test]
fn first_uses_come_in_evaluation_order_each_once() {
    let source = "
kernel k(out: global mut [f32], n: u32) {
    let i = get_global_id(0);
    out[i] = sqrt(out[i]) + sqrt(out[n]);
    let s = sub_group_reduce_add(n);
    out[sub_group_broadcast(s, 0)] = sub_group_shuffle(out[i], i);
    print(\"{} {}\", i == 0, s == 1);
    barrier();
}";
    let module = module(source);
    let features = ModuleFeatures::new(&module);
    let k = features.function(id(&module, "k"));
    let declared: Vec<Use> = k.declared.iter().map(|first| first.used).collect();
    assert_eq!(
        declared,
        [Use::Scalar(ScalarType::F32), Use::Scalar(ScalarType::U32)]
    );
    let math = Use::Builtin(Builtin::Math(MathFunction::Sqrt), ScalarType::F32);
    let reduce = Builtin::SubGroup(SubGroupOp::Reduce(Reduction::Add));
    let shuffle = Builtin::SubGroup(SubGroupOp::Shuffle);
    let broadcast = Builtin::SubGroup(SubGroupOp::Broadcast);
    let (math, math_text) = first(k, math, source);
    let (reduce, reduce_text) = first(k, Use::Builtin(reduce, ScalarType::U32), source);
    let (shuffle, shuffle_text) = first(k, Use::Builtin(shuffle, ScalarType::F32), source);
    let (broadcast, _) = first(k, Use::Builtin(broadcast, ScalarType::U32), source);
    let (print, print_text) = first(k, Use::Print { bools: 2 }, source);
    let (barrier, _) = first(k, Use::Barrier, source);
    let (boolean, bool_text) = first(k, Use::Scalar(ScalarType::Bool), source);
    assert_eq!(math_text, "sqrt(out[i])");
    assert_eq!(reduce_text, "sub_group_reduce_add(n)");
    assert_eq!(shuffle_text, "sub_group_shuffle(out[i], i)");
    assert!(print_text.starts_with("print("), "{print_text}");
    assert_eq!(bool_text, "i == 0");
    // A store's value before its place.
    assert!(math < reduce && reduce < shuffle && shuffle < broadcast);
    assert!(broadcast < boolean && boolean < print && print < barrier);
    // Types already declared are not repeated.
    assert!(!k
        .body
        .iter()
        .any(|f| f.used == Use::Scalar(ScalarType::F32)));
    let uses: Vec<Use> = k.uses().map(|first| first.used).collect();
    let distinct: HashSet<Use> = uses.iter().copied().collect();
    assert_eq!(distinct.len(), uses.len(), "each use once: {uses:?}");
    assert!(k.calls.is_empty());
    assert!(!features.uses_matrix() && !features.uses_work_group_collectives());
}

#[test]
fn synchronization_reaches_through_calls_and_queries_do_not_count() {
    let source = "
fn wait() {
    barrier();
}

fn lane() -> u32 {
    return sub_group_local_id() + sub_group_size();
}

fn total(x: u32) -> u32 {
    return work_group_reduce_add(x);
}

kernel waits(out: global mut [u32]) {
    wait();
    out[get_global_id(0)] = 1;
}

kernel queries(out: global mut [u32]) {
    out[get_global_id(0)] = lane() + lane();
}

kernel exchanges(out: global mut [u32]) {
    out[get_global_id(0)] = sub_group_shuffle_down(get_global_id(0), 1);
}

kernel collects(out: global mut [u32]) {
    out[get_global_id(0)] = total(get_global_id(0));
}";
    let module = module(source);
    let features = ModuleFeatures::new(&module);
    let synchronizes = |name: &str| features.synchronizes(id(&module, name));
    assert!(synchronizes("waits"));
    assert!(!synchronizes("queries"));
    assert!(synchronizes("exchanges"));
    assert!(synchronizes("collects"));
    assert!(features.uses_work_group_collectives());
    let lane = id(&module, "lane");
    assert_eq!(
        features.function(id(&module, "queries")).calls,
        [lane, lane]
    );
    assert_eq!(
        features.function(id(&module, "waits")).calls,
        [id(&module, "wait")]
    );
}

#[test]
fn matrix_statements_and_their_shapes() {
    let tiles = module(include_str!("../../../tests/kernels/matrix.krn"));
    let features = ModuleFeatures::new(&tiles);
    assert!(features.uses_matrix());
    assert_eq!(features.matrix_shapes(), [MatrixShape::F16M16N16K16]);
    let global = features.function(id(&tiles, "mma_global"));
    assert!(global.uses_matrix());
    // Matrix statements are not synchronization here: the interpreter runs their plain loops.
    assert!(!global.synchronizes_itself());
    // The accumulator's load and store name the first shape whose accumulator it is (both
    // are `[f32; 256]`), so the tf32 kernel uses both shapes.
    let tf32 = module(include_str!("../../../tests/kernels/matrix_tf32.krn"));
    assert_eq!(
        ModuleFeatures::new(&tf32).matrix_shapes(),
        [MatrixShape::F16M16N16K16, MatrixShape::Tf32M16N16K8]
    );
    // Likewise `[i32; 256]` accumulators name the `i8` shape, so `u8` tiles use both (and
    // AMDGPU's MFMA, which has no `u8`, takes the plain lowering for the whole module).
    let i8 = module(include_str!("../../../tests/kernels/matrix_i8.krn"));
    assert_eq!(
        ModuleFeatures::new(&i8).matrix_shapes(),
        [MatrixShape::I8M16N16K16]
    );
    let u8 = module(include_str!("../../../tests/kernels/matrix_u8.krn"));
    assert_eq!(
        ModuleFeatures::new(&u8).matrix_shapes(),
        [MatrixShape::I8M16N16K16, MatrixShape::U8M16N16K16]
    );
    let plain = module(include_str!("../../../examples/saxpy.krn"));
    let features = ModuleFeatures::new(&plain);
    assert!(!features.uses_matrix() && features.matrix_shapes().is_empty());
}

#[test]
fn asynchronous_copies_are_a_use_that_does_not_synchronize() {
    let source = "
kernel k(out: global mut [f32], input: global [f32]) {
    local tile: [f32; 64];
    async_copy(tile[get_local_id(0) * 4], input[get_global_id(0) * 4], 4);
    async_commit();
    async_wait(0);
    out[get_global_id(0)] = tile[get_local_id(0)];
}";
    let module = module(source);
    let features = ModuleFeatures::new(&module);
    let k = features.function(id(&module, "k"));
    let (_, text) = first(k, Use::AsyncCopy, source);
    assert_eq!(
        text,
        "async_copy(tile[get_local_id(0) * 4], input[get_global_id(0) * 4], 4);"
    );
    assert!(features.uses_async_copies());
    // A work-item's copies reach the others only through a barrier, which is its own use.
    assert!(!features.synchronizes(id(&module, "k")));
    let plain = kdsl_frontend::compile_to_ir("kernel p(out: global mut [f32]) { out[0] = 1.0; }")
        .expect("compiles");
    assert!(!ModuleFeatures::new(&plain).uses_async_copies());
}

#[test]
fn matrix_group_statements_are_found_through_calls() {
    let source = "
fn multiply(acc: private mut [f32; 4], a: local [f16; 1024], b: local [f16; 512]) {
    matrix_group_mma(acc, a, 0, 512, b, 0, 512, 16);
}

kernel through_call(out: global mut [f32]) {
    local a: [f16; 1024];
    local b: [f16; 512];
    let mut acc: [f32; 4];
    for i in 0u32..4 {
        acc[i] = 0.0;
    }
    multiply(acc, a, b);
    out[get_global_id(0)] = acc[0];
}

kernel without(out: global mut [f32]) {
    out[get_global_id(0)] = 1.0;
}";
    let module = module(source);
    let features = ModuleFeatures::new(&module);
    assert!(features.runs_group_matrix(id(&module, "through_call")));
    assert!(features.runs_group_matrix(id(&module, "multiply")));
    assert!(!features.runs_group_matrix(id(&module, "without")));
    assert!(!features.function(id(&module, "through_call")).uses_matrix());
}
