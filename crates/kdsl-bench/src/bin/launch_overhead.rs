//! Launch overhead of the kdsl runtime against raw `cuLaunchKernel`, in one run.
//!
//! The same PTX kernel (the example saxpy on 32 elements, one work-group) is launched many
//! times back to back through `Kernel::launch` on the default queue (argument checks, ordering
//! bookkeeping, an event pair per launch for timings), through `Queue::launch` on a queue
//! without profiling (no events unless someone waits), and through `cuLaunchKernel` on a
//! stream of the same primary context (both streams non-blocking, arguments on the stack on
//! the raw side); each round ends with one synchronisation. A fourth side is the raw call
//! preceded by `cuCtxGetCurrent`, the check of the thread's current context that the runtime
//! makes before each submission (a launch from a thread without that context current would
//! fail otherwise). Rounds alternate between the sides; the median per-launch wall time of
//! each, the ratios to the raw driver call, and for the unprofiled queue and the raw call the
//! median time until the last launch returned (before the synchronisation: the host's share)
//! are printed.
//!
//! Usage: kdsl-bench-launch BUNDLE_DIR [--launches N] [--rounds N] [--json OUT]

use cudarc::driver::{result, CudaContext};
use kdsl_bundle::{Bundle, TargetKind};
use kdsl_runtime::{args, BackendKind, Device, Launch};
use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn run() -> Result<String, String> {
    let mut arguments = std::env::args().skip(1);
    let mut bundle_dir = None;
    let (mut launches, mut rounds, mut json) = (10_000usize, 7usize, None);
    while let Some(argument) = arguments.next() {
        let mut value = |flag: &str| arguments.next().ok_or(format!("{flag} needs a value"));
        match argument.as_str() {
            "--launches" => launches = value("--launches")?.parse().map_err(|e| format!("{e}"))?,
            "--rounds" => rounds = value("--rounds")?.parse().map_err(|e| format!("{e}"))?,
            "--json" => json = Some(PathBuf::from(value("--json")?)),
            _ => bundle_dir = Some(PathBuf::from(argument)),
        }
    }
    let bundle_dir = bundle_dir.ok_or("usage: kdsl-bench-launch BUNDLE_DIR [--launches N]")?;
    let bundle = Bundle::read(bundle_dir.join("saxpy.kbundle")).map_err(|e| e.to_string())?;
    let device = Device::select("cuda:0").map_err(|e| e.to_string())?;
    if device.info().backend != BackendKind::Cuda {
        return Err("the launch overhead benchmark needs a CUDA device".into());
    }
    let program = device.load(&bundle).map_err(|e| e.to_string())?;
    let kernel = program.kernel("saxpy").map_err(|e| e.to_string())?;
    let n = 32usize;
    let x = device
        .buffer_from(&vec![1.0f32; n])
        .map_err(|e| e.to_string())?;
    let mut y = device
        .buffer_from(&vec![0.0f32; n])
        .map_err(|e| e.to_string())?;

    // The raw side: the same PTX image, loaded with the driver API on the primary context.
    let image = program.image().to_string();
    let ptx = bundle
        .images
        .iter()
        .find(|candidate| candidate.target == TargetKind::Ptx && image.ends_with(&candidate.arch))
        .ok_or("the bundle has no PTX image for this device")?;
    let context = CudaContext::new(0).map_err(|e| e.to_string())?;
    let stream = context.new_stream().map_err(|e| e.to_string())?;
    let source = CString::new(
        ptx.bytes
            .iter()
            .copied()
            .take_while(|&b| b != 0)
            .collect::<Vec<_>>(),
    )
    .map_err(|e| e.to_string())?;
    // SAFETY: a NUL-terminated PTX string; the module lives until the end of this function.
    let module = unsafe { result::module::load_data(source.as_ptr() as *const c_void) }
        .map_err(|e| e.to_string())?;
    let name = CString::new("saxpy").expect("no NUL");
    // SAFETY: the module is loaded.
    let function =
        unsafe { result::module::get_function(module, name) }.map_err(|e| e.to_string())?;
    // SAFETY: plain allocations in the bound primary context.
    let (raw_x, raw_y) = unsafe {
        (
            result::malloc_sync(n * 4).map_err(|e| e.to_string())?,
            result::malloc_sync(n * 4).map_err(|e| e.to_string())?,
        )
    };

    let unprofiled = device
        .queue_without_profiling()
        .map_err(|e| e.to_string())?;
    let mut kdsl_times = Vec::new();
    let mut unprofiled_times = Vec::new();
    let mut raw_times = Vec::new();
    let mut checked_raw_times = Vec::new();
    let (mut unprofiled_submit, mut raw_submit) = (Vec::new(), Vec::new());
    let per_launch = |start: Instant| start.elapsed().as_secs_f64() * 1e6 / launches as f64;
    let raw_launch = || -> Result<(), String> {
        // On the stack, as a C caller would pass them: the raw side allocates nothing.
        let mut slots: [u64; 4] = [raw_y, raw_x, u64::from(2.0f32.to_bits()), n as u64];
        let mut pointers: [*mut c_void; 4] = [std::ptr::null_mut(); 4];
        for (pointer, slot) in pointers.iter_mut().zip(slots.iter_mut()) {
            *pointer = slot as *mut u64 as *mut c_void;
        }
        // SAFETY: the arguments match the kernel's four parameters; the values are copied
        // by the driver; the stream and allocations are alive.
        unsafe {
            result::launch_kernel(
                function,
                (1, 1, 1),
                (n as u32, 1, 1),
                0,
                stream.cu_stream(),
                &mut pointers,
            )
        }
        .map_err(|e| e.to_string())
    };
    for _ in 0..rounds {
        let start = Instant::now();
        for _ in 0..launches {
            unprofiled
                .launch(
                    &kernel,
                    &Launch::new([n], [n]),
                    &args![&mut y, &x, 2.0f32, n as u32],
                    &[],
                )
                .map_err(|e| e.to_string())?;
        }
        unprofiled_submit.push(per_launch(start));
        unprofiled.synchronize().map_err(|e| e.to_string())?;
        unprofiled_times.push(per_launch(start));

        let start = Instant::now();
        for _ in 0..launches {
            kernel
                .launch(&Launch::new([n], [n]), &args![&mut y, &x, 2.0f32, n as u32])
                .map_err(|e| e.to_string())?;
        }
        device.synchronize().map_err(|e| e.to_string())?;
        kdsl_times.push(per_launch(start));

        let start = Instant::now();
        for _ in 0..launches {
            raw_launch()?;
        }
        raw_submit.push(per_launch(start));
        stream.synchronize().map_err(|e| e.to_string())?;
        raw_times.push(per_launch(start));

        let start = Instant::now();
        for _ in 0..launches {
            let current = result::ctx::get_current().map_err(|e| e.to_string())?;
            if current.is_none() {
                return Err("no current context".into());
            }
            std::hint::black_box(current);
            raw_launch()?;
        }
        stream.synchronize().map_err(|e| e.to_string())?;
        checked_raw_times.push(per_launch(start));
    }
    // SAFETY: freed once, after the stream finished.
    unsafe {
        let _ = result::free_sync(raw_x);
        let _ = result::free_sync(raw_y);
        let _ = result::module::unload(module);
    }
    let kdsl = median(&mut kdsl_times);
    let fast = median(&mut unprofiled_times);
    let raw = median(&mut raw_times);
    let checked_raw = median(&mut checked_raw_times);
    let fast_submit = median(&mut unprofiled_submit);
    let raw_submitted = median(&mut raw_submit);
    let report = format!(
        "device: {}\n{launches} launches x {rounds} rounds of saxpy on {n} elements, median per launch\n\
         kdsl, default queue (profiled)   {kdsl:8.3} us   kdsl / raw {:.3}\n\
         kdsl, queue without profiling    {fast:8.3} us   kdsl / raw {:.3}   (last launch returned after {fast_submit:.3} us)\n\
         raw cuLaunchKernel               {raw:8.3} us                (last launch returned after {raw_submitted:.3} us)\n\
         raw, cuCtxGetCurrent + launch    {checked_raw:8.3} us   / raw {:.3}\n",
        device.info(),
        kdsl / raw,
        fast / raw,
        checked_raw / raw
    );
    if let Some(path) = json {
        let text = format!(
            "{{\"launches\": {launches}, \"rounds\": {rounds}, \"kdsl_profiled_us\": {kdsl:.4}, \"kdsl_unprofiled_us\": {fast:.4}, \"raw_us\": {raw:.4}, \"raw_with_context_check_us\": {checked_raw:.4}, \"kdsl_unprofiled_submit_us\": {fast_submit:.4}, \"raw_submit_us\": {raw_submitted:.4}, \"profiled_ratio\": {:.4}, \"unprofiled_ratio\": {:.4}}}\n",
            kdsl / raw,
            fast / raw
        );
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(report)
}

fn main() -> ExitCode {
    match run() {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("kdsl-bench-launch: {why}");
            ExitCode::FAILURE
        }
    }
}
