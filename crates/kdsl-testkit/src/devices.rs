//! The devices and bundles the device tests (the device suite, the differential tests, the
//! fuzzgen run) use, chosen by one rule.

use kdsl_bundle::environment::{ALLOW_NO_DEVICE, TEST_BUNDLES, TEST_DEVICE};
use kdsl_runtime::DeviceInfo;
use std::path::PathBuf;

/// The devices found, or those `KDSL_TEST_DEVICE` selects; `Err` says why there are none.
pub fn try_devices_under_test() -> Result<Vec<DeviceInfo>, String> {
    let report = kdsl_runtime::device_report();
    let filter = std::env::var(TEST_DEVICE).ok();
    let devices = report
        .select(filter.as_deref())
        .map_err(|e| format!("{TEST_DEVICE} is not a valid device filter: {e}"))?;
    if devices.is_empty() {
        return Err(format!(
            "no device ({TEST_DEVICE}={filter:?}): {}",
            report.why_none()
        ));
    }
    Ok(devices)
}

/// Whether `KDSL_ALLOW_NO_DEVICE=1` lets device tests pass on a machine without devices.
pub fn no_device_allowed() -> bool {
    std::env::var(ALLOW_NO_DEVICE).as_deref() == Ok("1")
}

/// The devices `what` runs on; with none, the test fails unless `KDSL_ALLOW_NO_DEVICE=1`.
pub fn devices_under_test(what: &str) -> Vec<DeviceInfo> {
    match try_devices_under_test() {
        Ok(devices) => devices,
        Err(why) if no_device_allowed() => {
            eprintln!("{ALLOW_NO_DEVICE}=1, so {what} passes without running: {why}");
            Vec::new()
        }
        Err(why) => panic!("{what}: {why}\n(set {ALLOW_NO_DEVICE}=1 to allow this)"),
    }
}

/// The folder of the bundles `scripts/compile-examples.sh` wrote: `KDSL_TEST_BUNDLES`, else
/// `target/kdsl-bundles`; the flag says whether the variable named it.
pub fn bundle_folder() -> (PathBuf, bool) {
    match std::env::var(TEST_BUNDLES) {
        Ok(folder) if !folder.is_empty() => (PathBuf::from(folder), true),
        _ => (
            crate::files::workspace_root().join("target/kdsl-bundles"),
            false,
        ),
    }
}
