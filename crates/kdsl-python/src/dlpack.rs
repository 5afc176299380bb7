//! Reads the tensor description out of a DLPack capsule (DLPack 1.x "dltensor_versioned" or
//! legacy "dltensor"). The capsule is only read: it is not renamed, so its producer's destructor
//! still frees the tensor when the capsule goes away (kdsl keeps it alive while in use).

use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};
use std::ffi::{c_void, CStr};

#[repr(C)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

#[repr(C)]
struct DlManagedTensorVersioned {
    major: u32,
    minor: u32,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DlTensor,
}

const VERSIONED: &CStr = c"dltensor_versioned";
const LEGACY: &CStr = c"dltensor";
const FLAG_READ_ONLY: u64 = 1;

fn bad(py: Python<'_>, what: String) -> PyErr {
    crate::errors::python_error(py, "ArgumentError", "BadForeignObject", what)
}

/// The tensor in a DLPack capsule as a dict: `address` (data plus byte offset), `device_type`,
/// `device_id`, `typestr` (`f4`, `u1`, ..., and `bf2` for bfloat16, which the array interface
/// has no code for), `shape`, `strides` (elements, or None) and `read_only`.
#[pyfunction]
pub fn dlpack_tensor<'py>(
    py: Python<'py>,
    capsule: &Bound<'py, PyCapsule>,
) -> PyResult<Bound<'py, PyDict>> {
    let (tensor, read_only): (&DlTensor, bool) =
        if let Ok(pointer) = capsule.pointer_checked(Some(VERSIONED)) {
            // SAFETY: a "dltensor_versioned" capsule holds a DLManagedTensorVersioned that lives
            // as long as the capsule (not renamed, so not consumed).
            let managed = unsafe { &*(pointer.as_ptr() as *const DlManagedTensorVersioned) };
            if managed.major != 1 {
                return Err(bad(
                    py,
                    format!(
                        "DLPack version {}.{} is not supported",
                        managed.major, managed.minor
                    ),
                ));
            }
            (&managed.dl_tensor, managed.flags & FLAG_READ_ONLY != 0)
        } else if let Ok(pointer) = capsule.pointer_checked(Some(LEGACY)) {
            // SAFETY: as above, for the legacy DLManagedTensor.
            let managed = unsafe { &*(pointer.as_ptr() as *const DlManagedTensor) };
            (&managed.dl_tensor, false)
        } else {
            return Err(bad(
                py,
                "not an unconsumed DLPack capsule (\"dltensor_versioned\" or \"dltensor\")".into(),
            ));
        };
    let ndim = usize::try_from(tensor.ndim).map_err(|_| bad(py, "negative ndim".into()))?;
    let read = |pointer: *const i64| -> Vec<i64> {
        if pointer.is_null() || ndim == 0 {
            Vec::new()
        } else {
            // SAFETY: DLPack's shape and strides arrays hold `ndim` entries.
            unsafe { std::slice::from_raw_parts(pointer, ndim) }.to_vec()
        }
    };
    let kind = match tensor.dtype.code {
        0 => "i",
        1 => "u",
        2 => "f",
        // kDLBfloat.
        4 if tensor.dtype.bits == 16 => "bf",
        6 => "b",
        other => {
            return Err(bad(
                py,
                format!("DLPack type code {other} is not supported"),
            ))
        }
    };
    if tensor.dtype.lanes != 1 || tensor.dtype.bits % 8 != 0 {
        return Err(bad(
            py,
            "vector or sub-byte DLPack element types are not supported".into(),
        ));
    }
    let dict = PyDict::new(py);
    dict.set_item("address", tensor.data as u64 + tensor.byte_offset)?;
    dict.set_item("device_type", tensor.device.device_type)?;
    dict.set_item("device_id", tensor.device.device_id)?;
    dict.set_item("typestr", format!("{kind}{}", tensor.dtype.bits / 8))?;
    dict.set_item("shape", read(tensor.shape))?;
    if tensor.strides.is_null() {
        dict.set_item("strides", py.None())?;
    } else {
        dict.set_item("strides", read(tensor.strides))?;
    }
    dict.set_item("read_only", read_only)?;
    Ok(dict)
}
