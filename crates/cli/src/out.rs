//! Writing to the terminal without panicking: `println!` and `eprintln!` panic when the stream
//! cannot be written (a full disk, /dev/full, a closed pipe), which would end fsbench with 101
//! and no word. Standard output errors are returned (the command fails with exit 1 and says
//! so); standard error is best effort, since there is nowhere else to report its failure.

use crate::exit::Failure;
use anyhow::anyhow;
use std::fmt::Arguments;
use std::io::Write;

/// One line on standard output; a write error becomes a failure (exit 1).
pub fn stdout_line(args: Arguments<'_>) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|_| out.write_all(b"\n"))
        .map_err(stdout_failed)
}

/// The failure for an unwritable standard output. A closed pipe (`fsbench runs | head`) is the
/// reader saying it has read enough: fsbench stops quietly with success, as other Unix tools do.
pub fn stdout_failed(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return Failure::quiet(crate::exit::OK);
    }
    Failure::failed(anyhow!(
        "cannot write to standard output ({e}); redirect it to a writable file, or pass --quiet where the command has it"
    ))
}

/// One line on standard error, if it can be written.
pub fn stderr_line(args: Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|_| err.write_all(b"\n"));
}

/// `say!(...)?`: a line on standard output.
macro_rules! say {
    ($($arg:tt)*) => { $crate::out::stdout_line(format_args!($($arg)*)) };
}

/// `note!(...)`: a line on standard error, best effort.
macro_rules! note {
    ($($arg:tt)*) => { $crate::out::stderr_line(format_args!($($arg)*)) };
}

pub(crate) use {note, say};
