//! Checked kernels (`kdsl compile --checked`): the hidden arguments a launch appends, and the
//! fault record read back when the launch's event is waited for.

use crate::args::ScalarValue;
use crate::backend::RawArgument;
use crate::buffer::{AnyBuffer, MemoryKind};
use crate::device::Device;
use crate::error::{Result, RuntimeError};
use kdsl_bundle::{CheckSite, FaultKind, FaultRecord, KernelInfo, FAULT_RECORD_BYTES};
use kdsl_ir::ScalarType;
use std::sync::Mutex;

/// A checked launch's fault record and what is needed to name a fault.
pub(crate) struct FaultCheck {
    kernel: String,
    source_name: String,
    sites: Vec<CheckSite>,
    record: AnyBuffer,
    /// The record as read after the launch finished; read once.
    read: Mutex<Option<FaultRecord>>,
}

impl FaultCheck {
    /// Allocates the fault record of one launch of `kernel` (the caller zeroes it on the
    /// launch's queue before the launch).
    pub(crate) fn new(device: &Device, kernel: &KernelInfo, source_name: &str) -> Result<Self> {
        let words = FAULT_RECORD_BYTES / 8;
        Ok(FaultCheck {
            kernel: kernel.name.clone(),
            source_name: source_name.to_string(),
            sites: kernel.check_sites.clone(),
            record: device.alloc_any(ScalarType::U64, words, MemoryKind::Device)?,
            read: Mutex::new(None),
        })
    }

    pub(crate) fn record(&self) -> &AnyBuffer {
        &self.record
    }

    /// Reads the record (once; the launch has finished) and turns a recorded fault into
    /// [`RuntimeError::KernelFault`].
    pub(crate) fn check(&self) -> Result<()> {
        let mut read = self.read.lock().unwrap_or_else(|p| p.into_inner());
        let record = match *read {
            Some(record) => record,
            None => {
                let mut bytes = [0u8; FAULT_RECORD_BYTES];
                self.record.read_bytes(&mut bytes)?;
                let record = FaultRecord::from_bytes(&bytes);
                *read = Some(record);
                record
            }
        };
        if record.faulted() {
            Err(self.error(&record))
        } else {
            Ok(())
        }
    }

    fn error(&self, record: &FaultRecord) -> RuntimeError {
        let Some(kind) = FaultKind::from_code(record.kind_code()) else {
            return RuntimeError::Backend {
                backend: self.record.device().info().backend,
                message: format!(
                    "checked kernel `{}` wrote an unknown fault kind {} into its fault record",
                    self.kernel,
                    record.kind_code()
                ),
            };
        };
        let site = self.sites.iter().find(|s| u64::from(s.id) == record.site());
        let (location, what, signed) = match site {
            Some(site) => {
                let location = if site.line == 0 {
                    format!(
                        "{} (bytes {}..{})",
                        self.source_name, site.span[0], site.span[1]
                    )
                } else {
                    format!("{}:{}:{}", self.source_name, site.line, site.column)
                };
                let what = if site.function == self.kernel {
                    site.what.clone()
                } else {
                    format!("{} in function `{}`", site.what, site.function)
                };
                (location, what, site.signed_index)
            }
            None => (
                format!(
                    "{} (unknown check site {})",
                    self.source_name,
                    record.site()
                ),
                "an unknown place".to_string(),
                false,
            ),
        };
        let index = if signed {
            i128::from(record.index() as i64)
        } else {
            i128::from(record.index())
        };
        RuntimeError::KernelFault(Box::new(KernelFault {
            kernel: self.kernel.clone(),
            kind,
            location,
            what,
            index,
            length: record.length(),
            work_item: record.work_item(),
        }))
    }
}

/// The hidden arguments of a checked kernel, after the declared ones: each buffer's element
/// count (from the byte range passed and the element's size, a record's for a buffer of
/// records), then the fault record's address.
pub(crate) fn hidden_arguments(
    buffers: &[(usize, usize)],
    record_address: u64,
) -> Vec<RawArgument> {
    let mut arguments: Vec<RawArgument> = buffers
        .iter()
        .map(|&(bytes, element_size)| {
            let count = bytes / element_size.max(1);
            RawArgument::Scalar(ScalarValue::U64(count as u64))
        })
        .collect();
    arguments.push(RawArgument::Pointer(record_address));
    arguments
}

/// What a checked kernel reported ([`RuntimeError::KernelFault`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelFault {
    /// The launched kernel.
    pub kernel: String,
    pub kind: FaultKind,
    /// `file:line:column` of the faulting access or operation.
    pub location: String,
    /// The buffer or array (`buffer \`y\``, `array \`tile\` (dimension 2 of 2)`, with
    /// `in function \`f\`` when the fault is in a device function), or `division`/`remainder`.
    pub what: String,
    /// The index (negative for a negative signed index); 0 for divisions and overflows.
    pub index: i128,
    /// The buffer's or array dimension's length; 0 for divisions and overflows.
    pub length: u64,
    /// The global id of the work-item that faulted first.
    pub work_item: [u64; 3],
}

impl std::fmt::Display for KernelFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let KernelFault {
            kernel,
            kind,
            location,
            what,
            index,
            length,
            work_item: [x, y, z],
        } = self;
        let fault = match kind {
            FaultKind::OutOfBounds => {
                format!("index {index} is out of bounds of {what} (length {length})")
            }
            FaultKind::DivisionByZero => format!("integer {what} by zero"),
            FaultKind::DivisionOverflow => {
                format!("integer {what} of the type's minimum by -1 (overflow)")
            }
            FaultKind::IntegerOverflow => {
                format!("integer overflow: the result of {what} does not fit its type")
            }
        };
        write!(
            f,
            "checked kernel `{kernel}` faulted at {location}: {fault}, in work-item ({x}, {y}, {z}); the faulting access or operation was skipped (the first fault of the launch is reported)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(kind: FaultKind, what: &str, index: i128, length: u64) -> KernelFault {
        KernelFault {
            kernel: "k".into(),
            kind,
            location: "k.krn:3:5".into(),
            what: what.into(),
            index,
            length,
            work_item: [63, 1, 0],
        }
    }

    #[test]
    fn hidden_arguments_are_element_counts_then_the_record() {
        let arguments = hidden_arguments(&[(256, 4), (24, 8)], 0x1000);
        let described: Vec<String> = arguments.iter().map(|a| format!("{a:?}")).collect();
        assert_eq!(
            described,
            ["Scalar(U64(64))", "Scalar(U64(3))", "Pointer(4096)"]
        );
    }

    #[test]
    fn messages_name_the_kernel_place_index_and_work_item() {
        let text = fault(FaultKind::OutOfBounds, "buffer `y`", -1, 64).to_string();
        for part in [
            "`k`",
            "k.krn:3:5",
            "index -1",
            "buffer `y`",
            "length 64",
            "(63, 1, 0)",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
        let text = fault(FaultKind::DivisionByZero, "remainder", 0, 0).to_string();
        assert!(text.contains("integer remainder by zero"), "{text}");
        let text = fault(FaultKind::DivisionOverflow, "division", 0, 0).to_string();
        assert!(text.contains("minimum by -1"), "{text}");
        let text = fault(FaultKind::IntegerOverflow, "`-` on `u32`", 0, 0).to_string();
        assert!(
            text.contains("the result of `-` on `u32` does not fit"),
            "{text}"
        );
    }
}
