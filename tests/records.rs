//! Records in buffers through the facade: the bundle metadata carries the layout, a launch on
//! the default device reads and writes fields at C offsets, a buffer whose length is not a
//! whole number of records is a typed error, and checked mode bounds the record index.

use kdsl::bundle::ParameterInfo;
use kdsl::runtime::{args, Device, FaultKind, Launch, RuntimeError};
use kdsl::CompileOptions;

const SOURCE: &str = "struct Particle { tag: u8, mass: f64, charge: i16 }

kernel heavier(input: global [Particle], out: global mut [Particle], by: u32) {
    let i = get_global_id(0);
    let p = input[i];
    out[i + by] = Particle { tag: p.tag + 1u8, mass: p.mass * 2.0, charge: -p.charge };
}
";

/// `Particle` as C lays it out: tag at 0, mass at 8, charge at 16, 24 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Particle {
    tag: u8,
    mass: f64,
    charge: i16,
}

fn to_bytes(particles: &[Particle]) -> Vec<u8> {
    let mut bytes = vec![0u8; particles.len() * 24];
    for (record, p) in bytes.chunks_exact_mut(24).zip(particles) {
        record[0] = p.tag;
        record[8..16].copy_from_slice(&p.mass.to_le_bytes());
        record[16..18].copy_from_slice(&p.charge.to_le_bytes());
    }
    bytes
}

fn from_bytes(bytes: &[u8]) -> Vec<Particle> {
    bytes
        .chunks_exact(24)
        .map(|r| Particle {
            tag: r[0],
            mass: f64::from_le_bytes(r[8..16].try_into().unwrap()),
            charge: i16::from_le_bytes(r[16..18].try_into().unwrap()),
        })
        .collect()
}

fn compile(checked: bool) -> kdsl::Bundle {
    let options = CompileOptions {
        checked,
        ..CompileOptions::default()
    };
    kdsl::compile("particles.krn", SOURCE, &kdsl::default_targets(), &options).unwrap()
}

#[test]
fn record_layouts_are_in_the_metadata_and_equal_repr_c() {
    let bundle = compile(false);
    let ParameterInfo::Buffer {
        record: Some(record),
        element,
        ..
    } = &bundle.kernels[0].parameters[0]
    else {
        panic!(
            "`input` is not a buffer of records: {:?}",
            bundle.kernels[0]
        );
    };
    assert_eq!(*element, kdsl::ir::ScalarType::U8);
    assert_eq!(record.name, "Particle");
    assert_eq!(record.size as usize, std::mem::size_of::<Particle>());
    assert_eq!(record.alignment as usize, std::mem::align_of::<Particle>());
    let offsets: Vec<(String, usize)> = record
        .fields
        .iter()
        .map(|f| (f.name.clone(), f.offset as usize))
        .collect();
    assert_eq!(
        offsets,
        [
            ("tag".to_string(), std::mem::offset_of!(Particle, tag)),
            ("mass".to_string(), std::mem::offset_of!(Particle, mass)),
            ("charge".to_string(), std::mem::offset_of!(Particle, charge)),
        ]
    );
}

#[test]
fn records_round_trip_on_the_default_device() {
    let device =
        Device::default().expect("a device (the OpenCL CPU device after scripts/setup.sh)");
    let kernel = device
        .load(&compile(false))
        .unwrap()
        .kernel("heavier")
        .unwrap();
    let n = 64usize;
    let particles: Vec<Particle> = (0..n)
        .map(|i| Particle {
            tag: i as u8,
            mass: i as f64 * 0.25,
            charge: i as i16 - 30,
        })
        .collect();
    let input = device.buffer_from(&to_bytes(&particles)).unwrap();
    let mut out = device.buffer_from(&vec![0u8; n * 24]).unwrap();
    kernel
        .launch(&Launch::new([n], [16]), &args![&input, &mut out, 0u32])
        .unwrap()
        .wait()
        .unwrap();
    let want: Vec<Particle> = particles
        .iter()
        .map(|p| Particle {
            tag: p.tag + 1,
            mass: p.mass * 2.0,
            charge: -p.charge,
        })
        .collect();
    assert_eq!(from_bytes(&out.read_to_vec().unwrap()), want);

    // A buffer that is not a whole number of records is refused before the launch.
    let short = device.buffer_from(&vec![0u8; n * 24 - 4]).unwrap();
    let error = kernel
        .launch(&Launch::new([n], [16]), &args![&short, &mut out, 0u32])
        .expect_err("the length is not a multiple of 24");
    assert!(
        matches!(&error, RuntimeError::RecordBufferMismatch { index: 0, record, .. } if record == "Particle"),
        "{error}"
    );
    assert!(
        error.to_string().contains("not a multiple of 24"),
        "{error}"
    );
}

#[test]
fn checked_mode_bounds_the_record_index() {
    let device =
        Device::default().expect("a device (the OpenCL CPU device after scripts/setup.sh)");
    let kernel = device
        .load(&compile(true))
        .unwrap()
        .kernel("heavier")
        .unwrap();
    let n = 32usize;
    let input = device.buffer_from(&vec![0u8; n * 24]).unwrap();
    let mut out = device.buffer_from(&vec![0u8; n * 24]).unwrap();
    let error = kernel
        .launch(&Launch::new([n], [16]), &args![&input, &mut out, 2u32])
        .unwrap()
        .wait()
        .expect_err("two work-items store past `out`");
    let RuntimeError::KernelFault(fault) = error else {
        panic!("expected a KernelFault, got {error}");
    };
    assert_eq!(fault.kind, FaultKind::OutOfBounds);
    assert_eq!(fault.what, "buffer `out`");
    assert_eq!(fault.length, n as u64, "the length counts records");
    assert!(fault.index >= n as i128 && fault.index < n as i128 + 2);
    assert_eq!(fault.location, "particles.krn:6:5");
}
