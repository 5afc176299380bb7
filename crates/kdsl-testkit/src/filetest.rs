//! The `.krn` file-test runner (Cranelift's filetests are the model).
//!
//! A file's leading comment block names its checks, one per line:
//!
//! ```text
//! // test: diagnostics                 the rendered diagnostics (the file must not compile)
//! // test: ir                          the kdsl IR, compact text form
//! // test: llvm spirv ptx amdgpu       the optimized LLVM IR for each named target
//! // test: llvm-checked spirv ptx      the same, compiled in checked mode
//! // test: ir; llvm spirv ptx amdgpu   several checks on one line
//! ```
//!
//! Each check's expected output is the file `expected/<stem>.<check>` beside the input
//! (`tests/errors/expected/arity.diagnostics`, `examples/expected/saxpy.llvm-ptx`). A test binary
//! runs the checks it has a function for ([`run`]) and skips the others, which another binary
//! runs. A mismatch fails with the first differing lines; `KDSL_BLESS=1` writes the actual
//! output instead, and removes expected files no header names any more.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The variable that turns comparing into rewriting.
pub const BLESS: &str = kdsl_bundle::environment::BLESS;

/// A kind of check a header can name.
pub struct CheckKind {
    pub name: &'static str,
    /// Whether the check is written once per target (`llvm spirv ptx`).
    pub per_target: bool,
    /// The test binary that runs it.
    pub runs_in: &'static str,
}

/// Every kind of check, and where it runs.
pub const CHECK_KINDS: &[CheckKind] = &[
    CheckKind {
        name: "diagnostics",
        per_target: false,
        runs_in: "kdsl-frontend --test filetests",
    },
    CheckKind {
        name: "ir",
        per_target: false,
        runs_in: "kdsl-frontend --test filetests",
    },
    CheckKind {
        name: "llvm",
        per_target: true,
        runs_in: "kdsl-codegen --test codegen filetests",
    },
    CheckKind {
        name: "llvm-checked",
        per_target: true,
        runs_in: "kdsl-codegen --test codegen filetests",
    },
];

/// The targets a per-target check names: `spirv`, `ptx` (sm_90), `amdgpu` (gfx90a), the
/// AMDGPU processors whose matrix units differ from gfx90a's: `amdgpu-gfx942` (xf32 MFMA) and
/// `amdgpu-gfx1100` (WMMA, wave32), and `spirv-intel_gpu_pvc` (cooperative matrices).
pub const TARGETS: [&str; 6] = [
    "spirv",
    "ptx",
    "amdgpu",
    "amdgpu-gfx942",
    "amdgpu-gfx1100",
    "spirv-intel_gpu_pvc",
];

/// One check of one file: a kind, and a target for the per-target kinds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub kind: &'static str,
    pub target: Option<&'static str>,
}

impl Check {
    /// The expected file's extension: `diagnostics`, `llvm-ptx`.
    pub fn expectation_name(&self) -> String {
        match self.target {
            Some(target) => format!("{}-{target}", self.kind),
            None => self.kind.to_string(),
        }
    }
}

/// A kernel file with its checks.
pub struct FileTest {
    pub path: PathBuf,
    /// The path from the repository root, as diagnostics name the file.
    pub name: String,
    pub stem: String,
    pub source: String,
    pub checks: Vec<Check>,
}

impl FileTest {
    /// Where a check's expected output lives.
    pub fn expectation_path(&self, check: &Check) -> PathBuf {
        expected_folder(&self.path).join(format!("{}.{}", self.stem, check.expectation_name()))
    }
}

fn expected_folder(input: &Path) -> PathBuf {
    input.parent().expect("a file in a folder").join("expected")
}

/// The checks a header names; an unknown kind or target is an error.
pub fn parse_header(source: &str) -> Result<Vec<Check>, String> {
    let mut checks = Vec::new();
    for line in source.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some(comment) = line.strip_prefix("//") else {
            break;
        };
        let Some(specs) = comment.trim().strip_prefix("test:") else {
            continue;
        };
        for spec in specs.split(';') {
            parse_check(spec, &mut checks)?;
        }
    }
    if checks.is_empty() {
        return Err("no `// test:` line in the leading comment".into());
    }
    Ok(checks)
}

/// One check of a header line (`ir`, `llvm spirv ptx`), appended to `checks`.
fn parse_check(spec: &str, checks: &mut Vec<Check>) -> Result<(), String> {
    let mut words = spec.split_whitespace();
    let kind_name = words.next().ok_or("`// test:` names no check")?;
    let kind = CHECK_KINDS
        .iter()
        .find(|k| k.name == kind_name)
        .ok_or_else(|| format!("unknown check `{kind_name}`; known: {}", known_kinds()))?;
    let targets: Vec<&str> = words.collect();
    if kind.per_target {
        if targets.is_empty() {
            return Err(format!("`{kind_name}` needs targets, some of {TARGETS:?}"));
        }
        for target in targets {
            let target = TARGETS
                .iter()
                .find(|t| **t == target)
                .ok_or_else(|| format!("unknown target `{target}`; known: {TARGETS:?}"))?;
            checks.push(Check {
                kind: kind.name,
                target: Some(target),
            });
        }
    } else if !targets.is_empty() {
        return Err(format!("`{kind_name}` takes no targets"));
    } else {
        checks.push(Check {
            kind: kind.name,
            target: None,
        });
    }

    Ok(())
}

fn known_kinds() -> String {
    CHECK_KINDS
        .iter()
        .map(|k| k.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads a folder's file tests (`.krn` files and their headers).
pub fn file_tests(folder: &str) -> Result<Vec<FileTest>, Vec<String>> {
    let mut tests = Vec::new();
    let mut errors = Vec::new();
    for path in crate::files::krn_files(folder) {
        let (stem, source) = crate::files::read_kernel(&path);
        let name = format!("{folder}/{stem}.krn");
        match parse_header(&source) {
            Ok(checks) => tests.push(FileTest {
                path,
                name,
                stem,
                source,
                checks,
            }),
            Err(message) => errors.push(format!("{name}: {message}")),
        }
    }
    if errors.is_empty() {
        Ok(tests)
    } else {
        Err(errors)
    }
}

/// A function computing one kind of check's output for a file; `Err` fails the check.
pub type CheckFn = fn(&FileTest, &Check) -> Result<String, String>;

fn blessing() -> bool {
    std::env::var_os(BLESS).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Runs, over the `.krn` files of `folders`, every check whose kind `handlers` names, and
/// fails (after trying all of them) with every mismatch; with `KDSL_BLESS=1` it writes the
/// expected files instead. Stale expected files fail too (blessing removes them).
pub fn run(folders: &[&str], handlers: &[(&str, CheckFn)]) {
    for (kind, _) in handlers {
        assert!(
            CHECK_KINDS.iter().any(|k| k.name == *kind),
            "no check kind `{kind}`"
        );
    }
    let bless = blessing();
    let mut failures = Vec::new();
    let mut ran = 0usize;
    for folder in folders {
        let tests = match file_tests(folder) {
            Ok(tests) => tests,
            Err(errors) => {
                failures.extend(errors);
                continue;
            }
        };
        for test in &tests {
            for check in &test.checks {
                let Some((_, handler)) = handlers.iter().find(|(k, _)| *k == check.kind) else {
                    continue;
                };
                ran += 1;
                let actual = match handler(test, check) {
                    Ok(actual) => with_final_newline(actual),
                    Err(message) => {
                        failures.push(format!(
                            "{} [{}]: {message}",
                            test.name,
                            check.expectation_name()
                        ));
                        continue;
                    }
                };
                let path = test.expectation_path(check);
                let expected = std::fs::read_to_string(&path).ok();
                if expected.as_deref() == Some(actual.as_str()) {
                    continue;
                }
                if bless {
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(&path, &actual)
                        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
                    eprintln!("blessed {}", path.display());
                } else {
                    failures.push(mismatch(test, check, &path, expected.as_deref(), &actual));
                }
            }
        }
        failures.extend(stale_expectations(folder, &tests, bless));
    }
    assert!(
        failures.is_empty(),
        "{} file-test failure(s):\n\n{}\n\nIf the new output is right: {BLESS}=1 cargo test ... \
         rewrites the expected files (review the diff).",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(
        ran > 0,
        "no file test ran in {folders:?}: no header names {:?}",
        handlers.iter().map(|(k, _)| *k).collect::<Vec<_>>()
    );
}

fn with_final_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Expected files of a folder that no header names.
fn stale_expectations(folder: &str, tests: &[FileTest], bless: bool) -> Vec<String> {
    let folder = crate::files::workspace_root().join(folder).join("expected");
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Vec::new();
    };
    let named: BTreeSet<PathBuf> = tests
        .iter()
        .flat_map(|t| t.checks.iter().map(|c| t.expectation_path(c)))
        .collect();
    let mut stale = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if named.contains(&path) {
            continue;
        }
        if bless {
            let _ = std::fs::remove_file(&path);
            eprintln!("removed stale {}", path.display());
        } else {
            stale.push(format!(
                "{}: no `// test:` header names this expected file",
                path.display()
            ));
        }
    }
    stale
}

fn mismatch(
    test: &FileTest,
    check: &Check,
    path: &Path,
    expected: Option<&str>,
    actual: &str,
) -> String {
    let title = format!("{} [{}]", test.name, check.expectation_name());
    let Some(expected) = expected else {
        return format!("{title}: {} is missing", path.display());
    };
    let expected_lines: Vec<&str> = expected.lines().collect();
    let actual_lines: Vec<&str> = actual.lines().collect();
    let first = expected_lines
        .iter()
        .zip(&actual_lines)
        .position(|(e, a)| e != a)
        .unwrap_or(expected_lines.len().min(actual_lines.len()));
    let window = |lines: &[&str]| -> String {
        let start = first.saturating_sub(2);
        let end = (first + 4).min(lines.len());
        (start..end)
            .map(|i| format!("  {:>5} | {}", i + 1, lines[i]))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "{title}: differs from {} at line {} ({} lines expected, {} actual)\n expected:\n{}\n actual:\n{}",
        path.display(),
        first + 1,
        expected_lines.len(),
        actual_lines.len(),
        window(&expected_lines),
        window(&actual_lines)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_name_checks_per_target() {
        let checks = parse_header("// A kernel.\n// test: ir\n// test: llvm spirv; llvm ptx\nkernel k() {}\n// test: diagnostics\n").unwrap();
        let names: Vec<String> = checks.iter().map(Check::expectation_name).collect();
        assert_eq!(names, ["ir", "llvm-spirv", "llvm-ptx"]);
    }

    #[test]
    fn bad_headers_are_errors() {
        assert!(parse_header("kernel k() {}\n")
            .unwrap_err()
            .contains("no `// test:`"));
        assert!(parse_header("// test: assembly\n")
            .unwrap_err()
            .contains("unknown check"));
        assert!(parse_header("// test: llvm\n")
            .unwrap_err()
            .contains("needs targets"));
        assert!(parse_header("// test: llvm x86\n")
            .unwrap_err()
            .contains("unknown target"));
        assert!(parse_header("// test: ir ptx\n")
            .unwrap_err()
            .contains("takes no targets"));
    }
}
