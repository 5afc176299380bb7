//! A machine without the SYCL runtime gets a note at device discovery, not a crash: this test
//! runs its own binary again as a child that only prints the device report, once with
//! `KDSL_SYCL_SHIM` naming a missing file and once with a copy of the shim library whose
//! libsycl cannot be found, and checks that the child exits normally with a SYCL note naming the
//! load failure. It also checks that the binary itself has no dependency on libsycl.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Set in the child's environment: the child prints the report and exits.
const CHILD_MODE: &str = "KDSL_SYCL_MISSING_TEST_CHILD";
const LOAD_FAILURE: &str = "SYCL: the SYCL runtime could not be loaded: ";

fn main() {
    if std::env::var_os(CHILD_MODE).is_some() {
        print_report();
        return;
    }
    let checks: [(&str, fn()); 4] = [
        (
            "binary_has_no_libsycl_dependency",
            binary_has_no_libsycl_dependency,
        ),
        ("default_shim_loads", default_shim_loads),
        (
            "missing_shim_is_a_discovery_note",
            missing_shim_is_a_discovery_note,
        ),
        (
            "missing_libsycl_is_a_discovery_note",
            missing_libsycl_is_a_discovery_note,
        ),
    ];
    for (name, check) in checks {
        check();
        println!("test {name} ... ok");
    }
    println!("test result: ok. {} passed", checks.len());
}

fn print_report() {
    let report = kdsl_runtime::device_report();
    for note in &report.notes {
        println!("note: {note}");
    }
    for info in &report.devices {
        println!("device: {}", info.id());
    }
}

/// Runs this binary as a child with `shim` as KDSL_SYCL_SHIM (removed when `None`) and without
/// LD_LIBRARY_PATH, so only the shim library's own rpath can lead to libsycl.
fn run_child(shim: Option<&Path>) -> (Output, String) {
    let executable = std::env::current_exe().expect("the test knows its own path");
    let mut command = Command::new(executable);
    command.env(CHILD_MODE, "1").env_remove("LD_LIBRARY_PATH");
    match shim {
        Some(path) => command.env("KDSL_SYCL_SHIM", path),
        None => command.env_remove("KDSL_SYCL_SHIM"),
    };
    let output = command.output().expect("the test binary runs again");
    let text = format!(
        "exit status {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output, text)
}

fn sycl_load_note(output: &Output) -> Option<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_prefix("note: "))
        .find(|note| note.starts_with(LOAD_FAILURE))
        .map(str::to_string)
}

/// Asserts the child ran to the end: exit code 0, the other backends' discovery still reported,
/// and no SYCL device listed.
fn assert_discovery_returned(output: &Output, text: &str) {
    assert!(output.status.success(), "the child failed:\n{text}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("note: CUDA:") || stdout.contains("device: cuda:"),
        "the child's report lacks the CUDA backend's result:\n{text}"
    );
    assert!(
        !stdout.contains("device: sycl:"),
        "the child listed SYCL devices without a SYCL runtime:\n{text}"
    );
}

fn binary_has_no_libsycl_dependency() {
    let executable = std::env::current_exe().expect("the test knows its own path");
    let output = match Command::new("ldd").arg(&executable).output() {
        Ok(output) => output,
        Err(error) => {
            eprintln!("skipping the ldd check: ldd could not run ({error})");
            return;
        }
    };
    let libraries = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "ldd failed: {libraries}");
    assert!(
        libraries.contains("libc.so"),
        "unexpected ldd output: {libraries}"
    );
    // Each line starts with a library's name; paths may contain "sycl" for other reasons.
    let sycl_libraries: Vec<&str> = libraries
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| name.contains("sycl"))
        .collect();
    assert!(
        sycl_libraries.is_empty(),
        "{} depends on {sycl_libraries:?} in the dynamic loader:\n{libraries}",
        executable.display()
    );
}

fn default_shim_loads() {
    let (output, text) = run_child(None);
    assert!(output.status.success(), "the child failed:\n{text}");
    assert!(
        sycl_load_note(&output).is_none(),
        "the shim built by build.rs did not load:\n{text}"
    );
}

fn missing_shim_is_a_discovery_note() {
    let missing = Path::new("/nonexistent/libkdsl_sycl_shim.so");
    let (output, text) = run_child(Some(missing));
    assert_discovery_returned(&output, &text);
    let note = sycl_load_note(&output)
        .unwrap_or_else(|| panic!("no note about the SYCL runtime failing to load:\n{text}"));
    assert!(
        note.contains("/nonexistent/libkdsl_sycl_shim.so: cannot open shared object file"),
        "the note does not carry the dynamic loader's message: {note}"
    );
    assert!(
        note.contains("pip install \"kdsl-gpu[sycl]\"") && note.contains("scripts/setup.sh"),
        "the note does not say how to install the runtime with pip and in a checkout: {note}"
    );
}

/// A copy of the shim whose rpath to libsycl's directory is overwritten (with a path of the same
/// length that does not exist), so that libsycl cannot be found when the copy is opened.
fn shim_without_libsycl(directory: &Path) -> PathBuf {
    let built = std::fs::read(env!("KDSL_SYCL_SHIM_BUILT_PATH")).expect("build.rs built the shim");
    let rpath = env!("KDSL_SYCL_SHIM_LIBSYCL_DIRECTORY").as_bytes();
    let mut replacement = vec![b'x'; rpath.len()];
    replacement[0] = b'/';
    let mut patched = built.clone();
    let mut replaced = 0;
    let mut start = 0;
    while let Some(offset) = patched[start..]
        .windows(rpath.len())
        .position(|window| window == rpath)
    {
        let position = start + offset;
        patched[position..position + rpath.len()].copy_from_slice(&replacement);
        replaced += 1;
        start = position + rpath.len();
    }
    assert!(
        replaced > 0,
        "the shim library does not contain its rpath {}",
        String::from_utf8_lossy(rpath)
    );
    std::fs::create_dir_all(directory).expect("the temporary directory is writable");
    let path = directory.join("libkdsl_sycl_shim.so");
    std::fs::write(&path, patched).expect("the temporary directory is writable");
    path
}

fn missing_libsycl_is_a_discovery_note() {
    let directory = std::env::temp_dir().join(format!("kdsl-sycl-missing-{}", std::process::id()));
    let shim = shim_without_libsycl(&directory);
    let (output, text) = run_child(Some(&shim));
    let _ = std::fs::remove_dir_all(&directory);
    assert_discovery_returned(&output, &text);
    let note = sycl_load_note(&output).unwrap_or_else(|| {
        panic!(
            "no note about the SYCL runtime failing to load (is libsycl on the system's library \
             path?):\n{text}"
        )
    });
    assert!(
        note.contains("libsycl.so") && note.contains("cannot open shared object file"),
        "the note does not name the missing libsycl: {note}"
    );
}
