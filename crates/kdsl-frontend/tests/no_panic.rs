//! The front end returns a module or diagnostics for any input, never panics, and never
//! overflows the stack on deeply nested input.

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }
}

fn example_sources() -> Vec<Vec<u8>> {
    [
        "examples",
        "tests/kernels",
        kdsl_testkit::files::ERROR_FOLDER,
    ]
    .iter()
    .flat_map(|folder| kdsl_testkit::files::krn_files(folder))
    .map(|path| std::fs::read(path).unwrap())
    .collect()
}

fn compile(bytes: &[u8]) -> bool {
    let source = String::from_utf8_lossy(bytes);
    let result = kdsl_frontend::compile_to_ir(&source);
    if let Err(diagnostics) = &result {
        assert!(
            !diagnostics.is_empty(),
            "an error result must carry diagnostics"
        );
        // Rendering must cope with every span the front end produces.
        let _ = kdsl_frontend::render_diagnostics("fuzz.krn", &source, diagnostics, false);
    }
    result.is_ok()
}

#[test]
fn random_bytes_and_mutations_never_panic() {
    let sources = example_sources();
    assert!(!sources.is_empty());
    let tokens: Vec<&[u8]> = vec![
        b"{",
        b"}",
        b"(",
        b")",
        b"[",
        b"]",
        b";",
        b",",
        b"let ",
        b"mut ",
        b"if ",
        b"else ",
        b"for ",
        b"in ",
        b"..",
        b"step ",
        b"while ",
        b"return ",
        b"break;",
        b"local ",
        b"kernel ",
        b"fn ",
        b"const ",
        b"instance ",
        b"<",
        b">",
        b"as ",
        b"u32",
        b"f32",
        b"f64",
        b"0",
        b"1.5",
        b"-",
        b"!",
        b"barrier();",
        b"atomic_add(",
        b"get_global_id(",
        b"x",
        b"=",
        b"+=",
        b"/*",
        b"\0",
        b"\xff",
        b"99999999999999999999999999999999999999999",
    ];
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut compiled = 0;
    for round in 0..3000 {
        let mut bytes = sources[random.below(sources.len())].clone();
        match round % 4 {
            0 => bytes.truncate(random.below(bytes.len() + 1)),
            1 => {
                for _ in 0..1 + random.below(4) {
                    let at = random.below(bytes.len());
                    if let Some(byte) = bytes.get_mut(at) {
                        *byte = random.next() as u8;
                    }
                }
            }
            2 => {
                for _ in 0..1 + random.below(3) {
                    let at = random.below(bytes.len() + 1);
                    let token = tokens[random.below(tokens.len())];
                    bytes.splice(at..at, token.iter().copied());
                }
            }
            _ => {
                let length = random.below(200);
                bytes = (0..length)
                    .map(|_| {
                        if random.below(2) == 0 {
                            let alphabet = b"{}()[];:,.=<>+-*/%&|^!~ \nabxyzu3f21_09";
                            alphabet[random.below(alphabet.len())]
                        } else {
                            random.next() as u8
                        }
                    })
                    .collect();
            }
        }
        if compile(&bytes) {
            compiled += 1;
        }
    }
    // Some truncations and splices still form valid programs; most do not.
    assert!(compiled < 3000);
}

#[test]
fn deep_nesting_is_a_diagnostic_not_a_crash() {
    let depth = 100_000;
    let cases = [
        format!(
            "kernel k(o: global mut [f32]) {{ o[0] = {}1.0{}; }}",
            "(".repeat(depth),
            ")".repeat(depth)
        ),
        format!(
            "kernel k(o: global mut [f32]) {{ o[0] = {}1.0; }}",
            "-".repeat(depth)
        ),
        format!(
            "kernel k(o: global mut [u32]) {{ o[0] = 1{}; }}",
            " + 1".repeat(depth)
        ),
        format!(
            "kernel k(o: global mut [u32]) {{ o[0] = 1{}; }}",
            " as u32".repeat(depth)
        ),
        format!(
            "kernel k(o: global mut [f32]) {}{}",
            "{ if true ".repeat(depth),
            "}".repeat(depth)
        ),
    ];
    for source in cases {
        let diagnostics =
            kdsl_frontend::compile_to_ir(&source).expect_err("nesting this deep is rejected");
        assert!(
            diagnostics.iter().any(|d| d.code == "E0004"),
            "{diagnostics:#?}"
        );
    }
}

#[test]
fn nesting_within_the_limit_compiles() {
    let source = format!(
        "kernel k(o: global mut [u32]) {{ o[0] = {}1u32{}; }}",
        "(".repeat(100),
        ")".repeat(100)
    );
    assert!(kdsl_frontend::compile_to_ir(&source).is_ok());
}
