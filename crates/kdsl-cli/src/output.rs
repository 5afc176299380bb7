//! Writing to standard output and error without panicking, whatever they are connected to.

/// `println!` that ends the process quietly, as tools killed by `SIGPIPE` do (status 141),
/// when standard output is a pipe closed early (`kdsl inspect x.kbundle | head -3`), and with
/// an error for any other failure to write (a full disk).
macro_rules! out {
    ($($argument:tt)*) => {{
        use std::io::Write as _;
        if let Err(error) = writeln!(std::io::stdout(), $($argument)*) {
            $crate::output::stdout_failed(error);
        }
    }};
}

/// `eprint!` that goes on when standard error cannot be written (a closed pipe): there is
/// nowhere left to say so, and the exit status still tells the outcome.
macro_rules! say {
    ($($argument:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($argument)*);
    }};
}

/// `eprintln!` as [`say!`] writes.
macro_rules! say_line {
    ($($argument:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($argument)*);
    }};
}

pub(crate) fn stdout_failed(error: std::io::Error) -> ! {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(141);
    }
    say_line!("error: cannot write to standard output: {error}");
    std::process::exit(1);
}
