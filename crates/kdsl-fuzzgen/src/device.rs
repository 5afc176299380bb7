//! Running a generated kernel on a device through `kdsl-runtime` (no LLVM, so the GPU pack
//! runner uses it too).

use crate::compare::Outputs;
use crate::run::{ArgumentValue, KernelRun};
use kdsl_runtime::{AnyBuffer, Argument, Device, Launch, MemoryKind, Program, ScalarValue};

/// The devices to run on: all that are found, or those `KDSL_TEST_DEVICE` selects (the
/// device tests' rule, `kdsl_testkit::devices`). An empty list says why in `Err`.
pub use kdsl_testkit::devices::try_devices_under_test as devices_under_test;

fn runtime_scalar(ty: kdsl_ir::ScalarType, bits: u64) -> ScalarValue {
    use kdsl_ir::ScalarType as T;
    match ty {
        T::Bool => ScalarValue::Bool(bits & 1 == 1),
        T::I8 => ScalarValue::I8(bits as i8),
        T::U8 => ScalarValue::U8(bits as u8),
        T::I16 => ScalarValue::I16(bits as i16),
        T::U16 => ScalarValue::U16(bits as u16),
        T::I32 => ScalarValue::I32(bits as i32),
        T::U32 => ScalarValue::U32(bits as u32),
        T::I64 => ScalarValue::I64(bits as i64),
        T::U64 => ScalarValue::U64(bits),
        T::F16 => ScalarValue::F16(bits as u16),
        T::Bf16 => ScalarValue::Bf16(bits as u16),
        T::F32 => ScalarValue::F32(f32::from_bits(bits as u32)),
        T::F64 => ScalarValue::F64(f64::from_bits(bits)),
    }
}

/// Launches `run` with `program`'s kernel on its device and returns every buffer's contents
/// afterwards.
pub fn run_on_device(
    device: &Device,
    program: &Program,
    run: &KernelRun,
) -> Result<Outputs, String> {
    let kernel = program.kernel(&run.kernel).map_err(|e| e.to_string())?;
    let mut buffers: Vec<Option<AnyBuffer>> = Vec::new();
    for argument in &run.arguments {
        buffers.push(match &argument.value {
            ArgumentValue::Buffer {
                element,
                length,
                data,
                ..
            } => {
                let mut buffer = device
                    .alloc_any(*element, *length, MemoryKind::Device)
                    .map_err(|e| format!("allocating `{}`: {e}", argument.name))?;
                buffer
                    .write_bytes(data)
                    .map_err(|e| format!("writing `{}`: {e}", argument.name))?;
                Some(buffer)
            }
            ArgumentValue::Scalar { .. } | ArgumentValue::Local { .. } => None,
        });
    }
    let arguments: Vec<Argument> = run
        .arguments
        .iter()
        .zip(&buffers)
        .map(|(argument, buffer)| match (&argument.value, buffer) {
            (ArgumentValue::Scalar { ty, bits }, _) => Argument::scalar(runtime_scalar(*ty, *bits)),
            (ArgumentValue::Local { element, length }, _) => Argument::local(*element, *length),
            (ArgumentValue::Buffer { writable, .. }, Some(buffer)) => {
                Argument::buffer(buffer, *writable)
            }
            (ArgumentValue::Buffer { .. }, None) => {
                unreachable!("every buffer argument has a buffer")
            }
        })
        .collect();
    let global = run.global.map(|d| d as usize);
    let local = run.local.map(|d| d as usize);
    let launch = match run.dimensions {
        1 => Launch::new([global[0]], [local[0]]),
        2 => Launch::new([global[0], global[1]], [local[0], local[1]]),
        _ => Launch::new(global, local),
    };
    kernel
        .launch(&launch, &arguments)
        .and_then(|event| event.wait())
        .map_err(|e| format!("launching `{}`: {e}", run.kernel))?;
    buffers
        .iter()
        .map(|buffer| match buffer {
            Some(buffer) => {
                let mut bytes = vec![0u8; buffer.size_in_bytes()];
                buffer.read_bytes(&mut bytes).map_err(|e| e.to_string())?;
                Ok(Some(bytes))
            }
            None => Ok(None),
        })
        .collect()
}

/// The sub-group size a device used, read from the kernel's probe output.
pub fn probed_sub_group_size(run: &KernelRun, outputs: &Outputs) -> Option<u32> {
    let probe = run.sub_group_size_probe?;
    let bytes = outputs.get(probe)?.as_ref()?;
    Some(u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?))
}
