//! The runtime's native program cache as Python sees it (`kdsl.cache_info()`).

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The native program cache: its folder (None when off) and what it did in this process
/// (`hits`, `misses`, `rejected`, `stores`).
#[pyfunction]
pub fn native_cache_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let stats = kdsl_runtime::native_cache::stats();
    let dict = PyDict::new(py);
    let directory = kdsl_runtime::native_cache::directory();
    dict.set_item(
        "directory",
        directory.map(|path| path.display().to_string()),
    )?;
    dict.set_item("hits", stats.hits)?;
    dict.set_item("misses", stats.misses)?;
    dict.set_item("rejected", stats.rejected)?;
    dict.set_item("stores", stats.stores)?;
    Ok(dict)
}
