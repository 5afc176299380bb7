//! Device cases for asynchronous work: queues, events, buffer views, deferred frees, and
//! borrowed (foreign) memory and streams.

use super::{
    bundle_folder, check_close, check_equal, fail, handmade_program, saxpy_reference,
    syclbin_kernel, CaseResult, Random,
};
use kdsl_bundle::Bundle;
use kdsl_ir::ScalarType;
use kdsl_runtime::{args, AnyBuffer, Argument, Device, Launch, RuntimeError, F16};

fn saxpy_kernel(device: &Device) -> Result<kdsl_runtime::Kernel, String> {
    handmade_program(device)?.kernel("saxpy").map_err(fail)
}

/// Non-blocking writes, fills, device copies and reads give the data of blocking ones, and
/// their events report completion and timings.
pub fn asynchronous_transfers(device: &Device) -> CaseResult {
    let n = 1 << 18;
    let data = Random::new(41).f32s(n);
    let mut a = device.alloc::<f32>(n).map_err(fail)?;
    let mut b = device.alloc::<f32>(n).map_err(fail)?;
    let write = a.write_async(data.clone()).map_err(fail)?;
    let copy = b.copy_from(&a).map_err(fail)?;
    let read = b.read_async().map_err(fail)?;
    check_equal(
        "b after write_async and copy_from",
        &read.wait().map_err(fail)?,
        &data,
    )?;
    if !write.is_complete().map_err(fail)? || !copy.is_complete().map_err(fail)? {
        return Err("events of finished work report is_complete() == false".into());
    }
    write.elapsed_ns().map_err(fail)?;
    let fill = a.fill_async(2.5).map_err(fail)?;
    fill.wait().map_err(fail)?;
    check_equal(
        "a after fill_async",
        &a.read_to_vec().map_err(fail)?,
        &vec![2.5f32; n],
    )?;
    // A read dropped before it finished must not write into freed memory.
    for _ in 0..8 {
        drop(b.read_async().map_err(fail)?);
    }
    // u64 and u16 fills use 8- and 2-byte patterns.
    let mut wide = device.alloc::<u64>(1000).map_err(fail)?;
    wide.fill_async(0x0123_4567_89ab_cdef).map_err(fail)?;
    check_equal(
        "u64 fill",
        &wide.read_to_vec().map_err(fail)?,
        &vec![0x0123_4567_89ab_cdefu64; 1000],
    )?;
    let mut narrow = device.alloc::<u16>(1001).map_err(fail)?;
    narrow.fill(0xbeef).map_err(fail)?;
    check_equal(
        "u16 fill",
        &narrow.read_to_vec().map_err(fail)?,
        &vec![0xbeefu16; 1001],
    )?;
    // Length mismatches are typed errors.
    match a.write_async(vec![0.0; n - 1]) {
        Err(RuntimeError::LengthMismatch { .. }) => Ok(()),
        other => Err(format!("a short write_async gave {other:?}")),
    }
}

/// Views of part of a buffer are kernel arguments; aliasing is checked on byte ranges.
pub fn buffer_views_as_arguments(device: &Device) -> CaseResult {
    let kernel = saxpy_kernel(device)?;
    let n = 4096;
    let x = Random::new(42).f32s(2 * n);
    let y = Random::new(43).f32s(2 * n);
    let x_buffer = device.buffer_from(&x).map_err(fail)?;
    let mut y_buffer = device.buffer_from(&y).map_err(fail)?;
    {
        // y[n..2n] += 2 * x[0..n]
        let mut upper = y_buffer.slice_mut(n..).map_err(fail)?;
        let lower_x = x_buffer.slice(..n).map_err(fail)?;
        kernel
            .launch(
                &Launch::covering(n, 256),
                &args![&mut upper, lower_x, 2.0f32, n as u32],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
    }
    let got = y_buffer.read_to_vec().map_err(fail)?;
    let mut want: Vec<f64> = y[..n].iter().map(|&v| f64::from(v)).collect();
    want.extend(saxpy_reference(2.0, &x[..n], &y[n..]));
    check_close("y after a launch on views", &got, &want, 1e-6, None)?;
    check_equal(
        "a view read",
        &y_buffer
            .slice(n..n + 3)
            .map_err(fail)?
            .read_to_vec()
            .map_err(fail)?,
        &got[n..n + 3],
    )?;
    // Overlapping ranges with a writable use are refused; disjoint ones are fine.
    let overlapping = kernel.launch(
        &Launch::covering(n, 256),
        &[
            Argument::writable(&y_buffer),
            y_buffer.slice(10..10 + n).map_err(fail)?.into(),
            Argument::scalar(1.0f32),
            Argument::scalar(n as u32),
        ],
    );
    if !matches!(overlapping, Err(RuntimeError::AliasedBuffers { .. })) {
        return Err(format!("overlapping views gave {overlapping:?}"));
    }
    let whole_and_view = kernel.launch(
        &Launch::covering(n, 256),
        &[
            Argument::writable(&y_buffer),
            y_buffer.slice(n..).map_err(fail)?.into(),
            Argument::scalar(1.0f32),
            Argument::scalar(n as u32),
        ],
    );
    if !matches!(whole_and_view, Err(RuntimeError::AliasedBuffers { .. })) {
        return Err(format!(
            "the whole buffer (writable) with a view of it gave {whole_and_view:?}"
        ));
    }
    // Disjoint views of one buffer, one of them writable: y[0..n] += 1 * y[n..2n].
    let head = y_buffer.slice(..n).map_err(fail)?;
    let tail = y_buffer.slice(n..).map_err(fail)?;
    kernel
        .launch(
            &Launch::covering(n, 256),
            &[
                Argument::writable_view(&head),
                tail.into(),
                Argument::scalar(1.0f32),
                Argument::scalar(n as u32),
            ],
        )
        .map_err(fail)?
        .wait()
        .map_err(fail)?;
    let after = y_buffer.read_to_vec().map_err(fail)?;
    let want: Vec<f64> = (0..n)
        .map(|i| f64::from(got[i]) + f64::from(got[n + i]))
        .collect();
    check_close(
        "y[..n] after disjoint views",
        &after[..n],
        &want,
        1e-6,
        None,
    )?;
    match y_buffer.slice(5..2 * n + 1) {
        Err(RuntimeError::BadRange { .. }) => Ok(()),
        other => Err(format!("an out-of-range view gave {other:?}")),
    }
}

/// Work on a second queue that uses a buffer written on the first is ordered after the write,
/// without an explicit event; explicit `wait_for` lists work too.
pub fn queues_order_conflicting_work(device: &Device) -> CaseResult {
    let kernel = saxpy_kernel(device)?;
    let second = device.queue().map_err(fail)?;
    let n = 1 << 20;
    let x = Random::new(44).f32s(n);
    let mut x_buffer = device.alloc::<f32>(n).map_err(fail)?;
    let mut y_buffer = device.alloc::<f32>(n).map_err(fail)?;
    for round in 0..4 {
        let a = round as f32;
        x_buffer.write_async(x.clone()).map_err(fail)?;
        let filled = second.fill(&mut y_buffer, 1.0, &[]).map_err(fail)?;
        // On the default queue, after the fill on the second queue (ordered by the runtime
        // because both use y; `filled` is passed as well to exercise explicit lists).
        let launched = kernel
            .launch_on(
                &device.default_queue(),
                &Launch::covering(n, 256),
                &args![&mut y_buffer, &x_buffer, a, n as u32],
                &[&filled],
            )
            .map_err(fail)?;
        // Read on the second queue: must see the launch's writes.
        let got = second
            .read(&y_buffer, &[])
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        let want = saxpy_reference(a, &x, &vec![1.0; n]);
        check_close(&format!("round {round}"), &got, &want, 1e-6, None)?;
        if !launched.is_complete().map_err(fail)? {
            return Err("a launch a later read depended on is not complete".into());
        }
    }
    // A kernel of one device instance refuses a queue of another.
    let other = Device::open(device.info()).map_err(fail)?;
    match kernel.launch_on(
        &other.default_queue(),
        &Launch::covering(n, 256),
        &args![&mut y_buffer, &x_buffer, 1.0f32, n as u32],
        &[],
    ) {
        Err(RuntimeError::ForeignQueue { .. }) => {}
        other => return Err(format!("a queue of another instance gave {other:?}")),
    }
    device.synchronize().map_err(fail)
}

/// Buffers dropped while a kernel still uses them are freed after it, and the device stays
/// correct.
pub fn dropping_buffers_with_pending_work(device: &Device) -> CaseResult {
    let kernel = saxpy_kernel(device)?;
    let n = 1 << 20;
    let ones = vec![1.0f32; n];
    for _ in 0..16 {
        let x = device.buffer_from(&ones).map_err(fail)?;
        let mut y = device.alloc::<f32>(n).map_err(fail)?;
        y.fill_async(0.0).map_err(fail)?;
        kernel
            .launch(
                &Launch::covering(n, 256),
                &args![&mut y, &x, 2.0f32, n as u32],
            )
            .map_err(fail)?;
        // Both buffers go now, while the launch may still run.
    }
    device.synchronize().map_err(fail)?;
    let x = device.buffer_from(&ones).map_err(fail)?;
    let mut y = device.buffer_from(&ones).map_err(fail)?;
    kernel
        .launch(
            &Launch::covering(n, 256),
            &args![&mut y, &x, 2.0f32, n as u32],
        )
        .map_err(fail)?;
    check_equal("y", &y.read_to_vec().map_err(fail)?, &vec![3.0f32; n])
}

/// Borrowed memory is checked like any other buffer: device, element type, writability,
/// aliasing.
pub fn borrowed_memory_is_checked(device: &Device) -> CaseResult {
    let kernel = saxpy_kernel(device)?;
    let n = 1000;
    let owner = device.buffer_from(&vec![4.0f32; n]).map_err(fail)?;
    let mut y = device.buffer_from(&vec![1.0f32; n]).map_err(fail)?;
    // SAFETY: `owner` is memory of this device instance and outlives the borrowed buffer.
    let read_only =
        unsafe { AnyBuffer::borrowed(device, owner.as_any().address(), ScalarType::F32, n, true) }
            .map_err(fail)?;
    kernel
        .launch(
            &Launch::covering(n, 256),
            &args![&mut y, &read_only, 0.5f32, n as u32],
        )
        .map_err(fail)?;
    check_equal(
        "y from borrowed x",
        &y.read_to_vec().map_err(fail)?,
        &vec![3.0f32; n],
    )?;
    match kernel.launch(
        &Launch::covering(n, 256),
        &[
            Argument::buffer(&read_only, true),
            Argument::read_only(&y),
            Argument::scalar(1.0f32),
            Argument::scalar(n as u32),
        ],
    ) {
        Err(RuntimeError::ReadOnlyMemoryAsWritable { index: 0, .. }) => {}
        other => return Err(format!("read-only borrowed memory as `mut` gave {other:?}")),
    }
    // SAFETY: as above.
    let mut writable =
        unsafe { AnyBuffer::borrowed(device, owner.as_any().address(), ScalarType::F32, n, false) }
            .map_err(fail)?;
    match writable.write_bytes(&[0u8; 3]) {
        Err(RuntimeError::LengthMismatch { .. }) => {}
        other => return Err(format!("a short write_bytes gave {other:?}")),
    }
    // The borrowed range and its owner overlap: refused when one use writes.
    match kernel.launch(
        &Launch::covering(n, 256),
        &[
            Argument::buffer(&writable, true),
            Argument::read_only(&owner),
            Argument::scalar(1.0f32),
            Argument::scalar(n as u32),
        ],
    ) {
        Err(RuntimeError::AliasedBuffers { .. }) => {}
        other => return Err(format!("a borrowed alias of a buffer gave {other:?}")),
    }
    // A wrong element type is refused.
    // SAFETY: as above (u32 has f32's size).
    let as_u32 =
        unsafe { AnyBuffer::borrowed(device, owner.as_any().address(), ScalarType::U32, n, true) }
            .map_err(fail)?;
    match kernel.launch(
        &Launch::covering(n, 256),
        &args![&mut y, &as_u32, 1.0f32, n as u32],
    ) {
        Err(RuntimeError::ArgumentType { index: 1, .. }) => {}
        other => return Err(format!("a u32 buffer for an f32 parameter gave {other:?}")),
    }
    // Borrowed memory is not freed by kdsl: the owner still reads back.
    drop((read_only, writable, as_u32));
    check_equal(
        "owner",
        &owner.read_to_vec().map_err(fail)?,
        &vec![4.0f32; n],
    )
}

/// On CUDA devices: memory and a stream created by another library (here cudarc, the way CuPy
/// and PyTorch create theirs) are adopted, and kdsl's launch runs on that stream.
pub fn foreign_cuda_stream_and_memory(device: &Device) -> CaseResult {
    use cudarc::driver::{result, CudaContext};
    if device.info().backend != kdsl_runtime::BackendKind::Cuda {
        return Err("skipped: not a CUDA device".into());
    }
    let ordinal = device.info().index;
    let context = CudaContext::new(ordinal).map_err(|e| e.to_string())?;
    let stream = context.new_stream().map_err(|e| e.to_string())?;
    let n = 1 << 16;
    let x = Random::new(45).f32s(n);
    let y = Random::new(46).f32s(n);
    // SAFETY: plain allocations and synchronous copies in the bound primary context.
    let (x_pointer, y_pointer) = unsafe {
        let x_pointer = result::malloc_sync(n * 4).map_err(|e| e.to_string())?;
        let y_pointer = result::malloc_sync(n * 4).map_err(|e| e.to_string())?;
        result::memcpy_htod_sync(x_pointer, &x).map_err(|e| e.to_string())?;
        result::memcpy_htod_sync(y_pointer, &y).map_err(|e| e.to_string())?;
        (x_pointer, y_pointer)
    };
    let outcome = (|| -> CaseResult {
        // SAFETY: the stream and the allocations live until the end of this function.
        let foreign = unsafe {
            Device::from_cuda_stream(ordinal, stream.cu_stream() as *mut std::ffi::c_void)
        }
        .map_err(fail)?;
        let kernel = saxpy_kernel(&foreign)?;
        // SAFETY: as above.
        let x_buffer =
            unsafe { AnyBuffer::borrowed(&foreign, x_pointer, ScalarType::F32, n, true) }
                .map_err(fail)?;
        // SAFETY: as above.
        let mut y_buffer =
            unsafe { AnyBuffer::borrowed(&foreign, y_pointer, ScalarType::F32, n, false) }
                .map_err(fail)?;
        kernel
            .launch(
                &Launch::covering(n, 256),
                &args![&mut y_buffer, &x_buffer, 3.0f32, n as u32],
            )
            .map_err(fail)?;
        // The producer's stream orders the result: synchronizing it is enough.
        stream.synchronize().map_err(|e| e.to_string())?;
        let mut got = vec![0f32; n];
        // SAFETY: a synchronous copy of a live allocation.
        unsafe { result::memcpy_dtoh_sync(&mut got, y_pointer) }.map_err(|e| e.to_string())?;
        check_close("y", &got, &saxpy_reference(3.0, &x, &y), 1e-6, None)
    })();
    // SAFETY: the allocations are freed once, after the stream finished.
    unsafe {
        let _ = result::free_sync(x_pointer);
        let _ = result::free_sync(y_pointer);
    }
    outcome
}

/// Hostile SPIR-V (random bit flips in a valid image, past any checksum) never takes the
/// process down: each load is accepted or a typed error, and the device keeps working.
pub fn flipped_spirv_bits_are_survived(device: &Device) -> CaseResult {
    if !device.info().target.takes_spirv() {
        return Err("skipped: the device does not take SPIR-V".into());
    }
    let mut random = Random::new(47);
    let original = super::common::handmade_bundle();
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..200 {
        let mut bundle = original.clone();
        let image = bundle
            .images
            .iter_mut()
            .find(|image| image.target == kdsl_runtime::TargetKind::Spirv)
            .ok_or("the hand-made bundle has no SPIR-V")?;
        let position = (random.next_u64() % image.bytes.len() as u64) as usize;
        image.bytes[position] ^= 1 << (random.next_u64() % 8);
        match device
            .load(&bundle)
            .and_then(|program| program.kernel("saxpy"))
        {
            Ok(_) => accepted += 1,
            Err(RuntimeError::InvalidImage { .. } | RuntimeError::Backend { .. }) => refused += 1,
            Err(other) => return Err(format!("a flipped image gave {other:?}")),
        }
    }
    eprintln!("flipped SPIR-V images: {accepted} loaded, {refused} refused");
    super::cases::handmade_saxpy(device)
}

/// A launch of 2^60 work-items is a typed error, not a queue that never drains.
pub fn absurd_launches_are_refused(device: &Device) -> CaseResult {
    let kernel = saxpy_kernel(device)?;
    let x = device.buffer_from(&[1.0f32; 4]).map_err(fail)?;
    let mut y = device.buffer_from(&[1.0f32; 4]).map_err(fail)?;
    for launch in [
        Launch::new([1 << 20, 1 << 20, 1 << 20], [1, 1, 1]),
        Launch::new([1 << 62], [256]),
    ] {
        match kernel.launch(&launch, &args![&mut y, &x, 1.0f32, 4u32]) {
            Err(RuntimeError::BadLaunch { why, .. }) if why.contains("2^40") => {}
            other => return Err(format!("{launch:?} gave {other:?}")),
        }
    }
    kernel
        .launch(&Launch::new([4], [4]), &args![&mut y, &x, 1.0f32, 4u32])
        .map_err(fail)?;
    check_equal("y", &y.read_to_vec().map_err(fail)?, &[2.0f32; 4])
}

/// `group_mma_wide` of tests/kernels/matrix_group.krn declares no work-group size: where its
/// image runs matrix groups on matrix units (sm_90a's wgmma) a work-group of 64 is a typed
/// error and the device stays usable; the plain definition elsewhere takes it.
pub fn matrix_group_launches_need_whole_groups(device: &Device) -> CaseResult {
    let (folder, required) = bundle_folder();
    let path = folder.join("tests/matrix_group.kbundle");
    let bundle = match Bundle::read(&path) {
        Err(error) if !required => return Err(format!("skipped: {}: {error}", path.display())),
        other => other.map_err(|error| format!("{}: {error}", path.display()))?,
    };
    let program = match device.load(&bundle) {
        Err(RuntimeError::NoMatchingImage { bundle_has, .. }) => {
            return Err(format!("skipped: its bundle has only {bundle_has}"))
        }
        other => other.map_err(fail)?,
    };
    let on_units = bundle
        .images
        .iter()
        .any(|image| image.describe() == program.image() && image.matrix_groups);
    let kernel = program.kernel("group_mma_wide").map_err(fail)?;
    // A, B: two blocks of 64 x 64 f16 with padding (tests/kernels/matrix_group.krn).
    let inputs = 8 + 2 * (64 * 64 + 8);
    let a = device
        .buffer_from(&vec![F16::from_f32(0.5); inputs])
        .map_err(fail)?;
    let b = device
        .buffer_from(&vec![F16::from_f32(0.25); inputs])
        .map_err(fail)?;
    let c = device.buffer_from(&vec![1.0f32; 256 * 64]).map_err(fail)?;
    let mut d = device.alloc::<f32>(256 * 64).map_err(fail)?;
    let half_group = kernel.launch(&Launch::new([64], [64]), &args![&mut d, &a, &b, &c]);
    match (on_units, half_group) {
        (true, Err(RuntimeError::BadLaunch { why, .. })) if why.contains("whole matrix groups") => {
        }
        (false, Ok(event)) => event.wait().map(drop).map_err(fail)?,
        (_, other) => {
            return Err(format!(
                "a work-group of 64 on {} gave {other:?}",
                program.image()
            ))
        }
    }
    kernel
        .launch(&Launch::new([128], [128]), &args![&mut d, &a, &b, &c])
        .map_err(fail)?
        .wait()
        .map_err(fail)?;
    // Every element of the first group's accumulators: 1 + 64 products of 0.5 x 0.25.
    check_equal(
        "the first matrix group's accumulators",
        &d.read_to_vec().map_err(fail)?[..128 * 64],
        &[9.0f32; 128 * 64],
    )
}

/// Kernels from SYCLBIN files (`kdsl compile --format syclbin`), found by their
/// `__sycl_kernel_` entry points.
pub fn syclbin_bundles_run(device: &Device) -> CaseResult {
    let saxpy = syclbin_kernel(device, "saxpy", "saxpy")?;
    let n = 10_000;
    let x = Random::new(48).f32s(n);
    let y = Random::new(49).f32s(n);
    let x_buffer = device.buffer_from(&x).map_err(fail)?;
    let mut y_buffer = device.buffer_from(&y).map_err(fail)?;
    saxpy
        .launch(
            &Launch::covering(n, 256),
            &args![&mut y_buffer, &x_buffer, 2.0f32, n as u32],
        )
        .map_err(fail)?;
    check_close(
        "saxpy from a SYCLBIN",
        &y_buffer.read_to_vec().map_err(fail)?,
        &saxpy_reference(2.0, &x, &y),
        1e-6,
        None,
    )?;
    // A reduction with local memory and barriers.
    let reduce = syclbin_kernel(device, "reduction", "reduce_sum")?;
    let input = Random::new(50).f32s(n);
    let groups = n.div_ceil(256);
    let input_buffer = device.buffer_from(&input).map_err(fail)?;
    let mut partials = device.alloc::<f32>(groups).map_err(fail)?;
    reduce
        .launch(
            &Launch::covering(n, 256),
            &args![&mut partials, &input_buffer, n as u32],
        )
        .map_err(fail)?;
    let want: Vec<f64> = input
        .chunks(256)
        .map(|chunk| chunk.iter().map(|&v| f64::from(v)).sum())
        .collect();
    check_close(
        "reduce_sum from a SYCLBIN",
        &partials.read_to_vec().map_err(fail)?,
        &want,
        1e-5,
        Some(&vec![256.0; groups]),
    )
}

/// A queue without profiling runs the same work, orders conflicting work with other queues,
/// and its events report completion but no timings.
pub fn queues_without_profiling(device: &Device) -> CaseResult {
    let kernel = saxpy_kernel(device)?;
    let fast = device.queue_without_profiling().map_err(fail)?;
    let n = 1 << 16;
    let x = Random::new(51).f32s(n);
    let x_buffer = device.buffer_from(&x).map_err(fail)?;
    let mut y_buffer = device.alloc::<f32>(n).map_err(fail)?;
    fast.fill(&mut y_buffer, 0.0, &[]).map_err(fail)?;
    let mut last = None;
    for _ in 0..100 {
        last = Some(
            fast.launch(
                &kernel,
                &Launch::covering(n, 256),
                &args![&mut y_buffer, &x_buffer, 1.0f32, n as u32],
                &[],
            )
            .map_err(fail)?,
        );
    }
    let last = last.expect("100 launches");
    // Read on the default queue: ordered after the unprofiled queue's writes by the runtime.
    let got = y_buffer.read_to_vec().map_err(fail)?;
    let want: Vec<f64> = x.iter().map(|&v| 100.0 * f64::from(v)).collect();
    check_close("y after 100 unprofiled launches", &got, &want, 1e-5, None)?;
    if !last.is_complete().map_err(fail)? {
        return Err("the last launch is not complete after a read that depended on it".into());
    }
    last.wait().map_err(fail)?;
    match last.elapsed_ns() {
        Err(RuntimeError::ProfilingDisabled) => {}
        other => return Err(format!("elapsed_ns without profiling gave {other:?}")),
    }
    // An event first asked after its queue finished (by the queue's own wait here, by another
    // library's stream or queue wait in Python) is complete, though nothing marked its end yet.
    let unobserved = fast
        .launch(
            &kernel,
            &Launch::covering(n, 256),
            &args![&mut y_buffer, &x_buffer, 1.0f32, n as u32],
            &[],
        )
        .map_err(fail)?;
    fast.synchronize().map_err(fail)?;
    if !unobserved.is_complete().map_err(fail)? {
        return Err("a launch is not complete after its queue finished".into());
    }
    // A buffer dropped right after unprofiled work is freed after it.
    for _ in 0..8 {
        let mut scratch = device.alloc::<f32>(n).map_err(fail)?;
        fast.fill(&mut scratch, 1.0, &[]).map_err(fail)?;
    }
    fast.synchronize().map_err(fail)?;
    device.synchronize().map_err(fail)
}

/// `Device::from_sycl_queue` with a plain C++ `sycl::queue` on the device (as a C++ SYCL
/// program or dpctl makes one): the adopted device runs saxpy on that queue, and the C++
/// queue may be deleted while the device lives on.
pub fn adopted_cpp_sycl_queue(device: &Device) -> CaseResult {
    if device.info().backend != kdsl_runtime::BackendKind::Sycl {
        return Err("skipped: not a SYCL device".into());
    }
    let native = Device::native_sycl_queue(device.info()).map_err(fail)?;
    // SAFETY: `native` is a live sycl::queue of the shim's libsycl.
    let adopted = unsafe { Device::from_sycl_queue(native.as_ptr()) }.map_err(fail)?;
    drop(native);
    if adopted.info().id() != device.info().id() {
        return Err(format!(
            "the adopted queue's device is {}, not {}",
            adopted.info().id(),
            device.info().id()
        ));
    }
    let kernel = handmade_program(&adopted)?.kernel("saxpy").map_err(fail)?;
    let n = 4096;
    let x = Random::new(53).f32s(n);
    let y = Random::new(54).f32s(n);
    let x_buffer = adopted.buffer_from(&x).map_err(fail)?;
    let mut y_buffer = adopted.buffer_from(&y).map_err(fail)?;
    kernel
        .launch(
            &Launch::covering(n, 128),
            &args![&mut y_buffer, &x_buffer, 1.5f32, n as u32],
        )
        .map_err(fail)?
        .wait()
        .map_err(fail)?;
    check_close(
        "saxpy on an adopted C++ queue",
        &y_buffer.read_to_vec().map_err(fail)?,
        &saxpy_reference(1.5, &x, &y),
        1e-6,
        None,
    )
}
