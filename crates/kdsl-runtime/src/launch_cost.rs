//! The host-side cost of a launch without any driver: a backend that submits nothing, so a
//! timing of `Queue::launch` on it is what the runtime adds on top of the driver's launch call
//! (the checks, the argument lists, the ordering bookkeeping, the event handles).
//!
//! `cargo test --release -p kdsl-runtime launch_cost -- --ignored --nocapture` prints it.

use crate::args::ArgumentLayout;
use crate::backend::{
    DeviceBackend, EventBackend, KernelBackend, ModuleBackend, QueueBackend, RawArgument, Submitted,
};
use crate::buffer::MemoryKind;
use crate::device::{test_device, BackendKind, Device, DeviceTarget, DeviceType};
use crate::error::Result;
use crate::launch::Launch;
use crate::program::Kernel;
use crate::{args, Buffer};
use kdsl_bundle::{Bundle, Image, KernelInfo, ParameterInfo};
use kdsl_ir::{AddressSpace, ScalarType};
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Hands out addresses and completes everything at once.
struct NullDevice {
    next: AtomicU64,
    queue: Arc<NullQueue>,
}

/// Numbers its submissions like a CUDA stream: a profiled one also makes an event for each.
struct NullQueue {
    profiled: bool,
    submitted: AtomicU64,
}
struct NullEvent;

impl NullQueue {
    fn new(profiled: bool) -> NullQueue {
        NullQueue {
            profiled,
            submitted: AtomicU64::new(0),
        }
    }

    fn submitted(&self) -> Submitted {
        let sequence = self.submitted.fetch_add(1, Ordering::AcqRel) + 1;
        if self.profiled {
            Submitted::Timed(Arc::new(NullEvent), sequence)
        } else {
            Submitted::Sequence(sequence)
        }
    }
}
struct NullKernel;

impl DeviceBackend for NullDevice {
    fn allocate(&self, bytes: usize, _kind: MemoryKind) -> Result<u64> {
        Ok(self
            .next
            .fetch_add((bytes as u64).next_multiple_of(256), Ordering::Relaxed))
    }
    fn free(&self, _address: u64, _kind: MemoryKind) {}
    fn default_queue(&self) -> Arc<dyn QueueBackend> {
        Arc::clone(&self.queue) as Arc<dyn QueueBackend>
    }
    fn new_queue(&self, profiled: bool) -> Result<Arc<dyn QueueBackend>> {
        Ok(Arc::new(NullQueue::new(profiled)))
    }
    fn load(&self, _bundle: &Bundle, _image: &Image) -> Result<Arc<dyn ModuleBackend>> {
        unreachable!("the probe makes its kernel directly")
    }
}

impl QueueBackend for NullQueue {
    fn copy(
        &self,
        _destination: u64,
        _source: u64,
        _bytes: usize,
        _wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted> {
        Ok(self.submitted())
    }
    fn fill(
        &self,
        _address: u64,
        _pattern: &[u8],
        _count: usize,
        _wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted> {
        Ok(self.submitted())
    }
    fn launch(
        &self,
        _kernel: &dyn KernelBackend,
        _launch: &Launch,
        arguments: &[RawArgument],
        _wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted> {
        std::hint::black_box(arguments);
        Ok(self.submitted())
    }
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    fn event_after(&self, _sequence: u64) -> Result<Arc<dyn EventBackend>> {
        Ok(Arc::new(NullEvent))
    }
}

impl EventBackend for NullEvent {
    fn wait(&self) -> Result<()> {
        Ok(())
    }
    fn is_complete(&self) -> Result<bool> {
        Ok(true)
    }
    fn elapsed_ns(&self) -> Result<u64> {
        Ok(0)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl KernelBackend for NullKernel {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn saxpy_info() -> KernelInfo {
    let buffer = |name: &str, writable| ParameterInfo::Buffer {
        name: name.into(),
        element: ScalarType::F32,
        space: AddressSpace::Global,
        writable,
        alignment: 0,
        record: None,
    };
    KernelInfo {
        name: "saxpy".into(),
        parameters: vec![
            buffer("y", true),
            buffer("x", false),
            ParameterInfo::Scalar {
                name: "a".into(),
                ty: ScalarType::F32,
            },
            ParameterInfo::Scalar {
                name: "n".into(),
                ty: ScalarType::U32,
            },
        ],
        ids_fit_in_31_bits: true,
        ..KernelInfo::default()
    }
}

fn null_device() -> Device {
    let info = test_device(
        BackendKind::Cuda,
        "cuda",
        0,
        DeviceType::Gpu,
        DeviceTarget::Ptx { major: 9, minor: 0 },
    );
    Device::from_backend(
        info,
        Box::new(NullDevice {
            next: AtomicU64::new(1 << 20),
            queue: Arc::new(NullQueue::new(true)),
        }),
    )
}

/// The saxpy kernel on the null backend.
fn null_saxpy_kernel(device: &Device) -> Kernel {
    Kernel {
        device: device.clone(),
        layout: ArgumentLayout::new(&saxpy_info()),
        info: saxpy_info(),
        source_name: "saxpy.krn".into(),
        image: "null".into(),
        matrix_groups_on_units: false,
        tile_sub_group_size: None,
        backend: Box::new(NullKernel),
        contiguous: None,
    }
}

#[test]
fn matrix_groups_on_matrix_units_refuse_partial_groups() {
    let device = null_device();
    let kernel = Kernel {
        info: KernelInfo {
            matrix_groups: true,
            ..saxpy_info()
        },
        image: "ptx:sm_90a".into(),
        matrix_groups_on_units: true,
        tile_sub_group_size: None,
        ..null_saxpy_kernel(&device)
    };
    let x: Buffer<f32> = device.buffer_from(&[1.0; 256]).unwrap();
    let mut y: Buffer<f32> = device.buffer_from(&[0.0; 256]).unwrap();
    let args = args![&mut y, &x, 2.0f32, 256u32];
    match kernel.launch(&Launch::new([256], [64]), &args) {
        Err(crate::RuntimeError::BadLaunch { why, .. }) => assert!(
            why.contains("ptx:sm_90a") && why.contains("64 work-items"),
            "{why}"
        ),
        other => panic!("a work-group of 64 gave {other:?}"),
    }
    kernel
        .launch(&Launch::new([256], [128]), &args)
        .unwrap()
        .wait()
        .unwrap();
    // Left open, 384 work-items would be 2 groups of 192; they become 3 of 128.
    let x: Buffer<f32> = device.buffer_from(&[1.0; 384]).unwrap();
    let mut y: Buffer<f32> = device.buffer_from(&[0.0; 384]).unwrap();
    let open = args![&mut y, &x, 2.0f32, 384u32];
    kernel
        .launch(&Launch::global_only([384]), &open)
        .unwrap()
        .wait()
        .unwrap();
    let plain = Kernel {
        matrix_groups_on_units: false,
        tile_sub_group_size: None,
        ..kernel
    };
    plain
        .launch(&Launch::new([256], [64]), &args)
        .unwrap()
        .wait()
        .unwrap();
}

#[test]
fn null_backend_launches_check_and_order_like_a_real_one() {
    let device = null_device();
    let kernel = null_saxpy_kernel(&device);
    let x: Buffer<f32> = device.buffer_from(&[1.0; 32]).unwrap();
    let mut y: Buffer<f32> = device.buffer_from(&[0.0; 32]).unwrap();
    let queue = device.queue_without_profiling().unwrap();
    let launch = Launch::new([32], [32]);
    queue
        .launch(&kernel, &launch, &args![&mut y, &x, 2.0f32, 32u32], &[])
        .unwrap()
        .wait()
        .unwrap();
    kernel
        .launch(&launch, &args![&mut y, &x, 2.0f32, 32u32])
        .unwrap();
    assert!(kernel.launch(&launch, &args![&mut y, &x, 2.0f32]).is_err());
    assert!(kernel
        .launch(&Launch::new([33], [32]), &args![&mut y, &x, 2.0f32, 32u32])
        .is_err());
}

/// A kernel backend that says which entry point it is.
struct EntryKernel(&'static str);

impl KernelBackend for EntryKernel {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `scale(out: global mut [[f32]], input: global [[f32]])` with both entry points.
fn null_scale_kernel(device: &Device) -> Kernel {
    let buffer = |name: &str, writable| ParameterInfo::Buffer {
        name: name.into(),
        element: ScalarType::F32,
        space: AddressSpace::Global,
        writable,
        alignment: 0,
        record: None,
    };
    let scalar = |name: &str, ty| ParameterInfo::Scalar {
        name: name.into(),
        ty,
    };
    let mut parameters = Vec::new();
    let mut shaped_buffers = Vec::new();
    for (name, writable) in [("out", true), ("input", false)] {
        let first = parameters.len();
        parameters.push(buffer(name, writable));
        parameters.push(scalar("shape0", ScalarType::U32));
        parameters.push(scalar("shape1", ScalarType::U32));
        parameters.push(scalar("stride0", ScalarType::U64));
        parameters.push(scalar("stride1", ScalarType::U64));
        shaped_buffers.push(kdsl_bundle::ShapedBufferInfo {
            buffer: first,
            rank: 2,
            shape: vec![first + 1, first + 2],
            strides: vec![first + 3, first + 4],
        });
    }
    let info = KernelInfo {
        name: "scale".into(),
        parameters,
        shaped_buffers,
        contiguous_entry: Some("scale$contiguous".into()),
        ..KernelInfo::default()
    };
    Kernel {
        device: device.clone(),
        layout: ArgumentLayout::new(&info),
        contiguous: Some(crate::program::ContiguousEntry {
            backend: Box::new(EntryKernel("contiguous")),
            innermost_strides: info.innermost_strides().collect(),
            tensor_maps: Vec::new(),
        }),
        info,
        source_name: "scale.krn".into(),
        image: "null".into(),
        matrix_groups_on_units: false,
        tile_sub_group_size: None,
        backend: Box::new(EntryKernel("own")),
    }
}

#[test]
fn unit_innermost_strides_choose_the_contiguous_entry() {
    let device = null_device();
    let kernel = null_scale_kernel(&device);
    let output: Buffer<f32> = device.buffer_from(&[0.0; 16]).unwrap();
    let input: Buffer<f32> = device.buffer_from(&[1.0; 16]).unwrap();
    let entry = |out_strides: [u64; 2], input_strides: [u64; 2]| {
        let mut arguments =
            crate::ShapedArgument::strided(&output, &[4, 4], &out_strides).arguments();
        arguments
            .extend(crate::ShapedArgument::strided(&input, &[4, 4], &input_strides).arguments());
        let chosen = kernel.entry_for(&arguments).as_any();
        chosen.downcast_ref::<EntryKernel>().unwrap().0
    };
    assert_eq!(entry([4, 1], [4, 1]), "contiguous");
    // Padded rows are still contiguous rows.
    assert_eq!(entry([4, 1], [8, 1]), "contiguous");
    assert_eq!(entry([1, 4], [4, 1]), "own", "a transposed output");
    assert_eq!(entry([4, 1], [1, 4]), "own", "a transposed input");
    assert_eq!(entry([8, 2], [4, 1]), "own", "every other column");
}

#[test]
#[ignore = "a timing: run with --release --ignored --nocapture"]
fn launch_cost() {
    let device = null_device();
    let kernel = null_saxpy_kernel(&device);
    let x: Buffer<f32> = device.buffer_from(&[1.0; 32]).unwrap();
    let mut y: Buffer<f32> = device.buffer_from(&[0.0; 32]).unwrap();
    let queue = device.queue_without_profiling().unwrap();
    let launches: usize = std::env::var("KDSL_LAUNCH_COST_LAUNCHES")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(2_000_000);
    for round in 0..3 {
        let start = Instant::now();
        for _ in 0..launches {
            let event = queue
                .launch(
                    &kernel,
                    &Launch::new([32], [32]),
                    &args![&mut y, &x, 2.0f32, 32u32],
                    &[],
                )
                .unwrap();
            std::hint::black_box(event);
        }
        let queue_ns = start.elapsed().as_secs_f64() * 1e9 / launches as f64;
        let start = Instant::now();
        for _ in 0..launches {
            let event = kernel
                .launch(&Launch::new([32], [32]), &args![&mut y, &x, 2.0f32, 32u32])
                .unwrap();
            std::hint::black_box(event);
        }
        let default_ns = start.elapsed().as_secs_f64() * 1e9 / launches as f64;
        println!(
            "round {round}: Queue::launch {queue_ns:.1} ns, Kernel::launch {default_ns:.1} ns \
             per launch (host side only, no driver)"
        );
    }
}
