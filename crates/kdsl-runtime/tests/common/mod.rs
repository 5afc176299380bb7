//! Test helpers shared by the suite and the dpctl test.

#![allow(dead_code)]

use kdsl_runtime::{Bundle, KernelInfo, ParameterInfo};

fn f32_buffer(name: &str, writable: bool) -> ParameterInfo {
    buffer_parameter(name, kdsl_ir::ScalarType::F32, writable)
}

fn buffer_parameter(name: &str, element: kdsl_ir::ScalarType, writable: bool) -> ParameterInfo {
    ParameterInfo::Buffer {
        name: name.into(),
        element,
        space: kdsl_ir::AddressSpace::Global,
        writable,
        alignment: 0,
        record: None,
    }
}

fn scalar_parameter(name: &str, ty: kdsl_ir::ScalarType) -> ParameterInfo {
    ParameterInfo::Scalar {
        name: name.into(),
        ty,
    }
}

/// The hand-written saxpy and global_ids kernels of tests/data (SPIR-V and PTX for sm_90).
pub fn handmade_bundle() -> Bundle {
    use kdsl_bundle::{Image, TargetKind};
    use kdsl_ir::ScalarType;
    Bundle {
        source_name: "tests/data/handmade_*.ll".into(),
        constants: Vec::new(),
        kernels: vec![
            KernelInfo {
                name: "saxpy".into(),
                parameters: vec![
                    f32_buffer("y", true),
                    f32_buffer("x", false),
                    scalar_parameter("a", ScalarType::F32),
                    scalar_parameter("n", ScalarType::U32),
                ],
                local_memory_bytes: 0,
                ids_fit_in_31_bits: true,
                wide_buffer_indices: false,
                work_group_size: None,
                ..KernelInfo::default()
            },
            KernelInfo {
                name: "global_ids".into(),
                parameters: vec![
                    buffer_parameter("output", ScalarType::U32, true),
                    scalar_parameter("width", ScalarType::U32),
                ],
                local_memory_bytes: 0,
                ids_fit_in_31_bits: true,
                wide_buffer_indices: false,
                work_group_size: None,
                ..KernelInfo::default()
            },
        ],
        images: vec![
            Image {
                target: TargetKind::Spirv,
                arch: String::new(),
                bytes: include_bytes!("../data/handmade.spv").to_vec(),
                matrix_units: false,
                matrix_groups: false,
                tile_sub_group_size: None,
                tensor_maps: Vec::new(),
            },
            Image {
                target: TargetKind::Ptx,
                arch: "sm_90".into(),
                bytes: include_bytes!("../data/handmade_sm_90.ptx").to_vec(),
                matrix_units: false,
                matrix_groups: false,
                tile_sub_group_size: None,
                tensor_maps: Vec::new(),
            },
        ],
        entry_point_prefix: String::new(),
    }
}
