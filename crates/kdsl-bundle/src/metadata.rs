//! What a runtime must know about each kernel to check and pack its arguments.

use kdsl_ir::{AddressSpace, Function, ParameterType, ScalarType};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelInfo {
    pub name: String,
    pub parameters: Vec<ParameterInfo>,
    /// Bytes of work-group local memory the kernel declares.
    pub local_memory_bytes: u64,
    /// True when the kernel's work-item ids are computed in 32 bits, which requires every
    /// dimension of the launch's global range to be below 2^31 (see docs/language.md).
    pub ids_fit_in_31_bits: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ParameterInfo {
    Scalar {
        name: String,
        ty: ScalarType,
    },
    Buffer {
        name: String,
        element: ScalarType,
        space: AddressSpace,
        writable: bool,
    },
}

impl ParameterInfo {
    pub fn name(&self) -> &str {
        match self {
            ParameterInfo::Scalar { name, .. } | ParameterInfo::Buffer { name, .. } => name,
        }
    }
}

impl KernelInfo {
    /// The metadata of a kernel of the IR.
    pub fn from_function(kernel: &Function) -> KernelInfo {
        let parameters = kernel
            .parameters
            .iter()
            .map(|p| match p.ty {
                ParameterType::Scalar { ty } => ParameterInfo::Scalar {
                    name: p.name.clone(),
                    ty,
                },
                ParameterType::Buffer {
                    element,
                    space,
                    writable,
                } => ParameterInfo::Buffer {
                    name: p.name.clone(),
                    element,
                    space,
                    writable,
                },
            })
            .collect();
        KernelInfo {
            name: kernel.name.clone(),
            parameters,
            local_memory_bytes: kernel.local_memory_bytes(),
            ids_fit_in_31_bits: true,
        }
    }
}
