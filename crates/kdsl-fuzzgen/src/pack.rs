//! The pack: generated kernels compiled ahead of time with the interpreter's expected
//! outputs, for running on a machine that has a GPU driver but no compiler (`fuzzgen-pack`
//! writes one, `fuzzgen-run` runs it).
//!
//! A pack is a folder with `manifest.json` (the list of cases) and, per case, the bundle
//! (`NNNNNNN.kbundle`), the source (`NNNNNNN.krn`, for reproducing a disagreement) and the
//! data (`NNNNNNN.case`): the bytes `KFZCASE1`, a little-endian `u32` length, that many bytes
//! of JSON ([`CaseHeader`]: the runs without their data, and what the interpreter gave), then
//! for each run the initial contents of each buffer argument in order, then (when the
//! interpreter gave outputs) the expected contents of each buffer argument in order. Lengths
//! follow from the header (`length` elements of `element`; a buffer of records is `length`
//! bytes, its layout in `record`); launch-sized local arrays have no data.

use crate::compare::Outputs;
use crate::run::{element_size, ArgumentValue, KernelRun};
use serde::{Deserialize, Serialize};
use std::path::Path;

const MAGIC: &[u8; 8] = b"KFZCASE1";

/// The pack's table of contents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The sub-group size the expected outputs were computed with (32 for NVIDIA warps);
    /// runs that depend on it and meet another size on the device are skipped.
    pub sub_group_size: u32,
    /// What the cases were compiled for, such as `ptx:sm_90`.
    pub images: String,
    pub cases: Vec<ManifestEntry>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestEntry {
    pub seed: u64,
    /// The file stem of the case's `.kbundle`, `.krn` and `.case` files.
    pub stem: String,
}

/// What the interpreter gave for one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Expected {
    /// Outputs follow in the data.
    Outputs,
    /// The interpreter reported undefined behaviour: the run is not launched.
    Undefined(String),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseRun {
    /// The run, its buffers' `data` left empty (it follows the header).
    pub run: KernelRun,
    pub expected: Expected,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseHeader {
    pub seed: u64,
    pub runs: Vec<CaseRun>,
}

/// One case as read back: the runs with their data and the expected outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub seed: u64,
    pub runs: Vec<(KernelRun, Result<Outputs, String>)>,
}

fn buffer_bytes(run: &KernelRun) -> Vec<usize> {
    run.arguments
        .iter()
        .filter_map(|argument| match &argument.value {
            ArgumentValue::Buffer {
                element, length, ..
            } => Some(length * element_size(*element)),
            ArgumentValue::Scalar { .. } | ArgumentValue::Local { .. } => None,
        })
        .collect()
}

/// Encodes a case: every run with the interpreter's outputs or why there are none.
pub fn encode_case(seed: u64, runs: &[(KernelRun, Result<Outputs, String>)]) -> Vec<u8> {
    let mut header = CaseHeader {
        seed,
        runs: Vec::new(),
    };
    let mut blobs = Vec::new();
    for (run, expected) in runs {
        let mut stripped = run.clone();
        for argument in &mut stripped.arguments {
            if let ArgumentValue::Buffer { data, .. } = &mut argument.value {
                blobs.extend_from_slice(data);
                data.clear();
            }
        }
        match expected {
            Ok(outputs) => {
                for output in outputs.iter().flatten() {
                    blobs.extend_from_slice(output);
                }
                header.runs.push(CaseRun {
                    run: stripped,
                    expected: Expected::Outputs,
                });
            }
            Err(why) => header.runs.push(CaseRun {
                run: stripped,
                expected: Expected::Undefined(why.clone()),
            }),
        }
    }
    let json = serde_json::to_vec(&header).expect("a case serializes");
    let mut bytes = Vec::with_capacity(12 + json.len() + blobs.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(json.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&json);
    bytes.extend_from_slice(&blobs);
    bytes
}

/// Decodes what [`encode_case`] wrote.
pub fn decode_case(bytes: &[u8]) -> Result<Case, String> {
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return Err("not a fuzzgen case (no KFZCASE1)".into());
    }
    let length = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    let json = bytes
        .get(12..12 + length)
        .ok_or("the case header is cut short")?;
    let header: CaseHeader =
        serde_json::from_slice(json).map_err(|e| format!("the case header: {e}"))?;
    let mut position = 12 + length;
    let mut take = |size: usize| -> Result<Vec<u8>, String> {
        let slice = bytes
            .get(position..position + size)
            .ok_or("the case data is cut short")?;
        position += size;
        Ok(slice.to_vec())
    };
    let mut runs = Vec::new();
    for case_run in header.runs {
        let mut run = case_run.run;
        let sizes = buffer_bytes(&run);
        let mut sizes_iter = sizes.iter();
        for argument in &mut run.arguments {
            if let ArgumentValue::Buffer { data, .. } = &mut argument.value {
                *data = take(*sizes_iter.next().unwrap())?;
            }
        }
        let expected = match case_run.expected {
            Expected::Outputs => {
                let mut outputs = Vec::new();
                for argument in &run.arguments {
                    outputs.push(match &argument.value {
                        ArgumentValue::Buffer {
                            element, length, ..
                        } => Some(take(length * element_size(*element))?),
                        ArgumentValue::Scalar { .. } | ArgumentValue::Local { .. } => None,
                    });
                }
                Ok(outputs)
            }
            Expected::Undefined(why) => Err(why),
        };
        runs.push((run, expected));
    }
    Ok(Case {
        seed: header.seed,
        runs,
    })
}

pub fn write_manifest(folder: &Path, manifest: &Manifest) -> std::io::Result<()> {
    let json = serde_json::to_string_pretty(manifest).expect("a manifest serializes");
    std::fs::write(folder.join("manifest.json"), json)
}

pub fn read_manifest(folder: &Path) -> Result<Manifest, String> {
    let path = folder.join("manifest.json");
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}
