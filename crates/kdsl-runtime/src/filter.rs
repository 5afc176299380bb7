//! Device filter strings: how a program or a test names the device it wants.
//!
//! ```text
//! filter      = alternative ("," alternative)*      first alternative that matches wins
//! alternative = "*" | type | backend [":" selector]
//! backend     = "sycl" | "opencl" | "level_zero" | "sycl_cuda" | "sycl_hip" | "cuda" | "hip"
//! selector    = index | type | "*"                  index counts from 0 within the backend
//! type        = "gpu" | "cpu" | "accelerator"
//! ```
//!
//! `opencl`, `level_zero`, `sycl_cuda` and `sycl_hip` name SYCL devices reached through that SYCL
//! backend (dpctl's `cuda:gpu` is kdsl's `sycl_cuda:gpu`); `cuda` and `hip` name devices of
//! kdsl's own CUDA and HIP backends. Examples: `cuda:0`, `hip:1`, `sycl:cpu`, `opencl:cpu`,
//! `sycl_cuda:0`, `sycl:0`, `gpu`, `cuda:0,sycl:cpu`, `*`.
//! Matching is case-insensitive and ignores spaces around the parts.

use crate::device::{BackendKind, DeviceInfo, DeviceType};
use crate::error::{Result, RuntimeError};

/// A parsed device filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceFilter {
    alternatives: Vec<Alternative>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BackendName {
    Sycl,
    OpenCl,
    LevelZero,
    SyclCuda,
    SyclHip,
    Cuda,
    Hip,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Selector {
    Any,
    Index(usize),
    Type(DeviceType),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Alternative {
    backend: Option<BackendName>,
    selector: Selector,
}

fn parse_type(word: &str) -> Option<DeviceType> {
    match word {
        "gpu" => Some(DeviceType::Gpu),
        "cpu" => Some(DeviceType::Cpu),
        "accelerator" => Some(DeviceType::Accelerator),
        _ => None,
    }
}

fn parse_backend(word: &str) -> Option<BackendName> {
    match word {
        "sycl" => Some(BackendName::Sycl),
        "opencl" => Some(BackendName::OpenCl),
        "level_zero" | "levelzero" => Some(BackendName::LevelZero),
        "sycl_cuda" => Some(BackendName::SyclCuda),
        "sycl_hip" => Some(BackendName::SyclHip),
        "cuda" => Some(BackendName::Cuda),
        "hip" => Some(BackendName::Hip),
        _ => None,
    }
}

impl DeviceFilter {
    /// Parses a filter string (syntax in the module documentation).
    pub fn parse(text: &str) -> Result<DeviceFilter> {
        let bad = |why: String| RuntimeError::BadFilter {
            filter: text.to_string(),
            why,
        };
        let mut alternatives = Vec::new();
        for part in text.split(',') {
            let part = part.trim().to_ascii_lowercase();
            if part.is_empty() {
                return Err(bad("an alternative is empty".into()));
            }
            let (head, tail) = match part.split_once(':') {
                Some((head, tail)) => (head.trim(), Some(tail.trim())),
                None => (part.as_str(), None),
            };
            let alternative = if head == "*" && tail.is_none() {
                Alternative {
                    backend: None,
                    selector: Selector::Any,
                }
            } else if let (Some(device_type), None) = (parse_type(head), tail) {
                Alternative {
                    backend: None,
                    selector: Selector::Type(device_type),
                }
            } else if let Some(backend) = parse_backend(head) {
                let selector = match tail {
                    None | Some("*") => Selector::Any,
                    Some(word) => {
                        if let Some(device_type) = parse_type(word) {
                            Selector::Type(device_type)
                        } else if let Ok(index) = word.parse::<usize>() {
                            Selector::Index(index)
                        } else {
                            return Err(bad(format!(
                                "`{word}` is neither a device index nor one of gpu, cpu, accelerator, *"
                            )));
                        }
                    }
                };
                Alternative {
                    backend: Some(backend),
                    selector,
                }
            } else {
                return Err(bad(format!(
                    "`{head}` is not a backend (sycl, opencl, level_zero, sycl_cuda, sycl_hip, cuda, hip), a device type (gpu, cpu, accelerator) or `*`"
                )));
            };
            alternatives.push(alternative);
        }
        Ok(DeviceFilter { alternatives })
    }

    /// The devices that match, best first: the devices of the first alternative that matches any.
    pub fn matching<'a>(&self, devices: &'a [DeviceInfo]) -> Vec<&'a DeviceInfo> {
        for alternative in &self.alternatives {
            let in_backend: Vec<&DeviceInfo> = devices
                .iter()
                .filter(|device| match alternative.backend {
                    None => true,
                    Some(BackendName::Sycl) => device.backend == BackendKind::Sycl,
                    Some(BackendName::OpenCl) => {
                        device.backend == BackendKind::Sycl && device.platform_backend == "opencl"
                    }
                    Some(BackendName::LevelZero) => {
                        device.backend == BackendKind::Sycl
                            && device.platform_backend == "level_zero"
                    }
                    Some(BackendName::SyclCuda) => {
                        device.backend == BackendKind::Sycl && device.platform_backend == "cuda"
                    }
                    Some(BackendName::SyclHip) => {
                        device.backend == BackendKind::Sycl && device.platform_backend == "hip"
                    }
                    Some(BackendName::Cuda) => device.backend == BackendKind::Cuda,
                    Some(BackendName::Hip) => device.backend == BackendKind::Hip,
                })
                .collect();
            let found: Vec<&DeviceInfo> = match alternative.selector {
                Selector::Any => in_backend,
                Selector::Index(index) => in_backend.get(index).copied().into_iter().collect(),
                Selector::Type(device_type) => in_backend
                    .into_iter()
                    .filter(|device| device.device_type == device_type)
                    .collect(),
            };
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }
}

impl std::str::FromStr for DeviceFilter {
    type Err = RuntimeError;
    fn from_str(text: &str) -> Result<DeviceFilter> {
        DeviceFilter::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{test_device, DeviceTarget};

    fn devices() -> Vec<DeviceInfo> {
        vec![
            test_device(
                BackendKind::Cuda,
                "cuda",
                0,
                DeviceType::Gpu,
                DeviceTarget::Ptx { major: 9, minor: 0 },
            ),
            test_device(
                BackendKind::Cuda,
                "cuda",
                1,
                DeviceType::Gpu,
                DeviceTarget::Ptx { major: 8, minor: 0 },
            ),
            test_device(
                BackendKind::Sycl,
                "opencl",
                0,
                DeviceType::Cpu,
                DeviceTarget::Spirv,
            ),
            test_device(
                BackendKind::Sycl,
                "level_zero",
                1,
                DeviceType::Gpu,
                DeviceTarget::Spirv,
            ),
            test_device(
                BackendKind::Hip,
                "hip",
                0,
                DeviceType::Gpu,
                DeviceTarget::Amdgpu {
                    arch: "gfx90a".into(),
                },
            ),
            test_device(
                BackendKind::Sycl,
                "cuda",
                2,
                DeviceType::Gpu,
                DeviceTarget::Ptx { major: 9, minor: 0 },
            ),
        ]
    }

    fn ids(filter: &str) -> Vec<String> {
        let devices = devices();
        DeviceFilter::parse(filter)
            .unwrap()
            .matching(&devices)
            .into_iter()
            .map(|d| format!("{}/{}", d.id(), d.platform_backend))
            .collect()
    }

    #[test]
    fn selects_by_backend_index_and_type() {
        assert_eq!(ids("cuda:1"), ["cuda:1/cuda"]);
        assert_eq!(ids("cuda"), ["cuda:0/cuda", "cuda:1/cuda"]);
        assert_eq!(ids("sycl:cpu"), ["sycl:0/opencl"]);
        assert_eq!(ids("opencl:cpu"), ["sycl:0/opencl"]);
        assert_eq!(ids("opencl:0"), ["sycl:0/opencl"]);
        assert_eq!(ids("level_zero:0"), ["sycl:1/level_zero"]);
        assert_eq!(ids("sycl:1"), ["sycl:1/level_zero"]);
        assert_eq!(ids("hip:0"), ["hip:0/hip"]);
        assert_eq!(ids("sycl_cuda:gpu"), ["sycl:2/cuda"]);
        assert_eq!(ids("sycl_cuda:0"), ["sycl:2/cuda"]);
        assert!(ids("sycl_hip").is_empty());
        assert_eq!(ids("gpu").len(), 5);
        assert_eq!(ids("*").len(), 6);
        assert_eq!(ids(" CUDA : 0 "), ["cuda:0/cuda"]);
    }

    #[test]
    fn alternatives_fall_through_in_order() {
        assert_eq!(ids("hip:5,opencl:cpu"), ["sycl:0/opencl"]);
        assert_eq!(ids("opencl:gpu,cuda:0"), ["cuda:0/cuda"]);
        assert!(ids("hip:3,cuda:7").is_empty());
    }

    #[test]
    fn rejects_malformed_filters_with_a_reason() {
        for text in ["", "vulkan:0", "cuda:first", "cuda:0,", "gpu:0"] {
            match DeviceFilter::parse(text) {
                Err(RuntimeError::BadFilter { filter, why }) => {
                    assert_eq!(filter, text);
                    assert!(!why.is_empty());
                }
                other => panic!("`{text}` parsed as {other:?}"),
            }
        }
    }
}
