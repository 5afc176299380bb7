//! The reference side: the front end and the interpreter on a generated kernel.

use crate::compare::Outputs;
use crate::run::{values_of, ArgumentValue, KernelRun};
use kdsl_interp::{
    bf16, f16, run_kernel, HostBuffer, InterpArgument, InterpError, InterpLaunch, ScalarValue,
};
use kdsl_ir::{Module, ScalarType};

/// The IR of a generated source, or the rendered diagnostics.
pub fn front_end(source: &str) -> Result<Module, String> {
    kdsl_frontend::compile_to_ir(source).map_err(|diagnostics| {
        kdsl_frontend::render_diagnostics("generated.krn", source, &diagnostics, false)
    })
}

fn host_buffer(bytes: &[u8], element: ScalarType) -> HostBuffer {
    let bits = values_of(bytes, element);
    match element {
        ScalarType::I8 => HostBuffer::I8(bits.iter().map(|&b| b as i8).collect()),
        ScalarType::U8 | ScalarType::Bool => {
            HostBuffer::U8(bits.iter().map(|&b| b as u8).collect())
        }
        ScalarType::I16 => HostBuffer::I16(bits.iter().map(|&b| b as i16).collect()),
        ScalarType::U16 => HostBuffer::U16(bits.iter().map(|&b| b as u16).collect()),
        ScalarType::I32 => HostBuffer::I32(bits.iter().map(|&b| b as i32).collect()),
        ScalarType::U32 => HostBuffer::U32(bits.iter().map(|&b| b as u32).collect()),
        ScalarType::I64 => HostBuffer::I64(bits.iter().map(|&b| b as i64).collect()),
        ScalarType::U64 => HostBuffer::U64(bits),
        ScalarType::F16 => {
            HostBuffer::F16(bits.iter().map(|&b| f16::from_bits(b as u16)).collect())
        }
        ScalarType::Bf16 => {
            HostBuffer::Bf16(bits.iter().map(|&b| bf16::from_bits(b as u16)).collect())
        }
        ScalarType::F32 => {
            HostBuffer::F32(bits.iter().map(|&b| f32::from_bits(b as u32)).collect())
        }
        ScalarType::F64 => HostBuffer::F64(bits.iter().map(|&b| f64::from_bits(b)).collect()),
    }
}

fn buffer_bytes(buffer: &HostBuffer) -> Vec<u8> {
    let mut bytes = Vec::new();
    match buffer {
        HostBuffer::I8(v) => v
            .iter()
            .for_each(|x| bytes.extend_from_slice(&x.to_le_bytes())),
        HostBuffer::U8(v) => bytes.extend_from_slice(v),
        HostBuffer::I16(v) => v
            .iter()
            .for_each(|x| bytes.extend_from_slice(&x.to_le_bytes())),
        HostBuffer::U16(v) => v
            .iter()
            .for_each(|x| bytes.extend_from_slice(&x.to_le_bytes())),
        HostBuffer::I32(v) => v
            .iter()
            .for_each(|x| bytes.extend_from_slice(&x.to_le_bytes())),
        HostBuffer::U32(v) => v
            .iter()
            .for_each(|x| bytes.extend_from_slice(&x.to_le_bytes())),
        HostBuffer::I64(v) => v
            .iter()
            .for_each(|x| bytes.extend_from_slice(&x.to_le_bytes())),
        HostBuffer::U64(v) => v
            .iter()
            .for_each(|x| bytes.extend_from_slice(&x.to_le_bytes())),
        HostBuffer::F16(v) => v
            .iter()
            .for_each(|x| bytes.extend_from_slice(&x.to_bits().to_le_bytes())),
        HostBuffer::Bf16(v) => v
            .iter()
            .for_each(|x| bytes.extend_from_slice(&x.to_bits().to_le_bytes())),
        HostBuffer::F32(v) => v
            .iter()
            .for_each(|x| bytes.extend_from_slice(&x.to_le_bytes())),
        HostBuffer::F64(v) => v
            .iter()
            .for_each(|x| bytes.extend_from_slice(&x.to_le_bytes())),
    }
    bytes
}

/// Why the interpreter gave no outputs.
#[derive(Clone, Debug, PartialEq)]
pub enum ReferenceFailure {
    /// Undefined behaviour (out of bounds, division by zero, divergent synchronization): the
    /// run is skipped.
    Undefined(String),
    /// Anything else: a bug in the generator or the interpreter.
    Error(String),
}

/// Runs `run` on the interpreter with `sub_group_size` lanes per sub-group.
pub fn interpret(
    module: &Module,
    run: &KernelRun,
    sub_group_size: u32,
) -> Result<Outputs, ReferenceFailure> {
    let mut arguments: Vec<InterpArgument> = run
        .arguments
        .iter()
        .map(|argument| match &argument.value {
            ArgumentValue::Scalar { ty, bits } => {
                InterpArgument::Scalar(ScalarValue::from_bits(*bits, *ty))
            }
            ArgumentValue::Buffer { element, data, .. } => {
                InterpArgument::Buffer(host_buffer(data, *element))
            }
            ArgumentValue::Local { element, length } => InterpArgument::local(*element, *length),
        })
        .collect();
    let launch = InterpLaunch {
        global: run.global,
        local: run.local,
        sub_group_size,
    };
    match run_kernel(module, &run.kernel, &launch, &mut arguments) {
        Ok(()) => Ok(arguments
            .iter()
            .map(|argument| match argument {
                InterpArgument::Buffer(buffer) => Some(buffer_bytes(buffer)),
                InterpArgument::Scalar(_) | InterpArgument::Local { .. } => None,
            })
            .collect()),
        Err(
            error @ (InterpError::UndefinedBehaviour { .. }
            | InterpError::OutOfBounds { .. }
            | InterpError::DivergentSynchronization { .. }),
        ) => Err(ReferenceFailure::Undefined(error.to_string())),
        Err(error) => Err(ReferenceFailure::Error(error.to_string())),
    }
}
