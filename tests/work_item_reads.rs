//! Work-item ids read again in a later block than the first read (fuzzgen seed 9454): at -O0
//! Intel's OpenCL CPU device computed `get_global_id(0) - gid` wrong from work-item 16 on,
//! until kdsl's SPIR-V read each query once, in the function's entry block. The kernels of
//! `tests/kernels/work_item_reads.krn` on the default device, at -O0 and -O3.

use kdsl::runtime::{args, Device, Launch};

const SOURCE: &str = include_str!("kernels/work_item_reads.krn");
const WORK_ITEMS: u32 = 64;
const GROUP: u32 = 32;

fn mix0(x: u32) -> u32 {
    x.wrapping_mul(2654435761) ^ (x >> 13)
}

fn mix1(x: u32) -> u32 {
    mix0(x) ^ mix0(x + 1) ^ mix0(x + 2) ^ mix0(x + 3)
}

fn mix2(x: u32) -> u32 {
    mix1(x) ^ mix1(x + 5) ^ mix1(x + 6) ^ mix1(x + 7)
}

fn mix3(x: u32) -> u32 {
    mix2(x) ^ mix2(x + 9) ^ mix2(x + 10) ^ mix2(x + 11)
}

/// What work-item `gid` of `kernel` stores, launched with `s` = 1.
fn expected(kernel: &str, gid: u32) -> u32 {
    match kernel {
        "local_id_read_again" => 8u32.wrapping_sub(gid / GROUP * GROUP) % 3,
        "read_again_in_kept_helper" => {
            let noise = mix3(gid) ^ mix3(gid + 13) ^ mix3(gid + 14);
            2u32.wrapping_add(noise.wrapping_mul(4))
        }
        _ => 2,
    }
}

#[test]
fn ids_read_again_after_a_branch_are_right_at_every_level() {
    let kernels = [
        "read_again_in_branch",
        "read_again_in_loop",
        "local_id_read_again",
        "read_again_in_inlined_helper",
        "read_again_in_kept_helper",
    ];
    let device =
        Device::default().expect("a device (the OpenCL CPU device after scripts/setup.sh)");
    for opt_level in [0, 3] {
        let program = super::load_at_level(&device, "work_item_reads.krn", SOURCE, opt_level);
        for name in kernels {
            let mut out = device
                .buffer_from(&vec![77u32; WORK_ITEMS as usize])
                .unwrap();
            program
                .kernel(name)
                .unwrap()
                .launch(
                    &Launch::new([WORK_ITEMS as usize], [GROUP as usize]),
                    &args![1i32, &mut out],
                )
                .unwrap()
                .wait()
                .unwrap();
            let values = out.read_to_vec().unwrap();
            let wrong: Vec<String> = (0..WORK_ITEMS)
                .filter(|&gid| values[gid as usize] != expected(name, gid))
                .map(|gid| {
                    format!(
                        "[{gid}] = {} (expected {})",
                        values[gid as usize],
                        expected(name, gid)
                    )
                })
                .collect();
            assert!(
                wrong.is_empty(),
                "{name} at -O{opt_level}: {} of {WORK_ITEMS} wrong: {}",
                wrong.len(),
                wrong.join(", ")
            );
        }
    }
}
