//! Private arrays start zeroed at every `-O` (fuzzgen seed 6000003). With 16 work-items a group
//! or more, Intel's OpenCL CPU device left private arrays holding whatever was in memory where
//! the front end's zeroing loop reached it (at -O0), and where a second fill followed the
//! zeroing memset (at -O1), until SPIR-V's IR was optimized at -O3 whatever `-O` asks
//! (`Legalization::minimum_opt_level`). On the default device.

use kdsl::runtime::{args, Device, Launch};

const SOURCE: &str = r#"
kernel read_zeroed(out: global mut [f64]) {
    let gid = get_global_id(0);
    let mut narrow: [u16; 3];
    let mut wide: [f64; 5];
    let mut grid: [[u32; 5]; 3];
    out[gid] = (narrow[gid % 3u32] as f64) + wide[gid % 5u32] + (grid[gid % 3u32][gid % 5u32] as f64);
}

kernel filled_after_zeroing(out: global mut [f64]) {
    let gid = get_global_id(0);
    let mut a: [i8; 5];
    for k in 0u32..5u32 {
        a[k] = -1i8;
    }
    out[gid] = a[gid % 5u32] as f64;
}

kernel zeroed_each_iteration(out: global mut [f64]) {
    let gid = get_global_id(0);
    let mut sum = 0.0f64;
    for round in 0u32..3u32 {
        let mut a: [u16; 3];
        a[round] = 7u16;
        sum += a[gid % 3u32] as f64;
    }
    out[gid] = sum;
}
"#;

#[test]
fn private_arrays_start_zeroed_at_every_level() {
    const WORK_ITEMS: usize = 64;
    let device =
        Device::default().expect("a device (the OpenCL CPU device after scripts/setup.sh)");
    for opt_level in [0, 3] {
        let program = super::load_at_level(&device, "private_arrays.krn", SOURCE, opt_level);
        for (name, expected) in [
            ("read_zeroed", 0.0),
            ("filled_after_zeroing", -1.0),
            ("zeroed_each_iteration", 7.0),
        ] {
            for group in [16, 32] {
                let mut out = device.buffer_from(&vec![-1.0f64; WORK_ITEMS]).unwrap();
                program
                    .kernel(name)
                    .unwrap()
                    .launch(&Launch::new([WORK_ITEMS], [group]), &args![&mut out])
                    .unwrap()
                    .wait()
                    .unwrap();
                let values = out.read_to_vec().unwrap();
                let wrong: Vec<(usize, f64)> = values
                    .iter()
                    .copied()
                    .enumerate()
                    .filter(|&(_, value)| value != expected)
                    .collect();
                assert!(
                    wrong.is_empty(),
                    "{name} at -O{opt_level}, groups of {group}: (item, value) {wrong:?}"
                );
            }
        }
    }
}
