//! SPIR-V reads each work-item query once per function, in its entry block: Intel's OpenCL
//! CPU device compiler got an id read again in a later block wrong (fuzzgen seed 9454). The
//! device runs are in the root's `tests/work_item_reads.rs`.

use crate::common::{kernel_modules, llvm_function};
use kdsl_codegen::{emit_llvm_ir, Options, TargetSpec};

const BUILTINS: [&str; 6] = [
    "@_Z13get_global_idj(",
    "@_Z12get_local_idj(",
    "@_Z12get_group_idj(",
    "@_Z14get_local_sizej(",
    "@_Z15get_global_sizej(",
    "@_Z14get_num_groupsj(",
];

/// A work-item read: the index of its block in the function, and the call from the builtin's
/// name on.
type Read = (usize, String);

/// A function's work-item reads.
struct FunctionReads {
    name: String,
    /// The block being read (`None` before the function's first label or instruction).
    block: Option<usize>,
    reads: Vec<Read>,
}

/// The work-item reads of every function defined in `ir`.
fn reads_per_function(ir: &str) -> Vec<FunctionReads> {
    let mut functions = Vec::new();
    let mut current: Option<FunctionReads> = None;
    for line in ir.lines() {
        if line.starts_with("define ") {
            let name = line
                .split('@')
                .nth(1)
                .and_then(|rest| rest.split('(').next())
                .unwrap_or_default()
                .to_string();
            current = Some(FunctionReads {
                name,
                block: None,
                reads: Vec::new(),
            });
        } else if line == "}" {
            functions.extend(current.take());
        } else if let Some(function) = current.as_mut() {
            // A label (`entry:`, `body:`, `5:`) starts a block; an entry block may have none.
            let label = line.split(';').next().unwrap_or("").trim_end();
            if !line.starts_with(' ') && label.ends_with(':') {
                function.block = Some(function.block.map_or(0, |index| index + 1));
                continue;
            }
            let block = *function.block.get_or_insert(0);
            if let Some(builtin) = BUILTINS.iter().find(|b| line.contains(*b)) {
                let call = &line[line.find(builtin).unwrap_or(0)..];
                let call = call.split(')').next().unwrap_or(call).to_string();
                function.reads.push((block, call));
            }
        }
    }
    functions
}

fn assert_read_once_at_entry(stem: &str, opt_level: u8, ir: &str) -> usize {
    let mut total = 0;
    for FunctionReads { name, reads, .. } in reads_per_function(ir) {
        for (index, (block, call)) in reads.iter().enumerate() {
            assert_eq!(
                *block, 0,
                "{stem} -O{opt_level}: @{name} reads {call}) in block {block}, not its entry block"
            );
            assert!(
                !reads[..index].iter().any(|(_, earlier)| earlier == call),
                "{stem} -O{opt_level}: @{name} reads {call}) twice"
            );
        }
        total += reads.len();
    }
    total
}

#[test]
fn every_kernel_reads_each_work_item_query_once_in_its_entry_block() {
    let mut total = 0;
    for (stem, module) in kernel_modules() {
        let levels: &[u8] = if stem == "work_item_reads" {
            &[0, 3]
        } else {
            &[0]
        };
        for &opt_level in levels {
            let ir = emit_llvm_ir(
                module,
                &TargetSpec::spirv(),
                &Options::with_opt_level(opt_level),
            )
            .unwrap_or_else(|e| panic!("{stem} -O{opt_level}: {e}"));
            total += assert_read_once_at_entry(stem, opt_level, &ir);
        }
    }
    assert!(total > 100, "only {total} work-item reads in all kernels");
}

/// The helper over the inlining budget stays a function and reads the id at its own entry.
#[test]
fn a_helper_that_stays_a_function_reads_the_id_once_at_its_entry() {
    let (_, module) = kernel_modules()
        .iter()
        .find(|(stem, _)| stem == "work_item_reads")
        .expect("tests/kernels/work_item_reads.krn");
    for opt_level in [0, 3] {
        let ir = emit_llvm_ir(
            module,
            &TargetSpec::spirv(),
            &Options::with_opt_level(opt_level),
        )
        .unwrap_or_else(|e| panic!("-O{opt_level}: {e}"));
        let helper = llvm_function(&ir, "kdsl.kept_distance_from_id");
        assert_eq!(
            helper.matches("@_Z13get_global_idj(i32 0)").count(),
            1,
            "{helper}"
        );
        // Called, not inlined (at -O3 LLVM merges the two calls into one).
        let kernel = llvm_function(&ir, "read_again_in_kept_helper");
        assert!(kernel.contains("@kdsl.kept_distance_from_id("), "{kernel}");
    }
}

/// PTX and AMDGPU take a kernel's sub-group and matrix-group indices from lane 0 once, in its
/// entry block where every lane is converged (`shfl.sync` with a full mask needs that), even
/// when the source asks for them only inside a branch, so their compilers keep the indices,
/// and the addresses built from them, in uniform (scalar) registers.
#[test]
fn group_indices_are_taken_from_lane_0_in_the_kernel_entry_block() {
    let source = "#[work_group_size(256)]\n\
        kernel indices(out: global mut [u32]) {\n\
            let item = get_local_id(0);\n\
            if item % 3 == 1 {\n\
                out[item] = get_sub_group_id() * 1000 + get_matrix_group_id();\n\
            } else {\n\
                out[item] = get_sub_group_id();\n\
            }\n\
        }\n";
    let module = kdsl_frontend::compile_to_ir(source).expect("the test kernel compiles");
    for (target, broadcast) in [
        (
            TargetSpec::ptx(Some("sm_90")),
            "@llvm.nvvm.shfl.sync.idx.i32(",
        ),
        (TargetSpec::amdgpu(None), "@llvm.amdgcn.readfirstlane.i32("),
    ] {
        let ir = emit_llvm_ir(&module, &target, &Options::with_opt_level(0))
            .unwrap_or_else(|e| panic!("{broadcast}: {e}"));
        let kernel = llvm_function(&ir, "indices");
        let entry = kernel.split("\n\n").next().unwrap_or(kernel);
        // One broadcast per group size (32 or 64 lanes, 128 work-items), none after the entry
        // (AMDGPU modules are optimized at -O1 at least, which merges the two into one).
        let in_entry = entry.matches(broadcast).count();
        assert!((1..=2).contains(&in_entry), "{kernel}");
        assert_eq!(kernel.matches(broadcast).count(), in_entry, "{kernel}");
    }
}
