//! Device functions over the inlining budget stay real functions: a kernel whose call graph
//! has 2^24 paths compiles quickly and computes on the default device what the host computes.

use kdsl::runtime::{args, Device, Launch};
use kdsl::CompileOptions;

const LEVELS: u32 = 24;

/// `f{k}` calls `f{k-1}` in both arms of an `if`: inlined, the code would double per level,
/// but each call runs one arm, so running it takes `LEVELS` calls.
fn chain_source() -> String {
    let mut source =
        String::from("fn f0(x: u32) -> u32 {\n    return x * 2654435761u32 + 1u32;\n}\n");
    for k in 1..LEVELS {
        let previous = k - 1;
        source.push_str(&format!(
            "fn f{k}(x: u32) -> u32 {{\n    \
             if ((x >> {k}u32) & 1u32) == 1u32 {{\n        return f{previous}(x) * 3u32 + 1u32;\n    }}\n    \
             return f{previous}(x ^ {k}u32) + 7u32;\n}}\n"
        ));
    }
    let last = LEVELS - 1;
    source.push_str(&format!(
        "kernel chain(output: global mut [u32], input: global [u32]) {{\n    \
         let i = get_global_id(0);\n    output[i] = f{last}(input[i]);\n}}\n"
    ));
    source
}

fn host(level: u32, x: u32) -> u32 {
    if level == 0 {
        return x.wrapping_mul(2654435761).wrapping_add(1);
    }
    if (x >> level) & 1 == 1 {
        host(level - 1, x).wrapping_mul(3).wrapping_add(1)
    } else {
        host(level - 1, x ^ level).wrapping_add(7)
    }
}

#[test]
fn a_chain_of_calls_over_the_inlining_budget_runs_on_the_default_device() {
    let source = chain_source();
    let bundle = kdsl::compile(
        "chain.krn",
        &source,
        &kdsl::default_targets(),
        &CompileOptions::default(),
    )
    .unwrap();
    let device =
        Device::default().expect("a device (the OpenCL CPU device after scripts/setup.sh)");
    let kernel = device.load(&bundle).unwrap().kernel("chain").unwrap();
    let n = 256usize;
    let input: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(40503) ^ (i << 13))
        .collect();
    let input_buffer = device.buffer_from(&input).unwrap();
    let mut output = device.buffer_from(&vec![0u32; n]).unwrap();
    kernel
        .launch(&Launch::new([n], [64]), &args![&mut output, &input_buffer])
        .unwrap()
        .wait()
        .unwrap();
    let want: Vec<u32> = input.iter().map(|&x| host(LEVELS - 1, x)).collect();
    assert_eq!(output.read_to_vec().unwrap(), want);
}
